// table_writes.cpp: the constraints and index entries of a row written through the table access method (see
// table_writes.hpp), as ExecConstraints and ExecInsertIndexTuples apply them to a plain table.
#include "tableam/table_writes.hpp"

#include "pg/compat.hpp"

namespace pgjq {

bool prepare_index(Relation index, prepared_index* into, bool brin)
{
    const bool is_brin = index->rd_rel->relam == BRIN_AM_OID;
    if (index->rd_rel->relam != BTREE_AM_OID && !(brin && is_brin))
        return false;
    IndexInfo* info = BuildIndexInfo(index);
    if (info->ii_Expressions != NIL || info->ii_ExclusionOps != nullptr ||
        (index->rd_index->indisunique && !index->rd_index->indimmediate))
        return false;
    if (info->ii_Predicate != NIL)
        info->ii_PredicateState = ExecInitQual(
            reinterpret_cast<List*>(expression_planner(reinterpret_cast<Expr*>(info->ii_Predicate))), nullptr);
    into->info = info;
    into->check = index->rd_index->indisunique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO;
    into->state_per_call = is_brin;
    return true;
}

void begin_index_writes(const prepared_index* prepared, int count)
{
    for (int i = 0; i < count; i++)
        if (prepared[i].state_per_call) {
            prepared[i].info->ii_AmCache = nullptr;
            prepared[i].info->ii_Context = CurrentMemoryContext;
        }
}

void end_index_writes(const prepared_index* prepared, Relation* indexes, int count)
{
    for (int i = 0; i < count; i++)
        if (prepared[i].state_per_call) {
            compat::index_insert_done(indexes[i], prepared[i].info);
            prepared[i].info->ii_AmCache = nullptr;
        }
}

ExprState* prepare_expression(Node* expression)
{
    return ExecInitExpr(expression_planner(reinterpret_cast<Expr*>(expression)), nullptr);
}

prepared_checks prepare_checks(Relation rel)
{
    const TupleConstr* constr = RelationGetDescr(rel)->constr;
    prepared_checks p;
    p.count = constr != nullptr ? constr->num_check : 0;
    p.checks = static_cast<ExprState**>(palloc(sizeof(ExprState*) * (p.count + 1)));
    p.names = static_cast<const char**>(palloc(sizeof(char*) * (p.count + 1)));
    for (int i = 0; i < p.count; i++) {
        p.checks[i] = prepare_expression(static_cast<Node*>(stringToNode(constr->check[i].ccbin)));
        p.names[i] = pstrdup(constr->check[i].ccname);
    }
    return p;
}

void check_constraints(const prepared_checks& checks, Relation rel, TupleTableSlot* slot, ExprContext* econtext)
{
    TupleDesc desc = RelationGetDescr(rel);
    if (desc->constr != nullptr && desc->constr->has_not_null) {
        slot_getallattrs(slot);
        for (int i = 0; i < desc->natts; i++) {
            Form_pg_attribute attr = TupleDescAttr(desc, i);
            if (attr->attnotnull && slot->tts_isnull[i])
                ereport(ERROR,
                        (errcode(ERRCODE_NOT_NULL_VIOLATION),
                         errmsg("null value in column \"%s\" of relation \"%s\" violates not-null constraint",
                                NameStr(attr->attname), RelationGetRelationName(rel)),
                         errtablecol(rel, attr->attnum)));
        }
    }
    econtext->ecxt_scantuple = slot;
    for (int i = 0; i < checks.count; i++)
        if (!ExecCheck(checks.checks[i], econtext))
            ereport(ERROR,
                    (errcode(ERRCODE_CHECK_VIOLATION),
                     errmsg("new row for relation \"%s\" violates check constraint \"%s\"",
                            RelationGetRelationName(rel), checks.names[i]),
                     errtableconstraint(rel, checks.names[i])));
}

void insert_index_entries(const prepared_index* prepared, Relation* indexes, int count, Relation rel,
                          TupleTableSlot* slot, ExprContext* econtext, bool unchanged)
{
    econtext->ecxt_scantuple = slot;
    for (int i = 0; i < count; i++) {
        IndexInfo* info = prepared[i].info;
        if (!indexes[i]->rd_index->indisready)  // as of this call's lock, not of the state's build
            continue;
        if (info->ii_PredicateState != nullptr && !ExecQual(info->ii_PredicateState, econtext))
            continue;
        Datum values[INDEX_MAX_KEYS];
        bool isnull[INDEX_MAX_KEYS];
        FormIndexDatum(info, slot, nullptr, values, isnull);
        index_insert(indexes[i], values, isnull, &slot->tts_tid, rel, prepared[i].check, unchanged, info);
    }
}

void insert_rows_with_entries(Relation rel, TupleTableSlot** slots, int count, CommandId cid,
                              const prepared_index* prepared, Relation* indexes, int nindexes, ExprContext* econtext)
{
    table_multi_insert(rel, slots, count, cid, 0, nullptr);
    for (int i = 0; i < count; i++) {
        ResetExprContext(econtext);
        insert_index_entries(prepared, indexes, nindexes, rel, slots[i], econtext, false);
    }
}

TM_Result update_row(Relation rel, ItemPointer tid, TupleTableSlot* slot, CommandId cid, Snapshot snapshot, bool wait,
                     TM_FailureData* failure, bool* insert_entries)
{
    return compat::update_tuple(rel, tid, slot, cid, snapshot, wait, failure, insert_entries);
}

bool find_known_columns(TupleDesc desc, const known_column* columns, int count, AttrNumber* at, Oid* status_type)
{
    const int status_at = SPI_fnumber(desc, "status");  // SPI_ERROR_NOATTRIBUTE, or < 0 for a system column
    if (status_at <= 0)
        return false;
    *status_type = TupleDescAttr(desc, status_at - 1)->atttypid;
    if (get_typtype(*status_type) != TYPTYPE_ENUM)
        return false;
    for (int c = 0; c < count; c++) {
        const int attnum = SPI_fnumber(desc, columns[c].name);
        if (attnum <= 0)
            return false;
        const Oid type = TupleDescAttr(desc, attnum - 1)->atttypid;
        if (type != (columns[c].type == InvalidOid ? *status_type : columns[c].type) ||
            get_typtype(type) == TYPTYPE_DOMAIN)
            return false;
        at[c] = static_cast<AttrNumber>(attnum);
    }
    return true;
}

Datum enum_label_value(Oid type, const char* label)
{
    HeapTuple tuple = SearchSysCache2(ENUMTYPOIDNAME, ObjectIdGetDatum(type), CStringGetDatum(label));
    if (!HeapTupleIsValid(tuple))
        return (Datum) 0;
    Oid value = reinterpret_cast<Form_pg_enum>(GETSTRUCT(tuple))->oid;
    ReleaseSysCache(tuple);
    return ObjectIdGetDatum(value);
}

bool text_equals(Datum value, const char* expected, size_t length)
{
    text* t = DatumGetTextPP(value);
    return VARSIZE_ANY_EXHDR(t) == length && memcmp(VARDATA_ANY(t), expected, length) == 0;
}

}  // namespace pgjq
