// attempt_errors.cpp: recording and pruning failed attempts (see attempt_errors.hpp).
#include "core/attempt_errors.hpp"

#include "pg/catalog.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_record, s_prune;

// clang-format off
// $1 job, $2 attempt, $3 worker id, $4 error, $5 whether the attempt began in this transaction, $6 how many
// failures a job keeps.
const plan_text k_record = {
    "WITH failed AS ("
    "  SELECT l.id, $2::int4 AS attempt, l.queue_name, l.enqueued_by, $3::text AS worker_id,"
    "         CASE WHEN $5 THEN now() ELSE " PGJQ_ATTEMPT_STARTED("l.") " END AS started_at, $4::text AS error"
    "    FROM pgjq.live_jobs l WHERE l.id = $1),"
    PGJQ_RECORD_FAILED_ATTEMPTS("failed", "$6")
    " SELECT count(*) FROM recorded",
    6, {INT8OID, INT4OID, TEXTOID, TEXTOID, BOOLOID, INT4OID}};
// Failures of jobs neither live nor finished, past their queue's retention ($2: an age that replaces it, or
// NULL; a queue that is gone keeps none). Any of them is older than the shortest retention: that bound lets
// the index on failed_at skip the recent ones.
const plan_text k_prune = {
    "DELETE FROM pgjq.attempt_errors e WHERE (e.job_id, e.failure) IN ("
    "  SELECT x.job_id, x.failure FROM pgjq.attempt_errors x LEFT JOIN pgjq.queues q ON q.queue_name = x.queue_name"
    "   WHERE x.failed_at < now() - coalesce($2, (SELECT min(retention) FROM pgjq.queues), interval '0')"
    "     AND x.failed_at < now() - coalesce($2, q.retention, interval '0')"
    "     AND NOT EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = x.job_id)"
    "     AND NOT EXISTS (SELECT 1 FROM pgjq.finished_jobs f WHERE f.id = x.job_id)"
    "   LIMIT $1)",
    2, {INT4OID, INTERVALOID}};
// clang-format on

}  // namespace

namespace pgjq {

bool attempt_errors_installed()
{
    return OidIsValid(pgjq_relation("attempt_errors"));
}

void record_failed_attempt(int64 job_id, int32 attempt, const char* worker_id, const char* error, bool claimed_here)
{
    if (!attempt_errors_installed())
        return;
    Datum values[6] = {Int64GetDatum(job_id),      Int32GetDatum(attempt),     CStringGetTextDatum(worker_id),
                       CStringGetTextDatum(error), BoolGetDatum(claimed_here), Int32GetDatum(k_kept_errors_per_job)};
    run_plan(saved_plan(&s_record, k_record), values, nullptr);
}

int64 prune_attempt_errors(int32 limit, const Interval* older_than)
{
    if (!attempt_errors_installed())
        return 0;
    Datum values[2] = {Int32GetDatum(limit), older_than ? IntervalPGetDatum(older_than) : (Datum) 0};
    char nulls[2] = {' ', older_than ? ' ' : 'n'};
    return static_cast<int64>(run_plan(saved_plan(&s_prune, k_prune), values, nulls));
}

}  // namespace pgjq
