// direct_claim.cpp: a leased claim through the table access method (see direct_claim.hpp).
//
// What it prepares (column numbers, the claim index, the other indexes' entries, the CHECK constraints, the
// mapping of a live row onto pgjq.jobs) is kept in a memory context of its own until an invalidation says
// live_jobs, one of its indexes, a function or a type changed; it is then rebuilt by the next call. Runs
// between PostgreSQL calls that may raise: no C++ object owns anything here, and the relations, scan,
// snapshot and slots are released by the transaction's resource owner if one of them does.
#include "core/direct_claim.hpp"

#include "pg/compat.hpp"

#include "pg/catalog.hpp"
#include "tableam/claimed_versions.hpp"
#include "tableam/prepared_cache.hpp"
#include "tableam/table_writes.hpp"

namespace {

using namespace pgjq;

// The live_jobs columns a claim reads or sets, with the type each must have.
enum claim_column {
    c_id,
    c_queue_name,
    c_job_type,
    c_priority,
    c_status,
    c_run_at,
    c_worker_id,
    c_claimed_at,
    c_heartbeat_at,
    c_lease_expires_at,
    c_attempts,
    c_claimed_by,
    c_timeout,
    c_timeout_at,
    k_claim_columns
};
const known_column k_columns[k_claim_columns] = {
    {"id", INT8OID},
    {"queue_name", TEXTOID},
    {"job_type", TEXTOID},
    {"priority", INT4OID},
    {"status", InvalidOid},
    {"run_at", TIMESTAMPTZOID},
    {"worker_id", TEXTOID},
    {"claimed_at", TIMESTAMPTZOID},
    {"heartbeat_at", TIMESTAMPTZOID},
    {"lease_expires_at", TIMESTAMPTZOID},
    {"attempts", INT4OID},
    {"claimed_by", REGROLEOID},
    {"timeout", INTERVALOID},
    {"timeout_at", TIMESTAMPTZOID},
};
// The columns of pgjq.jobs a live job has no value for.
const char* const k_finished_only[] = {"result", "completed_at", "failed_at", "cancelled_at"};
// Update triggers a claim may leave alone: AFTER ROW triggers whose WHEN clause wants NEW.status = 'pending'.
const char* const k_requeue_triggers[] = {"notify_new_job_on_requeue", "wake_maintenance_on_reschedule"};
// How many newer versions a job committed meanwhile is followed through.
constexpr int k_max_hops = 8;

// What a direct claim keeps of live_jobs (s_cache).
struct prepared_claims {
    MemoryContext context;  // the state's own
    bool direct;            // false: the statement runs
    AttrNumber at[k_claim_columns];
    Datum pending, claimed;  // pgjq.job_status values
    int claim_index;         // in `indexes`
    int nindexes;
    prepared_index* indexes;
    prepared_checks checks;
    ExprContext* econtext;  // standalone; its per-tuple memory holds a job's predicate and CHECK tests
    // pgjq.jobs as the call returns it: per column, the live_jobs column it shows (0: NULL).
    int view_natts;
    Oid* view_types;
    AttrNumber* view_from;
};

prepared_cache s_cache = {"pgjq direct claim"};

bool update_triggers_known(const TriggerDesc* t)
{
    if (t == nullptr)
        return true;
    if (t->trig_update_before_row || t->trig_update_instead_row || t->trig_update_before_statement ||
        t->trig_update_after_statement || t->trig_update_new_table || t->trig_update_old_table)
        return false;
    for (int i = 0; i < t->numtriggers; i++) {
        const Trigger& trigger = t->triggers[i];
        if (!TRIGGER_FOR_UPDATE(trigger.tgtype))
            continue;
        bool known = false;
        for (const char* name : k_requeue_triggers)
            known = known || strcmp(trigger.tgname, name) == 0;
        if (!known || trigger.tgqual == nullptr || !TRIGGER_FOR_ROW(trigger.tgtype) ||
            !TRIGGER_FOR_AFTER(trigger.tgtype))
            return false;
    }
    return true;
}

// live_jobs_claim_idx as the claim reads it: (queue_name, priority DESC, id) of pending jobs.
bool is_claim_index(Relation index, const AttrNumber at[k_claim_columns])
{
    const Form_pg_index form = index->rd_index;
    return strcmp(RelationGetRelationName(index), "live_jobs_claim_idx") == 0 && form->indnkeyatts == 3 &&
        RelationGetIndexExpressions(index) == NIL && RelationGetIndexPredicate(index) != NIL &&
        form->indkey.values[0] == at[c_queue_name] && form->indkey.values[1] == at[c_priority] &&
        form->indkey.values[2] == at[c_id] && (index->rd_indoption[0] & INDOPTION_DESC) == 0 &&
        (index->rd_indoption[1] & INDOPTION_DESC) != 0 && (index->rd_indoption[2] & INDOPTION_DESC) == 0;
}

prepared_claims* prepare_claims(Relation rel, Relation* indexes, int nindexes)
{
    prepared_claims* p = static_cast<prepared_claims*>(palloc0(sizeof(prepared_claims)));
    p->context = CurrentMemoryContext;
    TupleDesc desc = RelationGetDescr(rel);
    Oid status_type;
    p->direct = rel->rd_rel->relkind == RELKIND_RELATION && rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
        !rel->rd_rel->relispartition && !rel->rd_rel->relrowsecurity && update_triggers_known(rel->trigdesc) &&
        !compat::has_generated_columns(desc) &&
        find_known_columns(desc, k_columns, k_claim_columns, p->at, &status_type);
    if (!p->direct)
        return p;
    p->pending = enum_label_value(status_type, "pending");
    p->claimed = enum_label_value(status_type, "claimed");
    p->claim_index = -1;
    p->nindexes = nindexes;
    p->indexes = static_cast<prepared_index*>(palloc(sizeof(prepared_index) * (nindexes + 1)));
    for (int i = 0; i < nindexes && p->direct; i++) {
        p->direct = prepare_index(indexes[i], &p->indexes[i]);
        if (is_claim_index(indexes[i], p->at))
            p->claim_index = i;
    }
    p->direct = p->direct && p->claim_index >= 0 && p->pending != 0 && p->claimed != 0;
    if (!p->direct)
        return p;
    p->checks = prepare_checks(rel);
    p->econtext = CreateStandaloneExprContext();
    return p;
}

// The mapping of a live row onto the call's result type, or false when a column cannot be mapped.
bool map_view(prepared_claims* p, TupleDesc desc, TupleDesc view)
{
    if (p->view_natts == view->natts) {
        bool same = true;
        for (int i = 0; same && i < view->natts; i++)
            same = p->view_types[i] == TupleDescAttr(view, i)->atttypid;
        if (same)
            return true;
    }
    MemoryContext caller = MemoryContextSwitchTo(p->context);
    p->view_natts = 0;
    p->view_types = static_cast<Oid*>(palloc(sizeof(Oid) * (view->natts + 1)));
    p->view_from = static_cast<AttrNumber*>(palloc(sizeof(AttrNumber) * (view->natts + 1)));
    MemoryContextSwitchTo(caller);
    for (int i = 0; i < view->natts; i++) {
        const Form_pg_attribute column = TupleDescAttr(view, i);
        p->view_types[i] = column->atttypid;
        const char* name = NameStr(column->attname);
        const int from = SPI_fnumber(desc, name);
        if (from > 0 && TupleDescAttr(desc, from - 1)->atttypid == column->atttypid) {
            p->view_from[i] = static_cast<AttrNumber>(from);
            continue;
        }
        bool finished_only = false;
        for (const char* absent : k_finished_only)
            finished_only = finished_only || strcmp(name, absent) == 0;
        if (!finished_only || from > 0)
            return false;
        p->view_from[i] = 0;
    }
    p->view_natts = view->natts;
    return true;
}

// What the statement's WHERE asks of a job (queue_name = $1 AND status = 'pending' AND run_at <= due, and
// its type among those asked for), of the version in `job`.
bool claimable(const prepared_claims* p, const direct_claim_request& r, TupleTableSlot* job, Datum* types, int ntypes)
{
    slot_getallattrs(job);
    const Datum* v = job->tts_values;
    const bool* null = job->tts_isnull;
    if (null[p->at[c_status] - 1] || v[p->at[c_status] - 1] != p->pending || null[p->at[c_run_at] - 1] ||
        DatumGetTimestampTz(v[p->at[c_run_at] - 1]) > r.due_by || null[p->at[c_queue_name] - 1] ||
        !text_equals(v[p->at[c_queue_name] - 1], r.queue_name, strlen(r.queue_name)))
        return false;
    if (types == nullptr)
        return true;
    if (null[p->at[c_job_type] - 1])
        return false;
    text* type = DatumGetTextPP(v[p->at[c_job_type] - 1]);
    for (int i = 0; i < ntypes; i++) {
        text* wanted = DatumGetTextPP(types[i]);
        if (VARSIZE_ANY_EXHDR(type) == VARSIZE_ANY_EXHDR(wanted) &&
            memcmp(VARDATA_ANY(type), VARDATA_ANY(wanted), VARSIZE_ANY_EXHDR(type)) == 0)
            return true;
    }
    return false;
}

TimestampTz plus_interval(TimestampTz when, Datum interval)
{
    return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(when), interval));
}

// What every job of one claim gets.
struct claim_values {
    Datum worker_id;
    TimestampTz now;
    TimestampTz lease_end;         // now() + the lease
    TimestampTz queue_timeout_at;  // now() + the queue's job_timeout, when it has one
};

// What the claim's statement sets (claim.cpp's CLAIM_CURRENT), for the found version in `job`, into `claimed`.
// Returns the new lease's end.
TimestampTz form_claimed(const prepared_claims* p, const direct_claim_request& r, const claim_values& c,
                         TupleTableSlot* job, TupleTableSlot* claimed)
{
    const int natts = job->tts_tupleDescriptor->natts;
    ExecClearTuple(claimed);
    memcpy(claimed->tts_values, job->tts_values, sizeof(Datum) * natts);
    memcpy(claimed->tts_isnull, job->tts_isnull, sizeof(bool) * natts);
    Datum* v = claimed->tts_values;
    bool* null = claimed->tts_isnull;
    auto set = [&](claim_column column, Datum value) {
        v[p->at[column] - 1] = value;
        null[p->at[column] - 1] = false;
    };
    set(c_status, p->claimed);
    set(c_worker_id, c.worker_id);
    set(c_claimed_at, TimestampTzGetDatum(c.now));
    set(c_heartbeat_at, TimestampTzGetDatum(c.now));
    int32 attempts;
    if (pg_add_s32_overflow(DatumGetInt32(v[p->at[c_attempts] - 1]), 1, &attempts))
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE), errmsg("integer out of range")));
    set(c_attempts, Int32GetDatum(attempts));
    set(c_claimed_by, ObjectIdGetDatum(r.role));
    // The lease never outlasts the execution timeout: the job's own, else the queue's.
    TimestampTz lease_end = c.lease_end;
    const bool own_timeout = !null[p->at[c_timeout] - 1];
    if (own_timeout || r.has_job_timeout) {
        TimestampTz timeout_at = own_timeout ? plus_interval(c.now, v[p->at[c_timeout] - 1]) : c.queue_timeout_at;
        set(c_timeout_at, TimestampTzGetDatum(timeout_at));
        if (timeout_at < lease_end)
            lease_end = timeout_at;
    } else {
        v[p->at[c_timeout_at] - 1] = (Datum) 0;
        null[p->at[c_timeout_at] - 1] = true;
    }
    set(c_lease_expires_at, TimestampTzGetDatum(lease_end));
    ExecStoreVirtualTuple(claimed);
    return lease_end;
}

void return_row(const prepared_claims* p, ReturnSetInfo* rsinfo, TupleTableSlot* claimed)
{
    Datum values[64];
    bool nulls[64];
    for (int i = 0; i < p->view_natts; i++) {
        const AttrNumber from = p->view_from[i];
        values[i] = from > 0 ? claimed->tts_values[from - 1] : (Datum) 0;
        nulls[i] = from > 0 ? claimed->tts_isnull[from - 1] : true;
    }
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

// What became of the version in `job`, read from its header before trying to update it. A claim meets
// about two versions that other claims changed for each job it takes, while they work on the same part of
// the queue: mostly still being updated (the update would pass the job over, TM_BeingModified), else
// updated by a claim that committed after this one's snapshot (the update would fail with TM_Updated and the
// claim would follow the job to its latest version). The update finds that out only after the claimed
// version was formed, checked and compared with this one column by column; the header says it first. Row
// locks without an update (FOR UPDATE, FOR KEY SHARE), multixacts and this transaction's own changes are
// left to the update, which knows which of them conflict.
enum class version_fate { unknown, being_updated, updated, deleted };

version_fate fate_of(TupleTableSlot* job, ItemPointer newer)
{
    if (!TTS_IS_BUFFERTUPLE(job))
        return version_fate::unknown;
    BufferHeapTupleTableSlot* slot = reinterpret_cast<BufferHeapTupleTableSlot*>(job);
    if (!BufferIsValid(slot->buffer) || slot->base.tuple == nullptr)
        return version_fate::unknown;
    LockBuffer(slot->buffer, BUFFER_LOCK_SHARE);
    const HeapTupleHeader header = slot->base.tuple->t_data;
    const uint16 infomask = header->t_infomask;
    TransactionId updater = InvalidTransactionId;
    if ((infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI)) == 0 && !HEAP_XMAX_IS_LOCKED_ONLY(infomask))
        updater = HeapTupleHeaderGetRawXmax(header);
    *newer = header->t_ctid;
    const bool moved_away =
        !ItemPointerEquals(&slot->base.tuple->t_self, newer) && !HeapTupleHeaderIndicatesMovedPartitions(header);
    LockBuffer(slot->buffer, BUFFER_LOCK_UNLOCK);
    if (!TransactionIdIsValid(updater) || TransactionIdIsCurrentTransactionId(updater))
        return version_fate::unknown;
    if ((infomask & HEAP_XMAX_COMMITTED) == 0) {
        if (TransactionIdIsInProgress(updater))
            return version_fate::being_updated;
        if (!TransactionIdDidCommit(updater))
            return version_fate::unknown;
    }
    return moved_away ? version_fate::updated : version_fate::deleted;
}

// Updates the job in `job` (at `tid`) to claimed, following it through versions committed after `snapshot`
// while they stay claimable. False when it is passed over.
bool claim_one(Relation rel, Relation* indexes, const prepared_claims* p, const direct_claim_request& r,
               const claim_values& c, Snapshot snapshot, CommandId cid, TupleTableSlot* job, TupleTableSlot* claimed,
               Datum* types, int ntypes, TimestampTz* lease_end)
{
    ItemPointerData tid = job->tts_tid;
    ItemPointerData newer;
    int hop = 0;
    switch (fate_of(job, &newer)) {
    case version_fate::being_updated:
    case version_fate::deleted:
        return false;
    case version_fate::updated:
        // As after TM_Updated below, without the attempt.
        tid = newer;
        if (!table_tuple_fetch_row_version(rel, &tid, SnapshotAny, job) || !claimable(p, r, job, types, ntypes))
            return false;
        hop = 1;
        break;
    case version_fate::unknown:
        break;
    }
    for (;; hop++) {
        *lease_end = form_claimed(p, r, c, job, claimed);
        check_constraints(p->checks, rel, claimed, p->econtext);
        TM_FailureData failure;
        bool insert_entries;
        TM_Result result = update_row(rel, &tid, claimed, cid, snapshot, false, &failure, &insert_entries);
        if (result == TM_Ok) {
            if (insert_entries)
                insert_index_entries(p->indexes, indexes, p->nindexes, rel, claimed, p->econtext, true);
            remember_claimed_version(rel, DatumGetInt64(claimed->tts_values[p->at[c_id] - 1]), &claimed->tts_tid);
            return true;
        }
        // Being changed or held (SKIP LOCKED passes it over), deleted, or changed by this transaction.
        if (result != TM_Updated || hop >= k_max_hops)
            return false;
        // Committed after the snapshot: its latest version, as the statement's recheck would see it.
        tid = failure.ctid;
        if (!table_tuple_fetch_row_version(rel, &tid, SnapshotAny, job) || !claimable(p, r, job, types, ntypes))
            return false;
    }
}

}  // namespace

namespace pgjq {

int64 claim_directly(FunctionCallInfo fcinfo, const direct_claim_request& r, job_key* last,
                     TimestampTz* first_lease_end)
{
    // A database at 0.1.0 has no columns for the claiming role and the timeout.
    const Oid relid = pgjq_relation("live_jobs");
    if (!OidIsValid(relid) || XactReadOnly || IsInParallelMode() || IsolationUsesXactSnapshot() || database_at_0_1_0())
        return -1;
    Relation rel = table_open(relid, RowExclusiveLock);
    if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK ||
        pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) != ACLCHECK_OK) {
        table_close(rel, NoLock);
        return -1;
    }
    // Every lock first: taking one accepts the invalidations that mark the prepared state stale.
    List* index_oids;
    Relation* indexes = open_indexes(rel, &index_oids);
    const int nindexes = list_length(index_oids);
    auto build = [&]() { return prepare_claims(rel, indexes, nindexes); };
    prepared_claims* p = cached_state<prepared_claims>(&s_cache, &relid, 1, index_oids, nullptr, build);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    if (!p->direct || rsinfo->setDesc->natts > 64 || !map_view(p, RelationGetDescr(rel), rsinfo->setDesc)) {
        close_indexes(indexes, nindexes);
        table_close(rel, NoLock);
        return -1;
    }

    Datum* types = nullptr;
    int ntypes = 0;
    if (r.job_types != nullptr) {
        bool* type_nulls;
        deconstruct_array(r.job_types, TEXTOID, -1, false, TYPALIGN_INT, &types, &type_nulls, &ntypes);
    }
    claim_values c;
    c.worker_id = CStringGetTextDatum(r.worker_id);
    c.now = GetCurrentTransactionStartTimestamp();
    c.lease_end = plus_interval(c.now, r.lease);
    c.queue_timeout_at = r.has_job_timeout ? plus_interval(c.now, r.job_timeout) : 0;

    // Every job committed before the claim, and this transaction's own changes, are visible to it.
    CommandCounterIncrement();
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    const CommandId cid = GetCurrentCommandId(true);
    Relation claim_index = indexes[p->claim_index];
    ScanKeyData keys[3];
    ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid, claim_index->rd_indcollation[0], F_TEXTEQ,
                           CStringGetTextDatum(r.queue_name));
    ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid, InvalidOid, F_INT4EQ,
                           Int32GetDatum(r.floor.priority));
    ScanKeyEntryInitialize(&keys[2], 0, 3, BTGreaterEqualStrategyNumber, InvalidOid, InvalidOid, F_INT8GE,
                           Int64GetDatum(r.floor.id));
    const int nkeys = r.from_floor ? 3 : 1;
    IndexScanDesc scan = compat::begin_index_scan(rel, claim_index, snapshot, nkeys);
    index_rescan(scan, keys, nkeys, nullptr, 0);
    TupleTableSlot* job = table_slot_create(rel, nullptr);
    TupleTableSlot* claimed = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);

    int64 taken = 0;
    *first_lease_end = DT_NOEND;
    while (taken < r.batch && index_getnext_slot(scan, ForwardScanDirection, job)) {
        CHECK_FOR_INTERRUPTS();
        ResetExprContext(p->econtext);
        TimestampTz lease_end;
        if (!claimable(p, r, job, types, ntypes))
            continue;
        // Where the scan stands in claim order: a version committed since may have another priority.
        const job_key at = {DatumGetInt32(job->tts_values[p->at[c_priority] - 1]),
                            DatumGetInt64(job->tts_values[p->at[c_id] - 1])};
        if (!claim_one(rel, indexes, p, r, c, snapshot, cid, job, claimed, types, ntypes, &lease_end))
            continue;
        *last = at;
        if (lease_end < *first_lease_end)
            *first_lease_end = lease_end;
        return_row(p, rsinfo, claimed);
        taken++;
    }
    p->econtext->ecxt_scantuple = nullptr;
    ResetExprContext(p->econtext);
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(claimed);
    ExecDropSingleTupleTableSlot(job);
    UnregisterSnapshot(snapshot);
    close_indexes(indexes, nindexes);
    table_close(rel, NoLock);
    CommandCounterIncrement();
    return taken;
}

}  // namespace pgjq
