// queue_cache.hpp: what every backend keeps of pgjq.queues to spare the hot paths a query: which queues
// delete their completed jobs, and whether any job may have dependents.
#pragma once

#include "core/pg.hpp"

namespace pgjq {

// The names of the queues with keep_completed = false as a text[] that lives until pgjq.queues next
// changes, or nullptr when there is none (the usual case). Read from pgjq.queues after any change to
// it committed (a statement trigger on the table sends a relcache invalidation), so it is as fresh as
// this transaction's first lock. Requires an SPI connection.
ArrayType* queues_not_keeping_completed();

// Whether a job of this database was ever enqueued with depends_on (a queue's uses_dependencies). Until
// then a job that finishes has no dependents to look for. Read as queues_not_keeping_completed().
bool dependencies_in_use();

// _PG_init: forget what was read when pgjq.queues is invalidated.
void register_queue_cache_callback();

}  // namespace pgjq
