// waiting_jobs.cpp: the transaction's notes about waiting jobs and their settlement at commit (see
// waiting_jobs.hpp for the protocol).
#include "core/waiting_jobs.hpp"

#include "core/claim_floor.hpp"
#include "core/lifecycle.hpp"
#include "core/workflows.hpp"
#include "pg/catalog.hpp"
#include "pg/commit_work.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

// Group locks: advisory locks in a space of pgjq's own (field4 of the lock tag; PostgreSQL's advisory lock
// functions use 1 and 2), keyed by the queue and one of k_group_lock_buckets buckets of its groups. A
// bounded number per queue, so that a transaction touching 100 000 groups takes at most that many locks
// of the shared lock table; two groups sharing a bucket only wait for each other's commit.
constexpr uint16 k_group_lock_space = 0x504A;
constexpr uint32 k_group_lock_buckets = 256;

struct group_ref {
    char queue_name[k_queue_name_max + 1];
    Oid enqueued_by;
    char group_key[k_max_name_bytes + 1];
};

// The notes, in TopTransactionContext (gone with the transaction; forget_waiting_jobs_ledger() drops the
// pointers).
HTAB* s_groups = nullptr;
int64* s_dependents = nullptr;  // jobs waiting for parents this transaction recorded
int s_ndependents = 0, s_dependents_capacity = 0;
int64* s_parents = nullptr;  // their unfinished parents
int s_nparents = 0, s_parents_capacity = 0;
int64* s_finished = nullptr;  // jobs that left the live table
int s_nfinished = 0, s_finished_capacity = 0;

void append(int64** array, int* n, int* capacity, int64 value)
{
    if (*n == *capacity) {
        *capacity = *capacity == 0 ? 64 : *capacity * 2;
        *array = static_cast<int64*>(*array ? repalloc(*array, sizeof(int64) * *capacity)
                                            : MemoryContextAlloc(TopTransactionContext, sizeof(int64) * *capacity));
    }
    (*array)[(*n)++] = value;
}

// clang-format off
// The unfinished parents of this transaction's new dependents, locked so that the transactions finishing
// them wait for this one's commit and then see its dependency rows.
SPIPlanPtr s_lock_parents;
const plan_text k_lock_parents = {
    "SELECT queue_name, status = 'pending' FROM pgjq.live_jobs WHERE id = ANY ($1) ORDER BY id FOR KEY SHARE", 1,
    {INT8ARRAYOID}};

// $1 new dependents, $2 finished jobs. The dependency rows of finished jobs (a cancelled waiting job) go;
// those whose parent is no longer live are judged: met if it completed (or is gone: completed in a queue
// that keeps no completed jobs, or pruned), broken if it failed or was cancelled. Met rows go. Returns the
// jobs whose rows were met, and the broken rows (dependent, parent, parent's status).
SPIPlanPtr s_judge;
const plan_text k_judge = {
    "WITH gone AS (DELETE FROM pgjq.job_dependencies WHERE job_id = ANY ($2)),"
    " judged AS ("
    "  SELECT d.depends_on, d.job_id, l.id IS NOT NULL AS parent_live, f.status AS parent_status"
    "    FROM pgjq.job_dependencies d"
    "    LEFT JOIN pgjq.live_jobs l ON l.id = d.depends_on"
    "    LEFT JOIN pgjq.finished_jobs f ON f.id = d.depends_on"
    "   WHERE (d.job_id = ANY ($1) OR d.depends_on = ANY ($2)) AND d.job_id <> ALL ($2)),"
    " met AS ("
    "  DELETE FROM pgjq.job_dependencies d USING judged j"
    "   WHERE d.depends_on = j.depends_on AND d.job_id = j.job_id AND NOT j.parent_live"
    "     AND (j.parent_status IS NULL OR j.parent_status = 'completed')"
    "  RETURNING d.job_id)"
    " SELECT (SELECT coalesce(array_agg(DISTINCT job_id), '{}') FROM met),"
    "        coalesce(array_agg(j.job_id ORDER BY j.job_id, j.depends_on), '{}'),"
    "        coalesce(array_agg(j.depends_on ORDER BY j.job_id, j.depends_on), '{}'),"
    "        coalesce(array_agg(j.parent_status::text ORDER BY j.job_id, j.depends_on), '{}')"
    "   FROM judged j WHERE NOT j.parent_live AND j.parent_status IN ('failed', 'cancelled')",
    2, {INT8ARRAYOID, INT8ARRAYOID}};

// Jobs of $1 that wait for nothing any more start now; those with a group key wait for their turn in it,
// which the caller settles next (their groups are returned).
SPIPlanPtr s_release;
const plan_text k_release = {
    "WITH ready AS ("
    "  SELECT l.id, l.queue_name, l.group_key, l.enqueued_by FROM pgjq.live_jobs l"
    "   WHERE l.id = ANY ($1) AND l.status < 'pending'"
    "     AND NOT EXISTS (SELECT 1 FROM pgjq.job_dependencies d WHERE d.job_id = l.id)),"
    " started AS ("
    "  UPDATE pgjq.live_jobs l SET status = 'pending' FROM ready r WHERE l.id = r.id AND r.group_key IS NULL)"
    " SELECT queue_name, group_key, enqueued_by::oid FROM ready WHERE group_key IS NOT NULL",
    1, {INT8ARRAYOID}};

// Starts the next waiting jobs of each group ($1 queue names, $2 group keys, $3 enqueuing roles) while it has
// room: live jobs (pending, claimed, running) fewer than its queue's group_concurrency. In enqueue order: a
// waiting job whose dependencies are unmet holds back the ones behind it.
#define SAME_GROUP(l, g) " " l ".queue_name = " g ".queue_name AND " l ".group_key = " g ".group_key" \
                         " AND " l ".enqueued_by = " g ".enqueued_by"
SPIPlanPtr s_promote;
const plan_text k_promote = {
    "WITH g AS (SELECT DISTINCT queue_name, group_key, enqueued_by"
    "             FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]),"
    "                             pg_catalog.unnest($3::pg_catalog.regrole[])) AS g(queue_name, group_key, enqueued_by)),"
    " room AS ("
    "  SELECT g.queue_name, g.group_key, g.enqueued_by,"
    "         q.group_concurrency - (SELECT count(*) FROM pgjq.live_jobs l"
    "                                 WHERE" SAME_GROUP("l", "g") " AND l.status >= 'pending') AS free"
    "    FROM g JOIN pgjq.queues q ON q.queue_name = g.queue_name),"
    " next AS ("
    "  SELECT n.id FROM room r CROSS JOIN LATERAL ("
    "    SELECT c.id, bool_or(c.has_dependencies) OVER (ORDER BY c.id) AS held_back"
    "      FROM (SELECT l.id, EXISTS (SELECT 1 FROM pgjq.job_dependencies d WHERE d.job_id = l.id) AS has_dependencies"
    "              FROM pgjq.live_jobs l"
    "             WHERE" SAME_GROUP("l", "r") " AND l.status < 'pending'"
    "             ORDER BY l.id LIMIT greatest(r.free, 0)) c) n"
    "   WHERE NOT n.held_back)"
    " UPDATE pgjq.live_jobs SET status = 'pending' WHERE id = ANY (ARRAY(SELECT id FROM next))",
    3, {TEXTARRAYOID, TEXTARRAYOID, OIDARRAYOID}};

// The sweep's questions.
SPIPlanPtr s_groups_with_room;
const plan_text k_groups_with_room = {
    "SELECT w.queue_name, w.group_key, w.enqueued_by::oid"
    "  FROM (SELECT DISTINCT queue_name, group_key, enqueued_by FROM pgjq.live_jobs"
    "         WHERE status < 'pending' AND group_key IS NOT NULL AND ($1::text IS NULL OR queue_name = $1)) w"
    "  JOIN pgjq.queues q ON q.queue_name = w.queue_name"
    " WHERE (SELECT count(*) FROM pgjq.live_jobs l WHERE" SAME_GROUP("l", "w") " AND l.status >= 'pending')"
    "       < q.group_concurrency",
    1, {TEXTOID}};
SPIPlanPtr s_stale_dependencies;
const plan_text k_stale_dependencies = {
    "SELECT coalesce(array_agg(DISTINCT d.depends_on), '{}') FROM pgjq.job_dependencies d"
    " WHERE NOT EXISTS (SELECT 1 FROM pgjq.live_jobs l WHERE l.id = d.depends_on)",
    0, {}};
// clang-format on

// The groups in the last statement's rows: queue name, group key, enqueuing role (as oid).
void note_groups_of_rows()
{
    for (uint64 i = 0; i < SPI_processed; i++) {
        bool isnull;
        Datum role = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull);
        note_group_changed(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
                           isnull ? InvalidOid : DatumGetObjectId(role),
                           SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
    }
}

Datum id_array(const int64* ids, int n)
{
    return PointerGetDatum(job_id_array(ids, n));
}

// Whether pgjq.job_dependencies has never held a row: no page yet. A database whose jobs wait only as
// workflow steps (which count instead, core/workflows.hpp) never writes one. A row that names a job this
// transaction finishes was committed before the job's row could go (its enqueue locks the parent's row,
// k_lock_parents), so a page it needed exists by the time this transaction settles.
bool no_dependency_rows()
{
    Relation rel = table_open(pgjq_relation("job_dependencies"), AccessShareLock);
    const bool empty = RelationGetNumberOfBlocks(rel) == 0;
    table_close(rel, AccessShareLock);
    return empty;
}

// One round: judges the new dependents and the dependents of the jobs that finished since the last round,
// releases what is met and cancels what is broken (which may finish more jobs: the next round's).
void settle_dependencies_round(Datum dependents, Datum finished)
{
    ArrayType* new_dependents = DatumGetArrayTypeP(dependents);
    if (ArrayGetNItems(ARR_NDIM(new_dependents), ARR_DIMS(new_dependents)) == 0 && no_dependency_rows())
        return;
    Datum values[2] = {dependents, finished};
    run_plan_latest(saved_plan(&s_judge, k_judge), values, nullptr);
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    Datum met = SPI_getbinval(row, desc, 1, &isnull);
    ArrayType* broken_jobs = DatumGetArrayTypeP(SPI_getbinval(row, desc, 2, &isnull));
    ArrayType* broken_parents = DatumGetArrayTypeP(SPI_getbinval(row, desc, 3, &isnull));
    Datum* statuses;
    bool* status_nulls;
    int nbroken;
    deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(row, desc, 4, &isnull)), TEXTOID, -1, false, TYPALIGN_INT,
                      &statuses, &status_nulls, &nbroken);
    const int64* jobs = reinterpret_cast<const int64*>(ARR_DATA_PTR(broken_jobs));
    const int64* parents = reinterpret_cast<const int64*>(ARR_DATA_PTR(broken_parents));

    // Met: start what waits for nothing else (the new dependents whose parents all completed included).
    ArrayType* met_array = DatumGetArrayTypeP(met);
    int nmet = ArrayGetNItems(ARR_NDIM(met_array), ARR_DIMS(met_array));
    ArrayType* dependents_array = DatumGetArrayTypeP(dependents);
    int ndependents = ArrayGetNItems(ARR_NDIM(dependents_array), ARR_DIMS(dependents_array));
    if (nmet + ndependents > 0) {
        Datum candidates = PointerGetDatum(DatumGetArrayTypeP(DirectFunctionCall2(array_cat, met, dependents)));
        run_plan_latest(saved_plan(&s_release, k_release), &candidates, nullptr);
        note_groups_of_rows();
    }

    // Broken: each dependent is cancelled once, naming the first parent that broke it.
    for (int i = 0; i < nbroken; i++) {
        if (i > 0 && jobs[i] == jobs[i - 1])
            continue;
        const char* status = TextDatumGetCString(statuses[i]);
        char* reason = psprintf("job %lld it depends on %s", (long long) parents[i],
                                strcmp(status, "failed") == 0 ? "failed" : "was cancelled");
        archive_request r = {single_id_array(jobs[i]), "cancelled", nullptr, nullptr, InvalidOid, nullptr, reason};
        archive_jobs(r);  // notes it as finished: its own dependents are the next round's
    }
}

void settle_dependencies()
{
    if (s_nparents > 0) {
        Datum parents = id_array(s_parents, s_nparents);
        uint64 locked = run_plan_latest(saved_plan(&s_lock_parents, k_lock_parents), &parents, nullptr);
        // Claims pass over a pending parent while this transaction's lock holds it: its queue's floors
        // must not stay past it (core/claim_floor.hpp).
        for (uint64 i = 0; i < locked; i++) {
            bool isnull;
            if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull)))
                runnable_at_commit(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1), nullptr);
        }
    }
    Datum dependents = id_array(s_dependents, s_ndependents);
    s_ndependents = s_nparents = 0;
    const bool workflows = workflows_installed();
    settled_steps settled = {nullptr, nullptr, 0, 0};
    // Rounds until no cancellation finishes another job (a chain of dependents is one round per link).
    for (bool first = true; first || s_nfinished > 0; first = false) {
        Datum finished = id_array(s_finished, s_nfinished);
        s_nfinished = 0;
        settle_dependencies_round(first ? dependents : id_array(nullptr, 0), finished);
        if (workflows)
            settle_finished_steps(finished, &settled);
    }
    if (workflows)
        count_settled_workflows(settled);
}

struct group_lock {
    uint32 queue_hash;
    uint32 bucket;
};

int compare_group_locks(const void* a, const void* b)
{
    const group_lock& x = *static_cast<const group_lock*>(a);
    const group_lock& y = *static_cast<const group_lock*>(b);
    if (x.queue_hash != y.queue_hash)
        return x.queue_hash < y.queue_hash ? -1 : 1;
    return (x.bucket > y.bucket) - (x.bucket < y.bucket);
}

void settle_groups()
{
    long n = hash_get_num_entries(s_groups);
    if (n == 0)
        return;
    Datum* queues = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* keys = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* roles = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    group_lock* locks = static_cast<group_lock*>(palloc(sizeof(group_lock) * n));
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, s_groups);
    int count = 0;
    for (group_ref* g; (g = static_cast<group_ref*>(hash_seq_search(&scan))) != nullptr; count++) {
        queues[count] = CStringGetTextDatum(g->queue_name);
        keys[count] = CStringGetTextDatum(g->group_key);
        roles[count] = ObjectIdGetDatum(g->enqueued_by);
        locks[count].queue_hash =
            hash_bytes(reinterpret_cast<const unsigned char*>(g->queue_name), strlen(g->queue_name));
        uint32 key_hash = hash_bytes(reinterpret_cast<const unsigned char*>(g->group_key), strlen(g->group_key));
        locks[count].bucket = hash_combine(key_hash, hash_bytes_uint32(g->enqueued_by)) % k_group_lock_buckets;
    }
    hash_destroy(s_groups);
    s_groups = nullptr;

    // In one order for every transaction, so that two of them never wait for each other.
    qsort(locks, count, sizeof(group_lock), compare_group_locks);
    for (int i = 0; i < count; i++) {
        if (i > 0 && compare_group_locks(&locks[i], &locks[i - 1]) == 0)
            continue;
        LOCKTAG tag;
        SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, locks[i].queue_hash, locks[i].bucket, k_group_lock_space);
        (void) LockAcquire(&tag, ExclusiveLock, false, false);
    }
    Datum values[3] = {PointerGetDatum(construct_array(queues, count, TEXTOID, -1, false, TYPALIGN_INT)),
                       PointerGetDatum(construct_array(keys, count, TEXTOID, -1, false, TYPALIGN_INT)),
                       PointerGetDatum(construct_array(roles, count, OIDOID, sizeof(Oid), true, TYPALIGN_INT))};
    run_plan_latest(saved_plan(&s_promote, k_promote), values, nullptr);
}

bool anything_noted()
{
    return s_ndependents > 0 || s_nfinished > 0 || (s_groups != nullptr && hash_get_num_entries(s_groups) > 0);
}

}  // namespace

namespace pgjq {

void note_group_changed(const char* queue_name, Oid enqueued_by, const char* group_key)
{
    if (s_groups == nullptr) {
        HASHCTL ctl;
        memset(&ctl, 0, sizeof ctl);
        ctl.keysize = sizeof(group_ref);
        ctl.entrysize = sizeof(group_ref);
        ctl.hcxt = TopTransactionContext;
        s_groups = hash_create("pgjq groups to settle", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    group_ref key;
    memset(&key, 0, sizeof key);  // the whole key is hashed and compared
    strlcpy(key.queue_name, queue_name, sizeof key.queue_name);
    key.enqueued_by = enqueued_by;
    strlcpy(key.group_key, group_key, sizeof key.group_key);
    (void) hash_search(s_groups, &key, HASH_ENTER, nullptr);
}

void note_new_dependent(int64 job_id, const int64* parents, int n)
{
    append(&s_dependents, &s_ndependents, &s_dependents_capacity, job_id);
    for (int i = 0; i < n; i++)
        append(&s_parents, &s_nparents, &s_parents_capacity, parents[i]);
}

void note_finished(Datum ids)
{
    ArrayType* array = DatumGetArrayTypeP(ids);
    int n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
    const int64* values = reinterpret_cast<const int64*>(ARR_DATA_PTR(array));
    for (int i = 0; i < n; i++)
        append(&s_finished, &s_nfinished, &s_finished_capacity, values[i]);
}

void settle_waiting_jobs()
{
    if (!anything_noted())
        return;
    // The extension was dropped in this transaction, or the database is still at 0.1.0 (nothing waits).
    if (!OidIsValid(pgjq_relation("job_dependencies"))) {
        forget_waiting_jobs_ledger();
        return;
    }
    commit_work work = begin_commit_work();
    if (s_ndependents > 0 || s_nfinished > 0)
        settle_dependencies();
    if (s_groups != nullptr)
        settle_groups();
    end_commit_work(work);
}

void forget_waiting_jobs_ledger()
{
    s_groups = nullptr;
    s_dependents = s_parents = s_finished = nullptr;
    s_ndependents = s_dependents_capacity = s_nparents = s_parents_capacity = 0;
    s_nfinished = s_finished_capacity = 0;
}

int64 note_groups_with_room(const char* queue_name)
{
    Datum values[1] = {queue_name ? CStringGetTextDatum(queue_name) : (Datum) 0};
    char nulls[1] = {queue_name ? ' ' : 'n'};
    uint64 n = run_plan(saved_plan(&s_groups_with_room, k_groups_with_room), values, nulls);
    note_groups_of_rows();
    return static_cast<int64>(n);
}

int64 note_stale_dependencies()
{
    return note_finished_by(saved_plan(&s_stale_dependencies, k_stale_dependencies));
}

int64 note_finished_by(SPIPlanPtr plan)
{
    run_plan(plan, nullptr, nullptr);
    bool isnull, found;
    Datum ids = first_value(&isnull, &found);
    ArrayType* array = DatumGetArrayTypeP(ids);
    int n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
    if (n > 0)
        note_finished(ids);
    return n;
}

}  // namespace pgjq
