// fail.cpp: fail and fail_in_transaction. While attempts remain the job goes back to pending with run_at
// pushed by exponential backoff with jitter (or by retry_in when given); otherwise it moves to the
// dead-letter state 'failed'.
#include "core/announcements.hpp"
#include "core/api_function.hpp"
#include "core/attempt_errors.hpp"
#include "core/job_columns.hpp"
#include "core/lifecycle.hpp"
#include "core/refusals.hpp"
#include "core/transaction_claims.hpp"
#include "core/worker_commit.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_held_here, s_requeue_held_here;

// clang-format off
// The job, if the worker id ($2) and the role ($3, see archive_jobs) hold it.
#define HELD                                                                                           \
    "SELECT j.attempts, j.max_attempts, q.retry_base, q.retry_cap"                                     \
    "  FROM pgjq.live_jobs j JOIN pgjq.queues q ON q.queue_name = j.queue_name"                        \
    " WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending'"
statement s_held = {"fail.held", {HELD PGJQ_HELD_BY_ROLE("j.", "$3") PGJQ_BEFORE_TIMEOUT("j.") " FOR UPDATE OF j",
     3, {INT8OID, TEXTOID, REGROLEOID}}};
#define REQUEUE(reset)                                                                                 \
    "UPDATE pgjq.live_jobs SET status = 'pending', run_at = now() + $3, worker_id = NULL,"             \
    " lease_expires_at = NULL" reset ", last_error = $2 WHERE id = $1"
statement s_requeue = {"fail.requeue", {REQUEUE(", timeout_at = NULL"), 3, {INT8OID, TEXTOID, INTERVALOID}}};

// A job claimed in this transaction: its row still says pending and counts the attempts before this one.
const plan_text k_held_here = {
    "SELECT j.attempts + 1, j.max_attempts, q.retry_base, q.retry_cap, j.queue_name"
    "  FROM pgjq.live_jobs j JOIN pgjq.queues q ON q.queue_name = j.queue_name WHERE j.id = $1",
    1, {INT8OID}};
// No delay: runnable as soon as the transaction's lock goes; otherwise due after the delay counted from
// now, not from the transaction's start (the handler may have run for a while).
const plan_text k_requeue_held_here = {
    "UPDATE pgjq.live_jobs SET attempts = attempts + 1, last_error = $2,"
    " run_at = CASE WHEN $3 = interval '0' THEN now() ELSE statement_timestamp() + $3 END WHERE id = $1",
    3, {INT8OID, TEXTOID, INTERVALOID}};
// clang-format on

// Exponential backoff with "equal jitter": half the delay is fixed, half random, so retries of jobs
// that failed together spread out instead of returning as a herd.
int64 backoff_usecs(int32 attempts, int64 base, int64 cap)
{
    int64 delay = base;
    for (int32 i = 1; i < attempts && delay < cap; i++)
        delay *= 2;
    if (delay > cap)
        delay = cap;
    return delay / 2 + static_cast<int64>(pg_prng_double(&pg_global_prng_state) * static_cast<double>(delay / 2));
}

// The delay before the retry of a job that failed its attempt number `attempts`: retry_in when given,
// else the backoff from the retry_base and retry_cap in columns 3 and 4 of the current SPI row.
int64 retry_delay(int32 attempts, Interval* retry_in)
{
    if (retry_in)
        return interval_usecs(retry_in);
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    return backoff_usecs(attempts, interval_usecs(DatumGetIntervalP(SPI_getbinval(row, desc, 3, &isnull))),
                         interval_usecs(DatumGetIntervalP(SPI_getbinval(row, desc, 4, &isnull))));
}

Datum job_status_datum(FunctionCallInfo fcinfo, const char* status)
{
    return DirectFunctionCall2(enum_in, CStringGetDatum(status), ObjectIdGetDatum(get_fn_expr_rettype(fcinfo->flinfo)));
}

struct fail_request {
    int64 job_id;
    char* worker_id;
    char* error_message;
    Interval* retry_in;
};

fail_request fail_args(FunctionCallInfo fcinfo)
{
    fail_request r;
    r.job_id = job_id_arg(fcinfo, 0);
    r.worker_id = short_text_arg(fcinfo, 1, "worker_id");
    require_arg(fcinfo, 2, "error_message");
    r.error_message = capped_error_message(text_to_cstring(PG_GETARG_TEXT_PP(2)));
    r.retry_in = optional_interval_arg(fcinfo, 3, "retry_in", k_retry_bounds);
    return r;
}

// Given the held job's row as the current SPI result (attempts including the failed one, max_attempts,
// retry_base, retry_cap, and for a job claimed in this transaction its queue), requeues the job with
// `requeue` or moves it to the dead-letter state. Returns the job's new status.
const char* requeue_or_bury(const fail_request& r, Oid role, SPIPlanPtr requeue, bool claimed_here)
{
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    int32 attempts = DatumGetInt32(SPI_getbinval(row, desc, 1, &isnull));
    int32 max_attempts = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));
    if (attempts >= max_attempts) {
        record_failed_attempt(r.job_id, attempts, r.worker_id, r.error_message, claimed_here);
        archive_request failed = {single_id_array(r.job_id),
                                  "failed",
                                  claimed_here ? nullptr : r.worker_id,
                                  claimed_here ? r.worker_id : nullptr,
                                  role,
                                  nullptr,
                                  r.error_message};
        archive_jobs(failed);
        return "failed";
    }
    int64 delay = retry_delay(attempts, r.retry_in);
    char* queue_name = claimed_here ? TextDatumGetCString(SPI_getbinval(row, desc, 5, &isnull)) : nullptr;
    record_failed_attempt(r.job_id, attempts, r.worker_id, r.error_message, claimed_here);  // replaces the SPI row
    Datum values[3] = {Int64GetDatum(r.job_id), CStringGetTextDatum(r.error_message),
                       IntervalPGetDatum(interval_from_usecs(delay))};
    run_plan(requeue, values, nullptr);
    // A lease's requeue changes the status, and the trigger on it announces the job. A job claimed in
    // this transaction was pending all along: a delayed retry wakes the maintenance worker through the
    // trigger on run_at, one due now is announced here.
    if (claimed_here && delay == 0)
        announce_requeued_jobs(queue_name);
    return "pending";
}

}  // namespace

PGJQ_API_FUNCTION(fail)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    fail_request r = fail_args(fcinfo);
    SPI_connect();
    Datum values[3] = {Int64GetDatum(r.job_id), CStringGetTextDatum(r.worker_id), ObjectIdGetDatum(call.caller)};
    if (run_plan(saved_plan(&s_held), values, nullptr) == 0)
        raise_not_held(r.job_id, r.worker_id, call.caller);
    const char* outcome = requeue_or_bury(r, call.caller, saved_plan(&s_requeue), false);
    SPI_finish();
    PG_RETURN_DATUM(job_status_datum(fcinfo, outcome));
}

// Fails a job this transaction claimed with claim_in_transaction; the attempt it ran counts.
PGJQ_API_FUNCTION(fail_in_transaction)
{
    require_some(call, cap_worker);
    fail_request r = fail_args(fcinfo);
    SPI_connect();
    require_claimed_here(r.job_id, r.worker_id, call.caller);
    Datum values[1] = {Int64GetDatum(r.job_id)};
    if (run_plan(saved_plan(&s_held_here, k_held_here), values, nullptr) == 0)
        raise_gone_from_transaction(r.job_id, call.caller);
    const char* outcome = requeue_or_bury(r, call.caller, saved_plan(&s_requeue_held_here, k_requeue_held_here), true);
    mark_reported_here(r.job_id);
    SPI_finish();
    PG_RETURN_DATUM(job_status_datum(fcinfo, outcome));
}
