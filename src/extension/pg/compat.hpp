// compat.hpp: every difference between the PostgreSQL majors pgjq builds against, each as a small inline
// function named for what it does, with the release that brought the change. The rest of the tree calls
// these and never tests PG_VERSION_NUM itself; CONTRIBUTING.md says how to add one.
#pragma once

#include "pg/pg.hpp"

namespace pgjq::compat {

// The local id of this backend's current transaction (its virtual transaction id's second half).
// PG17 (commit 28f3915b73f) moved it from PGPROC.lxid into PGPROC.vxid.
inline LocalTransactionId local_transaction_id()
{
#if PG_VERSION_NUM >= 170000
    return MyProc->vxid.lxid;
#else
    return MyProc->lxid;
#endif
}

// The relation's file number, which changes when the table is rewritten.
// PG16 (commit b0a55e43299) renamed RelFileNode to RelFileLocator.
inline Oid relation_file_number(Relation rel)
{
#if PG_VERSION_NUM >= 160000
    return rel->rd_locator.relNumber;
#else
    return rel->rd_node.relNode;
#endif
}

// table_tuple_update, answering whether the new version needs index entries of its own (false for a HOT
// update). PG16 (commit 19d8e2308bc) turned the flag into TU_UpdateIndexes, which can also ask for the
// summarizing indexes alone; pgjq's writers insert into every index whenever it is not TU_None.
inline TM_Result update_tuple(Relation rel, ItemPointer tid, TupleTableSlot* slot, CommandId cid, Snapshot snapshot,
                              bool wait, TM_FailureData* failure, bool* insert_entries)
{
    LockTupleMode lock_mode;
#if PG_VERSION_NUM >= 160000
    TU_UpdateIndexes update_indexes;
    TM_Result result =
        table_tuple_update(rel, tid, slot, cid, snapshot, InvalidSnapshot, wait, failure, &lock_mode, &update_indexes);
    *insert_entries = result == TM_Ok && update_indexes != TU_None;
#else
    bool update_indexes;
    TM_Result result =
        table_tuple_update(rel, tid, slot, cid, snapshot, InvalidSnapshot, wait, failure, &lock_mode, &update_indexes);
    *insert_entries = result == TM_Ok && update_indexes;
#endif
    return result;
}

// Releases what an index access method kept in ii_AmCache between index_insert calls.
// PG17 (commit c1ec02be1d7) added index_insert_cleanup, which such methods (BRIN) need called; before, the
// cache lived in the memory context and needed no call.
inline void index_insert_done(Relation index, IndexInfo* info)
{
#if PG_VERSION_NUM >= 170000
    index_insert_cleanup(index, info);
#else
    (void) index;
    (void) info;
#endif
}

// Makes unqualified names resolve as under search_path = pg_catalog, pg_temp until unpin_search_path(token).
// Before PG17 an override of the search path does it for a list push and pop, and the caller's own setting
// is never touched. PG17 (commit 7c5c4e1c03e) removed the override stack: there the setting itself is set,
// in a GUC nest level of the call's own (pg_temp named last, or it would be searched first for relations).
#if PG_VERSION_NUM < 170000
inline int pin_search_path()
{
    Oid temp_schema, temp_toast_schema;
    GetTempNamespaceState(&temp_schema, &temp_toast_schema);
    OverrideSearchPath path = {};
    path.schemas = OidIsValid(temp_schema) ? list_make1_oid(temp_schema) : NIL;
    path.addCatalog = true;
    path.addTemp = false;
    PushOverrideSearchPath(&path);
    list_free(path.schemas);
    return 0;
}

inline void unpin_search_path(int)
{
    PopOverrideSearchPath();
}
#else
inline int pin_search_path()
{
    const int level = NewGUCNestLevel();
    (void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                             false);
    return level;
}

inline void unpin_search_path(int token)
{
    AtEOXact_GUC(true, token);
}
#endif

}  // namespace pgjq::compat
