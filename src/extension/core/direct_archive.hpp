// direct_archive.hpp: jobs finishing (completed, failed for good, cancelled) through the table access method.
//
// archive_jobs' statement (core/lifecycle.cpp) deletes the jobs from live_jobs and inserts their history rows
// into finished_jobs through CTEs, whose trigger sends each job's pgjq_job_finished notice, and aggregates
// what moved: an executor started for each call, each row formed, stored and read again on its way, and a
// trigger call per job. archive_directly finds each job where this session's claim left it
// (tableam/claimed_versions.hpp) or else through live_jobs' primary key, and deletes it as
// the statement's DELETE would (waiting for a transaction changing it, and taking its latest version, locked,
// if that still meets the statement's conditions, as EvalPlanQual does), then forms its history row with
// finished_jobs' CHECK and NOT NULL tests, and sends the notice the trigger would send. The call's history
// rows go in together, many to a page, and then their index entries (tableam/table_writes.hpp).
#pragma once

#include "core/lifecycle.hpp"

namespace pgjq {

// What one archive moved, for archive_jobs to settle (depth counters, groups, dependencies, latencies, the
// notices of jobs deleted without a history row). Arrays are in the current memory context.
struct archived_jobs {
    int64 count;
    Datum moved;  // int8[]: their ids
    bool none_moved;
    Datum queue;  // text: their queue, when there is one
    bool several_queues;
    Datum every_queue;  // text[]: each job's queue, when they span several
    bool no_groups;
    Datum group_queues, group_keys;  // text[]: the queue and group key of each job with a group key
    Datum group_roles;               // oid[]: and the role that enqueued it (its group is the three's)
    bool no_times;
    Datum waits, runs;  // float8[]: each job's wait (due to claimed) and run (claimed to now), NULL if not claimed
    bool none_discarded;
    Datum discarded_ids, discarded_queues;  // int8[], text[]: the completed jobs deleted without a history row
};

// Moves the jobs of `r` as archive_jobs' statement would; `discarding`: the queues that keep no
// completed jobs, when completing (nullptr: none). Returns false, having done nothing, when the statement
// must run: pgjq.direct_completions off; jobs claimed in this transaction; a transaction that is read only,
// parallel, or not READ COMMITTED (whose DELETE raises a serialization failure where a job changed); a table,
// index, trigger or column this does not know; a caller without the privileges.
bool archive_directly(const archive_request& r, ArrayType* discarding, archived_jobs* out);

}  // namespace pgjq
