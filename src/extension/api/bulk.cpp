// bulk.cpp: retry_failed, cancel_jobs and delete_jobs, a queue admin's operations on many jobs chosen by
// filters (job type, a time range, a status).
//
// Bounded batches rather than one statement or a procedure: a call handles at most max_jobs jobs in the
// caller's transaction, takes the rows with FOR UPDATE SKIP LOCKED (never waiting for a worker's claim or a
// producer, and holding its own locks only until the caller commits), and returns how many it handled, so
// callers loop until it returns 0, committing between calls. A function composes where a procedure that
// commits by itself would not: it runs inside a caller's transaction, from any client or pooler, and its
// count is its result. Each batch goes through the one home of its move: retry through core/revive.hpp,
// cancel through archive_jobs (core/lifecycle.hpp), so the depth counters, notifications, groups and
// dependencies stay as exact as one job at a time would keep them.
#include "core/api_function.hpp"
#include "core/job_status.hpp"
#include "core/lifecycle.hpp"
#include "core/revive.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

// Most jobs one call handles, and its default (the SQL declarations say 1000).
constexpr int32 k_max_bulk_jobs = k_max_batch_size;
// Jobs left failed for a held unique_key are counted up to this many for the notice.
constexpr int64 k_held_count_cap = 10000;

SPIPlanPtr s_queue_exists, s_failed, s_held, s_unfinished, s_delete;

// clang-format off
const plan_text k_queue_exists = {"SELECT 1 FROM pgjq.queues WHERE queue_name = $1", 1, {TEXTOID}};
// $1 queue, $2 job_type, $3 failed_after, $4 failed_before (each NULL: any)
#define FAILED_MATCHES                                                                                 \
    " f.queue_name = $1 AND f.status = 'failed' AND ($2::text IS NULL OR f.job_type = $2)"              \
    " AND ($3::timestamptz IS NULL OR f.failed_at >= $3) AND ($4::timestamptz IS NULL OR f.failed_at < $4)"
#define KEY_HELD                                                                                       \
    " EXISTS (SELECT FROM pgjq.live_jobs l WHERE l.queue_name = f.queue_name AND l.unique_key = f.unique_key" \
    "          AND l.enqueued_by IS NOT DISTINCT FROM f.enqueued_by)"
// Jobs whose unique_key a live job holds cannot come back: they are left out, so that a batch of them never
// ends a caller's loop early.
const plan_text k_failed = {
    "SELECT coalesce(pg_catalog.array_agg(id), '{}') FROM ("
    "  SELECT f.id FROM pgjq.finished_jobs f WHERE" FAILED_MATCHES
    "     AND (f.unique_key IS NULL OR NOT" KEY_HELD ")"
    "   ORDER BY f.id LIMIT $5 FOR UPDATE SKIP LOCKED) s",
    5, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID}};
const plan_text k_held = {
    "SELECT count(*) FROM (SELECT FROM pgjq.finished_jobs f WHERE" FAILED_MATCHES
    "   AND f.unique_key IS NOT NULL AND" KEY_HELD " LIMIT $5) s",
    5, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID}};
// $3 created_after, $4 created_before, $5 status
const plan_text k_unfinished = {
    "SELECT coalesce(pg_catalog.array_agg(id), '{}') FROM ("
    "  SELECT id FROM pgjq.live_jobs WHERE queue_name = $1 AND ($2::text IS NULL OR job_type = $2)"
    "     AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)"
    "     AND ($5::text IS NULL OR status::text = $5)"
    "   ORDER BY id LIMIT $6 FOR UPDATE SKIP LOCKED) s",
    6, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, INT4OID}};
// $3 finished_after, $4 finished_before, $5 status
const plan_text k_delete = {
    "DELETE FROM pgjq.finished_jobs WHERE id = ANY (ARRAY("
    "  SELECT id FROM pgjq.finished_jobs WHERE queue_name = $1 AND ($2::text IS NULL OR job_type = $2)"
    "     AND ($3::timestamptz IS NULL OR finished_at >= $3) AND ($4::timestamptz IS NULL OR finished_at < $4)"
    "     AND ($5::text IS NULL OR status::text = $5)"
    "   ORDER BY id LIMIT $6 FOR UPDATE SKIP LOCKED))",
    6, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, INT4OID}};
// clang-format on

// The filters every bulk operation takes, in the order of their arguments: queue_name, job_type, a time
// range, then (cancel_jobs, delete_jobs) a status, and max_jobs last.
struct job_filter {
    char* queue_name;
    Datum values[6];
    char nulls[6];
    int32 max_jobs;
};

// `statuses`: the statuses the status argument may name (nullptr: the function has none).
job_filter read_filter(FunctionCallInfo fcinfo, const api_call& call, const char* const* statuses)
{
    require_some(call, cap_admin);
    job_filter f;
    f.queue_name = queue_name_arg(fcinfo, 0);
    char* job_type = optional_short_text_arg(fcinfo, 1, "job_type");
    int max_jobs_arg = statuses ? 5 : 4;
    f.max_jobs = int_arg_in_range(fcinfo, max_jobs_arg, "max_jobs", 1, k_max_bulk_jobs);
    memset(f.nulls, ' ', sizeof f.nulls);
    f.values[0] = CStringGetTextDatum(f.queue_name);
    f.values[1] = job_type ? CStringGetTextDatum(job_type) : (Datum) 0;
    f.nulls[1] = job_type ? ' ' : 'n';
    for (int i = 2; i <= 3; i++) {
        f.values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
        f.nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
    }
    f.values[4] = (Datum) 0;
    f.nulls[4] = 'n';
    if (statuses && !PG_ARGISNULL(4)) {
        char* status = DatumGetCString(DirectFunctionCall1(enum_out, PG_GETARG_DATUM(4)));
        bool allowed = false;
        for (int i = 0; statuses[i] != nullptr; i++)
            allowed = allowed || strcmp(status, statuses[i]) == 0;
        if (!allowed)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("status %s is not the status of %s job", status,
                            statuses == k_unfinished_statuses ? "an unfinished" : "a finished"),
                     errdetail("cancel_jobs takes the statuses of unfinished jobs (waiting, pending, claimed, "
                               "running), delete_jobs those of finished jobs (completed, failed, cancelled).")));
        f.values[4] = CStringGetTextDatum(status);
        f.nulls[4] = ' ';
    }
    f.values[5] = Int32GetDatum(f.max_jobs);
    require(call, cap_admin, f.queue_name);
    return f;
}

void require_queue(const job_filter& f)
{
    if (run_plan(saved_plan(&s_queue_exists, k_queue_exists), f.values, nullptr, 1) == 0)
        raise_unknown_queue(f.queue_name);
}

Datum selected_ids()
{
    bool isnull, found;
    return first_value(&isnull, &found);
}

}  // namespace

// Sends failed jobs back to pending, as retry does one; returns how many. Jobs whose unique_key an unfinished
// job holds stay failed, and the call that ends a loop (it retried fewer than max_jobs) says how many in a
// NOTICE.
PGJQ_API_FUNCTION(retry_failed)
{
    job_filter f = read_filter(fcinfo, call, nullptr);
    Datum values[5] = {f.values[0], f.values[1], f.values[2], f.values[3], f.values[5]};
    char nulls[5] = {f.nulls[0], f.nulls[1], f.nulls[2], f.nulls[3], ' '};
    SPI_connect();
    require_queue(f);
    run_plan(saved_plan(&s_failed, k_failed), values, nulls);
    int64 revived = revive_jobs(selected_ids());
    if (revived < f.max_jobs) {
        values[4] = Int64GetDatum(k_held_count_cap);
        run_plan(saved_plan(&s_held, k_held), values, nulls);
        bool isnull, found;
        int64 held = DatumGetInt64(first_value(&isnull, &found));
        if (held > 0)
            ereport(NOTICE,
                    (errmsg_plural("%s%lld failed job of queue \"%s\" was not retried: an unfinished job holds its "
                                   "unique_key",
                                   "%s%lld failed jobs of queue \"%s\" were not retried: unfinished jobs hold their "
                                   "unique_keys",
                                   held, held >= k_held_count_cap ? "at least " : "", (long long) held, f.queue_name),
                     errhint("Retry them once the jobs holding their keys have finished.")));
    }
    SPI_finish();
    PG_RETURN_INT64(revived);
}

// Cancels unfinished jobs, as cancel does one (their workers learn it at their next call, PJ003); returns
// how many.
PGJQ_API_FUNCTION(cancel_jobs)
{
    job_filter f = read_filter(fcinfo, call, k_unfinished_statuses);
    SPI_connect();
    require_queue(f);
    run_plan(saved_plan(&s_unfinished, k_unfinished), f.values, f.nulls);
    archive_request r = {selected_ids(), "cancelled", nullptr, nullptr, call.caller, nullptr, nullptr};
    int64 cancelled = static_cast<int64>(archive_jobs(r));
    SPI_finish();
    PG_RETURN_INT64(cancelled);
}

// Deletes finished jobs from the history, as pruning does; returns how many.
PGJQ_API_FUNCTION(delete_jobs)
{
    job_filter f = read_filter(fcinfo, call, k_finished_statuses);
    SPI_connect();
    require_queue(f);
    int64 deleted = static_cast<int64>(run_plan(saved_plan(&s_delete, k_delete), f.values, f.nulls));
    SPI_finish();
    PG_RETURN_INT64(deleted);
}
