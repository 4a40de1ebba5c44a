// table_writes.hpp: what an INSERT or UPDATE statement applies to a row of a plain table besides writing it,
// prepared once and applied by code that writes through the table access method: the NOT NULL and CHECK
// constraints, and an entry in each b-tree index whose predicate the row meets. row_insert.cpp (an
// enqueue, single or batched), direct_claim.cpp (a leased claim) and direct_archive.cpp (jobs finishing) use
// them; each keeps what it prepared in a prepared_cache (tableam/prepared_cache.hpp).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

struct prepared_index {
    IndexInfo* info;  // ii_PredicateState prepared
    IndexUniqueCheck check;
    bool state_per_call;  // its access method keeps state in the IndexInfo (see begin_index_writes)
};

// A b-tree's entry as ExecInsertIndexTuples makes it, or false when that needs its executor state (an
// expression to compute, an exclusion or deferred check) or another access method. With `brin`, a BRIN
// index too: BRIN keeps a descriptor built from the index's relcache entry in the IndexInfo, which outlives
// that entry here, so a caller that allows it brackets each call's inserts with begin_index_writes and
// end_index_writes, as an executor's lifetime brackets them.
bool prepare_index(Relation index, prepared_index* into, bool brin = false);

// What the access methods keep in the IndexInfos of `prepared` is built afresh in the current memory context
// (begin), and let go (end).
void begin_index_writes(const prepared_index* prepared, int count);
void end_index_writes(const prepared_index* prepared, Relation* indexes, int count);

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

// Rows per table_multi_insert, at most: COPY's buffer, which bounds the memory a call holds.
constexpr int k_rows_per_multi_insert = 1000;

// The rows in `slots` (formed, checked, and each materialized so that it owns its values) written as COPY
// writes a buffer of rows: table_multi_insert puts as many onto a page as fit, with one WAL record per page
// instead of one per row, then each row gets its index entries. Every row is in the heap before the first
// entry goes in, so a unique index finds a duplicate among them when the second one's entry does.
void insert_rows_with_entries(Relation rel, TupleTableSlot** slots, int count, CommandId cid,
                              const prepared_index* prepared, Relation* indexes, int nindexes, ExprContext* econtext);

// table_tuple_update of the version at `tid` to the row in `slot`, as a statement's UPDATE runs it (no
// crosscheck snapshot); `wait`: for a transaction changing or holding the version, or else TM_BeingModified.
// *insert_entries: the new version needs index entries (it is not heap-only).
TM_Result update_row(Relation rel, ItemPointer tid, TupleTableSlot* slot, CommandId cid, Snapshot snapshot, bool wait,
                     TM_FailureData* failure, bool* insert_entries);

// A column a direct path reads or writes, and the type it must have (InvalidOid: that of the table's
// `status` column, an enum).
struct known_column {
    const char* name;
    Oid type;
};

// Each column's number (into `at`, in `columns`' order) and the type of `status` (*status_type), when
// `status` is an enum and every column exists with its type, none of them a domain (whose constraints only
// a statement checks); false otherwise.
bool find_known_columns(TupleDesc desc, const known_column* columns, int count, AttrNumber* at, Oid* status_type);

// The value of an enum type's label, or 0 when the type has no such label.
Datum enum_label_value(Oid type, const char* label);

// Whether a text Datum holds exactly the `length` bytes of `expected`.
bool text_equals(Datum value, const char* expected, size_t length);

}  // namespace pgjq
