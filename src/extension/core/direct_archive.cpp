// direct_archive.cpp: jobs finishing through the table access method (see direct_archive.hpp).
//
// What it prepares (column numbers, where each history column comes from, finished_jobs' CHECK constraints
// and index entries) is kept in a memory context of its own until an invalidation says either table, one of
// their indexes, a function or a type changed; it is then rebuilt by the next call. Runs between PostgreSQL
// calls that may raise: no C++ object owns anything here, and the relations, scan, snapshot and slots are
// released by the transaction's resource owner if one of them does.
#include "core/direct_archive.hpp"

#include "pg/compat.hpp"

#include "core/announcements.hpp"
#include "pg/catalog.hpp"
#include "pg/settings.hpp"
#include "tableam/claimed_versions.hpp"
#include "tableam/prepared_cache.hpp"
#include "tableam/table_writes.hpp"

namespace {

using namespace pgjq;

// The live_jobs columns the archive reads, with the type each must have.
enum live_column {
    l_id,
    l_queue_name,
    l_status,
    l_worker_id,
    l_claimed_by,
    l_timeout_at,
    l_claimed_at,
    l_run_at,
    l_group_key,
    l_enqueued_by,
    l_progress,
    l_last_error,
    k_live_columns
};
const known_column k_live[k_live_columns] = {
    {"id", INT8OID},
    {"queue_name", TEXTOID},
    {"status", InvalidOid},
    {"worker_id", TEXTOID},
    {"claimed_by", REGROLEOID},
    {"timeout_at", TIMESTAMPTZOID},
    {"claimed_at", TIMESTAMPTZOID},
    {"run_at", TIMESTAMPTZOID},
    {"group_key", TEXTOID},
    {"enqueued_by", REGROLEOID},
    {"progress", INT4OID},
    {"last_error", TEXTOID},
};

// The history columns the archive sets (archive_jobs' ARCHIVE_INSERT, core/lifecycle.cpp); the others it
// fills are copied from the live column of the same name and type.
enum set_column {
    s_status,
    s_result,
    s_progress,
    s_completed_at,
    s_failed_at,
    s_cancelled_at,
    s_finished_at,
    s_last_error,
    k_set_columns
};
const known_column k_set[k_set_columns] = {
    {"status", InvalidOid},           {"result", JSONBOID},          {"progress", INT4OID},
    {"completed_at", TIMESTAMPTZOID}, {"failed_at", TIMESTAMPTZOID}, {"cancelled_at", TIMESTAMPTZOID},
    {"finished_at", TIMESTAMPTZOID},  {"last_error", TEXTOID},
};
const char* const k_copied[] = {"id",         "queue_name",   "job_type",         "priority",     "payload",
                                "run_at",     "unique_key",   "current_stage",    "events_count", "worker_id",
                                "claimed_at", "heartbeat_at", "lease_expires_at", "created_at",   "started_at",
                                "attempts",   "max_attempts", "enqueued_by",      "claimed_by",   "group_key",
                                "depends_on", "timeout"};
constexpr int k_history_columns = k_set_columns + sizeof k_copied / sizeof k_copied[0];
// Copied too where both tables have them: the columns a database at 0.2.0 lacks.
const char* const k_copied_from_0_3_0[] = {"headers"};
// The one insert trigger of finished_jobs, which only sends the finished notice this sends itself.
const char* const k_finished_trigger = "notify_job_finished";
const char* const k_finished_trigger_symbol = "pgjq_notify_job_finished";
// How many newer versions of a job changed meanwhile are followed.
constexpr int k_max_hops = 8;

enum final_status { completed, failed, cancelled, k_final_statuses };
const char* const k_final_labels[k_final_statuses] = {"completed", "failed", "cancelled"};

// What a direct archive keeps of live_jobs, its primary key and finished_jobs (s_cache).
struct prepared_archive {
    bool direct;     // false: the statement runs
    bool announces;  // finished_jobs has its notify_job_finished trigger
    AttrNumber at[k_live_columns];
    Datum pending, claimed, running;  // pgjq.job_status values
    Datum final_values[k_final_statuses];
    // Per history attribute: the live column it copies (> 0), -(1 + its set_column), or 0 (dropped: NULL).
    int* history_from;
    int nindexes;
    prepared_index* indexes;
    prepared_checks checks;
    ExprContext* econtext;  // standalone; its per-tuple memory holds a row's CHECK tests
};

prepared_cache s_cache = {"pgjq direct archive"};

bool plain_table(Relation rel)
{
    const TupleDesc desc = RelationGetDescr(rel);
    return rel->rd_rel->relkind == RELKIND_RELATION && rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
        !rel->rd_rel->relispartition && !rel->rd_rel->relhassubclass && !rel->rd_rel->relrowsecurity &&
        !compat::has_generated_columns(desc);
}

// No trigger fires on a DELETE from live_jobs (a foreign key referring to it would have one).
bool no_delete_triggers(const TriggerDesc* t)
{
    if (t == nullptr)
        return true;
    for (int i = 0; i < t->numtriggers; i++)
        if (TRIGGER_FOR_DELETE(t->triggers[i].tgtype))
            return false;
    return true;
}

// pgjq's own C function, as the extension's script creates it.
bool is_finished_trigger_function(Oid function, Oid schema)
{
    HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
    if (!HeapTupleIsValid(tuple))
        return false;
    const Form_pg_proc proc = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple));
    bool known = proc->prolang == ClanguageId && proc->pronamespace == schema &&
        strcmp(NameStr(proc->proname), k_finished_trigger) == 0;
    if (known) {
        bool isnull;
        Datum source = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_prosrc, &isnull);
        known = !isnull && text_equals(source, k_finished_trigger_symbol, strlen(k_finished_trigger_symbol));
    }
    ReleaseSysCache(tuple);
    return known;
}

// The only trigger an INSERT into finished_jobs fires is pgjq's notify_job_finished, before each row, enabled
// (*announces) or absent. (A session in replica mode gets the statement: see archive_directly.)
bool insert_triggers_known(Relation finished, bool* announces)
{
    const TriggerDesc* t = finished->trigdesc;
    *announces = false;
    if (t == nullptr)
        return true;
    if (t->trig_insert_instead_row || t->trig_insert_after_row || t->trig_insert_before_statement ||
        t->trig_insert_after_statement || t->trig_insert_new_table)
        return false;
    for (int i = 0; i < t->numtriggers; i++) {
        const Trigger& trigger = t->triggers[i];
        if (!TRIGGER_FOR_INSERT(trigger.tgtype))
            continue;
        if (strcmp(trigger.tgname, k_finished_trigger) != 0 || trigger.tgqual != nullptr || trigger.tgnargs != 0 ||
            !TRIGGER_FOR_ROW(trigger.tgtype) || !TRIGGER_FOR_BEFORE(trigger.tgtype) ||
            (trigger.tgenabled != TRIGGER_FIRES_ON_ORIGIN && trigger.tgenabled != TRIGGER_FIRES_ALWAYS) ||
            !is_finished_trigger_function(trigger.tgfoid, RelationGetNamespace(finished)))
            return false;
        *announces = true;
    }
    return true;
}

// The column of `desc` named `name` with type `type` (InvalidOid: `status_type`), or 0.
AttrNumber typed_column(TupleDesc desc, const char* name, Oid type, Oid status_type)
{
    const int at = SPI_fnumber(desc, name);
    if (at <= 0)
        return 0;
    const Oid atttype = TupleDescAttr(desc, at - 1)->atttypid;
    return atttype == (type == InvalidOid ? status_type : type) ? static_cast<AttrNumber>(at) : 0;
}

// Where each history column comes from; false when finished_jobs has a column the statement does not fill
// (it would take its default) or lacks one it fills, or a type differs.
bool map_history(prepared_archive* p, TupleDesc live, TupleDesc history, Oid status_type)
{
    p->history_from = static_cast<int*>(palloc0(sizeof(int) * (history->natts + 1)));
    int mapped = 0;
    for (int i = 0; i < history->natts; i++) {
        const Form_pg_attribute column = TupleDescAttr(history, i);
        if (column->attisdropped)
            continue;
        const char* name = NameStr(column->attname);
        for (int c = 0; c < k_set_columns && p->history_from[i] == 0; c++)
            if (strcmp(name, k_set[c].name) == 0 &&
                column->atttypid == (k_set[c].type == InvalidOid ? status_type : k_set[c].type))
                p->history_from[i] = -(1 + c);
        for (const char* copied : k_copied)
            if (p->history_from[i] == 0 && strcmp(name, copied) == 0)
                p->history_from[i] = typed_column(live, name, column->atttypid, status_type);
        bool is_optional = false;
        for (const char* copied : k_copied_from_0_3_0)
            if (p->history_from[i] == 0 && strcmp(name, copied) == 0) {
                p->history_from[i] = typed_column(live, name, column->atttypid, status_type);
                is_optional = true;
            }
        if (p->history_from[i] == 0)
            return false;
        if (!is_optional)
            mapped++;
    }
    return mapped == k_history_columns;
}

// live_jobs' primary key as the archive reads it: a b-tree on id alone.
bool is_primary_key(Relation index, AttrNumber id)
{
    return index->rd_rel->relam == BTREE_AM_OID && index->rd_index->indnkeyatts == 1 &&
        index->rd_index->indkey.values[0] == id && RelationGetIndexExpressions(index) == NIL &&
        RelationGetIndexPredicate(index) == NIL;
}

prepared_archive* prepare_archive(Relation live, Relation primary_key, Relation finished, Relation* indexes,
                                  int nindexes)
{
    prepared_archive* p = static_cast<prepared_archive*>(palloc0(sizeof(prepared_archive)));
    Oid status_type;
    p->direct = plain_table(live) && plain_table(finished) && no_delete_triggers(live->trigdesc) &&
        insert_triggers_known(finished, &p->announces) &&
        find_known_columns(RelationGetDescr(live), k_live, k_live_columns, p->at, &status_type) &&
        is_primary_key(primary_key, p->at[l_id]) &&
        map_history(p, RelationGetDescr(live), RelationGetDescr(finished), status_type);
    if (!p->direct)
        return p;
    p->pending = enum_label_value(status_type, "pending");
    p->claimed = enum_label_value(status_type, "claimed");
    p->running = enum_label_value(status_type, "running");
    bool values_known = p->pending != 0 && p->claimed != 0 && p->running != 0;
    for (int s = 0; s < k_final_statuses; s++) {
        p->final_values[s] = enum_label_value(status_type, k_final_labels[s]);
        values_known = values_known && p->final_values[s] != 0;
    }
    p->nindexes = nindexes;
    p->indexes = static_cast<prepared_index*>(palloc(sizeof(prepared_index) * (nindexes + 1)));
    p->direct = values_known;
    for (int i = 0; i < nindexes && p->direct; i++)
        p->direct = prepare_index(indexes[i], &p->indexes[i], true);
    if (!p->direct)
        return p;
    p->checks = prepare_checks(finished);
    p->econtext = CreateStandaloneExprContext();
    return p;
}

// What one call's fetches by claimed version have read: the table's size, at the first use (a vacuum may
// have truncated the table since the claim, and a read past its end would raise), and the last page pruned.
struct claimed_fetches {
    BlockNumber blocks = InvalidBlockNumber;
    BlockNumber pruned = InvalidBlockNumber;
};

// Job `id` into `job`, fetched where this backend's claim left it (tableam/claimed_versions.hpp), when that
// version is still the one `snapshot` sees. Each page is first pruned of the versions nobody can see any
// more, as a fetch through the index does when it reaches a page (heap_fetch does not).
bool fetch_claimed_version(Relation live, const prepared_archive* p, int64 id, Snapshot snapshot,
                           claimed_fetches* fetches, TupleTableSlot* job)
{
    ItemPointerData tid;
    if (!claimed_version(live, id, &tid))
        return false;
    if (fetches->blocks == InvalidBlockNumber)
        fetches->blocks = RelationGetNumberOfBlocks(live);
    const BlockNumber block = ItemPointerGetBlockNumber(&tid);
    if (block >= fetches->blocks)
        return false;
    if (block != fetches->pruned) {
        Buffer page = ReadBuffer(live, block);
        heap_page_prune_opt(live, page);
        ReleaseBuffer(page);
        fetches->pruned = block;
    }
    if (!table_tuple_fetch_row_version(live, &tid, snapshot, job))
        return false;
    bool isnull;
    const Datum found = slot_getattr(job, p->at[l_id], &isnull);
    return !isnull && DatumGetInt64(found) == id;
}

// What every job of one call gets.
struct archive_values {
    final_status status;
    Datum status_value;
    Datum result;      // 0: NULL
    Datum last_error;  // 0: the job's own
    size_t holder_length;
    TimestampTz now;             // the transaction's start
    TimestampTz statement_time;  // statement_timestamp()
};

// The statement's holder condition (archive_jobs' HOLDER_ROLE), of the version in `job`.
bool held(const prepared_archive* p, const archive_request& r, const archive_values& a, TupleTableSlot* job)
{
    if (r.holder == nullptr)
        return true;
    slot_getallattrs(job);
    const Datum* v = job->tts_values;
    const bool* null = job->tts_isnull;
    auto at = [&](live_column c) { return p->at[c] - 1; };
    if (null[at(l_worker_id)] || !text_equals(v[at(l_worker_id)], r.holder, a.holder_length) || null[at(l_status)] ||
        v[at(l_status)] == p->pending)
        return false;
    if (!null[at(l_timeout_at)] && DatumGetTimestampTz(v[at(l_timeout_at)]) <= a.now)
        return false;
    if (null[at(l_claimed_by)])
        return true;
    const Oid claimed_by = DatumGetObjectId(v[at(l_claimed_by)]);
    return claimed_by == r.role || has_privs_of_role(r.role, claimed_by);
}

// Deletes the job in `job` if it is held, as the statement's DELETE: waiting for a transaction changing it,
// and following it to its latest version, locked, when one committed after `snapshot` (EvalPlanQual). On
// true, `job` holds the deleted version.
bool delete_held(Relation live, const prepared_archive* p, const archive_request& r, const archive_values& a,
                 Snapshot snapshot, CommandId cid, TupleTableSlot* job)
{
    for (int hop = 0;; hop++) {
        if (!held(p, r, a, job))
            return false;
        TM_FailureData failure;
        const TM_Result result =
            table_tuple_delete(live, &job->tts_tid, cid, snapshot, InvalidSnapshot, true, &failure, false);
        if (result == TM_Ok)
            return true;
        if (result == TM_Invisible)
            elog(ERROR, "attempted to delete invisible tuple");
        // Deleted, or changed by this very call (a duplicate id cannot be: the ids are distinct).
        if (result != TM_Updated || hop == k_max_hops)
            return false;
        if (table_tuple_lock(live, &failure.ctid, snapshot, job, cid, LockTupleExclusive, LockWaitBlock,
                             TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &failure) != TM_Ok)
            return false;
    }
}

// The history row archive_jobs' statement inserts (ARCHIVE_INSERT, with no claim in this transaction), of
// the deleted version in `job`, into `row`.
void form_history(const prepared_archive* p, const archive_values& a, TupleTableSlot* job, TupleTableSlot* row)
{
    ExecClearTuple(row);
    const int natts = row->tts_tupleDescriptor->natts;
    Datum* v = row->tts_values;
    bool* null = row->tts_isnull;
    const Datum* live = job->tts_values;
    const bool* live_null = job->tts_isnull;
    for (int i = 0; i < natts; i++) {
        const int from = p->history_from[i];
        if (from > 0) {
            v[i] = live[from - 1];
            null[i] = live_null[from - 1];
            continue;
        }
        v[i] = (Datum) 0;
        null[i] = true;
        if (from == 0)
            continue;
        auto set = [&](Datum value) {
            v[i] = value;
            null[i] = false;
        };
        auto copy = [&](live_column c) {
            v[i] = live[p->at[c] - 1];
            null[i] = live_null[p->at[c] - 1];
        };
        switch (static_cast<set_column>(-from - 1)) {
        case s_status:
            set(a.status_value);
            break;
        case s_result:
            if (a.result != 0)
                set(a.result);
            break;
        case s_progress:
            if (a.status == completed)
                set(Int32GetDatum(100));
            else
                copy(l_progress);
            break;
        case s_completed_at:
        case s_failed_at:
        case s_cancelled_at:
            if (static_cast<int>(a.status) == -from - 1 - s_completed_at)
                set(TimestampTzGetDatum(a.statement_time));
            break;
        case s_finished_at:
            set(TimestampTzGetDatum(a.statement_time));
            break;
        case s_last_error:
            if (a.last_error != 0)
                set(a.last_error);
            else
                copy(l_last_error);
            break;
        case k_set_columns:
            break;
        }
    }
    ExecStoreVirtualTuple(row);
}

bool among(Datum queue, const Datum* names, int n)
{
    text* t = DatumGetTextPP(queue);
    for (int i = 0; i < n; i++)
        if (text_equals(names[i], VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)))
            return true;
    return false;
}

// What moved, gathered job by job into archived_jobs' arrays.
struct gathered {
    int n, ngroups, ndiscarded;
    Datum *ids, *queues, *group_queues, *group_keys, *group_roles, *waits, *runs, *discarded_ids, *discarded_queues;
    bool *wait_nulls, *run_nulls;
    bool several_queues;
};

gathered start_gathering(int capacity)
{
    gathered g = {};
    auto datums = [&]() { return static_cast<Datum*>(palloc(sizeof(Datum) * (capacity + 1))); };
    g.ids = datums();
    g.queues = datums();
    g.group_queues = datums();
    g.group_keys = datums();
    g.group_roles = datums();
    g.waits = datums();
    g.runs = datums();
    g.discarded_ids = datums();
    g.discarded_queues = datums();
    g.wait_nulls = static_cast<bool*>(palloc(sizeof(bool) * (capacity + 1)));
    g.run_nulls = static_cast<bool*>(palloc(sizeof(bool) * (capacity + 1)));
    return g;
}

// Seconds between two times, as date_part('epoch', later - earlier).
double seconds_between(TimestampTz earlier, TimestampTz later)
{
    return static_cast<double>(later - earlier) / USECS_PER_SEC;
}

void gather(gathered* g, const prepared_archive* p, const archive_values& a, TupleTableSlot* job, bool kept)
{
    const Datum* v = job->tts_values;
    const bool* null = job->tts_isnull;
    auto at = [&](live_column c) { return p->at[c] - 1; };
    const int i = g->n++;
    g->ids[i] = v[at(l_id)];
    // The job's queue, copied out of its buffer once for a run of jobs of the same queue.
    const Datum queue = v[at(l_queue_name)];
    if (i > 0) {
        text* previous = DatumGetTextPP(g->queues[i - 1]);
        if (text_equals(queue, VARDATA_ANY(previous), VARSIZE_ANY_EXHDR(previous)))
            g->queues[i] = g->queues[i - 1];
        else {
            g->queues[i] = PointerGetDatum(DatumGetTextPCopy(queue));
            g->several_queues = true;
        }
    } else {
        g->queues[i] = PointerGetDatum(DatumGetTextPCopy(queue));
    }
    if (!null[at(l_group_key)]) {
        g->group_queues[g->ngroups] = g->queues[i];
        g->group_roles[g->ngroups] = null[at(l_enqueued_by)] ? ObjectIdGetDatum(InvalidOid) : v[at(l_enqueued_by)];
        g->group_keys[g->ngroups++] = PointerGetDatum(DatumGetTextPCopy(v[at(l_group_key)]));
    }
    // The claim's time when this attempt was claimed (archive_jobs' CLAIM_TIME).
    const Datum status = v[at(l_status)];
    const bool claimed =
        !null[at(l_status)] && (status == p->claimed || status == p->running) && !null[at(l_claimed_at)];
    const TimestampTz claimed_at = claimed ? DatumGetTimestampTz(v[at(l_claimed_at)]) : 0;
    g->wait_nulls[i] = !claimed || null[at(l_run_at)];
    g->waits[i] = g->wait_nulls[i] ? (Datum) 0
                                   : Float8GetDatum(seconds_between(DatumGetTimestampTz(v[at(l_run_at)]), claimed_at));
    g->run_nulls[i] = !claimed;
    g->runs[i] = claimed ? Float8GetDatum(seconds_between(claimed_at, a.statement_time)) : (Datum) 0;
    if (!kept) {
        g->discarded_ids[g->ndiscarded] = g->ids[i];
        g->discarded_queues[g->ndiscarded++] = g->queues[i];
    }
}

Datum text_array(const Datum* values, int n)
{
    return PointerGetDatum(construct_array(const_cast<Datum*>(values), n, TEXTOID, -1, false, TYPALIGN_INT));
}

Datum id_array(const Datum* values, int n)
{
    return PointerGetDatum(
        construct_array(const_cast<Datum*>(values), n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

Datum seconds_array(Datum* values, bool* nulls, int n)
{
    int dims[1] = {n}, lbs[1] = {1};
    return PointerGetDatum(
        construct_md_array(values, nulls, 1, dims, lbs, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

void finish_gathering(const gathered& g, archived_jobs* out)
{
    out->count = g.n;
    out->moved = id_array(g.ids, g.n);
    out->none_moved = g.n == 0;
    out->queue = g.n > 0 ? g.queues[0] : (Datum) 0;
    out->several_queues = g.several_queues;
    out->every_queue = g.several_queues ? text_array(g.queues, g.n) : (Datum) 0;
    out->no_groups = g.ngroups == 0;
    out->group_queues = g.ngroups > 0 ? text_array(g.group_queues, g.ngroups) : (Datum) 0;
    out->group_keys = g.ngroups > 0 ? text_array(g.group_keys, g.ngroups) : (Datum) 0;
    out->group_roles = g.ngroups > 0
        ? PointerGetDatum(construct_array(g.group_roles, g.ngroups, OIDOID, sizeof(Oid), true, TYPALIGN_INT))
        : (Datum) 0;
    out->no_times = g.n == 0;
    out->waits = g.n > 0 ? seconds_array(g.waits, g.wait_nulls, g.n) : (Datum) 0;
    out->runs = g.n > 0 ? seconds_array(g.runs, g.run_nulls, g.n) : (Datum) 0;
    out->none_discarded = g.ndiscarded == 0;
    out->discarded_ids = g.ndiscarded > 0 ? id_array(g.discarded_ids, g.ndiscarded) : (Datum) 0;
    out->discarded_queues = g.ndiscarded > 0 ? text_array(g.discarded_queues, g.ndiscarded) : (Datum) 0;
}

// The distinct ids of `ids` in ascending order, without NULLs (id = ANY ($1) ignores them).
int64* distinct_ids(ArrayType* ids, int* n)
{
    Datum* values;
    bool* nulls;
    int count;
    deconstruct_array(ids, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &values, &nulls, &count);
    int64* sorted = static_cast<int64*>(palloc(sizeof(int64) * (count + 1)));
    int kept = 0;
    for (int i = 0; i < count; i++)
        if (!nulls[i])
            sorted[kept++] = DatumGetInt64(values[i]);
    sort_job_ids(sorted, kept);
    *n = 0;
    for (int i = 0; i < kept; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[(*n)++] = sorted[i];
    return sorted;
}

final_status status_of(const char* label)
{
    for (int s = 0; s < k_final_statuses; s++)
        if (strcmp(label, k_final_labels[s]) == 0)
            return static_cast<final_status>(s);
    elog(ERROR, "unknown final status \"%s\"", label);
    return completed;
}

}  // namespace

namespace pgjq {

bool archive_directly(const archive_request& r, ArrayType* discarding, archived_jobs* out)
{
    if (!direct_completions || r.claimed_here_by != nullptr || (r.holder != nullptr && !OidIsValid(r.role)) ||
        XactReadOnly || IsInParallelMode() || IsolationUsesXactSnapshot() ||
        SessionReplicationRole != SESSION_REPLICATION_ROLE_ORIGIN || database_at_0_1_0())
        return false;
    const Oid live_relid = pgjq_relation("live_jobs"), finished_relid = pgjq_relation("finished_jobs");
    if (!OidIsValid(live_relid) || !OidIsValid(finished_relid))
        return false;
    const Oid user = GetUserId();
    Relation live = table_open(live_relid, RowExclusiveLock);
    Relation finished = table_open(finished_relid, RowExclusiveLock);
    const Oid primary_key_oid = compat::primary_key_index(live);
    if (!OidIsValid(primary_key_oid) || pg_class_aclcheck(live_relid, user, ACL_SELECT) != ACLCHECK_OK ||
        pg_class_aclcheck(live_relid, user, ACL_DELETE) != ACLCHECK_OK ||
        pg_class_aclcheck(finished_relid, user, ACL_INSERT) != ACLCHECK_OK) {
        table_close(finished, NoLock);
        table_close(live, NoLock);
        return false;
    }
    // Every lock first: taking one accepts the invalidations that mark the prepared state stale.
    Relation primary_key = index_open(primary_key_oid, RowExclusiveLock);
    List* index_oids;
    Relation* indexes = open_indexes(finished, &index_oids);
    const int nindexes = list_length(index_oids);
    const Oid relations[3] = {live_relid, finished_relid, primary_key_oid};
    auto build = [&]() { return prepare_archive(live, primary_key, finished, indexes, nindexes); };
    prepared_archive* p = cached_state<prepared_archive>(&s_cache, relations, 3, index_oids, nullptr, build);
    auto close_all = [&]() {
        close_indexes(indexes, nindexes);
        index_close(primary_key, NoLock);
        table_close(finished, NoLock);
        table_close(live, NoLock);
    };
    if (!p->direct) {
        close_all();
        return false;
    }

    archive_values a;
    a.status = status_of(r.status);
    a.status_value = p->final_values[a.status];
    a.result = r.result != nullptr ? JsonbPGetDatum(r.result) : (Datum) 0;
    a.last_error = r.last_error != nullptr ? CStringGetTextDatum(r.last_error) : (Datum) 0;
    a.holder_length = r.holder != nullptr ? strlen(r.holder) : 0;
    a.now = GetCurrentTransactionStartTimestamp();
    a.statement_time = GetCurrentStatementStartTimestamp();
    Datum* discarding_names = nullptr;
    int ndiscarding = 0;
    if (discarding != nullptr) {
        bool* nulls;
        deconstruct_array(discarding, TEXTOID, -1, false, TYPALIGN_INT, &discarding_names, &nulls, &ndiscarding);
    }
    int nids;
    const int64* ids = distinct_ids(DatumGetArrayTypeP(r.ids), &nids);
    gathered g = start_gathering(nids);

    // Every job committed before the call, and this transaction's own changes, are visible to it.
    CommandCounterIncrement();
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    const CommandId cid = GetCurrentCommandId(true);
    IndexScanDesc scan = compat::begin_index_scan(live, primary_key, snapshot, 1);
    TupleTableSlot* job = table_slot_create(live, nullptr);
    // The history rows are written together, several to a page (insert_rows_with_entries).
    const int per_write = Max(1, Min(nids, k_rows_per_multi_insert));
    TupleTableSlot** rows = static_cast<TupleTableSlot**>(palloc(sizeof(TupleTableSlot*) * per_write));
    for (int i = 0; i < per_write; i++)
        rows[i] = MakeSingleTupleTableSlot(RelationGetDescr(finished), &TTSOpsVirtual);
    int buffered = 0;
    begin_index_writes(p->indexes, nindexes);
    claimed_fetches fetches;
    for (int i = 0; i < nids; i++) {
        CHECK_FOR_INTERRUPTS();
        ResetExprContext(p->econtext);
        ExecClearTuple(job);
        if (!fetch_claimed_version(live, p, ids[i], snapshot, &fetches, job)) {
            ScanKeyData key;
            ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid, InvalidOid, F_INT8EQ,
                                   Int64GetDatum(ids[i]));
            index_rescan(scan, &key, 1, nullptr, 0);
            if (!index_getnext_slot(scan, ForwardScanDirection, job))
                continue;
        }
        if (!delete_held(live, p, r, a, snapshot, cid, job))
            continue;
        slot_getallattrs(job);
        const Datum queue = job->tts_values[p->at[l_queue_name] - 1];
        const bool kept = a.status != completed || !among(queue, discarding_names, ndiscarding);
        if (kept) {
            TupleTableSlot* row = rows[buffered++];
            form_history(p, a, job, row);
            ExecMaterializeSlot(row);  // its values point into the deleted version, which the next job replaces
            if (p->announces) {
                char* queue_name = TextDatumGetCString(queue);
                announce_finished(ids[i], queue_name, r.status);
                pfree(queue_name);
            }
            check_constraints(p->checks, finished, row, p->econtext);
        }
        gather(&g, p, a, job, kept);
        if (buffered == per_write) {
            insert_rows_with_entries(finished, rows, buffered, cid, p->indexes, indexes, nindexes, p->econtext);
            buffered = 0;
        }
    }
    if (buffered > 0)
        insert_rows_with_entries(finished, rows, buffered, cid, p->indexes, indexes, nindexes, p->econtext);
    end_index_writes(p->indexes, indexes, nindexes);
    p->econtext->ecxt_scantuple = nullptr;
    ResetExprContext(p->econtext);
    index_endscan(scan);
    for (int i = 0; i < per_write; i++)
        ExecDropSingleTupleTableSlot(rows[i]);
    ExecDropSingleTupleTableSlot(job);
    UnregisterSnapshot(snapshot);
    close_all();
    CommandCounterIncrement();
    finish_gathering(g, out);
    return true;
}

}  // namespace pgjq
