// live_table_vacuum.hpp: vacuuming pgjq.live_jobs from the maintenance worker (see the .cpp).
#pragma once

namespace pgjq {

// Vacuums pgjq.live_jobs when enough of it is dead; returns whether it did. Called by the maintenance
// worker between passes, outside any transaction.
bool vacuum_live_jobs_if_needed();

} // namespace pgjq
