// lifecycle.hpp: moving jobs from live to finished (completing, failing, cancelling), with the backpressure
// counters in step, and the job-id arrays those moves take.
#pragma once

#include "core/pg.hpp"

namespace pgjq {

// Moves the live jobs whose ids are in `ids` (an int8[]) to pgjq.finished_jobs with final `status`
// ('completed', 'failed' or 'cancelled'), storing `result` and, when given, `last_error`. With a
// `holder`, only jobs claimed or running under that worker id move. Completed jobs of a queue with
// keep_completed = false are deleted without a history row. With `claimed_here_by` (then `holder` is
// null), the jobs are ones this transaction claimed with claim_in_transaction for that worker. Returns how
// many moved and sets *moved to an int8[] of their ids (in SPI memory). Requires an SPI connection.
uint64 archive_jobs(Datum ids, const char* holder, const char* status, Jsonb* result, const char* last_error,
                    Datum* moved, const char* claimed_here_by = nullptr);

// Completes every job in `ids` (an int8[]; duplicates count once) held by `worker_id`, all or nothing:
// if one is not held, raises the refusal for it (see raise_not_held) and the statement's work is rolled
// back with the error. Returns how many were completed. `arg_name` names `ids` in errors.
// Requires an SPI connection.
int64 complete_held_jobs(ArrayType* ids, const char* worker_id, const char* arg_name);

// Checks a completion's id array (one-dimensional, no NULLs, at most k_max_batch_size); returns its
// distinct ids in ascending order (palloc'd) and their count.
int64* distinct_job_ids(ArrayType* ids, const char* arg_name, int* distinct);

// The first id of `ids` (in its order) that is not among `moved` (an int8[] from archive_jobs).
int64 first_not_moved(ArrayType* ids, Datum moved);

// A one-element int8[] for archive_jobs.
Datum single_id_array(int64 id);

// An int8[] of n job ids, in their order.
ArrayType* job_id_array(const int64* ids, int n);

// Ascending order, and a binary search over it.
void sort_job_ids(int64* ids, int n);
bool sorted_ids_contain(const int64* sorted, int n, int64 id);

}  // namespace pgjq
