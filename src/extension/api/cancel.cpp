// cancel.cpp: cancel, a producer's way to stop a job that has not finished. A producer cancels the jobs its
// role enqueued (in a queue it produces to); a queue's admin cancels any of its jobs. Any other job is, to
// the caller, a job that does not exist.
#include "core/api_function.hpp"
#include "core/lifecycle.hpp"
#include "core/refusals.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_is_finished, s_whose;

// clang-format off
const plan_text k_is_finished = {"SELECT 1 FROM pgjq.finished_jobs WHERE id = $1", 1, {INT8OID}};
const plan_text k_whose = {
    "SELECT queue_name, enqueued_by::oid FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
// clang-format on

// May the caller cancel the job? Its queue's admin may, and so may a producer of its queue whose role
// enqueued it (or any producer of its queue, for jobs of 0.1.0, which did not record who enqueued them).
bool may_cancel(const api_call& call, int64 job_id)
{
    if (call.privileged)
        return true;
    Datum values[1] = {Int64GetDatum(job_id)};
    if (run_plan(saved_plan(&s_whose, k_whose), values, nullptr, 1) == 0)
        return false;
    bool isnull;
    char* queue_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    Datum enqueued_by = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
    if (holds(call, cap_admin, queue_name))
        return true;
    return holds(call, cap_producer, queue_name) &&
        (isnull || has_privs_of_role(call.caller, DatumGetObjectId(enqueued_by)));
}

}  // namespace

// true when this call cancelled the job; false when it had already finished (completed, failed or
// cancelled). A worker holding a cancelled job learns it at its next call (SQLSTATE PJ003).
PGJQ_API_FUNCTION(cancel)
{
    require_some(call, cap_producer | cap_admin);
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    if (!may_cancel(call, job_id))
        raise_no_such_job(job_id);
    archive_request r = {single_id_array(job_id), "cancelled", nullptr, nullptr, call.caller, nullptr, nullptr};
    bool cancelled = archive_jobs(r) > 0;
    if (!cancelled) {
        Datum values[1] = {Int64GetDatum(job_id)};
        if (run_plan(saved_plan(&s_is_finished, k_is_finished), values, nullptr, 1) == 0)
            raise_no_such_job(job_id);
    }
    SPI_finish();
    PG_RETURN_BOOL(cancelled);
}
