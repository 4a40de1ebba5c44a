// keep_completed_cache.hpp: which queues delete their completed jobs (keep_completed = false), known to
// each backend without a query per completion.
#pragma once

#include "core/pg.hpp"

namespace pgjq {

// The names of the queues with keep_completed = false as a text[] that lives until pgjq.queues next
// changes, or nullptr when there is none (the usual case). Read from pgjq.queues after any change to
// it committed (a statement trigger on the table sends a relcache invalidation), so it is as fresh as
// this transaction's first lock. Requires an SPI connection.
ArrayType* queues_not_keeping_completed();

// _PG_init: forget the list when pgjq.queues is invalidated.
void register_keep_completed_callback();

}  // namespace pgjq
