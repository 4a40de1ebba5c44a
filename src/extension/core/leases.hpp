// leases.hpp: recovering jobs whose lease expired, for pgjq.recover_stale() and the maintenance worker's
// lease_recovery duty.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Jobs claimed or running whose lease expired go back to pending (due now), or, with their attempts spent,
// to the dead-letter state 'failed'. Rows locked by a worker that is completing them right now are left to
// it (SKIP LOCKED): a job recovered first makes that worker's later call fail with PJ002. Returns how many
// moved. Requires an SPI connection.
int64 recover_expired_leases();

// The earliest lease expiry still in the future, or DT_NOEND when no job is held; `expired_left`: whether
// an expired lease is still held (its row was locked when recovery looked). Requires an SPI connection.
TimestampTz next_lease_expiry(bool* expired_left = nullptr);

}  // namespace pgjq
