// workflows.cpp: settling finished workflow steps at commit, steps brought back by a retry, and the
// maintenance worker's part (see workflows.hpp for the protocol).
#include "core/workflows.hpp"

#include "core/events.hpp"
#include "core/lifecycle.hpp"
#include "core/revive.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/catalog.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

// How long the event that tells a parent step of its sub-workflow's end is kept.
constexpr int64 k_sub_workflow_event_usecs = INT64CONST(7) * USECS_PER_DAY;

SPIPlanPtr s_record, s_count_down, s_release, s_count_workflows, s_live_job_owner, s_revived_closure, s_reopen,
    s_recount, s_hold_again, s_reopen_workflows, s_unsettled, s_unreleased, s_prune, s_prune_leftovers,
    s_lock_workflows, s_lock_revived;

// clang-format off
// The held steps among `ids` (a subquery) start: see k_release.
#define RELEASE_HELD_STEPS(ids) \
    "UPDATE pgjq.live_jobs SET status = 'pending' WHERE id = ANY (ARRAY(" \
    "  SELECT id FROM pgjq.live_jobs WHERE id IN (" ids ") AND status = 'waiting' ORDER BY id" \
    "   FOR NO KEY UPDATE SKIP LOCKED))"
// The steps of $1 whose job is no longer live and whose row still says unfinished record their outcome.
// (Completed jobs of a queue that keeps none have no history row: completed, without a result.) Returns
// each step's job id and status.
const plan_text k_record = {
    "WITH finished AS MATERIALIZED ("
    "  SELECT s.job_id FROM pgjq.workflow_run_steps s"
    "   WHERE s.job_id = ANY ($1) AND s.finished_at IS NULL"
    "     AND NOT EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = s.job_id)"
    "   ORDER BY s.job_id FOR NO KEY UPDATE OF s)"
    " UPDATE pgjq.workflow_run_steps s"
    "    SET status = coalesce(f.status, 'completed'), result = f.result, last_error = f.last_error,"
    "        attempts = f.attempts, started_at = coalesce(f.started_at, f.claimed_at),"
    "        finished_at = coalesce(f.finished_at, now())"
    "   FROM finished x LEFT JOIN pgjq.finished_jobs f ON f.id = x.job_id"
    "  WHERE s.job_id = x.job_id"
    " RETURNING s.job_id, s.status::text",
    1, {INT8ARRAYOID}};
// The children of the steps $1 (outcomes $2) that have not finished count them down, and learn whether
// one failed; those that may start now start (k_release, in the same statement: its rows are locked after
// the steps' rows). Returns each child, whether it may start now, and whether it is to be cancelled.
const plan_text k_count_down = {
    "WITH outcome AS (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::int8[]), pg_catalog.unnest($2::text[]))"
    "                   AS o(job_id, status)),"
    " arrivals AS ("
    "  SELECT e.child_job, count(*)::int4 AS n, bool_or(o.status <> 'completed') AS broke"
    "    FROM pgjq.workflow_edges e JOIN outcome o ON o.job_id = e.parent_job GROUP BY e.child_job),"
    " children AS MATERIALIZED ("
    "  SELECT s.job_id FROM pgjq.workflow_run_steps s"
    "   WHERE s.job_id IN (SELECT child_job FROM arrivals) AND s.finished_at IS NULL"
    "   ORDER BY s.job_id FOR NO KEY UPDATE OF s),"
    " counted AS ("
    "  UPDATE pgjq.workflow_run_steps s SET unmet = s.unmet - a.n, broken = s.broken OR a.broke"
    "    FROM children c JOIN arrivals a ON a.child_job = c.job_id"
    "   WHERE s.job_id = c.job_id"
    "  RETURNING s.job_id, s.workflow_id, s.unmet, s.broken),"
    " decided AS ("
    "  SELECT c.job_id, c.unmet <= 0 AND (NOT c.broken OR w.on_failure <> 'fail') AS ready,"
    "         c.broken AND w.on_failure = 'fail' AS doomed"
    "    FROM counted c JOIN pgjq.workflow_runs w ON w.id = c.workflow_id),"
    " released AS (" RELEASE_HELD_STEPS("SELECT job_id FROM decided WHERE ready") ")"
    " SELECT job_id, ready, doomed FROM decided ORDER BY job_id",
    2, {INT8ARRAYOID, TEXTARRAYOID}};
// Held steps that may start: the trigger on the status announces them. A step whose row another transaction
// holds is passed over: that one is cancelling it (a waiting job has no other writer), and waiting for it
// here, after this transaction locked the steps' rows that its own settlement will lock, could deadlock. (If
// it rolls back, the maintenance worker's sweep starts the step: note_unsettled_steps.)
const plan_text k_release = {RELEASE_HELD_STEPS("SELECT pg_catalog.unnest($1::int8[])"), 1, {INT8ARRAYOID}};
// The workflows of the steps $1 (outcomes $2) count them; the last one ends the workflow. Returns the
// workflows that ended.
const plan_text k_count_workflows = {
    "WITH outcome AS ("
    "  SELECT s.workflow_id, count(*)::int4 AS n, (count(*) FILTER (WHERE o.status <> 'completed'))::int4 AS failed"
    "    FROM ROWS FROM (pg_catalog.unnest($1::int8[]), pg_catalog.unnest($2::text[])) AS o(job_id, status)"
    "    JOIN pgjq.workflow_run_steps s ON s.job_id = o.job_id GROUP BY s.workflow_id),"
    " workflows AS MATERIALIZED ("
    "  SELECT w.id FROM pgjq.workflow_runs w WHERE w.id IN (SELECT workflow_id FROM outcome)"
    "   ORDER BY w.id FOR NO KEY UPDATE OF w),"
    " counted AS ("
    "  UPDATE pgjq.workflow_runs w"
    "     SET steps_finished = w.steps_finished + o.n, steps_failed = w.steps_failed + o.failed,"
    "         status = CASE WHEN w.steps_finished + o.n < w.steps_total OR w.status <> 'running' THEN w.status"
    "                       WHEN w.steps_failed + o.failed > 0 AND w.on_failure = 'fail' THEN 'failed'"
    "                       ELSE 'completed' END,"
    "         finished_at = CASE WHEN w.steps_finished + o.n >= w.steps_total THEN now() END"
    "    FROM workflows k JOIN outcome o ON o.workflow_id = k.id"
    "   WHERE w.id = k.id"
    "  RETURNING w.id, w.status, w.parent_job, w.started_by, w.finished_at)"
    " SELECT id, status, parent_job FROM counted WHERE finished_at IS NOT NULL AND parent_job IS NOT NULL",
    2, {INT8ARRAYOID, TEXTARRAYOID}};
const plan_text k_live_job_owner = {
    "SELECT queue_name, enqueued_by::oid FROM pgjq.live_jobs WHERE id = $1", 1, {INT8OID}};

// Of $1, the steps that are live again while their row says finished, with every step downstream of them
// that their failure cancelled ($2, the cascade's reason; not one cancelled by hand) and that is still in the
// history: returns the ids of the latter.
const plan_text k_revived_closure = {
    "WITH RECURSIVE revived AS ("
    "  SELECT s.job_id FROM pgjq.workflow_run_steps s JOIN pgjq.live_jobs l ON l.id = s.job_id"
    "   WHERE s.job_id = ANY ($1) AND s.finished_at IS NOT NULL),"
    " downstream (job_id) AS ("
    "  SELECT job_id FROM revived"
    "  UNION"
    "  SELECT c.job_id FROM downstream d JOIN pgjq.workflow_edges e ON e.parent_job = d.job_id"
    "    JOIN pgjq.workflow_run_steps c ON c.job_id = e.child_job"
    "   WHERE c.status = 'cancelled' AND c.last_error = $2"
    "     AND EXISTS (SELECT 1 FROM pgjq.finished_jobs f WHERE f.id = c.job_id))"
    " SELECT coalesce(array_agg(job_id) FILTER (WHERE job_id <> ALL (ARRAY(SELECT job_id FROM revived))), '{}'),"
    "        coalesce((SELECT array_agg(job_id) FROM revived), '{}')"
    "   FROM downstream",
    2, {INT8ARRAYOID, TEXTOID}};
// The steps $1, live again, start over: unfinished, no outcome.
const plan_text k_reopen = {
    "UPDATE pgjq.workflow_run_steps s SET status = NULL, result = NULL, last_error = NULL, attempts = NULL,"
    " started_at = NULL, finished_at = NULL, broken = false"
    " WHERE s.job_id = ANY ($1) AND s.finished_at IS NOT NULL"
    "   AND EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = s.job_id)"
    " RETURNING s.job_id",
    1, {INT8ARRAYOID}};
// ... and count what they wait for: the steps they depend on that have not finished, and those that
// failed for good under on_failure = 'fail' (which cancel them again). Returns each, whether it waits,
// whether it is to be cancelled.
const plan_text k_recount = {
    "WITH counts AS ("
    "  SELECT s.job_id,"
    "         count(p.job_id) FILTER (WHERE p.finished_at IS NULL)::int4 AS unmet,"
    "         coalesce(bool_or(p.finished_at IS NOT NULL AND p.status <> 'completed'), false) AS broken"
    "    FROM pgjq.workflow_run_steps s"
    "    LEFT JOIN pgjq.workflow_edges e ON e.child_job = s.job_id"
    "    LEFT JOIN pgjq.workflow_run_steps p ON p.job_id = e.parent_job"
    "   WHERE s.job_id = ANY ($1) GROUP BY s.job_id),"
    " counted AS ("
    "  UPDATE pgjq.workflow_run_steps s SET unmet = c.unmet, broken = c.broken FROM counts c WHERE s.job_id = c.job_id"
    "  RETURNING s.job_id, s.workflow_id, s.unmet, s.broken)"
    " SELECT c.job_id, c.unmet > 0, c.broken AND w.on_failure = 'fail'"
    "   FROM counted c JOIN pgjq.workflow_runs w ON w.id = c.workflow_id ORDER BY c.job_id",
    1, {INT8ARRAYOID}};
const plan_text k_hold_again = {
    "UPDATE pgjq.live_jobs SET status = 'waiting' WHERE id = ANY ($1) AND status = 'pending'", 1, {INT8ARRAYOID}};
// Their workflows run again, counted from their steps' rows: locked first (k_lock_workflows), then counted
// by a statement of its own, whose snapshot sees every settlement that held a row before the lock came.
const plan_text k_lock_workflows = {
    "SELECT w.id FROM pgjq.workflow_runs w"
    " WHERE w.id IN (SELECT workflow_id FROM pgjq.workflow_run_steps WHERE job_id = ANY ($1))"
    " ORDER BY w.id FOR NO KEY UPDATE OF w",
    1, {INT8ARRAYOID}};
const plan_text k_reopen_workflows = {
    "UPDATE pgjq.workflow_runs w SET status = 'running', finished_at = NULL,"
    "   steps_finished = (SELECT count(*) FROM pgjq.workflow_run_steps s WHERE s.workflow_id = w.id AND s.finished_at IS NOT NULL),"
    "   steps_failed = (SELECT count(*) FROM pgjq.workflow_run_steps s WHERE s.workflow_id = w.id"
    "                    AND s.finished_at IS NOT NULL AND s.status <> 'completed')"
    " WHERE w.id IN (SELECT workflow_id FROM pgjq.workflow_run_steps WHERE job_id = ANY ($1))",
    1, {INT8ARRAYOID}};
// The steps coming back and the steps they depend on, locked in id order as a settlement locks them, so that
// a parent settling now is either seen finished by the recount or counts the reopened step down itself.
const plan_text k_lock_revived = {
    "SELECT s.job_id FROM pgjq.workflow_run_steps s"
    " WHERE s.job_id = ANY ($1) OR s.job_id IN (SELECT e.parent_job FROM pgjq.workflow_edges e WHERE e.child_job = ANY ($1))"
    " ORDER BY s.job_id FOR SHARE",
    1, {INT8ARRAYOID}};

// The sweep looks at the steps of running workflows only (a finished workflow's steps all settled): its
// cost follows the steps of the workflows running now, and no index on the steps names a column that
// settling writes (the 0.3.0 script).
const plan_text k_unsettled = {
    "SELECT coalesce(array_agg(s.job_id), '{}') FROM pgjq.workflow_runs w"
    "  JOIN pgjq.workflow_run_steps s ON s.workflow_id = w.id"
    " WHERE w.finished_at IS NULL AND s.finished_at IS NULL"
    "   AND NOT EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = s.job_id)",
    0, {}};
// Held steps that wait for nothing (a release passed over one whose holder then rolled back).
const plan_text k_unreleased = {
    "SELECT coalesce(array_agg(s.job_id), '{}') FROM pgjq.workflow_runs w"
    "  JOIN pgjq.workflow_run_steps s ON s.workflow_id = w.id JOIN pgjq.live_jobs l ON l.id = s.job_id"
    " WHERE w.finished_at IS NULL AND s.finished_at IS NULL AND s.unmet <= 0"
    "   AND (NOT s.broken OR w.on_failure <> 'fail') AND l.status < 'pending'",
    0, {}};

// A finished workflow goes whole ($2: an age that replaces the workflows' retention, or NULL): its row, its steps' rows, their edges and checkpoints, in one statement.
const plan_text k_prune = {
    "WITH doomed AS MATERIALIZED ("
    "  SELECT id FROM pgjq.workflow_runs"
    "   WHERE finished_at IS NOT NULL AND finished_at < now() - coalesce($2, retention)"
    "   ORDER BY finished_at LIMIT $1 FOR UPDATE SKIP LOCKED),"
    " steps AS (DELETE FROM pgjq.workflow_run_steps s USING doomed d WHERE s.workflow_id = d.id RETURNING s.job_id),"
    " edges AS (DELETE FROM pgjq.workflow_edges e USING steps s WHERE e.child_job = s.job_id),"
    " checkpoints AS (DELETE FROM pgjq.checkpoints c USING steps s WHERE c.job_id = s.job_id)"
    " DELETE FROM pgjq.workflow_runs w USING doomed d WHERE w.id = d.id",
    2, {INT4OID, INTERVALOID}};
// What outlived its job: checkpoints of jobs that are gone (not steps: those go with their workflow),
// expired events, waits of jobs no longer live.
const plan_text k_prune_leftovers = {
    "WITH gone AS (DELETE FROM pgjq.checkpoints c WHERE c.job_id IN ("
    "   SELECT DISTINCT x.job_id FROM pgjq.checkpoints x"
    "    WHERE NOT EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = x.job_id)"
    "      AND NOT EXISTS (SELECT 1 FROM pgjq.finished_jobs f WHERE f.id = x.job_id)"
    "      AND NOT EXISTS (SELECT 1 FROM pgjq.workflow_run_steps s WHERE s.job_id = x.job_id) LIMIT $1)),"
    " expired AS (DELETE FROM pgjq.events e WHERE e.ctid = ANY (ARRAY("
    "   SELECT x.ctid FROM pgjq.events x WHERE x.expires_at < now() LIMIT $1)))"
    " DELETE FROM pgjq.event_waits w WHERE w.job_id IN ("
    "   SELECT x.job_id FROM pgjq.event_waits x"
    "    WHERE NOT EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = x.job_id) LIMIT $1)",
    1, {INT4OID}};
// clang-format on

// The int8[] and bool columns of the last statement's rows.
struct id_lists {
    int64* first;
    int nfirst;
    int64* second;
    int nsecond;
};

// Splits the rows (job id, flag, flag) into the ids whose first flag is set and those whose second is.
id_lists flagged_ids()
{
    id_lists lists = {static_cast<int64*>(palloc(sizeof(int64) * (SPI_processed + 1))), 0,
                      static_cast<int64*>(palloc(sizeof(int64) * (SPI_processed + 1))), 0};
    for (uint64 i = 0; i < SPI_processed; i++) {
        bool isnull;
        HeapTuple row = SPI_tuptable->vals[i];
        int64 id = DatumGetInt64(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
        if (DatumGetBool(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull)))
            lists.first[lists.nfirst++] = id;
        if (DatumGetBool(SPI_getbinval(row, SPI_tuptable->tupdesc, 3, &isnull)))
            lists.second[lists.nsecond++] = id;
    }
    return lists;
}

// Cancels the steps `ids` whose parent failed: their own settlement is the next round's.
void cancel_broken(const int64* ids, int n, const char* reason)
{
    if (n == 0)
        return;
    archive_request cancelled = {
        PointerGetDatum(job_id_array(ids, n)), "cancelled", nullptr, nullptr, InvalidOid, nullptr, reason};
    archive_jobs(cancelled);
}

// A sub-workflow ended: its parent step hears of it as the event 'workflow/<id>'.
void tell_parent(int64 workflow_id, const char* status, int64 parent_job)
{
    char* queue_name;
    Oid role;
    if (!live_job_owner(parent_job, &queue_name, &role))
        return;  // the parent finished meanwhile (cancelled, say): nobody waits
    char* name = psprintf("workflow/%lld", (long long) workflow_id);
    char* json = psprintf("{\"workflow_id\": %lld, \"status\": \"%s\"}", (long long) workflow_id, status);
    Jsonb* payload = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
    TimestampTz expires = GetCurrentTimestamp() + k_sub_workflow_event_usecs;
    deliver_event(queue_name, name, role, payload, expires, OidIsValid(role) ? role : GetUserId());
}

bool s_reviving = false;  // workflow_steps_revived revives downstream steps itself

}  // namespace

namespace pgjq {

bool workflows_installed()
{
    return OidIsValid(pgjq_relation("workflow_run_steps"));
}

bool live_job_owner(int64 job_id, char** queue_name, Oid* enqueued_by)
{
    Datum id = Int64GetDatum(job_id);
    if (run_plan_latest(saved_plan(&s_live_job_owner, k_live_job_owner), &id, nullptr) == 0)
        return false;
    bool isnull;
    Datum role = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
    *queue_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    *enqueued_by = isnull ? InvalidOid : DatumGetObjectId(role);
    return true;
}

void settle_finished_steps(Datum finished, settled_steps* settled)
{
    ArrayType* array = DatumGetArrayTypeP(finished);
    if (ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)) == 0)
        return;
    uint64 n = run_plan_latest(saved_plan(&s_record, k_record), &finished, nullptr);
    if (n == 0)
        return;
    Datum* ids = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* statuses = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    for (uint64 i = 0; i < n; i++) {
        bool isnull;
        ids[i] = Int64GetDatum(DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)));
        statuses[i] = CStringGetTextDatum(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
    }
    Datum outcome[2] = {
        PointerGetDatum(construct_array(ids, static_cast<int>(n), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
        PointerGetDatum(construct_array(statuses, static_cast<int>(n), TEXTOID, -1, false, TYPALIGN_INT))};

    run_plan_latest(saved_plan(&s_count_down, k_count_down), outcome, nullptr);  // starts the ready ones
    id_lists children = flagged_ids();
    cancel_broken(children.second, children.nsecond, k_cancelled_by_parent);

    // Counted in their workflows once every round is done (count_settled_workflows).
    if (settled->n + static_cast<int>(n) > settled->capacity) {
        int capacity = Max(64, (settled->n + static_cast<int>(n)) * 2);
        settled->ids = static_cast<Datum*>(settled->ids ? repalloc(settled->ids, sizeof(Datum) * capacity)
                                                        : palloc(sizeof(Datum) * capacity));
        settled->statuses =
            static_cast<Datum*>(settled->statuses ? repalloc(settled->statuses, sizeof(Datum) * capacity)
                                                  : palloc(sizeof(Datum) * capacity));
        settled->capacity = capacity;
    }
    for (uint64 i = 0; i < n; i++) {
        settled->ids[settled->n] = ids[i];
        settled->statuses[settled->n++] = statuses[i];
    }
}

void count_settled_workflows(const settled_steps& settled)
{
    if (settled.n == 0)
        return;
    Datum outcome[2] = {
        PointerGetDatum(construct_array(settled.ids, settled.n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
        PointerGetDatum(construct_array(settled.statuses, settled.n, TEXTOID, -1, false, TYPALIGN_INT))};
    uint64 ended = run_plan_latest(saved_plan(&s_count_workflows, k_count_workflows), outcome, nullptr);
    SPITupleTable* rows = SPI_tuptable;
    for (uint64 i = 0; i < ended; i++) {
        bool isnull;
        int64 workflow_id = DatumGetInt64(SPI_getbinval(rows->vals[i], rows->tupdesc, 1, &isnull));
        char* status = SPI_getvalue(rows->vals[i], rows->tupdesc, 2);
        int64 parent = DatumGetInt64(SPI_getbinval(rows->vals[i], rows->tupdesc, 3, &isnull));
        tell_parent(workflow_id, status, parent);
    }
}

void workflow_steps_revived(Datum ids)
{
    if (s_reviving || !workflows_installed())
        return;
    Datum closure_args[2] = {ids, CStringGetTextDatum(k_cancelled_by_parent)};
    run_plan_latest(saved_plan(&s_revived_closure, k_revived_closure), closure_args, nullptr);
    bool isnull;
    Datum downstream = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    Datum revived = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
    ArrayType* downstream_array = DatumGetArrayTypeP(downstream);
    if (ArrayGetNItems(ARR_NDIM(downstream_array), ARR_DIMS(downstream_array)) > 0) {
        s_reviving = true;
        PG_TRY();
        {
            revive_jobs(downstream);
        }
        PG_FINALLY();
        {
            s_reviving = false;
        }
        PG_END_TRY();
    }
    Datum all = PointerGetDatum(DatumGetArrayTypeP(DirectFunctionCall2(array_cat, revived, downstream)));
    run_plan_latest(saved_plan(&s_lock_revived, k_lock_revived), &all, nullptr);
    if (run_plan_latest(saved_plan(&s_reopen, k_reopen), &all, nullptr) == 0)
        return;
    run_plan_latest(saved_plan(&s_recount, k_recount), &all, nullptr);
    id_lists steps = flagged_ids();
    if (steps.nfirst > 0) {
        Datum held = PointerGetDatum(job_id_array(steps.first, steps.nfirst));
        run_plan_latest(saved_plan(&s_hold_again, k_hold_again), &held, nullptr);
    }
    run_plan_latest(saved_plan(&s_lock_workflows, k_lock_workflows), &all, nullptr);
    run_plan_latest(saved_plan(&s_reopen_workflows, k_reopen_workflows), &all, nullptr);
    cancel_broken(steps.second, steps.nsecond, k_cancelled_by_parent);
}

int64 note_unsettled_steps()
{
    int64 noted = note_finished_by(saved_plan(&s_unsettled, k_unsettled));
    run_plan(saved_plan(&s_unreleased, k_unreleased), nullptr, nullptr);
    bool isnull, found;
    Datum ready = first_value(&isnull, &found);
    uint64 released = run_plan(saved_plan(&s_release, k_release), &ready, nullptr);
    return noted + static_cast<int64>(released);
}

int64 prune_workflows(int32 limit, const Interval* older_than)
{
    Datum values[2] = {Int32GetDatum(limit), older_than ? IntervalPGetDatum(older_than) : (Datum) 0};
    char nulls[2] = {' ', older_than ? ' ' : 'n'};
    uint64 pruned = run_plan(saved_plan(&s_prune, k_prune), values, nulls);
    run_plan(saved_plan(&s_prune_leftovers, k_prune_leftovers), values, nullptr);
    return static_cast<int64>(pruned);
}

}  // namespace pgjq
