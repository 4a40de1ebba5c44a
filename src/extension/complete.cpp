// complete.cpp: complete and complete_batch. Both are all or nothing: if any job is not held by the
// worker, the ERROR rolls back the jobs already moved in the same statement.
#include "args.hpp"
#include "boundary.hpp"
#include "job_state.hpp"
#include "complete.hpp"
#include "lifecycle.hpp"

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

int64 complete_held_jobs(ArrayType* ids, const char* worker_id, const char* arg_name)
{
    if (ARR_NDIM(ids) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a one-dimensional array", arg_name)));
    if (array_contains_nulls(ids))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not contain nulls", arg_name)));
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    if (n == 0)
        return 0;
    if (n > k_max_batch_size)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s has %d elements", arg_name, n),
                        errdetail("At most %d jobs can be completed in one call.", k_max_batch_size)));

    // the number of distinct ids is what must move
    const int64* given = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int64* sorted = static_cast<int64*>(palloc(sizeof(int64) * n));
    memcpy(sorted, given, sizeof(int64) * n);
    sort_job_ids(sorted, n);
    int distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[distinct++] = sorted[i];

    Datum moved;
    uint64 count = archive_jobs(PointerGetDatum(ids), worker_id, "completed", nullptr, nullptr, &moved);
    if (count < static_cast<uint64>(distinct)) {
        ArrayType* moved_array = DatumGetArrayTypeP(moved);
        int moved_n = ArrayGetNItems(ARR_NDIM(moved_array), ARR_DIMS(moved_array));
        int64* done = static_cast<int64*>(palloc(sizeof(int64) * (moved_n + 1)));
        memcpy(done, ARR_DATA_PTR(moved_array), sizeof(int64) * moved_n);
        sort_job_ids(done, moved_n);
        for (int i = 0; i < n; i++)
            if (!sorted_ids_contain(done, moved_n, given[i]))
                raise_not_held(given[i], worker_id);
    }
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
