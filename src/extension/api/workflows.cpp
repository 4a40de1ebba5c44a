// workflows.cpp: start_workflow, add_steps, cancel_workflow, retry_workflow (core/workflow_plan.hpp,
// core/workflows.hpp), and what a job does about its own run: checkpoint, wait_for_event, sleep_until, and
// signal (core/events.hpp).
#include "core/workflows.hpp"
#include "core/api_function.hpp"
#include "core/events.hpp"
#include "core/job_columns.hpp"
#include "core/lifecycle.hpp"
#include "core/refusals.hpp"
#include "core/revive.hpp"
#include "core/workflow_plan.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"
#include "pg/sqlstate.hpp"

namespace {

using namespace pgjq;

// Checkpoints pgjq records for a job's waits and sleeps; a job's own checkpoint names may not take the prefix.
constexpr const char* k_reserved_prefix = "pgjq:";

SPIPlanPtr s_new_workflow, s_keyed_workflow, s_held, s_step_of, s_existing, s_taken_names, s_add_total, s_workflow,
    s_queues, s_live_steps, s_mark_cancelled, s_failed_steps, s_get_checkpoint, s_count_checkpoints, s_put_checkpoint,
    s_set_checkpoint, s_find_event, s_record_wait, s_drop_wait, s_queue_exists;

// clang-format off
const plan_text k_new_workflow = {
    "INSERT INTO pgjq.workflow_runs (workflow_name, workflow_key, started_by, on_failure, retention, parent_job,"
    "                                steps_total)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7)"
    " ON CONFLICT (started_by, workflow_key) WHERE workflow_key IS NOT NULL AND finished_at IS NULL DO NOTHING"
    " RETURNING id",
    7, {TEXTOID, TEXTOID, REGROLEOID, TEXTOID, INTERVALOID, INT8OID, INT4OID}};
const plan_text k_keyed_workflow = {
    "SELECT id FROM pgjq.workflow_runs WHERE started_by = $1 AND workflow_key = $2 AND finished_at IS NULL",
    2, {REGROLEOID, TEXTOID}};
// The job, if the worker id ($2) and the role ($3) hold it (as fail's check): its queue and enqueuing role.
const plan_text k_held = {
    "SELECT j.queue_name, j.enqueued_by::oid FROM pgjq.live_jobs j"
    " WHERE j.id = $1 AND j.worker_id = $2 AND j.status > 'pending'"
    PGJQ_HELD_BY_ROLE("j.", "$3") PGJQ_BEFORE_TIMEOUT("j.") " FOR NO KEY UPDATE OF j",
    3, {INT8OID, TEXTOID, REGROLEOID}};
// The workflow of step $1: the steps it gains are its starter's jobs, counted in its row. Not locked here:
// the workflow's row is locked after the steps' rows (k_existing), as a settlement locks them
// (core/workflows.hpp), so that the two never wait for each other in opposite orders.
const plan_text k_step_of = {
    "SELECT w.id, w.on_failure, w.steps_total, w.started_by::oid FROM pgjq.workflow_run_steps s"
    "  JOIN pgjq.workflow_runs w ON w.id = s.workflow_id WHERE s.job_id = $1",
    1, {INT8OID}};
// The steps of workflow $1 named $2, locked against their settlement (workflows.hpp).
const plan_text k_existing = {
    "SELECT step_name, job_id, finished_at IS NULL, finished_at IS NOT NULL AND status <> 'completed'"
    "  FROM pgjq.workflow_run_steps WHERE workflow_id = $1 AND step_name = ANY ($2) ORDER BY job_id FOR SHARE",
    2, {INT8OID, TEXTARRAYOID}};
const plan_text k_taken_names = {
    "SELECT step_name FROM pgjq.workflow_run_steps WHERE workflow_id = $1 AND step_name = ANY ($2) LIMIT 1",
    2, {INT8OID, TEXTARRAYOID}};
// Counts $2 more steps in workflow $1, unless it would pass $3 (a concurrent call added steps meanwhile).
const plan_text k_add_total = {
    "UPDATE pgjq.workflow_runs SET steps_total = steps_total + $2 WHERE id = $1 AND steps_total + $2 <= $3",
    3, {INT8OID, INT4OID, INT4OID}};
// Not locked: a step's settlement locks the workflow's row after its steps' (core/workflows.hpp), and a
// cancellation that held it while it waited for a step would deadlock with that settlement.
const plan_text k_workflow = {"SELECT started_by::oid FROM pgjq.workflow_runs WHERE id = $1", 1, {INT8OID}};
const plan_text k_queues = {
    "SELECT DISTINCT queue_name, enqueued_by::oid FROM pgjq.workflow_run_steps WHERE workflow_id = $1", 1, {INT8OID}};
const plan_text k_live_steps = {
    "SELECT coalesce(array_agg(s.job_id ORDER BY s.job_id), '{}') FROM pgjq.workflow_run_steps s"
    " WHERE s.workflow_id = $1 AND EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = s.job_id)",
    1, {INT8OID}};
const plan_text k_mark_cancelled = {
    "UPDATE pgjq.workflow_runs SET status = 'cancelled' WHERE id = $1 AND status = 'running' AND finished_at IS NULL",
    1, {INT8OID}};
const plan_text k_failed_steps = {
    "SELECT coalesce(array_agg(job_id ORDER BY job_id), '{}') FROM pgjq.workflow_run_steps"
    " WHERE workflow_id = $1 AND finished_at IS NOT NULL AND status IN ('failed', 'cancelled')",
    1, {INT8OID}};
const plan_text k_get_checkpoint = {
    "SELECT value FROM pgjq.checkpoints WHERE job_id = $1 AND name = $2", 2, {INT8OID, TEXTOID}};
const plan_text k_count_checkpoints = {
    "SELECT count(*) FROM pgjq.checkpoints WHERE job_id = $1", 1, {INT8OID}};
const plan_text k_put_checkpoint = {
    "INSERT INTO pgjq.checkpoints (job_id, name, value) VALUES ($1, $2, $3) ON CONFLICT (job_id, name) DO NOTHING",
    3, {INT8OID, TEXTOID, JSONBOID}};
const plan_text k_set_checkpoint = {
    "INSERT INTO pgjq.checkpoints (job_id, name, value) VALUES ($1, $2, $3)"
    " ON CONFLICT (job_id, name) DO UPDATE SET value = EXCLUDED.value, recorded_at = now()",
    3, {INT8OID, TEXTOID, JSONBOID}};
// The unexpired event ($1 queue, $2 name) for a job enqueued by $3: the one for that role before one for all.
const plan_text k_find_event = {
    "SELECT payload FROM pgjq.events"
    " WHERE queue_name = $1 AND event_name = $2 AND (audience IS NULL OR audience = $3) AND expires_at > now()"
    " ORDER BY audience NULLS LAST LIMIT 1",
    3, {TEXTOID, TEXTOID, REGROLEOID}};
const plan_text k_record_wait = {
    "INSERT INTO pgjq.event_waits (job_id, queue_name, event_name, waiter, deadline) VALUES ($1, $2, $3, $4, $5)"
    " ON CONFLICT (job_id) DO UPDATE SET queue_name = EXCLUDED.queue_name, event_name = EXCLUDED.event_name,"
    "   waiter = EXCLUDED.waiter, deadline = EXCLUDED.deadline",
    5, {INT8OID, TEXTOID, TEXTOID, REGROLEOID, TIMESTAMPTZOID}};
const plan_text k_drop_wait = {"DELETE FROM pgjq.event_waits WHERE job_id = $1", 1, {INT8OID}};
const plan_text k_queue_exists = {"SELECT 1 FROM pgjq.queues WHERE queue_name = $1", 1, {TEXTOID}};
// clang-format on

Jsonb* jsonb_from(const char* text)
{
    return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

// A field of a JSON object (NULL when absent).
Jsonb* json_field(Jsonb* object, const char* key)
{
    JsonbValue* v = getKeyJsonValueFromContainer(&object->root, key, static_cast<int>(strlen(key)), nullptr);
    return v ? JsonbValueToJsonb(v) : nullptr;
}

TimestampTz timestamp_field(Jsonb* object, const char* key)
{
    JsonbValue* v = getKeyJsonValueFromContainer(&object->root, key, static_cast<int>(strlen(key)), nullptr);
    char* text = pnstrdup(v->val.string.val, v->val.string.len);
    return DatumGetTimestampTz(
        DirectFunctionCall3(timestamptz_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

// ISO 8601, as JSON writes timestamps: read back alike whatever the session's DateStyle.
char* timestamp_text(TimestampTz t)
{
    struct pg_tm tm;
    fsec_t fsec;
    int tz;
    const char* tzn;
    char* text = static_cast<char*>(palloc(MAXDATELEN + 1));
    if (timestamp2tm(t, &tz, &tm, &fsec, &tzn, nullptr) != 0)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE), errmsg("timestamp out of range")));
    EncodeDateTime(&tm, fsec, true, tz, tzn, USE_XSD_DATES, text);
    return text;
}

struct held_job {
    char* queue_name;
    Oid enqueued_by;
};

// The job the caller's worker holds, locked; else the refusal (core/refusals.hpp).
held_job require_held(int64 job_id, const char* worker_id, const api_call& call)
{
    Datum values[3] = {Int64GetDatum(job_id), CStringGetTextDatum(worker_id), ObjectIdGetDatum(call.caller)};
    if (run_plan(saved_plan(&s_held, k_held), values, nullptr) == 0)
        raise_not_held(job_id, worker_id, call.caller);
    bool isnull;
    Datum role = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
    return {SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
            isnull ? InvalidOid : DatumGetObjectId(role)};
}

Jsonb* get_checkpoint(int64 job_id, const char* name)
{
    Datum values[2] = {Int64GetDatum(job_id), CStringGetTextDatum(name)};
    if (run_plan_latest(saved_plan(&s_get_checkpoint, k_get_checkpoint), values, nullptr) == 0)
        return nullptr;
    bool isnull;
    Datum v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    return reinterpret_cast<Jsonb*>(PG_DETOAST_DATUM_COPY(v));
}

void set_checkpoint(int64 job_id, const char* name, Jsonb* value)
{
    Datum values[3] = {Int64GetDatum(job_id), CStringGetTextDatum(name), JsonbPGetDatum(value)};
    run_plan(saved_plan(&s_set_checkpoint, k_set_checkpoint), values, nullptr);
}

char* on_failure_arg(FunctionCallInfo fcinfo, int argno)
{
    char* value = short_text_arg(fcinfo, argno, "on_failure");
    if (strcmp(value, "fail") != 0 && strcmp(value, "continue") != 0 && strcmp(value, "ignore") != 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("on_failure must be fail, continue or ignore"),
                 errdetail("It was \"%s\".", value)));
    return value;
}

[[noreturn]] void raise_no_such_workflow(int64 workflow_id)
{
    ereport(ERROR, (errcode(ERRCODE_NO_DATA_FOUND), errmsg("workflow %lld does not exist", (long long) workflow_id)));
    pg_unreachable();
}

// The workflow, if the caller may act on it with `caps` on every queue of its steps, or (for
// `starter_may`) as the role that started it. A workflow the caller may not read (pgjq.workflows' rule: its
// starter, or who may read every step) does not exist to it.
void require_workflow(int64 workflow_id, const api_call& call, uint8 caps, bool starter_may, const char* action)
{
    Datum id = Int64GetDatum(workflow_id);
    if (run_plan(saved_plan(&s_workflow, k_workflow), &id, nullptr) == 0)
        raise_no_such_workflow(workflow_id);
    bool isnull;
    Oid started_by = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
    bool starter = started_by == call.caller || has_privs_of_role(call.caller, started_by);
    if (call.privileged || (starter && starter_may))
        return;
    uint64 n = run_plan(saved_plan(&s_queues, k_queues), &id, nullptr);
    bool allowed = n > 0, readable = true;
    for (uint64 i = 0; i < n; i++) {
        char* queue = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
        Oid enqueued_by = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
        allowed = allowed && holds(call, caps, queue);
        readable = readable && may_read_job(call.caller, queue, enqueued_by);
    }
    if (allowed)
        return;
    if (!readable && !starter)
        raise_no_such_workflow(workflow_id);
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("role \"%s\" may not %s workflow %lld", GetUserNameFromId(call.caller, false), action,
                    (long long) workflow_id),
             errhint(starter_may ? "The role that started it may, and the admins of every queue of its steps."
                                 : "The admins of every queue of its steps may.")));
}

}  // namespace

PGJQ_API_FUNCTION(start_workflow)
{
    require_some(call, cap_producer);
    char* name = short_text_arg(fcinfo, 0, "workflow_name");
    require_arg(fcinfo, 1, "steps");
    Jsonb* steps = PG_GETARG_JSONB_P(1);  // read_steps holds it to max_batch_bytes
    char* key = optional_short_text_arg(fcinfo, 2, "workflow_key");
    char* on_failure = on_failure_arg(fcinfo, 3);
    require_arg(fcinfo, 4, "retention");
    Interval* retention = PG_GETARG_INTERVAL_P(4);
    check_interval(retention, "retention", k_retention_bounds);
    int64 parent_job = PG_ARGISNULL(5) ? 0 : job_id_arg(fcinfo, 5, "parent_job");
    step_plan plan = read_steps(steps, false);

    SPI_connect();
    if (parent_job != 0) {
        char* queue_name;
        Oid enqueued_by;
        if (!live_job_owner(parent_job, &queue_name, &enqueued_by) ||
            !may_read_job(call.caller, queue_name, enqueued_by))
            ereport(ERROR,
                    (errcode(ERRCODE_NO_DATA_FOUND),
                     errmsg("parent_job %lld is not a live job", (long long) parent_job),
                     errdetail("A sub-workflow's parent is the unfinished step that waits for it.")));
    }
    Datum values[7] = {CStringGetTextDatum(name),     key ? CStringGetTextDatum(key) : (Datum) 0,
                       ObjectIdGetDatum(call.caller), CStringGetTextDatum(on_failure),
                       IntervalPGetDatum(retention),  Int64GetDatum(parent_job),
                       Int32GetDatum(plan.nsteps)};
    char nulls[7] = {' ', key ? ' ' : 'n', ' ', ' ', ' ', parent_job ? ' ' : 'n', ' '};
    bool isnull, found;
    int64 workflow_id;
    // Another unfinished workflow of this role holds the key: it is the one asked for (unless it finished
    // between the insert and the look: then the insert is tried again).
    for (int attempt = 0; run_plan(saved_plan(&s_new_workflow, k_new_workflow), values, nulls) == 0; attempt++) {
        Datum keyed[2] = {ObjectIdGetDatum(call.caller), values[1]};
        if (run_plan_latest(saved_plan(&s_keyed_workflow, k_keyed_workflow), keyed, nullptr) > 0) {
            workflow_id = DatumGetInt64(first_value(&isnull, &found));
            SPI_finish();
            PG_RETURN_INT64(workflow_id);
        }
        if (attempt >= 10)
            ereport(ERROR,
                    (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                     errmsg("could not start workflow with key \"%s\" under concurrent updates", key)));
    }
    workflow_id = DatumGetInt64(first_value(&isnull, &found));
    existing_steps none = {nullptr, nullptr, nullptr, nullptr, 0};
    enqueue_steps(plan, workflow_id, none, strcmp(on_failure, "fail") == 0, call);
    SPI_finish();
    PG_RETURN_INT64(workflow_id);
}

PGJQ_API_FUNCTION(add_steps)
{
    require_some(call, cap_worker);
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    require_arg(fcinfo, 2, "steps");
    Jsonb* steps = PG_GETARG_JSONB_P(2);  // read_steps holds it to max_batch_bytes
    step_plan plan = read_steps(steps, true);

    SPI_connect();
    require_held(job_id, worker_id, call);
    Datum id = Int64GetDatum(job_id);
    if (run_plan(saved_plan(&s_step_of, k_step_of), &id, nullptr) == 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("job %lld is not a step of a workflow", (long long) job_id),
                 errhint("Start a workflow with pgjq.start_workflow.")));
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    int64 workflow_id = DatumGetInt64(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
    bool fail_policy = strcmp(SPI_getvalue(row, SPI_tuptable->tupdesc, 2), "fail") == 0;
    int32 total = DatumGetInt32(SPI_getbinval(row, SPI_tuptable->tupdesc, 3, &isnull));
    // The steps are the workflow's: enqueued as the role that started it, into queues where it may enqueue.
    const api_call starter =
        on_behalf_of(call, DatumGetObjectId(SPI_getbinval(row, SPI_tuptable->tupdesc, 4, &isnull)));
    if (static_cast<int64>(total) + plan.nsteps > k_max_workflow_steps)
        ereport(
            ERROR,
            (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
             errmsg("workflow %lld would have %lld steps", (long long) workflow_id, (long long) total + plan.nsteps),
             errdetail("A workflow has at most %d steps.", k_max_workflow_steps)));

    // The names this call adds must be new to the workflow; those it depends on must be there.
    Datum* new_names = static_cast<Datum*>(palloc(sizeof(Datum) * plan.nsteps));
    int nafter = 0;
    for (int i = 0; i < plan.nsteps; i++) {
        new_names[i] = CStringGetTextDatum(plan.steps[i].name);
        nafter += plan.steps[i].nafter;
    }
    Datum taken[2] = {Int64GetDatum(workflow_id),
                      PointerGetDatum(construct_array(new_names, plan.nsteps, TEXTOID, -1, false, TYPALIGN_INT))};
    if (run_plan(saved_plan(&s_taken_names, k_taken_names), taken, nullptr) > 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("workflow %lld already has a step \"%s\"", (long long) workflow_id,
                        SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1))));
    Datum* after_names = static_cast<Datum*>(palloc(sizeof(Datum) * (nafter + 1)));
    int nexternal = 0;
    for (int i = 0; i < plan.nsteps; i++)
        for (int j = 0; j < plan.steps[i].nafter; j++)
            if (plan.steps[i].parents[j] < 0)
                after_names[nexternal++] = CStringGetTextDatum(plan.steps[i].after[j]);
    existing_steps existing = {nullptr, nullptr, nullptr, nullptr, 0};
    if (nexternal > 0) {
        Datum lookup[2] = {Int64GetDatum(workflow_id),
                           PointerGetDatum(construct_array(after_names, nexternal, TEXTOID, -1, false, TYPALIGN_INT))};
        uint64 n = run_plan_latest(saved_plan(&s_existing, k_existing), lookup, nullptr);
        existing = {static_cast<char**>(palloc(sizeof(char*) * (n + 1))),
                    static_cast<int64*>(palloc(sizeof(int64) * (n + 1))),
                    static_cast<bool*>(palloc(sizeof(bool) * (n + 1))),
                    static_cast<bool*>(palloc(sizeof(bool) * (n + 1))), static_cast<int>(n)};
        for (uint64 i = 0; i < n; i++) {
            HeapTuple r = SPI_tuptable->vals[i];
            existing.names[i] = SPI_getvalue(r, SPI_tuptable->tupdesc, 1);
            existing.ids[i] = DatumGetInt64(SPI_getbinval(r, SPI_tuptable->tupdesc, 2, &isnull));
            existing.unfinished[i] = DatumGetBool(SPI_getbinval(r, SPI_tuptable->tupdesc, 3, &isnull));
            existing.broken[i] = DatumGetBool(SPI_getbinval(r, SPI_tuptable->tupdesc, 4, &isnull));
        }
    }
    Datum added[3] = {Int64GetDatum(workflow_id), Int32GetDatum(plan.nsteps), Int32GetDatum(k_max_workflow_steps)};
    if (run_plan(saved_plan(&s_add_total, k_add_total), added, nullptr) == 0)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                 errmsg("workflow %lld would have more than %d steps", (long long) workflow_id, k_max_workflow_steps)));
    // ... and the worker may only add to queues it works or produces for itself.
    for (int i = 0; i < plan.nsteps; i++)
        if (!holds(call, cap_worker | cap_producer, plan.steps[i].queue_name))
            require(call, cap_worker, plan.steps[i].queue_name);
    ArrayType* ids = enqueue_steps(plan, workflow_id, existing, fail_policy, starter);
    ArrayType* result = static_cast<ArrayType*>(SPI_palloc(VARSIZE(ids)));
    memcpy(result, ids, VARSIZE(ids));
    SPI_finish();
    PG_RETURN_ARRAYTYPE_P(result);
}

PGJQ_API_FUNCTION(cancel_workflow)
{
    require_some(call, cap_producer | cap_admin);
    int64 workflow_id = job_id_arg(fcinfo, 0, "workflow_id");
    SPI_connect();
    require_workflow(workflow_id, call, cap_admin, true, "cancel");
    Datum id = Int64GetDatum(workflow_id);
    const char* reason = psprintf("workflow %lld was cancelled", (long long) workflow_id);
    // A completion in flight, which the archive waits for, may start steps or add some as it commits: they
    // are cancelled by the next pass, which looks with the latest snapshot, until one finds nothing to do.
    uint64 n = 0;
    for (;;) {
        run_plan_latest(saved_plan(&s_live_steps, k_live_steps), &id, nullptr);
        bool isnull, found;
        Datum steps = first_value(&isnull, &found);
        ArrayType* live = DatumGetArrayTypeP(steps);
        if (ArrayGetNItems(ARR_NDIM(live), ARR_DIMS(live)) == 0)
            break;
        archive_request cancelled = {steps, "cancelled", nullptr, nullptr, call.caller, nullptr, reason};
        uint64 moved = archive_jobs(cancelled);
        if (moved == 0)
            break;
        n += moved;
    }
    // Then the workflow's row, as a settlement locks it after the steps': the end its commit settles says so.
    run_plan(saved_plan(&s_mark_cancelled, k_mark_cancelled), &id, nullptr);
    SPI_finish();
    PG_RETURN_INT64(static_cast<int64>(n));
}

PGJQ_API_FUNCTION(retry_workflow)
{
    require_some(call, cap_admin);
    int64 workflow_id = job_id_arg(fcinfo, 0, "workflow_id");
    SPI_connect();
    require_workflow(workflow_id, call, cap_admin, false, "retry");
    Datum id = Int64GetDatum(workflow_id);
    run_plan(saved_plan(&s_failed_steps, k_failed_steps), &id, nullptr);
    bool isnull, found;
    Datum steps = first_value(&isnull, &found);
    int64 n = revive_jobs(steps);  // with what is downstream of them
    SPI_finish();
    PG_RETURN_INT64(n);
}

// Records `value` under `name` for the held job, unless something is recorded there: returns what is.
PGJQ_API_FUNCTION(checkpoint)
{
    require_some(call, cap_worker);
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    char* name = short_text_arg(fcinfo, 2, "name");
    if (strncmp(name, k_reserved_prefix, strlen(k_reserved_prefix)) == 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("checkpoint names beginning with \"%s\" are pgjq's", k_reserved_prefix),
                 errdetail("pgjq records a job's waits and sleeps under them.")));
    Jsonb* value = json_arg(fcinfo, 3, "value");
    SPI_connect();
    require_held(job_id, worker_id, call);
    Jsonb* recorded = get_checkpoint(job_id, name);
    if (recorded == nullptr) {
        Datum id = Int64GetDatum(job_id);
        run_plan(saved_plan(&s_count_checkpoints, k_count_checkpoints), &id, nullptr);
        bool isnull, found;
        if (DatumGetInt64(first_value(&isnull, &found)) >= k_max_checkpoints)
            ereport(ERROR,
                    (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                     errmsg("job %lld has %d checkpoints", (long long) job_id, k_max_checkpoints),
                     errdetail("A job records at most %d.", k_max_checkpoints)));
        Datum values[3] = {id, CStringGetTextDatum(name), JsonbPGetDatum(value)};
        run_plan(saved_plan(&s_put_checkpoint, k_put_checkpoint), values, nullptr);
        recorded = get_checkpoint(job_id, name);
    }
    Jsonb* result = static_cast<Jsonb*>(SPI_palloc(VARSIZE(recorded)));
    memcpy(result, recorded, VARSIZE(recorded));
    SPI_finish();
    PG_RETURN_JSONB_P(result);
}

// The event's payload; or NULL once the job is parked until the event arrives or the wait times out.
PGJQ_API_FUNCTION(wait_for_event)
{
    require_some(call, cap_worker);
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    char* event_name = short_text_arg(fcinfo, 2, "event_name");
    require_arg(fcinfo, 3, "timeout");
    Interval* timeout = PG_GETARG_INTERVAL_P(3);
    check_interval(timeout, "timeout", k_wait_bounds);
    char* record_name = psprintf("%sevent:%s", k_reserved_prefix, event_name);

    SPI_connect();
    held_job job = require_held(job_id, worker_id, call);
    Jsonb* record = get_checkpoint(job_id, record_name);
    Jsonb* received = record ? json_field(record, "payload") : nullptr;
    if (received == nullptr) {
        lock_event(job.queue_name, event_name);
        Datum look[3] = {CStringGetTextDatum(job.queue_name), CStringGetTextDatum(event_name),
                         ObjectIdGetDatum(job.enqueued_by)};
        char look_nulls[3] = {' ', ' ', OidIsValid(job.enqueued_by) ? ' ' : 'n'};
        if (run_plan_latest(saved_plan(&s_find_event, k_find_event), look, look_nulls) > 0) {
            bool isnull;
            Datum payload = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
            StringInfoData json;
            initStringInfo(&json);
            appendStringInfo(&json, "{\"payload\": %s}", JsonbToCString(nullptr, &DatumGetJsonbP(payload)->root, 0));
            set_checkpoint(job_id, record_name, jsonb_from(json.data));
            received = json_field(get_checkpoint(job_id, record_name), "payload");
        }
    }
    Datum id = Int64GetDatum(job_id);
    if (received != nullptr) {
        run_plan(saved_plan(&s_drop_wait, k_drop_wait), &id, nullptr);
        Jsonb* result = static_cast<Jsonb*>(SPI_palloc(VARSIZE(received)));
        memcpy(result, received, VARSIZE(received));
        SPI_finish();
        PG_RETURN_JSONB_P(result);
    }
    // Not there: the wait's deadline holds from its first call on.
    TimestampTz now = GetCurrentTimestamp();
    TimestampTz deadline = record ? timestamp_field(record, "deadline") : now + interval_usecs(timeout);
    if (record == nullptr) {
        StringInfoData json;
        initStringInfo(&json);
        appendStringInfo(&json, "{\"deadline\": \"%s\"}", timestamp_text(deadline));
        set_checkpoint(job_id, record_name, jsonb_from(json.data));
    }
    if (deadline <= now) {
        run_plan(saved_plan(&s_drop_wait, k_drop_wait), &id, nullptr);
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_EVENT_TIMED_OUT),
                 errmsg("job %lld waited for event \"%s\" until %s", (long long) job_id, event_name,
                        timestamp_text(deadline)),
                 errdetail("The event did not arrive in time."),
                 errhint("Fail the job (pgjq.fail) or go on without the event.")));
    }
    Datum wait[5] = {id, CStringGetTextDatum(job.queue_name), CStringGetTextDatum(event_name),
                     ObjectIdGetDatum(job.enqueued_by), TimestampTzGetDatum(deadline)};
    char wait_nulls[5] = {' ', ' ', ' ', OidIsValid(job.enqueued_by) ? ' ' : 'n', ' '};
    run_plan(saved_plan(&s_record_wait, k_record_wait), wait, wait_nulls);
    park_job(job_id, deadline);
    SPI_finish();
    PG_RETURN_NULL();
}

// true when the job has slept until wake_at (it goes on); false once it is parked until then.
PGJQ_API_FUNCTION(sleep_until)
{
    require_some(call, cap_worker);
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    char* name = short_text_arg(fcinfo, 2, "name");
    require_arg(fcinfo, 3, "wake_at");
    TimestampTz wake_at = PG_GETARG_TIMESTAMPTZ(3);
    check_run_at(wake_at);
    TimestampTz now = GetCurrentTimestamp();
    if (wake_at > now + k_usecs_per_year)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("wake_at is more than a year away"),
                 errdetail("A job sleeps for at most 1 year (360 days) at a time.")));
    char* record_name = psprintf("%ssleep:%s", k_reserved_prefix, name);

    SPI_connect();
    require_held(job_id, worker_id, call);
    // The first call's wake_at holds: the sleep a job resumes from is the one it began.
    Jsonb* record = get_checkpoint(job_id, record_name);
    TimestampTz until = record ? timestamp_field(record, "sleep_until") : wake_at;
    if (record == nullptr) {
        StringInfoData json;
        initStringInfo(&json);
        appendStringInfo(&json, "{\"sleep_until\": \"%s\"}", timestamp_text(until));
        set_checkpoint(job_id, record_name, jsonb_from(json.data));
    }
    bool slept = until <= now;
    if (!slept)
        park_job(job_id, until);
    SPI_finish();
    PG_RETURN_BOOL(slept);
}

PGJQ_API_FUNCTION(signal)
{
    require_some(call, cap_producer | cap_admin);
    char* event_name = short_text_arg(fcinfo, 0, "event_name");
    Jsonb* payload = json_arg(fcinfo, 1, "payload");
    char* queue_name = queue_name_arg(fcinfo, 2);
    require_arg(fcinfo, 3, "keep_for");
    Interval* keep_for = PG_GETARG_INTERVAL_P(3);
    check_interval(keep_for, "keep_for", k_wait_bounds);
    // An admin's event is for every job of the queue; a producer's for the jobs its role enqueued.
    Oid audience = holds(call, cap_admin, queue_name) ? InvalidOid : call.caller;
    if (OidIsValid(audience))
        require(call, cap_producer, queue_name);
    SPI_connect();
    Datum queue = CStringGetTextDatum(queue_name);
    if (run_plan(saved_plan(&s_queue_exists, k_queue_exists), &queue, nullptr) == 0)
        raise_unknown_queue(queue_name);
    int64 woken = deliver_event(queue_name, event_name, audience, payload,
                                GetCurrentTimestamp() + interval_usecs(keep_for), call.caller);
    SPI_finish();
    PG_RETURN_INT64(woken);
}
