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

// table_tuple_update, answering whether the new version needs entries in the b-tree indexes (false for a
// HOT update). PG16 (commit 19d8e2308bc) turned the flag into TU_UpdateIndexes, whose TU_Summarizing asks
// for entries in the summarizing indexes (BRIN) alone. pgjq's direct writers write through b-tree indexes
// only (a table with another kind takes the statement), so only TU_All asks them for entries.
inline TM_Result update_tuple(Relation rel, ItemPointer tid, TupleTableSlot* slot, CommandId cid, Snapshot snapshot,
                              bool wait, TM_FailureData* failure, bool* insert_entries)
{
    LockTupleMode lock_mode;
#if PG_VERSION_NUM >= 160000
    TU_UpdateIndexes update_indexes;
    TM_Result result =
        table_tuple_update(rel, tid, slot, cid, snapshot, InvalidSnapshot, wait, failure, &lock_mode, &update_indexes);
    *insert_entries = result == TM_Ok && update_indexes == TU_All;
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

// This backend's number among the server's processes: small, stable while it lives, and reused once it exits.
// PG17 (commits ab355e3a88d, 024c5211175) replaced MyBackendId (from 1, the lowest free number first) with
// MyProcNumber (from 0, the number released longest ago first).
inline int backend_number()
{
#if PG_VERSION_NUM >= 170000
    return MyProcNumber;
#else
    return MyBackendId;
#endif
}

// Whether `role` owns database `dboid` (or is a superuser). PG16 (commit afbfc02983f) folded
// pg_database_ownercheck into object_ownercheck.
inline bool owns_database(Oid dboid, Oid role)
{
#if PG_VERSION_NUM >= 160000
    return object_ownercheck(DatabaseRelationId, dboid, role);
#else
    return pg_database_ownercheck(dboid, role);
#endif
}

// index_beginscan with no instrumentation and no ORDER BY keys. PG18 (commit 0fbceae841c) added the
// instrumentation argument.
inline IndexScanDesc begin_index_scan(Relation heap, Relation index, Snapshot snapshot, int nkeys)
{
#if PG_VERSION_NUM >= 180000
    return index_beginscan(heap, index, snapshot, nullptr, nkeys, 0);
#else
    return index_beginscan(heap, index, snapshot, nkeys, 0);
#endif
}

// The relation's primary key index, InvalidOid when it has none or (from PG18) only a deferrable one.
// PG18 (commit 14e87ffa5c5) added deferrable_ok, and keeps a deferrable primary key in rd_pkindex, which
// code must therefore not read directly.
inline Oid primary_key_index(Relation rel)
{
#if PG_VERSION_NUM >= 180000
    return RelationGetPrimaryKeyIndex(rel, false);
#else
    return RelationGetPrimaryKeyIndex(rel);
#endif
}

// The statistics' estimate of a table's dead and live row versions. PG16 (commit 83a1a1b5664) renamed
// n_dead_tuples and n_live_tuples.
inline PgStat_Counter dead_tuples(const PgStat_StatTabEntry* stats)
{
#if PG_VERSION_NUM >= 160000
    return stats->dead_tuples;
#else
    return stats->n_dead_tuples;
#endif
}

inline PgStat_Counter live_tuples(const PgStat_StatTabEntry* stats)
{
#if PG_VERSION_NUM >= 160000
    return stats->live_tuples;
#else
    return stats->n_live_tuples;
#endif
}

// Whether the table has generated columns, which only a statement computes. PG18 (commit 83ea6c54025) added
// virtual ones (the default kind from then on), stored as NULL and computed when read.
inline bool has_generated_columns(TupleDesc desc)
{
    if (desc->constr == nullptr)
        return false;
#if PG_VERSION_NUM >= 180000
    return desc->constr->has_generated_stored || desc->constr->has_generated_virtual;
#else
    return desc->constr->has_generated_stored;
#endif
}

// Vacuums `relations` (each table and its TOAST table) from a background worker, the way autovacuum vacuums
// a table: through a ring of buffers, not the whole of shared_buffers. The caller fills `params` as 15 has
// them. What later majors changed, each set here deliberately:
// - PG16 (commit 4211fbd8413): vacuum skips the table itself unless VACOPT_PROCESS_MAIN is set;
// - PG16 (commits b9b125b9c14, 1cbbee03385): the caller passes vacuum's memory context, and a NULL strategy
//   means no ring at all, where 15 made one; the ring is VacuumBufferUsageLimit, as autovacuum's;
// - PG17 (commit ecb0fd33720): toast_parent, InvalidOid for a table vacuumed by its own name;
// - PG18 (commit 052026c9b90): max_eager_freeze_failure_rate, whose 0 turns eager freezing off; the server's
//   setting, as a VACUUM or autovacuum takes it.
// The database's frozen-xid statistics are updated after each vacuum, as 15 does (no SKIP_DATABASE_STATS).
inline void vacuum_from_worker(List* relations, VacuumParams* params)
{
#if PG_VERSION_NUM >= 160000
    params->options |= VACOPT_PROCESS_MAIN;
#endif
#if PG_VERSION_NUM >= 170000
    params->toast_parent = InvalidOid;
#endif
#if PG_VERSION_NUM >= 180000
    params->max_eager_freeze_failure_rate = vacuum_max_eager_freeze_failure_rate;
#endif
#if PG_VERSION_NUM >= 160000
    MemoryContext vacuum_context = AllocSetContextCreate(PortalContext, "pgjq vacuum", ALLOCSET_DEFAULT_SIZES);
    MemoryContext caller = MemoryContextSwitchTo(vacuum_context);
    BufferAccessStrategy ring = GetAccessStrategyWithSize(BAS_VACUUM, VacuumBufferUsageLimit);
    MemoryContextSwitchTo(caller);
    vacuum(relations, params, ring, vacuum_context, true);
    MemoryContextDelete(vacuum_context);
#else
    vacuum(relations, params, nullptr, true);
#endif
}

}  // namespace pgjq::compat
