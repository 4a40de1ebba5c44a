// queue_cache.hpp: what every backend keeps of pgjq.queues to spare the hot paths a query: which queues
// delete their completed jobs, whether any job may have dependents, and what an enqueue needs to know of
// its queue.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// The names of the queues with keep_completed = false as a text[] that lives until pgjq.queues next
// changes, or nullptr when there is none (the usual case). Read from pgjq.queues after any change to
// it committed (a statement trigger on the table sends a relcache invalidation), so it is as fresh as
// this transaction's first lock. Requires an SPI connection.
ArrayType* queues_not_keeping_completed();

// Whether a job of this database was ever enqueued with depends_on (a queue's uses_dependencies). Until
// then a job that finishes has no dependents to look for. Read as queues_not_keeping_completed().
bool dependencies_in_use();

// What an enqueue needs of its queue when the queue has no max_pending to check.
struct cached_queue {
    int32 max_attempts;
    bool fifo;
    bool limited;  // has a max_pending: the enqueue must reserve against it (core/depth.hpp)
};

// The queue's settings as last committed (read as queues_not_keeping_completed(), and as fresh as the
// invalidations this backend has accepted), or nullptr when no such queue was found. Requires an SPI
// connection, as the extension's owner (pgjq.queues has row security for everybody else). nullptr too in a
// database at 0.1.0, whose enqueues take their reservation statement.
const cached_queue* cached_queue_settings(const char* queue_name);

// The invalidation hub (hooks/invalidation_hub.cpp): forget what was read when pgjq.queues is invalidated.
void queues_relation_invalidated(Oid relid);

}  // namespace pgjq
