// retry.cpp: retry, an admin's re-drive of a failed or cancelled job: pending now, with its full
// max_attempts again and the same id.
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/depth.hpp"
#include "core/refusals.hpp"
#include "core/spi.hpp"
#include "maintenance/notification_relay.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_revive, s_status;

// clang-format off
const plan_text k_revive = {
    "WITH revived AS ("
    "  DELETE FROM pgjq.finished_jobs WHERE id = $1 AND status IN ('failed', 'cancelled') RETURNING *)"
    " INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, unique_key,"
    "   created_at, max_attempts, last_error)"
    " SELECT id, queue_name, job_type, priority, payload, now(), unique_key, created_at, max_attempts, last_error"
    "   FROM revived RETURNING queue_name",
    1, {INT8OID}};
const plan_text k_status = {"SELECT status::text FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
// clang-format on

}  // namespace

PGJQ_FUNCTION(retry)
{
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    Datum values[1] = {Int64GetDatum(job_id)};
    if (run_plan(saved_plan(&s_revive, k_revive), values, nullptr) == 0) {
        run_plan(saved_plan(&s_status, k_status), values, nullptr, 1);
        if (SPI_processed == 0)
            raise_no_such_job(job_id);
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
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
