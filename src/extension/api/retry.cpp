// retry.cpp: retry, an admin's re-drive of a failed or cancelled job: pending now, with its full
// max_attempts again and the same id. Only the job's queue's admins may; to anyone else the job does not
// exist. A job whose unique_key another unfinished job holds now cannot come back (PJ004, naming it).
#include "core/api_function.hpp"
#include "core/lifecycle.hpp"
#include "core/refusals.hpp"
#include "core/revive.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"
#include "pg/sqlstate.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_state;

// clang-format off
const plan_text k_state = {"SELECT queue_name, status::text FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
// The live job holding the retried job's unique_key: the same key of the same role (0.1.0 recorded none).
statement s_key_holder = {"retry.key_holder", {
    "SELECT f.unique_key, l.id, l.status::text FROM pgjq.finished_jobs f"
    "  JOIN pgjq.live_jobs l ON l.queue_name = f.queue_name AND l.unique_key = f.unique_key"
    "   AND l.enqueued_by IS NOT DISTINCT FROM f.enqueued_by WHERE f.id = $1",
    1, {INT8OID}}};
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
    if (strcmp(status, "failed") != 0 && strcmp(status, "cancelled") != 0)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("job %lld is %s", (long long) job_id, status),
                 errdetail("Only failed or cancelled jobs can be retried.")));
    run_plan(saved_plan(&s_key_holder), values, nullptr, 1);
    if (SPI_processed > 0) {
        HeapTuple holder = SPI_tuptable->vals[0];
        TupleDesc desc = SPI_tuptable->tupdesc;
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_UNIQUE_KEY_HELD),
                 errmsg("job %lld cannot be retried: unique_key \"%s\" is held by job %s", (long long) job_id,
                        SPI_getvalue(holder, desc, 1), SPI_getvalue(holder, desc, 2)),
                 errdetail("Job %s is %s, and a unique_key is held by one unfinished job of a queue at a time.",
                           SPI_getvalue(holder, desc, 2), SPI_getvalue(holder, desc, 3)),
                 errhint("Retry once that job has finished, or cancel it.")));
    }
    // A job enqueued with the key since the look above: nothing was revived.
    if (revive_jobs(single_id_array(job_id)) == 0)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_UNIQUE_KEY_HELD),
                 errmsg("job %lld cannot be retried: another job took its unique_key meanwhile", (long long) job_id),
                 errhint("Retry once that job has finished, or cancel it.")));
    SPI_finish();
    PG_RETURN_VOID();
}
