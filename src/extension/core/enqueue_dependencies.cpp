// enqueue_dependencies.cpp: depends_on at enqueue (see enqueue_dependencies.hpp).
#include "core/enqueue_dependencies.hpp"

#include "core/lifecycle.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_judge_dependencies, s_record_dependencies, s_mark_dependencies_used;

// clang-format off
// The jobs named in depends_on ($1, distinct): live (unfinished), or finished with their status.
const plan_text k_judge_dependencies = {
    "SELECT d.id, l.id IS NOT NULL, f.status::text, coalesce(l.queue_name, f.queue_name),"
    "       coalesce(l.enqueued_by, f.enqueued_by)::oid"
    "  FROM pg_catalog.unnest($1::bigint[]) AS d(id)"
    "  LEFT JOIN pgjq.live_jobs l ON l.id = d.id LEFT JOIN pgjq.finished_jobs f ON f.id = d.id ORDER BY d.id",
    1, {INT8ARRAYOID}};
// $1 the unfinished parents, $2 the waiting jobs (each waits for every parent).
const plan_text k_record_dependencies = {
    "INSERT INTO pgjq.job_dependencies (depends_on, job_id)"
    " SELECT p, j FROM pg_catalog.unnest($1::bigint[]) AS p, pg_catalog.unnest($2::bigint[]) AS j",
    2, {INT8ARRAYOID, INT8ARRAYOID}};
// From the first job with dependencies on, finishing a job looks for its dependents (core/queue_cache.hpp).
const plan_text k_mark_dependencies_used = {
    "UPDATE pgjq.queues SET uses_dependencies = true WHERE queue_name = $1 AND NOT uses_dependencies",
    1, {TEXTOID}};
// clang-format on

}  // namespace

namespace pgjq {

// The rules for depends_on: a one-dimensional array without NULLs of at most k_max_dependencies ids; its
// distinct ids, or nullptr when it is empty.
ArrayType* dependencies_arg(ArrayType* given)
{
    if (ARR_NDIM(given) > 1)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("depends_on must be a one-dimensional array")));
    if (array_contains_nulls(given))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("depends_on must not contain nulls")));
    int n = ArrayGetNItems(ARR_NDIM(given), ARR_DIMS(given));
    if (n > k_max_dependencies)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("depends_on has %d elements", n),
                 errdetail("A job may depend on at most %d jobs.", k_max_dependencies)));
    if (n == 0)
        return nullptr;
    int64* ids = static_cast<int64*>(palloc(sizeof(int64) * n));
    memcpy(ids, ARR_DATA_PTR(given), sizeof(int64) * n);
    sort_job_ids(ids, n);
    int distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            ids[distinct++] = ids[i];
    return job_id_array(ids, distinct);
}

// Looks up the jobs of r.depends_on: each must exist and be readable by the caller (else, to the caller, it
// does not exist). Unfinished ones are waited for; a completed one is met; the first failed or cancelled one
// dooms the job. Requires an SPI connection.
dependency_state judge_dependencies(const enqueue_request& r)
{
    dependency_state state = {(Datum) 0, 0, false};
    Datum values[1] = {PointerGetDatum(r.depends_on)};
    uint64 n = run_plan(saved_plan(&s_judge_dependencies, k_judge_dependencies), values, nullptr);
    int64* unfinished = static_cast<int64*>(palloc(sizeof(int64) * (n + 1)));
    int nunfinished = 0;
    for (uint64 i = 0; i < n; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        TupleDesc desc = SPI_tuptable->tupdesc;
        bool isnull, no_status, no_role;
        int64 id = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
        bool live = DatumGetBool(SPI_getbinval(row, desc, 2, &isnull));
        Datum status = SPI_getbinval(row, desc, 3, &no_status);
        char* queue = SPI_getvalue(row, desc, 4);
        Datum enqueued_by = SPI_getbinval(row, desc, 5, &no_role);
        if ((!live && no_status) ||
            !may_read_job(r.call->caller, queue, no_role ? InvalidOid : DatumGetObjectId(enqueued_by)))
            ereport(ERROR,
                    (errcode(ERRCODE_NO_DATA_FOUND), errmsg("job %lld in depends_on does not exist", (long long) id),
                     errhint("A job can depend only on jobs that exist when it is enqueued: pruned jobs, and "
                             "completed jobs of a queue with keep_completed = false, are gone.")));
        if (live) {
            unfinished[nunfinished++] = id;
            continue;
        }
        const char* finished_as = TextDatumGetCString(status);
        if (state.broken_by == 0 && strcmp(finished_as, "completed") != 0) {
            state.broken_by = id;
            state.broken_by_failure = strcmp(finished_as, "failed") == 0;
        }
    }
    if (nunfinished > 0)
        state.unfinished = PointerGetDatum(job_id_array(unfinished, nunfinished));
    // From now on, jobs that finish in this database look for dependents.
    mark_dependencies_used(r.queue_text);
    return state;
}

void mark_dependencies_used(Datum queue_text)
{
    run_plan(saved_plan(&s_mark_dependencies_used, k_mark_dependencies_used), &queue_text, nullptr);
}

// What a job enqueued waiting does besides its insert: its dependency rows and the notes for the commit,
// or, if a job it depends on has already failed or been cancelled, its own cancellation. `ids` is an int8[]
// of the jobs just inserted.
void settle_waiting_insert(const enqueue_request& r, Datum ids)
{
    if (r.held)
        return;  // its workflow's counters start it
    if (r.depends.broken_by != 0) {
        char* reason = psprintf("job %lld it depends on %s", (long long) r.depends.broken_by,
                                r.depends.broken_by_failure ? "failed" : "was cancelled");
        archive_request cancelled = {ids, "cancelled", nullptr, nullptr, r.call->caller, nullptr, reason};
        archive_jobs(cancelled);
        return;
    }
    if (r.depends.unfinished != (Datum) 0) {
        Datum values[2] = {r.depends.unfinished, ids};
        run_plan(saved_plan(&s_record_dependencies, k_record_dependencies), values, nullptr);
        ArrayType* parents = DatumGetArrayTypeP(r.depends.unfinished);
        ArrayType* jobs = DatumGetArrayTypeP(ids);
        int njobs = ArrayGetNItems(ARR_NDIM(jobs), ARR_DIMS(jobs));
        for (int i = 0; i < njobs; i++)
            note_new_dependent(reinterpret_cast<const int64*>(ARR_DATA_PTR(jobs))[i],
                               reinterpret_cast<const int64*>(ARR_DATA_PTR(parents)),
                               ArrayGetNItems(ARR_NDIM(parents), ARR_DIMS(parents)));
    } else if (r.group_key == nullptr) {
        // Its dependencies all completed: nothing to wait for after all. The commit starts it.
        ArrayType* jobs = DatumGetArrayTypeP(ids);
        int njobs = ArrayGetNItems(ARR_NDIM(jobs), ARR_DIMS(jobs));
        for (int i = 0; i < njobs; i++)
            note_new_dependent(reinterpret_cast<const int64*>(ARR_DATA_PTR(jobs))[i], nullptr, 0);
    }
    if (r.group_key != nullptr)
        note_group_changed(r.queue_name, r.call->caller, r.group_key);
}

}  // namespace pgjq
