// refusals.cpp: the diagnosis behind a refused worker call (see refusals.hpp). It runs only on the
// error path, so the hot paths stay a single statement.
#include "core/refusals.hpp"
#include "core/spi.hpp"
#include "core/sqlstate.hpp"
#include "core/transaction_claims.hpp"

namespace pgjq {

static SPIPlanPtr s_job_state;
// clang-format off
static const plan_text k_job_state = {
    "SELECT status::text, worker_id FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
// clang-format on

void raise_no_such_job(int64 job_id)
{
    ereport(ERROR, (errcode(ERRCODE_NO_DATA_FOUND), errmsg("job %lld does not exist", (long long) job_id)));
    pg_unreachable();
}

void raise_not_held(int64 job_id, const char* worker_id)
{
    Datum values[1] = {Int64GetDatum(job_id)};
    run_plan(saved_plan(&s_job_state, k_job_state), values, nullptr, 1);
    if (SPI_processed == 0)
        raise_no_such_job(job_id);

    char* status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    char* holder = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    bool was_mine = holder != nullptr && strcmp(holder, worker_id) == 0;

    if (was_mine && strcmp(status, "cancelled") == 0)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_JOB_CANCELLED), errmsg("job %lld was cancelled", (long long) job_id),
                 errdetail("Worker \"%s\" held the job when it was cancelled.", worker_id),
                 errhint("Stop working on the job; its outcome is no longer recorded.")));
    if (holder != nullptr && !was_mine && (strcmp(status, "claimed") == 0 || strcmp(status, "running") == 0))
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                 errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
                 errdetail("The job is %s by worker \"%s\".", status, holder),
                 errhint("The lease probably expired and the job was handed to another worker.")));
    ereport(ERROR,
            (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
             errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
             errdetail("The job is %s.", status),
             errhint("A worker may only report on jobs it has claimed and still holds.")));
    pg_unreachable();
}

// The job's status, or null when no such job exists (live or finished).
static const char* job_status(int64 job_id)
{
    Datum values[1] = {Int64GetDatum(job_id)};
    run_plan(saved_plan(&s_job_state, k_job_state), values, nullptr, 1);
    return SPI_processed == 0 ? nullptr : SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

void require_claimed_here(int64 job_id, const char* worker_id)
{
    claim_here_state state = claimed_here(job_id, worker_id);
    if (state == claim_here_state::held)
        return;
    if (state == claim_here_state::already_reported)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                 errmsg("job %lld was already completed or failed in this transaction", (long long) job_id)));
    if (state == claim_here_state::other_worker)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                 errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
                 errdetail("This transaction claimed the job for another worker id.")));
    const char* status = job_status(job_id);
    if (status == nullptr)
        raise_no_such_job(job_id);
    ereport(ERROR,
            (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
             errmsg("job %lld was not claimed in this transaction", (long long) job_id),
             errdetail("The job is %s.", status),
             errhint("complete_in_transaction and fail_in_transaction report only jobs that "
                     "claim_in_transaction returned in the same transaction; jobs claimed with "
                     "claim_job_batch are reported with complete and fail.")));
}

void raise_gone_from_transaction(int64 job_id)
{
    const char* status = job_status(job_id);
    if (status != nullptr && strcmp(status, "cancelled") == 0)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_JOB_CANCELLED), errmsg("job %lld was cancelled", (long long) job_id),
                 errdetail("This transaction cancelled the job it had claimed.")));
    raise_no_such_job(job_id);
}

}  // namespace pgjq
