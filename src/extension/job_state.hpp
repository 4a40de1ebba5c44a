// job_state.hpp: telling a worker why it may not touch a job.
#pragma once

#include "pg.hpp"

namespace pgjq {

// Raises the error for a worker call (complete, fail, heartbeat, progress) that found no job held by
// `worker_id`: P0002 when the job does not exist, PGJQ_ERRCODE_JOB_CANCELLED when the worker's job
// was cancelled, PGJQ_ERRCODE_NOT_LEASE_HOLDER otherwise. Requires an SPI connection.
[[noreturn]] void raise_not_held(int64 job_id, const char* worker_id);

// Raises P0002 for a job id that does not exist.
[[noreturn]] void raise_no_such_job(int64 job_id);

} // namespace pgjq
