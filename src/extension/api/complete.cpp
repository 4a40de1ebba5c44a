// complete.cpp: complete, complete_batch and complete_in_transaction. All are all or nothing: if any job is
// not held by the worker (its worker id and its role), the ERROR rolls back the jobs already moved in the
// same statement.
#include "core/api_function.hpp"
#include "core/lifecycle.hpp"
#include "core/refusals.hpp"
#include "core/transaction_claims.hpp"
#include "core/worker_commit.hpp"
#include "pg/args.hpp"

using namespace pgjq;

PGJQ_API_FUNCTION(complete)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    Jsonb* result = optional_json_arg(fcinfo, 2, "result");

    SPI_connect();
    archive_request r = {single_id_array(job_id), "completed", worker_id, nullptr, call.caller, result, nullptr};
    if (archive_jobs(r) == 0)
        raise_not_held(job_id, worker_id, call.caller);
    SPI_finish();
    PG_RETURN_VOID();
}

PGJQ_API_FUNCTION(complete_batch)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    require_arg(fcinfo, 0, "job_ids");
    ArrayType* ids = PG_GETARG_ARRAYTYPE_P(0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    SPI_connect();
    int64 count = complete_held_jobs(call.caller, ids, worker_id, "job_ids");
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(count));
}

// Completes jobs this transaction claimed with claim_in_transaction, all or nothing.
PGJQ_API_FUNCTION(complete_in_transaction)
{
    require_some(call, cap_worker);
    require_arg(fcinfo, 0, "job_ids");
    ArrayType* ids = PG_GETARG_ARRAYTYPE_P(0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    int distinct;
    int64* distinct_ids = distinct_job_ids(ids, "job_ids", &distinct);
    SPI_connect();
    for (int i = 0; i < distinct; i++)
        require_claimed_here(distinct_ids[i], worker_id, call.caller);
    uint64 count = 0;
    if (distinct > 0) {
        Datum moved;
        archive_request r = {PointerGetDatum(ids), "completed", nullptr, worker_id, call.caller, nullptr, nullptr};
        count = archive_jobs(r, &moved);
        // a job this transaction holds can only have gone by this transaction's own hand (cancel)
        if (count < static_cast<uint64>(distinct))
            raise_gone_from_transaction(first_not_moved(ids, moved), call.caller);
        for (int i = 0; i < distinct; i++)
            mark_reported_here(distinct_ids[i]);
    }
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(count));
}
