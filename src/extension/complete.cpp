// complete.cpp: complete and complete_batch. Both are all or nothing: if any job is not held by the
// worker, the ERROR rolls back the jobs already moved in the same statement.
#include "args.hpp"
#include "boundary.hpp"
#include "job_state.hpp"
#include "lifecycle.hpp"

namespace {

using namespace pgjq;

int compare_int64(const void* a, const void* b)
{
    int64 x = *static_cast<const int64*>(a), y = *static_cast<const int64*>(b);
    return (x > y) - (x < y);
}

bool contains(const int64* sorted, int n, int64 id)
{
    return bsearch(&id, sorted, n, sizeof(int64), compare_int64) != nullptr;
}

} // namespace

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

PGJQ_FUNCTION(complete_batch)
{
    require_arg(fcinfo, 0, "job_ids");
    ArrayType* ids = PG_GETARG_ARRAYTYPE_P(0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    if (ARR_NDIM(ids) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("job_ids must be a one-dimensional array")));
    if (array_contains_nulls(ids))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("job_ids must not contain nulls")));
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    if (n == 0)
        PG_RETURN_INT32(0);
    if (n > k_max_batch_size)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("job_ids has %d elements", n),
                        errdetail("At most %d jobs can be completed in one call.", k_max_batch_size)));

    // the number of distinct ids is what must move
    const int64* given = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int64* sorted = static_cast<int64*>(palloc(sizeof(int64) * n));
    memcpy(sorted, given, sizeof(int64) * n);
    qsort(sorted, n, sizeof(int64), compare_int64);
    int distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[distinct++] = sorted[i];

    SPI_connect();
    Datum moved;
    uint64 count = archive_jobs(PointerGetDatum(ids), worker_id, "completed", nullptr, nullptr, &moved);
    if (count < static_cast<uint64>(distinct)) {
        ArrayType* moved_array = DatumGetArrayTypeP(moved);
        int moved_n = ArrayGetNItems(ARR_NDIM(moved_array), ARR_DIMS(moved_array));
        int64* done = static_cast<int64*>(palloc(sizeof(int64) * (moved_n + 1)));
        memcpy(done, ARR_DATA_PTR(moved_array), sizeof(int64) * moved_n);
        qsort(done, moved_n, sizeof(int64), compare_int64);
        for (int i = 0; i < n; i++)
            if (!contains(done, moved_n, given[i]))
                raise_not_held(given[i], worker_id);
    }
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(count));
}
