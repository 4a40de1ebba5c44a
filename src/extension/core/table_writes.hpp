// table_writes.hpp: what an INSERT or UPDATE statement applies to a row of a plain table besides writing it,
// prepared once and applied by code that writes through the table access method: the NOT NULL and CHECK
// constraints, and an entry in each b-tree index whose predicate the row meets. row_insert.cpp (a
// single-job enqueue) and direct_claim.cpp (a leased claim) use them; each keeps what it prepared until an
// invalidation says the table changed.
#pragma once

#include "core/pg.hpp"

namespace pgjq {

struct prepared_index {
    Oid oid;
    IndexInfo* info;  // ii_PredicateState prepared
    IndexUniqueCheck check;
};

// A b-tree's entry as ExecInsertIndexTuples makes it, or false when that needs its executor state (an
// expression to compute, an exclusion or deferred check) or another access method (GIN, GiST and BRIN keep
// state of the index's relcache entry in the IndexInfo, which outlives it here).
bool prepare_index(Relation index, prepared_index* into);

// An expression prepared with no plan state, as ExecPrepareExpr prepares it.
ExprState* prepare_expression(Node* expression);

struct prepared_checks {
    int count;
    ExprState** checks;
    const char** names;
};

// The table's CHECK constraints, in the current memory context.
prepared_checks prepare_checks(Relation rel);

// ExecConstraints' NOT NULL and CHECK tests and errors, for a plain table.
void check_constraints(const prepared_checks& checks, Relation rel, TupleTableSlot* slot, ExprContext* econtext);

// The entries of the row in `slot` (stored, its tid set) in each open index ready for inserts whose predicate
// it meets. `unchanged`: the row is a new version whose keys are its old version's (index_unchanged_by_update,
// which lets a b-tree delete the old versions' entries bottom-up instead of splitting its page).
void insert_index_entries(const prepared_index* prepared, Relation* indexes, int count, Relation rel,
                          TupleTableSlot* slot, ExprContext* econtext, bool unchanged);

// table_tuple_update of the version at `tid` to the row in `slot`, as a statement's UPDATE runs it (no
// crosscheck snapshot); `wait`: for a transaction changing or holding the version, or else TM_BeingModified.
// *insert_entries: the new version needs index entries (it is not heap-only).
TM_Result update_row(Relation rel, ItemPointer tid, TupleTableSlot* slot, CommandId cid, Snapshot snapshot, bool wait,
                     TM_FailureData* failure, bool* insert_entries);

}  // namespace pgjq
