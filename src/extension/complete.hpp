// complete.hpp: completing a batch of held jobs, shared by complete_batch and complete_and_claim.
#pragma once

#include "pg.hpp"

namespace pgjq {

// Completes every job in `ids` (an int8[]; duplicates count once) held by `worker_id`, all or nothing:
// if one is not held, raises the refusal for it (see raise_not_held) and the statement's work is rolled
// back with the error. Returns how many were completed. `arg_name` names `ids` in errors.
// Requires an SPI connection.
int64 complete_held_jobs(ArrayType* ids, const char* worker_id, const char* arg_name);

} // namespace pgjq
