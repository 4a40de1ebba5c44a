// cancel.cpp: cancel (a producer's) and retry (an admin's re-drive of a failed or cancelled job).
#include "args.hpp"
#include "boundary.hpp"
#include "job_state.hpp"
#include "lifecycle.hpp"
#include "notify_relay.hpp"
#include "spi_plans.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_is_finished, s_revive, s_status;

const plan_text k_is_finished = {"SELECT 1 FROM pgjq.finished_jobs WHERE id = $1", 1, {INT8OID}};
// Attempts start over: a re-driven job gets its full max_attempts again.
const plan_text k_revive = {
    "WITH revived AS ("
    "  DELETE FROM pgjq.finished_jobs WHERE id = $1 AND status IN ('failed', 'cancelled') RETURNING *)"
    " INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, unique_key,"
    "   created_at, max_attempts, last_error)"
    " SELECT id, queue_name, job_type, priority, payload, now(), unique_key, created_at, max_attempts, last_error"
    "   FROM revived RETURNING queue_name",
    1, {INT8OID}};
const plan_text k_status = {"SELECT status::text FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};

} // namespace

// true when this call cancelled the job; false when it had already finished (completed, failed or
// cancelled). A worker holding a cancelled job learns it at its next call (SQLSTATE PJ003).
PGJQ_FUNCTION(cancel)
{
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    bool cancelled = archive_jobs(single_id_array(job_id), nullptr, "cancelled", nullptr, nullptr, nullptr) > 0;
    if (!cancelled) {
        Datum values[1] = {Int64GetDatum(job_id)};
        if (run_plan(saved_plan(&s_is_finished, k_is_finished), values, nullptr, 1) == 0)
            raise_no_such_job(job_id);
    }
    SPI_finish();
    PG_RETURN_BOOL(cancelled);
}

PGJQ_FUNCTION(retry)
{
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    Datum values[1] = {Int64GetDatum(job_id)};
    if (run_plan(saved_plan(&s_revive, k_revive), values, nullptr) == 0) {
        run_plan(saved_plan(&s_status, k_status), values, nullptr, 1);
        if (SPI_processed == 0)
            raise_no_such_job(job_id);
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("job %lld is %s", (long long) job_id,
                               SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
                        errdetail("Only failed or cancelled jobs can be retried.")));
    }
    bool isnull;
    Datum queue_name = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    announce_new_jobs(TextDatumGetCString(queue_name));  // runnable now
    adjust_depth(queue_name, 1);
    SPI_finish();
    PG_RETURN_VOID();
}
