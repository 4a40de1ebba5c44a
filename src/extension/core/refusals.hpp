// refusals.hpp: telling a worker why it may not touch a job.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Raises the error for a worker call (complete, fail, heartbeat, progress) that found no job held by
// `worker_id` and `role` (or a role whose privileges it has): P0002 when the job does not exist or `role`
// may not read it (another tenant's), PGJQ_ERRCODE_JOB_CANCELLED when the worker's job was cancelled,
// PGJQ_ERRCODE_NOT_LEASE_HOLDER otherwise. Requires an SPI connection.
[[noreturn]] void raise_not_held(int64 job_id, const char* worker_id, Oid role);

// Refuses an in-transaction report (complete_in_transaction, fail_in_transaction) of a job this
// transaction did not claim for `worker_id` with claim_in_transaction, or already reported: P0002 when the
// job does not exist, PGJQ_ERRCODE_NOT_LEASE_HOLDER otherwise. Requires an SPI connection.
void require_claimed_here(int64 job_id, const char* worker_id, Oid role);

// Raises the error for a job this transaction held but whose row it no longer finds: it cancelled the
// job itself (PGJQ_ERRCODE_JOB_CANCELLED), or the job is gone (P0002). Requires an SPI connection.
[[noreturn]] void raise_gone_from_transaction(int64 job_id, Oid role);

// Raises P0002 for a job id that does not exist.
[[noreturn]] void raise_no_such_job(int64 job_id);

}  // namespace pgjq
