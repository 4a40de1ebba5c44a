// refusals.cpp: the diagnosis behind a refused worker call (see refusals.hpp). It runs only on the
// error path, so the hot paths stay a single statement.
#include "core/refusals.hpp"

#include "core/privileges.hpp"
#include "core/transaction_claims.hpp"
#include "pg/catalog.hpp"
#include "pg/spi.hpp"
#include "pg/sqlstate.hpp"
#include "versions/statement.hpp"

namespace pgjq {

// clang-format off
static statement s_job_state = {"refusals.job_state", {"SELECT j.status::text, j.worker_id, j.claimed_by::oid, j.queue_name, j.enqueued_by::oid,"
     "       coalesce(j.timeout_at <= now(), false),"
     "       coalesce(j.timeout, (SELECT q.job_timeout FROM pgjq.queues q WHERE q.queue_name = j.queue_name))::text"
     "  FROM pgjq.jobs j WHERE j.id = $1",
     1, {INT8OID}}};
// clang-format on

namespace {

// The job as a refusal needs it; `found` is false when no such job exists, or when `role` may not read it
// (another tenant's job: its existence is not told either).
struct job_state {
    bool found;
    const char* status;
    const char* worker_id;
    Oid claimed_by;
    bool timed_out;       // held past its execution timeout
    const char* allowed;  // that timeout
};

job_state read_job_state(int64 job_id, Oid role)
{
    Datum values[1] = {Int64GetDatum(job_id)};
    run_plan(saved_plan(&s_job_state), values, nullptr, 1);
    job_state state = {false, nullptr, nullptr, InvalidOid, false, nullptr};
    if (SPI_processed == 0)
        return state;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    Datum claimed_by = SPI_getbinval(row, desc, 3, &isnull);
    state.claimed_by = isnull ? InvalidOid : DatumGetObjectId(claimed_by);
    Datum enqueued_by = SPI_getbinval(row, desc, 5, &isnull);
    if (!may_read_job(role, SPI_getvalue(row, desc, 4), isnull ? InvalidOid : DatumGetObjectId(enqueued_by)))
        return state;
    state.found = true;
    state.status = SPI_getvalue(row, desc, 1);
    state.worker_id = SPI_getvalue(row, desc, 2);
    state.timed_out = DatumGetBool(SPI_getbinval(row, desc, 6, &isnull));
    state.allowed = SPI_getvalue(row, desc, 7);
    return state;
}

// A role reports on a job that another role claimed under the same worker id (a forged report).
void raise_claimed_by_other_role(int64 job_id, const char* worker_id)
{
    ereport(ERROR,
            (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
             errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
             errdetail("Another role claimed it under that worker id."),
             errhint("Only the role that claimed a job, or a member of it, may report on it.")));
    pg_unreachable();
}

}  // namespace

void raise_no_such_job(int64 job_id)
{
    ereport(ERROR, (errcode(ERRCODE_NO_DATA_FOUND), errmsg("job %lld does not exist", (long long) job_id)));
    pg_unreachable();
}

void raise_not_held(int64 job_id, const char* worker_id, Oid role)
{
    job_state job = read_job_state(job_id, role);
    if (!job.found)
        raise_no_such_job(job_id);
    const char* status = job.status;
    const char* holder = job.worker_id;
    bool held = strcmp(status, "claimed") == 0 || strcmp(status, "running") == 0;
    bool my_role = !OidIsValid(job.claimed_by) || job.claimed_by == role || has_privs_of_role(role, job.claimed_by);
    bool was_mine = holder != nullptr && strcmp(holder, worker_id) == 0 && my_role;

    if (was_mine && strcmp(status, "cancelled") == 0)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_JOB_CANCELLED), errmsg("job %lld was cancelled", (long long) job_id),
                 errdetail("Worker \"%s\" held the job when it was cancelled.", worker_id),
                 errhint("Stop working on the job; its outcome is no longer recorded.")));
    if (held && was_mine && job.timed_out)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_JOB_TIMED_OUT), errmsg("job %lld timed out", (long long) job_id),
                 errdetail("It ran past its execution timeout of %s.", job.allowed ? job.allowed : "?"),
                 errhint("Stop working on the job: the attempt is failed when its lease is recovered.")));
    if (held && holder != nullptr && strcmp(holder, worker_id) == 0 && !my_role)
        raise_claimed_by_other_role(job_id, worker_id);
    if (held && holder != nullptr && !was_mine)
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

// The job's status, or null when no such job exists (live or finished) or `role` may not read it.
static const char* job_status(int64 job_id, Oid role)
{
    job_state job = read_job_state(job_id, role);
    return job.found ? job.status : nullptr;
}

void require_claimed_here(int64 job_id, const char* worker_id, Oid role)
{
    claim_here_state state = claimed_here(job_id, worker_id, role);
    if (state == claim_here_state::held)
        return;
    if (state == claim_here_state::already_reported)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                 errmsg("job %lld was already completed or failed in this transaction", (long long) job_id)));
    if (state == claim_here_state::other_role)
        raise_claimed_by_other_role(job_id, worker_id);
    if (state == claim_here_state::other_worker)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_NOT_LEASE_HOLDER),
                 errmsg("worker \"%s\" does not hold job %lld", worker_id, (long long) job_id),
                 errdetail("This transaction claimed the job for another worker id.")));
    const char* status = job_status(job_id, role);
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

void raise_gone_from_transaction(int64 job_id, Oid role)
{
    const char* status = job_status(job_id, role);
    if (status != nullptr && strcmp(status, "cancelled") == 0)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_JOB_CANCELLED), errmsg("job %lld was cancelled", (long long) job_id),
                 errdetail("This transaction cancelled the job it had claimed.")));
    raise_no_such_job(job_id);
}

}  // namespace pgjq
