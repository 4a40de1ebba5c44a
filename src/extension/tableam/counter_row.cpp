// counter_row.cpp: one counter row of pgjq.queue_depth written in place (see counter_row.hpp).
//
// It does what the UPDATE statement did, in the order ExecUpdate does it: find the row through the primary
// key, update it (waiting for a concurrent writer), and when the row was updated meanwhile, lock its latest
// version and update that. The new version is heap-only whenever the page has room (the table's fillfactor
// is 20); otherwise its primary-key entry is inserted here. Runs between PostgreSQL calls that may raise:
// no C++ object owns anything here, and the relations, snapshot and slots are released by the transaction's
// resource owner if one of them does.
#include "tableam/counter_row.hpp"

#include "pg/compat.hpp"
#include "pg/limits.hpp"
#include "tableam/table_writes.hpp"

namespace {

using namespace pgjq;

// The columns a change adds to, in counter_change's order, or false when one is missing.
bool counter_columns(TupleDesc desc, bool with_finished, AttrNumber columns[4])
{
    static const char* const names[4] = {"unfinished", "completed", "failed", "cancelled"};
    const int needed = with_finished ? 4 : 1;
    for (int i = 0; i < 4; i++) {
        columns[i] = i < needed ? SPI_fnumber(desc, names[i]) : InvalidAttrNumber;
        if (i < needed && columns[i] <= 0)  // SPI_ERROR_NOATTRIBUTE
            return false;
    }
    return true;
}

// The primary key (queue_name, slot), when it is the table's only index and nothing else would see an
// UPDATE statement that the table access method does not: a trigger on update, a CHECK constraint, a generated
// column, row security, a read-only transaction (whose refusal the statement raises). InvalidOid otherwise.
Oid in_place_index(Relation rel)
{
    if (XactReadOnly || rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relrowsecurity)
        return InvalidOid;
    const TupleConstr* constraints = RelationGetDescr(rel)->constr;
    if ((constraints != nullptr && constraints->num_check > 0) || compat::has_generated_columns(RelationGetDescr(rel)))
        return InvalidOid;
    const TriggerDesc* triggers = rel->trigdesc;
    if (triggers != nullptr &&
        (triggers->trig_update_before_row || triggers->trig_update_after_row || triggers->trig_update_instead_row ||
         triggers->trig_update_before_statement || triggers->trig_update_after_statement ||
         triggers->trig_update_new_table || triggers->trig_update_old_table))
        return InvalidOid;
    List* indexes = RelationGetIndexList(rel);
    const Oid primary_key = compat::primary_key_index(rel);
    const bool only_the_key = list_length(indexes) == 1 && linitial_oid(indexes) == primary_key;
    list_free(indexes);
    return only_the_key ? primary_key : InvalidOid;
}

bool key_is_queue_and_slot(Relation rel, Relation index)
{
    TupleDesc desc = RelationGetDescr(rel);
    const Form_pg_index form = index->rd_index;
    return form->indnatts == 2 && RelationGetIndexExpressions(index) == NIL &&
        RelationGetIndexPredicate(index) == NIL && form->indkey.values[0] == SPI_fnumber(desc, "queue_name") &&
        form->indkey.values[1] == SPI_fnumber(desc, "slot");
}

int64 add_counts(int64 value, int64 delta)
{
    int64 sum;
    if (pg_add_s64_overflow(value, delta, &sum))
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE), errmsg("bigint out of range")));
    return sum;
}

// `to` = `from` with the change added.
void store_changed(TupleTableSlot* from, TupleTableSlot* to, const AttrNumber columns[4], const int64 deltas[4])
{
    slot_getallattrs(from);
    ExecClearTuple(to);
    const int natts = from->tts_tupleDescriptor->natts;
    memcpy(to->tts_values, from->tts_values, sizeof(Datum) * natts);
    memcpy(to->tts_isnull, from->tts_isnull, sizeof(bool) * natts);
    for (int i = 0; i < 4; i++) {
        if (columns[i] == InvalidAttrNumber)
            continue;
        const int at = columns[i] - 1;
        if (to->tts_isnull[at])
            ereport(ERROR,
                    (errcode(ERRCODE_DATA_CORRUPTED),
                     errmsg("pgjq: counter column %d of pgjq.queue_depth is NULL", columns[i])));
        to->tts_values[at] = Int64GetDatum(add_counts(DatumGetInt64(to->tts_values[at]), deltas[i]));
    }
    ExecStoreVirtualTuple(to);
}

// Where this backend last wrote a counter row, so that the next write of it reads that version directly
// instead of scanning the key: every write leaves a new version, and until the page is pruned a scan of
// the key walks them all (measured: the scan was two thirds of a counter write). A hint is only a guess,
// checked as a fetch under the write's snapshot with the key compared: a version another transaction
// replaced since, or one that rolled back, is not visible, and the key scan runs as before.
struct counter_hint {
    Oid relid;
    Oid relfilenode;  // a table rewritten (TRUNCATE, VACUUM FULL) has another
    int16 slot;
    char queue_name[k_queue_name_max + 1];
    ItemPointerData tid;
};
constexpr int k_counter_hints = 8;
// Room for about ten more versions of a counter row (each about 80 bytes with its line pointer), the
// floor heap_page_prune_opt itself keeps on a page of a table without a fillfactor.
constexpr Size k_prune_below_free = BLCKSZ / 10;
counter_hint s_hints[k_counter_hints];
int s_next_hint = 0;

counter_hint* hint_for(Relation rel, const char* queue_name, int16 slot)
{
    for (counter_hint& h : s_hints)
        if (h.relid == RelationGetRelid(rel) && h.slot == slot && h.relfilenode == compat::relation_file_number(rel) &&
            strcmp(h.queue_name, queue_name) == 0)
            return &h;
    return nullptr;
}

void remember_hint(Relation rel, const char* queue_name, int16 slot, const ItemPointerData* tid)
{
    if (strlen(queue_name) > static_cast<size_t>(k_queue_name_max))
        return;
    counter_hint* h = hint_for(rel, queue_name, slot);
    if (h == nullptr) {
        h = &s_hints[s_next_hint];
        s_next_hint = (s_next_hint + 1) % k_counter_hints;
        h->relid = RelationGetRelid(rel);
        h->relfilenode = compat::relation_file_number(rel);
        h->slot = slot;
        strlcpy(h->queue_name, queue_name, sizeof(h->queue_name));
    }
    h->tid = *tid;
}

// The version at the hint into `current`, when it is the row (queue_name, slot) as `snapshot` sees it.
bool fetch_hinted(Relation rel, Relation index, const char* queue_name, int16 slot, Snapshot snapshot,
                  TupleTableSlot* current)
{
    const counter_hint* h = hint_for(rel, queue_name, slot);
    if (h == nullptr || rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
        ItemPointerGetBlockNumber(&h->tid) >= RelationGetNumberOfBlocks(rel))
        return false;
    // What a read through the key did on its way: prune the page of the versions nobody can see any more,
    // so that the next version fits there and stays heap-only. Without it the table grew by a page every
    // few hundred writes of a row (measured: 16 kB -> 1.5 MB after 20 000 enqueues). But only once the
    // page is short of room: heap_page_prune_opt prunes whenever the free space is below what the
    // fillfactor keeps, which on queue_depth (fillfactor 20) is at every write, each prune with a WAL
    // record of its own (60 of an enqueue's 490 bytes).
    Buffer page = ReadBuffer(rel, ItemPointerGetBlockNumber(&h->tid));
    if (PageGetHeapFreeSpace(BufferGetPage(page)) < k_prune_below_free)
        heap_page_prune_opt(rel, page);
    ReleaseBuffer(page);
    ItemPointerData tid = h->tid;
    if (!table_tuple_fetch_row_version(rel, &tid, snapshot, current))
        return false;
    bool no_queue, no_slot;
    Datum queue = slot_getattr(current, index->rd_index->indkey.values[0], &no_queue);
    Datum found_slot = slot_getattr(current, index->rd_index->indkey.values[1], &no_slot);
    if (no_queue || no_slot || DatumGetInt16(found_slot) != slot)
        return false;
    text* found_queue = DatumGetTextPP(queue);
    const size_t length = strlen(queue_name);
    return VARSIZE_ANY_EXHDR(found_queue) == length && memcmp(VARDATA_ANY(found_queue), queue_name, length) == 0;
}

}  // namespace

namespace pgjq {

counter_write add_to_counter_row(Oid relid, const char* queue_name, int16 slot, const counter_change& change)
{
    if (!OidIsValid(relid))
        return counter_write::not_in_place;
    Relation rel = table_open(relid, RowExclusiveLock);
    AttrNumber columns[4];
    const Oid index_oid = in_place_index(rel);
    if (!OidIsValid(index_oid) || !counter_columns(RelationGetDescr(rel), change.with_finished, columns)) {
        table_close(rel, NoLock);
        return counter_write::not_in_place;
    }
    Relation index = index_open(index_oid, RowExclusiveLock);
    if (!key_is_queue_and_slot(rel, index)) {
        index_close(index, NoLock);
        table_close(rel, NoLock);
        return counter_write::not_in_place;
    }
    const int64 deltas[4] = {change.unfinished, change.completed, change.failed, change.cancelled};

    // This transaction's earlier writes of the row, and every committed one, are visible to the new
    // snapshot: the version found is usually the latest.
    CommandCounterIncrement();
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    TupleTableSlot* current = table_slot_create(rel, nullptr);
    TupleTableSlot* changed = table_slot_create(rel, nullptr);
    bool found = fetch_hinted(rel, index, queue_name, slot, snapshot, current);
    if (!found) {
        ScanKeyData keys[2];
        ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid, index->rd_indcollation[0], F_TEXTEQ,
                               CStringGetTextDatum(queue_name));
        ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid, InvalidOid, F_INT2EQ,
                               Int16GetDatum(slot));
        IndexScanDesc scan = compat::begin_index_scan(rel, index, snapshot, 2);
        index_rescan(scan, keys, 2, nullptr, 0);
        found = index_getnext_slot(scan, ForwardScanDirection, current);
        index_endscan(scan);
    }

    const CommandId cid = GetCurrentCommandId(true);
    bool insert_key = false;
    while (found) {
        store_changed(current, changed, columns, deltas);
        TM_FailureData failure;
        TM_Result result = update_row(rel, &current->tts_tid, changed, cid, snapshot, true, &failure, &insert_key);
        if (result == TM_Ok)
            break;
        if (result == TM_Deleted) {
            found = false;
            break;
        }
        if (result != TM_Updated)
            elog(ERROR, "pgjq: unexpected result %d updating a counter row of pgjq.queue_depth", (int) result);
        // Committed meanwhile by another transaction: lock its latest version, then add to that.
        ItemPointerData latest = failure.ctid;
        result = table_tuple_lock(rel, &latest, snapshot, current, cid, LockTupleNoKeyExclusive, LockWaitBlock,
                                  TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &failure);
        if (result == TM_Deleted)
            found = false;
        else if (result != TM_Ok)
            elog(ERROR, "pgjq: unexpected result %d locking a counter row of pgjq.queue_depth", (int) result);
    }
    if (found)
        remember_hint(rel, queue_name, slot, &changed->tts_tid);
    if (found && insert_key) {
        IndexInfo* info = BuildIndexInfo(index);
        Datum values[INDEX_MAX_KEYS];
        bool isnull[INDEX_MAX_KEYS];
        FormIndexDatum(info, changed, nullptr, values, isnull);
        index_insert(index, values, isnull, &changed->tts_tid, rel, UNIQUE_CHECK_YES, true, info);
    }
    ExecDropSingleTupleTableSlot(changed);
    ExecDropSingleTupleTableSlot(current);
    UnregisterSnapshot(snapshot);
    index_close(index, NoLock);
    table_close(rel, NoLock);
    CommandCounterIncrement();
    return found ? counter_write::written : counter_write::no_row;
}

}  // namespace pgjq
