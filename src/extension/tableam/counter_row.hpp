// counter_row.hpp: adds to one row of pgjq.queue_depth in place, through the table access method rather
// than an UPDATE statement. The counter write is the second write of every single-job enqueue, and run as
// a statement its executor start-up cost more than the write itself (measured: 41 % of pgjq.enqueue's
// server time, most of it building the plan's state for one row).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// What to add to the row: its unfinished count, and (with_finished, 0.2.0's columns) the totals of
// jobs that finished.
struct counter_change {
    int64 unfinished;
    bool with_finished;
    int64 completed, failed, cancelled;
};

enum class counter_write {
    written,      // added; the row stays locked until the transaction ends
    no_row,       // the queue has no such row (it was dropped)
    not_in_place  // the table is not as pgjq made it (another index, a trigger on update, a CHECK
                  // constraint, row security):
                  // the caller writes the row with a statement
};

// Adds `change` to the row (queue_name, slot) of pgjq.queue_depth (relid). The row is found under a new
// snapshot; a concurrent writer of the row is waited for and the latest version is the one added to, at
// any isolation level (counters commute: where an UPDATE statement under REPEATABLE READ would fail with a
// serialization error, this adds to what the other transaction committed). Privileges are not checked:
// callers are pgjq's own paths, acting for a caller they already checked.
counter_write add_to_counter_row(Oid relid, const char* queue_name, int16 slot, const counter_change& change);

}  // namespace pgjq
