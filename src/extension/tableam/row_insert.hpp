// row_insert.hpp: inserts one row, or several, into a table through its access method, applying what an INSERT
// statement would apply to it: the columns' defaults, NOT NULL and CHECK constraints, and an entry in every
// index whose predicate the row meets. The constraints, defaults and index predicates are prepared once per
// backend and kept until the table changes. A single-job enqueue is an INSERT of one row, and run as a
// statement its executor start-up cost more than the write: the plan's state for 26 columns, and the CHECK
// constraint and the partial indexes' predicates read and prepared again for every statement (measured:
// about half of the INSERT's server time).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// A column the caller gives a value for, by name and type. The table's other columns take their defaults.
struct given_column {
    const char* name;
    Oid type;
};

// The columns of one kind of row, in the order of the values given to insert_row, and the column whose
// value insert_row returns (a key its default draws from a sequence, say).
struct row_shape {
    const given_column* columns;
    int ncolumns;
    const char* returning;
};

enum class row_insert {
    inserted,
    not_direct  // nothing done: the caller runs its INSERT statement, which handles (or refuses) the case
};

// Inserts one row (values and isnull in the shape's order) into relid and sets *returned to the shape's
// `returning` column (copied into the caller's memory context). Returns not_direct, having done nothing,
// when the table has what an INSERT statement would do and this does not: a trigger on insert, row
// security, a generated column, a column of a domain type (whose constraints apply to NULL too), an index
// that is not a b-tree or is on an expression or has a deferred or exclusion check; a partitioned table or
// a partition; a given column missing, of another type, with a type modifier or an identity. Also when the
// transaction is read only or parallel, when the current user may not insert, and for a call nested in
// another (a default that enqueues). Key conflicts, NOT NULL and CHECK violations raise the statement's
// SQLSTATE and message (without its "Failing row contains" detail). The new row is visible to the
// transaction's next command.
row_insert insert_row(Oid relid, const row_shape& shape, const Datum* values, const bool* isnull, Datum* returned);

// insert_row for nrows rows (values and isnull hold them one after another, each in the shape's order), written
// as COPY writes them: as many rows onto a page as fit, with one WAL record per page instead of one per row.
// Returns nothing of the rows: a caller that needs their keys gives them (a batch gives its drawn ids). Does
// nothing and returns not_direct in insert_row's cases. A duplicate key within the rows raises the
// statement's error too.
row_insert insert_rows(Oid relid, const row_shape& shape, int nrows, const Datum* values, const bool* isnull);

}  // namespace pgjq
