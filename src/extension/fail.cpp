// fail.cpp: fail. While attempts remain the job goes back to pending with run_at pushed by exponential
// backoff with jitter (or by retry_in when given); otherwise it moves to the dead-letter state 'failed'.
#include "args.hpp"
#include "boundary.hpp"
#include "job_state.hpp"
#include "lifecycle.hpp"
#include "spi_plans.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_held, s_requeue;

const plan_text k_held = {
    "SELECT j.attempts, j.max_attempts, q.retry_base, q.retry_cap"
    "  FROM pgjq.live_jobs j JOIN pgjq.queues q ON q.queue_name = j.queue_name"
    " WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending' FOR UPDATE OF j",
    2, {INT8OID, TEXTOID}};
const plan_text k_requeue = {
    "UPDATE pgjq.live_jobs SET status = 'pending', run_at = now() + $3, worker_id = NULL,"
    " lease_expires_at = NULL, last_error = $2 WHERE id = $1",
    3, {INT8OID, TEXTOID, INTERVALOID}};

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

} // namespace

PGJQ_FUNCTION(fail)
{
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    require_arg(fcinfo, 2, "error_message");
    char* error_message = text_to_cstring(PG_GETARG_TEXT_PP(2));
    Interval* retry_in = optional_interval_arg(fcinfo, 3, "retry_in", true);

    SPI_connect();
    Datum values[3] = {Int64GetDatum(job_id), CStringGetTextDatum(worker_id), (Datum) 0};
    if (run_plan(saved_plan(&s_held, k_held), values, nullptr) == 0)
        raise_not_held(job_id, worker_id);
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    int32 attempts = DatumGetInt32(SPI_getbinval(row, desc, 1, &isnull));
    int32 max_attempts = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));

    const char* outcome;
    if (attempts < max_attempts) {
        int64 delay = retry_in ? interval_usecs(retry_in)
                               : backoff_usecs(attempts,
                                               interval_usecs(DatumGetIntervalP(SPI_getbinval(row, desc, 3, &isnull))),
                                               interval_usecs(DatumGetIntervalP(SPI_getbinval(row, desc, 4, &isnull))));
        values[1] = CStringGetTextDatum(error_message);
        values[2] = IntervalPGetDatum(interval_from_usecs(delay));
        run_plan(saved_plan(&s_requeue, k_requeue), values, nullptr);
        outcome = "pending";
    } else {
        archive_jobs(single_id_array(job_id), worker_id, "failed", nullptr, error_message, nullptr);
        outcome = "failed";
    }
    SPI_finish();
    PG_RETURN_DATUM(DirectFunctionCall2(enum_in, CStringGetDatum(outcome),
                                        ObjectIdGetDatum(get_fn_expr_rettype(fcinfo->flinfo))));
}
