// queues.cpp: create_queue, alter_queue, drop_queue, pause_queue, resume_queue; the unknown-queue refusal
// for the SQL-language functions.
#include "core/announcements.hpp"
#include "core/api_function.hpp"
#include "core/deadlines.hpp"
#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "core/lifecycle.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_set_paused, s_lock_depth, s_has_live, s_delete_live, s_delete_finished, s_delete_queue, s_reset_bucket;

// clang-format off
#define QUEUE_TYPES {TEXTOID, INT8OID, BOOLOID, INT4OID, INTERVALOID, INT4OID, INT4OID, INT4OID, INTERVALOID, INTERVALOID}
statement s_insert_queue = {"queues.insert_queue", {
    "INSERT INTO pgjq.queues (queue_name, max_pending, fifo, max_attempts, lease, group_concurrency, max_running,"
    "   rate_limit, rate_interval, job_timeout)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (queue_name) DO NOTHING RETURNING 1",
    10, QUEUE_TYPES}};
// From 0.2.0: $11 group_concurrency, $12 max_running, $13 rate_limit (0: none), $14 rate_interval,
// $15 job_timeout ('0': none).
#define ALTER_QUEUE(added)                                                                             \
    "UPDATE pgjq.queues SET"                                                                           \
    " max_pending  = CASE WHEN $9 THEN NULL ELSE coalesce($2, max_pending) END,"                       \
    " fifo         = coalesce($3, fifo),"                                                              \
    " max_attempts = coalesce($4, max_attempts),"                                                      \
    " lease        = coalesce($5, lease),"                                                             \
    " retry_base   = coalesce($6, retry_base),"                                                        \
    " retry_cap    = coalesce($7, retry_cap),"                                                         \
    " retention    = coalesce($8, retention),"                                                         \
    " keep_completed = coalesce($10, keep_completed)" added                                            \
    " WHERE queue_name = $1 RETURNING retry_base::text, retry_cap::text, retry_cap >= retry_base"
#define ALTER_TYPES                                                                                    \
    {TEXTOID, INT8OID, BOOLOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID, INTERVALOID, BOOLOID, BOOLOID, \
     INT4OID, INT4OID}
// The 15 parameters do not fit one plan_text's types: the last three are set by a second statement.
statement s_alter_queue = {"queues.alter_queue", {
    ALTER_QUEUE(","
                " group_concurrency = coalesce($11, group_concurrency),"
                " max_running = CASE WHEN $12 = 0 THEN NULL ELSE coalesce($12, max_running) END"),
    12, ALTER_TYPES}};
const plan_text k_alter_rate_and_timeout = {
    "UPDATE pgjq.queues SET"
    " rate_limit = CASE WHEN $2 = 0 THEN NULL ELSE coalesce($2, rate_limit) END,"
    " rate_interval = coalesce($3, rate_interval),"
    " job_timeout = CASE WHEN $4 = interval '0' THEN NULL ELSE coalesce($4, job_timeout) END"
    " WHERE queue_name = $1",
    4, {TEXTOID, INT4OID, INTERVALOID, INTERVALOID}};
SPIPlanPtr s_alter_rate_and_timeout;
// A new rate limit starts with a full bucket (created at the next claim).
const plan_text k_reset_bucket = {"DELETE FROM pgjq.rate_limits WHERE queue_name = $1", 1, {TEXTOID}};
statement s_delete_queue_state = {"queues.delete_queue_state", {
    "WITH b AS (DELETE FROM pgjq.rate_limits WHERE queue_name = $1)"
    " DELETE FROM pgjq.unique_windows WHERE queue_name = $1", 1, {TEXTOID}}};
const plan_text k_set_paused = {
    "UPDATE pgjq.queues SET paused = $2 WHERE queue_name = $1", 2, {TEXTOID, BOOLOID}};
// Deleting the depth rows first waits for every transaction that is enqueuing into or finishing jobs
// of the queue (they hold those rows), and makes later enqueues fail with "unknown queue".
const plan_text k_lock_depth = {"DELETE FROM pgjq.queue_depth WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_has_live = {
    "SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_delete_live = {"DELETE FROM pgjq.live_jobs WHERE queue_name = $1", 1, {TEXTOID}};
// The jobs of other queues that wait for an unfinished job of the dropped queue (each with the first such
// job), which are cancelled; and the dependency rows of the queue's jobs, which go with them.
statement s_orphaned_dependents = {"queues.orphaned_dependents", {
    "SELECT d.job_id, min(d.depends_on) FROM pgjq.job_dependencies d"
    "  JOIN pgjq.live_jobs p ON p.id = d.depends_on AND p.queue_name = $1"
    "  JOIN pgjq.live_jobs w ON w.id = d.job_id AND w.queue_name <> $1"
    " GROUP BY d.job_id ORDER BY d.job_id",
    1, {TEXTOID}}};
statement s_delete_dependencies = {"queues.delete_dependencies", {
    "DELETE FROM pgjq.job_dependencies d USING pgjq.live_jobs l"
    " WHERE l.queue_name = $1 AND (d.depends_on = l.id OR d.job_id = l.id)",
    1, {TEXTOID}}};
const plan_text k_delete_finished = {"DELETE FROM pgjq.finished_jobs WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_delete_queue = {"DELETE FROM pgjq.queues WHERE queue_name = $1", 1, {TEXTOID}};
// The queue's capabilities go with it.
statement s_delete_grants = {"queues.delete_grants", {"DELETE FROM pgjq.grants WHERE queue_name = $1", 1, {TEXTOID}}};
// clang-format on

// A queue's caps, limits and timeout as create_queue takes them (0 and nullptr: none).
struct queue_limits {
    int32 group_concurrency;
    int32 max_running;
    int32 rate_limit;
    Interval* rate_interval;
    Interval* job_timeout;
};

// drop_queue(force): a job of another queue that waits for a job of this one would otherwise wait for a job
// that never finishes (or, once the sweep finds its dependency gone, run as if it had completed): it is
// cancelled, as when a job it depends on is cancelled.
void cancel_orphaned_dependents(Datum queue_name, Oid role)
{
    uint64 n = run_plan(saved_plan(&s_orphaned_dependents), &queue_name, nullptr);
    SPITupleTable* orphans = SPI_tuptable;
    for (uint64 i = 0; i < n; i++) {
        bool isnull;
        int64 job = DatumGetInt64(SPI_getbinval(orphans->vals[i], orphans->tupdesc, 1, &isnull));
        int64 parent = DatumGetInt64(SPI_getbinval(orphans->vals[i], orphans->tupdesc, 2, &isnull));
        char* reason = psprintf("job %lld it depends on was dropped with its queue %s", (long long) parent,
                                TextDatumGetCString(queue_name));
        archive_request r = {single_id_array(job), "cancelled", nullptr, nullptr, role, nullptr, reason};
        archive_jobs(r);
    }
    run_plan(saved_plan(&s_delete_dependencies), &queue_name, nullptr);
}

Datum set_paused(FunctionCallInfo fcinfo, const api_call& call, bool paused)
{
    require_some(call, cap_admin);
    char* queue_name = queue_name_arg(fcinfo, 0);
    require(call, cap_admin, queue_name);
    SPI_connect();
    Datum values[2] = {CStringGetTextDatum(queue_name), BoolGetDatum(paused)};
    if (run_plan(saved_plan(&s_set_paused, k_set_paused), values, nullptr) == 0)
        raise_unknown_queue(queue_name);
    SPI_finish();
    PG_RETURN_VOID();
}

}  // namespace

PGJQ_API_FUNCTION(create_queue)
{
    require_every(call, cap_admin);
    char* queue_name = queue_name_arg(fcinfo, 0);
    bool unbounded = PG_ARGISNULL(1);
    if (!unbounded)
        check_max_pending(PG_GETARG_INT64(1));
    require_arg(fcinfo, 2, "fifo");
    require_arg(fcinfo, 3, "max_attempts");
    check_max_attempts(PG_GETARG_INT32(3));
    require_arg(fcinfo, 4, "lease");
    Interval* lease = optional_interval_arg(fcinfo, 4, "lease", k_lease_bounds);
    // From 0.2.0 (a database at 0.1.0 declares the function without them).
    queue_limits limits = {1, 0, 0, nullptr, nullptr};
    if (PG_NARGS() > 5) {
        require_arg(fcinfo, 5, "group_concurrency");
        limits.group_concurrency = PG_GETARG_INT32(5);
        check_int_range(limits.group_concurrency, "group_concurrency", 1, k_max_group_concurrency);
        if (!PG_ARGISNULL(6)) {
            limits.max_running = PG_GETARG_INT32(6);
            check_int_range(limits.max_running, "max_running", 1, k_max_running);
        }
        if (!PG_ARGISNULL(7)) {
            limits.rate_limit = PG_GETARG_INT32(7);
            check_int_range(limits.rate_limit, "rate_limit", 1, k_max_rate_limit);
        }
        require_arg(fcinfo, 8, "rate_interval");
        limits.rate_interval = optional_interval_arg(fcinfo, 8, "rate_interval", k_rate_interval_bounds);
        limits.job_timeout = optional_interval_arg(fcinfo, 9, "job_timeout", k_timeout_bounds);
    }

    SPI_connect();
    Datum values[10] = {CStringGetTextDatum(queue_name),
                        unbounded ? (Datum) 0 : PG_GETARG_DATUM(1),
                        PG_GETARG_DATUM(2),
                        PG_GETARG_DATUM(3),
                        IntervalPGetDatum(lease),
                        Int32GetDatum(limits.group_concurrency),
                        Int32GetDatum(limits.max_running),
                        Int32GetDatum(limits.rate_limit),
                        PointerGetDatum(limits.rate_interval),
                        PointerGetDatum(limits.job_timeout)};
    char nulls[10] = {' ',
                      unbounded ? 'n' : ' ',
                      ' ',
                      ' ',
                      ' ',
                      ' ',
                      limits.max_running ? ' ' : 'n',
                      limits.rate_limit ? ' ' : 'n',
                      limits.rate_interval ? ' ' : 'n',
                      limits.job_timeout ? ' ' : 'n'};
    if (run_plan(saved_plan(&s_insert_queue), values, nulls) == 0)
        ereport(ERROR,
                (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("queue \"%s\" already exists", queue_name),
                 errhint("Use pgjq.alter_queue to change its settings.")));
    create_depth_rows(values[0]);
    SPI_finish();
    if (limits.job_timeout)
        warn_without_maintenance(psprintf("the job_timeout of queue \"%s\"", queue_name));
    PG_RETURN_VOID();
}

PGJQ_API_FUNCTION(alter_queue)
{
    require_some(call, cap_admin);
    char* queue_name = queue_name_arg(fcinfo, 0);
    require(call, cap_admin, queue_name);
    if (!PG_ARGISNULL(1))
        check_max_pending(PG_GETARG_INT64(1));
    if (!PG_ARGISNULL(3))
        check_max_attempts(PG_GETARG_INT32(3));
    optional_interval_arg(fcinfo, 4, "lease", k_lease_bounds);
    optional_interval_arg(fcinfo, 5, "retry_base", k_retry_bounds);
    optional_interval_arg(fcinfo, 6, "retry_cap", k_retry_bounds);
    optional_interval_arg(fcinfo, 7, "retention", k_retention_bounds);
    require_arg(fcinfo, 8, "clear_max_pending");
    bool clear_max_pending = PG_GETARG_BOOL(8);
    if (clear_max_pending && !PG_ARGISNULL(1))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("max_pending and clear_max_pending cannot both be given")));

    // From 0.2.0 (a database at 0.1.0 declares the function without them): 0 or '0' removes a cap, limit
    // or timeout.
    int nargs = PG_NARGS() > 10 ? 15 : 10;
    if (nargs > 10) {
        if (!PG_ARGISNULL(10))
            check_int_range(PG_GETARG_INT32(10), "group_concurrency", 1, k_max_group_concurrency);
        if (!PG_ARGISNULL(11))
            check_int_range(PG_GETARG_INT32(11), "max_running", 0, k_max_running);
        if (!PG_ARGISNULL(12))
            check_int_range(PG_GETARG_INT32(12), "rate_limit", 0, k_max_rate_limit);
        optional_interval_arg(fcinfo, 13, "rate_interval", k_rate_interval_bounds);
        if (!PG_ARGISNULL(14) && interval_usecs(PG_GETARG_INTERVAL_P(14)) != 0)
            optional_interval_arg(fcinfo, 14, "job_timeout", k_timeout_bounds);
    }
    Datum values[15];
    char nulls[15];
    for (int i = 0; i < nargs; i++) {
        values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
        nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
    }
    values[0] = CStringGetTextDatum(queue_name);

    // Waited for before the queue's row is locked, so that a producer counting into the queue may still alter
    // or pause it meanwhile.
    if (!PG_ARGISNULL(1))
        lock_queue_count(queue_name, ExclusiveLock);
    SPI_connect();
    if (run_plan(saved_plan(&s_alter_queue), values, nulls) == 0)
        raise_unknown_queue(queue_name);
    bool isnull;
    if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull)))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("retry_cap %s is shorter than retry_base %s",
                        SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2),
                        SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
                 errdetail("The retry backoff grows from retry_base up to retry_cap.")));
    // A max_pending is checked against the rows: the count in shared memory goes there, once the
    // transactions counting into it have ended (core/enqueue_counts.hpp).
    if (!PG_ARGISNULL(1))
        fold_enqueue_counts(values[0]);
    if (nargs > 10) {
        Datum rest[4] = {values[0], values[12], values[13], values[14]};
        char rest_nulls[4] = {' ', nulls[12], nulls[13], nulls[14]};
        run_plan(saved_plan(&s_alter_rate_and_timeout, k_alter_rate_and_timeout), rest, rest_nulls);
        if (!PG_ARGISNULL(12) || !PG_ARGISNULL(13))
            run_plan(saved_plan(&s_reset_bucket, k_reset_bucket), values, nullptr);
        // More room in every group: what waits for it starts when this transaction commits.
        if (!PG_ARGISNULL(10))
            note_groups_with_room(queue_name);
    }
    SPI_finish();
    if (nargs > 14 && !PG_ARGISNULL(14) && interval_usecs(PG_GETARG_INTERVAL_P(14)) != 0)
        warn_without_maintenance(psprintf("the job_timeout of queue \"%s\"", queue_name));
    PG_RETURN_VOID();
}

PGJQ_API_FUNCTION(drop_queue)
{
    require_some(call, cap_admin);
    char* queue_name = queue_name_arg(fcinfo, 0);
    require(call, cap_admin, queue_name);
    require_arg(fcinfo, 1, "force");
    bool force = PG_GETARG_BOOL(1);

    SPI_connect();
    Datum values[1] = {CStringGetTextDatum(queue_name)};
    // Waits for the transactions counting enqueues into the queue in shared memory, as deleting the rows
    // waits for those that write them; the count goes with the rows.
    lock_queue_count(queue_name, ExclusiveLock);
    if (run_plan(saved_plan(&s_lock_depth, k_lock_depth), values, nullptr) == 0)
        raise_unknown_queue(queue_name);
    take_enqueue_count(queue_name);
    forget_depth(queue_name);
    if (!force) {
        run_plan(saved_plan(&s_has_live, k_has_live), values, nullptr);
        bool isnull, found;
        int64 live = DatumGetInt64(first_value(&isnull, &found));
        if (live > 0)
            ereport(ERROR,
                    (errcode(ERRCODE_OBJECT_IN_USE),
                     errmsg("queue \"%s\" still has %lld unfinished jobs", queue_name, (long long) live),
                     errhint("Wait for them to finish, cancel them, or use force => true to drop them.")));
    } else {
        cancel_orphaned_dependents(values[0], call.caller);
        run_plan(saved_plan(&s_delete_live, k_delete_live), values, nullptr);
        note_live_rows_replaced();
    }
    run_plan(saved_plan(&s_delete_finished, k_delete_finished), values, nullptr);
    run_plan(saved_plan(&s_delete_queue, k_delete_queue), values, nullptr);
    run_plan(saved_plan(&s_delete_grants), values, nullptr);
    run_plan(saved_plan(&s_delete_queue_state), values, nullptr);
    SPI_finish();
    PG_RETURN_VOID();
}

PGJQ_API_FUNCTION(pause_queue)
{
    return set_paused(fcinfo, call, true);
}

PGJQ_API_FUNCTION(resume_queue)
{
    return set_paused(fcinfo, call, false);
}

// The refusal of an unknown queue for pgjq's SQL-language functions (set_capability), so that its wording and
// SQLSTATE have one home (pg/limits.hpp) whichever language checks.
PGJQ_FUNCTION(raise_unknown_queue)
{
    raise_unknown_queue(text_to_cstring(PG_GETARG_TEXT_PP(0)));
    PG_RETURN_VOID();
}
