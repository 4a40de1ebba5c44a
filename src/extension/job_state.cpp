// job_state.cpp: the diagnosis behind a refused worker call (see job_state.hpp). It runs only on the
// error path, so the hot paths stay a single statement.
#include "job_state.hpp"
#include "spi_plans.hpp"
#include "sqlstate.hpp"

namespace pgjq {

static SPIPlanPtr s_job_state_plan;
static const plan_text k_job_state_sql = {
    "SELECT status::text, worker_id FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};

void raise_no_such_job(int64 job_id)
{
    ereport(ERROR, (errcode(ERRCODE_NO_DATA_FOUND), errmsg("job %lld does not exist", (long long) job_id)));
    pg_unreachable();
}

void raise_not_held(int64 job_id, const char* worker_id)
{
    Datum values[1] = {Int64GetDatum(job_id)};
    run_plan(saved_plan(&s_job_state_plan, k_job_state_sql), values, nullptr, 1);
    if (SPI_processed == 0)
        raise_no_such_job(job_id);

    char* status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    char* holder = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    bool was_mine = holder != nullptr && strcmp(holder, worker_id) == 0;

    if (was_mine && strcmp(status, "cancelled") == 0)
        ereport(ERROR, (errcode(PGJQ_ERRCODE_JOB_CANCELLED),
                        errmsg("job %lld was cancelled", (long long) job_id),
                        errdetail("Worker \"%s\" held the job when it was cancelled.", worker_id),
                        errhint("Stop working on the job; its outcome is no longer recorded.")));
    if (holder != nullptr && !was_mine && (strcmp(status, "claimed") == 0 || strcmp(status, "running") == 0))
        ereport(ERROR, (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                        errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
                        errdetail("The job is %s by worker \"%s\".", status, holder),
                        errhint("The lease probably expired and the job was handed to another worker.")));
    ereport(ERROR, (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                    errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
                    errdetail("The job is %s.", status),
                    errhint("A worker may only report on jobs it has claimed and still holds.")));
    pg_unreachable();
}

} // namespace pgjq
