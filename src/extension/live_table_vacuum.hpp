// live_table_vacuum.hpp: vacuuming pgjq.live_jobs from the maintenance worker (see the .cpp).
#pragma once

#include "pg.hpp"

namespace pgjq {

// Vacuums pgjq.live_jobs when it is small and `jobs_moved` (jobs were enqueued or finished since the
// last call), or when enough of it is dead; returns when to call it next. Called by the maintenance
// worker between passes, outside any transaction.
TimestampTz vacuum_live_jobs_if_needed(bool jobs_moved);

} // namespace pgjq
