// complete.cpp: complete, complete_batch and complete_in_transaction. All are all or nothing: if any job is
// not held by the worker, the ERROR rolls back the jobs already moved in the same statement.
#include "args.hpp"
#include "boundary.hpp"
#include "job_state.hpp"
#include "complete.hpp"
#include "lifecycle.hpp"
#include "transaction_claims.hpp"

using namespace pgjq;

PGJQ_FUNCTION(complete)
{
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    Jsonb* result = optional_json_arg(fcinfo, 2, "result");

    SPI_connect();
    if (archive_jobs(single_id_array(job_id), worker_id, "completed", result, nullptr, nullptr) == 0)
        raise_not_held(job_id, worker_id);
    SPI_finish();
    PG_RETURN_VOID();
}

namespace pgjq {

// Checks a completion's id array; returns its distinct ids in ascending order (palloc'd) and their count.
static int64* distinct_job_ids(ArrayType* ids, const char* arg_name, int* distinct)
{
    if (ARR_NDIM(ids) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a one-dimensional array", arg_name)));
    if (array_contains_nulls(ids))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not contain nulls", arg_name)));
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    if (n > k_max_batch_size)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s has %d elements", arg_name, n),
                        errdetail("At most %d jobs can be completed in one call.", k_max_batch_size)));
    int64* sorted = static_cast<int64*>(palloc(sizeof(int64) * (n + 1)));
    if (n > 0)
        memcpy(sorted, ARR_DATA_PTR(ids), sizeof(int64) * n);
    sort_job_ids(sorted, n);
    *distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[(*distinct)++] = sorted[i];
    return sorted;
}

// The first id of `ids` (in its order) that is not among the moved ones (an int8[]).
static int64 first_not_moved(ArrayType* ids, Datum moved)
{
    const int64* given = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    ArrayType* moved_array = DatumGetArrayTypeP(moved);
    int moved_n = ArrayGetNItems(ARR_NDIM(moved_array), ARR_DIMS(moved_array));
    int64* done = static_cast<int64*>(palloc(sizeof(int64) * (moved_n + 1)));
    if (moved_n > 0)
        memcpy(done, ARR_DATA_PTR(moved_array), sizeof(int64) * moved_n);
    sort_job_ids(done, moved_n);
    for (int i = 0; i < n; i++)
        if (!sorted_ids_contain(done, moved_n, given[i]))
            return given[i];
    return given[0];
}

int64 complete_held_jobs(ArrayType* ids, const char* worker_id, const char* arg_name)
{
    int distinct;
    distinct_job_ids(ids, arg_name, &distinct);
    if (distinct == 0)
        return 0;
    Datum moved;
    uint64 count = archive_jobs(PointerGetDatum(ids), worker_id, "completed", nullptr, nullptr, &moved);
    if (count < static_cast<uint64>(distinct))
        raise_not_held(first_not_moved(ids, moved), worker_id);
    return static_cast<int64>(count);
}

} // namespace pgjq

PGJQ_FUNCTION(complete_batch)
{
    require_arg(fcinfo, 0, "job_ids");
    ArrayType* ids = PG_GETARG_ARRAYTYPE_P(0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    SPI_connect();
    int64 count = complete_held_jobs(ids, worker_id, "job_ids");
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(count));
}

// Completes jobs this transaction claimed with claim_in_transaction, all or nothing.
PGJQ_FUNCTION(complete_in_transaction)
{
    require_arg(fcinfo, 0, "job_ids");
    ArrayType* ids = PG_GETARG_ARRAYTYPE_P(0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    int distinct;
    int64* distinct_ids = distinct_job_ids(ids, "job_ids", &distinct);
    SPI_connect();
    for (int i = 0; i < distinct; i++)
        require_claimed_here(distinct_ids[i], worker_id);
    uint64 count = 0;
    if (distinct > 0) {
        Datum moved;
        count = archive_jobs(PointerGetDatum(ids), nullptr, "completed", nullptr, nullptr, &moved, worker_id);
        // a job this transaction holds can only have gone by this transaction's own hand (cancel)
        if (count < static_cast<uint64>(distinct))
            raise_gone_from_transaction(first_not_moved(ids, moved));
        for (int i = 0; i < distinct; i++)
            mark_reported_here(distinct_ids[i]);
    }
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(count));
}
