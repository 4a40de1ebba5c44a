// row_insert.cpp: one row inserted through the table access method (see row_insert.hpp).
//
// It does what ExecInsert does for a plain table, in its order: the row is formed with its defaults, its
// NOT NULL and CHECK constraints are checked, the heap tuple is inserted, then each index whose predicate
// the row meets gets its entry (a unique one checked at once). The expressions are prepared with no plan
// state, as ExecPrepareExpr and ExecPrepareQual prepare them, in a memory context kept until an
// invalidation says the table (its columns, defaults, constraints, indexes or triggers), a function or a
// type changed. An invalidation only marks the state stale: it can arrive while a call uses the state (a
// lock taken to store a large value out of line accepts them), which is then rebuilt by the next call.
// Runs between PostgreSQL calls that may raise: no C++ object owns anything here, and the relations are
// closed by the transaction's resource owner if one of them does.
#include "tableam/row_insert.hpp"

#include "pg/compat.hpp"

#include "tableam/prepared_cache.hpp"
#include "tableam/table_writes.hpp"

namespace {

using namespace pgjq;

// What insert_row or insert_rows keeps of one table, for one row shape (s_row_caches, s_rows_caches).
struct prepared_table {
    bool direct;  // false: the table has something only the statement applies
    TupleDesc desc;
    int* given_as;  // per attribute: the shape column that gives it, or -1
    AttrNumber returning_at;
    ExprState** defaults;  // per attribute not given; nullptr when it has none (NULL)
    prepared_checks checks;
    int nindexes;
    prepared_index* indexes;
    ExprContext* econtext;  // standalone; its per-tuple memory holds a call's defaults
};

// insert_row's and insert_rows', one per shape (in practice a job's and a batch's with its drawn ids, each
// with or without the job's headers), so that a producer mixing single jobs and batches, or jobs with and
// without headers, does not rebuild the state at every switch.
constexpr int k_shapes_kept = 2;
prepared_cache s_row_caches[k_shapes_kept] = {{"pgjq row insert"}, {"pgjq row insert"}};
prepared_cache s_rows_caches[k_shapes_kept] = {{"pgjq rows insert"}, {"pgjq rows insert"}};

// The cache kept for `shape`, else an unused one, else the first (rebuilt for it).
prepared_cache* cache_for(prepared_cache (&caches)[k_shapes_kept], const row_shape& shape)
{
    for (prepared_cache& cache : caches)
        if (cache.key == &shape)
            return &cache;
    for (prepared_cache& cache : caches)
        if (cache.state == nullptr)
            return &cache;
    return &caches[0];
}
// The transaction in which a call is using the state: a call nested in it (a default or a constraint
// that enqueues) must not reset the evaluation the outer call is in the middle of, and gets the statement.
// After an error it stays set for the rest of that transaction, whose calls get the statement too.
LocalTransactionId s_busy_in = InvalidLocalTransactionId;

// The user column `name`; given a type, only when the column takes a value of that type as it is (no type
// modifier to coerce to, no identity).
AttrNumber attribute_named(TupleDesc desc, const char* name, Oid type)
{
    const int attnum = SPI_fnumber(desc, name);  // SPI_ERROR_NOATTRIBUTE, or < 0 for a system column
    if (attnum <= 0)
        return InvalidAttrNumber;
    Form_pg_attribute attr = TupleDescAttr(desc, attnum - 1);
    const bool as_given = attr->atttypid == type && attr->atttypmod == -1 && attr->attidentity == '\0';
    return type == InvalidOid || as_given ? attnum : InvalidAttrNumber;
}

// A domain's constraints apply to a column's NULL too (the planner coerces it), which only the statement
// does.
bool has_domain_column(TupleDesc desc)
{
    for (int i = 0; i < desc->natts; i++) {
        Form_pg_attribute attr = TupleDescAttr(desc, i);
        if (!attr->attisdropped && get_typtype(attr->atttypid) == TYPTYPE_DOMAIN)
            return true;
    }
    return false;
}

bool has_insert_triggers(const TriggerDesc* t)
{
    return t != nullptr &&
        (t->trig_insert_before_row || t->trig_insert_after_row || t->trig_insert_instead_row ||
         t->trig_insert_before_statement || t->trig_insert_after_statement || t->trig_insert_new_table);
}

// Whether the table and the shape's columns allow the insert without the statement.
bool table_allows_direct(Relation rel, const row_shape& shape, AttrNumber* given_at, AttrNumber* returning_at)
{
    TupleDesc desc = RelationGetDescr(rel);
    if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition || rel->rd_rel->relrowsecurity ||
        has_insert_triggers(rel->trigdesc) || compat::has_generated_columns(desc) || has_domain_column(desc))
        return false;
    for (int i = 0; i < shape.ncolumns; i++) {
        given_at[i] = attribute_named(desc, shape.columns[i].name, shape.columns[i].type);
        if (given_at[i] == InvalidAttrNumber)
            return false;
    }
    *returning_at = attribute_named(desc, shape.returning, InvalidOid);
    return *returning_at != InvalidAttrNumber;
}

// The state for rel (locked) and its open indexes, built in the current memory context.
prepared_table* prepare_table(Relation rel, Relation* indexes, int nindexes, const row_shape& shape)
{
    prepared_table* t = static_cast<prepared_table*>(palloc0(sizeof(prepared_table)));
    AttrNumber* given_at = static_cast<AttrNumber*>(palloc(sizeof(AttrNumber) * shape.ncolumns));
    t->direct = table_allows_direct(rel, shape, given_at, &t->returning_at);
    if (!t->direct)
        return t;
    TupleDesc desc = RelationGetDescr(rel);
    t->desc = CreateTupleDescCopy(desc);
    t->defaults = static_cast<ExprState**>(palloc0(sizeof(ExprState*) * desc->natts));
    t->given_as = static_cast<int*>(palloc(sizeof(int) * desc->natts));
    for (int i = 0; i < desc->natts; i++)
        t->given_as[i] = -1;
    for (int c = 0; c < shape.ncolumns; c++)
        t->given_as[given_at[c] - 1] = c;
    for (int i = 0; i < desc->natts; i++) {
        if (TupleDescAttr(desc, i)->attisdropped || t->given_as[i] >= 0)
            continue;
        Node* fallback = build_column_default(rel, i + 1);
        if (fallback != nullptr)
            t->defaults[i] = prepare_expression(fallback);
    }
    t->checks = prepare_checks(rel);
    t->nindexes = nindexes;
    t->indexes = static_cast<prepared_index*>(palloc(sizeof(prepared_index) * (nindexes + 1)));
    for (int i = 0; i < nindexes && t->direct; i++)
        t->direct = prepare_index(indexes[i], &t->indexes[i]);
    t->econtext = CreateStandaloneExprContext();
    return t;
}

// The row in `slot`: the given values, and the defaults of the other columns (evaluated in the per-tuple
// memory of t->econtext).
void form_row(const prepared_table* t, const Datum* values, const bool* isnull, TupleTableSlot* slot)
{
    ExecClearTuple(slot);
    const int natts = t->desc->natts;
    for (int i = 0; i < natts; i++) {
        const int c = t->given_as[i];
        if (c >= 0) {
            slot->tts_values[i] = values[c];
            slot->tts_isnull[i] = isnull[c];
        } else if (t->defaults[i] != nullptr) {
            slot->tts_values[i] = ExecEvalExprSwitchContext(t->defaults[i], t->econtext, &slot->tts_isnull[i]);
        } else {
            slot->tts_values[i] = (Datum) 0;
            slot->tts_isnull[i] = true;
        }
    }
    ExecStoreVirtualTuple(slot);
}

void close_all(Relation rel, Relation* indexes, int nindexes)
{
    close_indexes(indexes, nindexes);
    table_close(rel, NoLock);
}

// The table opened and locked for an insert, its indexes open, and its prepared state.
struct open_table {
    Relation rel;
    Relation* indexes;
    int nindexes;
    const prepared_table* t;
};

// Opens relid for insert_row or insert_rows and marks the state busy; false, having opened nothing, when
// the rows must take the statement.
bool open_for_insert(prepared_cache* cache, Oid relid, const row_shape& shape, open_table* o)
{
    const LocalTransactionId transaction = compat::local_transaction_id();
    if (!OidIsValid(relid) || XactReadOnly || IsInParallelMode() || s_busy_in == transaction)
        return false;
    Relation rel = table_open(relid, RowExclusiveLock);
    if (pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK) {
        table_close(rel, NoLock);
        return false;
    }
    // Every lock first: taking one accepts the invalidations that mark the prepared state stale.
    List* index_oids;
    Relation* indexes = open_indexes(rel, &index_oids);
    const int nindexes = list_length(index_oids);
    auto build = [&]() { return prepare_table(rel, indexes, nindexes, shape); };
    const prepared_table* t = cached_state<prepared_table>(cache, &relid, 1, index_oids, &shape, build);
    if (!t->direct) {
        close_all(rel, indexes, nindexes);
        return false;
    }
    *o = {rel, indexes, nindexes, t};
    s_busy_in = transaction;
    return true;
}

// The row's `returning` column, copied into the current memory context.
Datum returned_value(const prepared_table* t, TupleTableSlot* slot)
{
    bool returned_null;
    Datum value = slot_getattr(slot, t->returning_at, &returned_null);
    Form_pg_attribute returning = TupleDescAttr(t->desc, t->returning_at - 1);
    return returned_null ? (Datum) 0 : datumCopy(value, returning->attbyval, returning->attlen);
}

void close_after_insert(const open_table& o)
{
    o.t->econtext->ecxt_scantuple = nullptr;
    ResetExprContext(o.t->econtext);
    s_busy_in = InvalidLocalTransactionId;
    close_all(o.rel, o.indexes, o.nindexes);
    CommandCounterIncrement();
}

}  // namespace

namespace pgjq {

row_insert insert_row(Oid relid, const row_shape& shape, const Datum* values, const bool* isnull, Datum* returned)
{
    open_table o;
    if (!open_for_insert(cache_for(s_row_caches, shape), relid, shape, &o))
        return row_insert::not_direct;
    const prepared_table* t = o.t;
    ResetExprContext(t->econtext);
    TupleTableSlot* slot = MakeSingleTupleTableSlot(t->desc, &TTSOpsVirtual);
    form_row(t, values, isnull, slot);
    check_constraints(t->checks, o.rel, slot, t->econtext);
    table_tuple_insert(o.rel, slot, GetCurrentCommandId(true), 0, nullptr);
    insert_index_entries(t->indexes, o.indexes, t->nindexes, o.rel, slot, t->econtext, false);
    *returned = returned_value(t, slot);
    t->econtext->ecxt_scantuple = nullptr;
    ExecDropSingleTupleTableSlot(slot);
    close_after_insert(o);
    return row_insert::inserted;
}

row_insert insert_rows(Oid relid, const row_shape& shape, int nrows, const Datum* values, const bool* isnull)
{
    if (nrows <= 0)
        return row_insert::inserted;
    open_table o;
    if (!open_for_insert(cache_for(s_rows_caches, shape), relid, shape, &o))
        return row_insert::not_direct;
    const prepared_table* t = o.t;
    const int per_write = Min(nrows, k_rows_per_multi_insert);
    MemoryContext rows_memory = AllocSetContextCreate(CurrentMemoryContext, "pgjq rows", ALLOCSET_DEFAULT_SIZES);
    MemoryContext caller_memory = MemoryContextSwitchTo(rows_memory);
    TupleTableSlot** slots = static_cast<TupleTableSlot**>(palloc(sizeof(TupleTableSlot*) * per_write));
    for (int i = 0; i < per_write; i++)
        slots[i] = MakeSingleTupleTableSlot(t->desc, &TTSOpsVirtual);
    const CommandId command = GetCurrentCommandId(true);
    for (int first = 0; first < nrows; first += per_write) {
        const int n = Min(per_write, nrows - first);
        // Each row is copied into its slot, so that the per-tuple memory of its defaults and checks can go.
        for (int i = 0; i < n; i++) {
            const int row = first + i;
            ResetExprContext(t->econtext);
            form_row(t, values + row * shape.ncolumns, isnull + row * shape.ncolumns, slots[i]);
            ExecMaterializeSlot(slots[i]);
            check_constraints(t->checks, o.rel, slots[i], t->econtext);
        }
        insert_rows_with_entries(o.rel, slots, n, command, t->indexes, o.indexes, t->nindexes, t->econtext);
    }
    for (int i = 0; i < per_write; i++)
        ExecDropSingleTupleTableSlot(slots[i]);
    MemoryContextSwitchTo(caller_memory);
    MemoryContextDelete(rows_memory);
    close_after_insert(o);
    return row_insert::inserted;
}

}  // namespace pgjq
