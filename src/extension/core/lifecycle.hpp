// lifecycle.hpp: moving jobs from live to finished (completing, failing, cancelling), with the backpressure
// counters in step, and the job-id arrays those moves take.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// What archive_jobs moves, and on whose behalf.
struct archive_request {
    Datum ids;                    // an int8[]
    const char* status;           // the final status: 'completed', 'failed' or 'cancelled'
    const char* holder;           // only jobs claimed or running under this worker id move (nullptr: any)
    const char* claimed_here_by;  // the jobs were claimed by this transaction (claim_in_transaction) for
                                  // this worker id; then holder is nullptr
    Oid role;                     // the calling role: with a holder, it must have the privileges of the role
                                  // that claimed each job; recorded as claimed_by for claims here
    Jsonb* result;                // nullptr: none
    const char* last_error;       // nullptr: keep the job's own
};

// Moves the live jobs of `r` to pgjq.finished_jobs with their final status; completed jobs of a queue with
// keep_completed = false are deleted without a history row. Returns how many moved and, with `moved`, an
// int8[] of their ids (in SPI memory). Requires an SPI connection.
uint64 archive_jobs(const archive_request& r, Datum* moved = nullptr);

// Completes every job in `ids` (an int8[]; duplicates count once) held by `worker_id` and the caller's
// role, all or nothing: if one is not held, raises the refusal for it (see raise_not_held) and the
// statement's work is rolled back with the error. Returns how many were completed. `arg_name` names `ids`
// in errors. Requires an SPI connection.
int64 complete_held_jobs(Oid role, ArrayType* ids, const char* worker_id, const char* arg_name);

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
