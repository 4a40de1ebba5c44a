// attempt_errors.hpp: the error history of jobs (pgjq.attempt_errors, from 0.3.0; docs/sql-api.md,
// pgjq.job_errors). The statement that fails an attempt records it in the same transaction: the worker's
// fail (fail.cpp) and lease recovery (leases.cpp: an expired lease, an execution timeout). A job keeps the
// newest k_kept_errors_per_job of them; the maintenance worker's prune duty removes those of jobs that are
// gone once their queue's retention has passed. A job that never fails writes nothing here.
#pragma once

#include "pg/pg.hpp"

// The CTEs `recorded` and `trimmed` of a statement that fails attempts: each row of the relation `source`
// (columns id, attempt, queue_name, enqueued_by, worker_id, started_at, error) becomes its job's next
// failure, and the job's failures older than the newest `kept` (a parameter) go. Both CTEs see the
// statement's snapshot: the DELETE counts the new failure in without seeing its row. The caller holds the
// jobs' rows locked (FOR UPDATE), so no other transaction numbers a failure of the same job meanwhile.
#define PGJQ_RECORD_FAILED_ATTEMPTS(source, kept)                                                               \
    " recorded AS (INSERT INTO pgjq.attempt_errors"                                                             \
    "   (job_id, failure, attempt, queue_name, enqueued_by, worker_id, started_at, error)"                      \
    "  SELECT x.id, coalesce((SELECT max(e.failure) FROM pgjq.attempt_errors e WHERE e.job_id = x.id), 0) + 1," \
    "         x.attempt, x.queue_name, x.enqueued_by, x.worker_id, x.started_at, x.error FROM " source " x"     \
    "  RETURNING job_id),"                                                                                      \
    " trimmed AS (DELETE FROM pgjq.attempt_errors e USING " source " x"                                         \
    "  WHERE e.job_id = x.id AND e.failure <= coalesce((SELECT max(m.failure) FROM pgjq.attempt_errors m"       \
    "                                                    WHERE m.job_id = x.id), 0) + 1 - " kept ")"

// When a failed attempt began: the later of the claim and the worker's start (a requeued job keeps both
// columns of its earlier attempt until they are written again).
#define PGJQ_ATTEMPT_STARTED(j) "greatest(" j "started_at, " j "claimed_at)"

namespace pgjq {

// Whether this database keeps failed attempts (0.3.0 and later).
bool attempt_errors_installed();

// Records the failed attempt number `attempt` of live job `job_id`, by `worker_id`, failing with `error`;
// `claimed_here`: the attempt began in this transaction (claim_in_transaction). Nothing on a database that
// keeps no failed attempts. Requires an SPI connection, as the owner; the job's row locked by the caller.
void record_failed_attempt(int64 job_id, int32 attempt, const char* worker_id, const char* error, bool claimed_here);

// Removes at most `limit` failed attempts of jobs that are gone, once their queue's retention (or, with
// `older_than`, that age) has passed since the attempt failed. Returns how many. Requires an SPI connection.
int64 prune_attempt_errors(int32 limit, const Interval* older_than = nullptr);

}  // namespace pgjq
