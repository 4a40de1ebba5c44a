// live_table_vacuum.hpp: vacuuming pgjq.live_jobs from the maintenance worker (see the .cpp).
#pragma once

namespace pgjq {

// Vacuums pgjq.live_jobs when it is small and `jobs_moved` (jobs were enqueued or finished since the
// last call), or when enough of it is dead; returns whether it did. Called by the maintenance worker
// between passes, outside any transaction, every k_live_jobs_vacuum_interval_ms at most.
constexpr int k_live_jobs_vacuum_interval_ms = 100;
bool vacuum_live_jobs_if_needed(bool jobs_moved);

} // namespace pgjq
