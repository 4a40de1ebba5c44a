// retry.cpp: retry, an admin's re-drive of a failed or cancelled job: pending now, with its full
// max_attempts again and the same id. Only the job's queue's admins may; to anyone else the job does not
// exist.
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/depth.hpp"
#include "core/refusals.hpp"
#include "core/spi.hpp"
#include "maintenance/notification_relay.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_state;

// clang-format off
const plan_text k_state = {"SELECT queue_name, status::text FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
#define REVIVE(role_columns)                                                                           \
    "WITH revived AS ("                                                                                \
    "  DELETE FROM pgjq.finished_jobs WHERE id = $1 AND status IN ('failed', 'cancelled') RETURNING *)" \
    " INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, unique_key,"     \
    "   created_at, max_attempts, last_error" role_columns ")"                                         \
    " SELECT id, queue_name, job_type, priority, payload, now(), unique_key, created_at, max_attempts, last_error" \
    role_columns "   FROM revived RETURNING queue_name"
versioned_plan s_revive = {{REVIVE(", enqueued_by, claimed_by"), 1, {INT8OID}}, {REVIVE(""), 1, {INT8OID}}};
// clang-format on

}  // namespace

PGJQ_API_FUNCTION(retry)
{
    require_some(call, cap_admin);
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    Datum values[1] = {Int64GetDatum(job_id)};
    run_plan(saved_plan(&s_state, k_state), values, nullptr, 1);
    if (SPI_processed == 0 || !holds(call, cap_admin, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)))
        raise_no_such_job(job_id);
    char* status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    if (run_plan(saved_plan(&s_revive, call.legacy), values, nullptr) == 0)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("job %lld is %s", (long long) job_id, status),
                 errdetail("Only failed or cancelled jobs can be retried.")));
    bool isnull;
    Datum queue_name = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    announce_new_jobs(TextDatumGetCString(queue_name));  // runnable now
    adjust_depth(queue_name, 1);
    SPI_finish();
    PG_RETURN_VOID();
}
