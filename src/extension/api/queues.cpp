// queues.cpp: create_queue, alter_queue, drop_queue, pause_queue, resume_queue.
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/depth.hpp"
#include "core/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_insert_queue, s_alter_queue, s_set_paused, s_lock_depth, s_has_live, s_delete_live, s_delete_finished,
    s_delete_queue, s_delete_grants;

// clang-format off
const plan_text k_insert_queue = {
    "INSERT INTO pgjq.queues (queue_name, max_pending, fifo, max_attempts, lease)"
    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (queue_name) DO NOTHING RETURNING 1",
    5, {TEXTOID, INT8OID, BOOLOID, INT4OID, INTERVALOID}};
const plan_text k_alter_queue = {
    "UPDATE pgjq.queues SET"
    " max_pending  = CASE WHEN $9 THEN NULL ELSE coalesce($2, max_pending) END,"
    " fifo         = coalesce($3, fifo),"
    " max_attempts = coalesce($4, max_attempts),"
    " lease        = coalesce($5, lease),"
    " retry_base   = coalesce($6, retry_base),"
    " retry_cap    = coalesce($7, retry_cap),"
    " retention    = coalesce($8, retention),"
    " keep_completed = coalesce($10, keep_completed)"
    " WHERE queue_name = $1 RETURNING retry_base::text, retry_cap::text, retry_cap >= retry_base",
    10, {TEXTOID, INT8OID, BOOLOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID, INTERVALOID, BOOLOID, BOOLOID}};
const plan_text k_set_paused = {
    "UPDATE pgjq.queues SET paused = $2 WHERE queue_name = $1", 2, {TEXTOID, BOOLOID}};
// Deleting the depth rows first waits for every transaction that is enqueuing into or finishing jobs
// of the queue (they hold those rows), and makes later enqueues fail with "unknown queue".
const plan_text k_lock_depth = {"DELETE FROM pgjq.queue_depth WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_has_live = {
    "SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_delete_live = {"DELETE FROM pgjq.live_jobs WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_delete_finished = {"DELETE FROM pgjq.finished_jobs WHERE queue_name = $1", 1, {TEXTOID}};
const plan_text k_delete_queue = {"DELETE FROM pgjq.queues WHERE queue_name = $1", 1, {TEXTOID}};
// From 0.2.0: the queue's capabilities go with it.
const plan_text k_delete_grants = {"DELETE FROM pgjq.grants WHERE queue_name = $1", 1, {TEXTOID}};
// clang-format on

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

    SPI_connect();
    Datum values[5] = {CStringGetTextDatum(queue_name), unbounded ? (Datum) 0 : PG_GETARG_DATUM(1), PG_GETARG_DATUM(2),
                       PG_GETARG_DATUM(3), IntervalPGetDatum(lease)};
    char nulls[5] = {' ', unbounded ? 'n' : ' ', ' ', ' ', ' '};
    if (run_plan(saved_plan(&s_insert_queue, k_insert_queue), values, nulls) == 0)
        ereport(ERROR,
                (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("queue \"%s\" already exists", queue_name),
                 errhint("Use pgjq.alter_queue to change its settings.")));
    create_depth_rows(values[0]);
    SPI_finish();
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

    Datum values[10];
    char nulls[10];
    for (int i = 0; i < 10; i++) {
        values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
        nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
    }
    values[0] = CStringGetTextDatum(queue_name);

    SPI_connect();
    if (run_plan(saved_plan(&s_alter_queue, k_alter_queue), values, nulls) == 0)
        raise_unknown_queue(queue_name);
    bool isnull;
    if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull)))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("retry_cap %s is shorter than retry_base %s",
                        SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2),
                        SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
                 errdetail("The retry backoff grows from retry_base up to retry_cap.")));
    SPI_finish();
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
    if (run_plan(saved_plan(&s_lock_depth, k_lock_depth), values, nullptr) == 0)
        raise_unknown_queue(queue_name);
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
        run_plan(saved_plan(&s_delete_live, k_delete_live), values, nullptr);
    }
    run_plan(saved_plan(&s_delete_finished, k_delete_finished), values, nullptr);
    run_plan(saved_plan(&s_delete_queue, k_delete_queue), values, nullptr);
    if (!call.legacy)
        run_plan(saved_plan(&s_delete_grants, k_delete_grants), values, nullptr);
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
