// depth.hpp: the backpressure counters. Each queue's number of unfinished jobs (pending, claimed, running)
// lives in k_depth_slots rows of pgjq.queue_depth. A transaction adds to the row of its backend's slot, so
// concurrent producers rarely wait on one row, and reading a queue's depth sums a fixed number of rows
// whatever its length. enqueue.cpp reserves room against max_pending; lifecycle.cpp subtracts what
// finishes; retry adds back what it revives.
//
// Within a transaction the changes are kept in memory (a ledger, in step with subtransactions) and each
// row is written at most twice: by the first change (a reservation must hold the row's lock while it
// checks max_pending, and drop_queue waits on it), and once at commit with the sum of everything else.
// Writing the row at every call would make the Nth call of a transaction walk the N versions the calls
// before it left: quadratic cost.
//
// From 0.2.0 the same rows also count the jobs that finished, by final status, since the queue was created:
// kept and written with the unfinished count, in the same row writes, so that the totals cost nothing
// extra to keep and 16 rows to read, whatever the history holds.
#pragma once

#include "core/depth_slots.hpp"
#include "pg/pg.hpp"

namespace pgjq {

// What finishing jobs adds to a queue's totals.
struct finished_counts {
    int64 completed, failed, cancelled;
};

// Reserves room for `count` jobs in the queue, against its max_pending. Granted: true, with SPI_tuptable
// holding the queue's (max_attempts, fifo). False when the queue is full or does not exist. Requires an
// SPI connection.
bool reserve_depth(Datum queue_name, int64 count);

// What this transaction has added to the queue's count and not yet written (negative: freed).
int64 unwritten_depth(Datum queue_name);

// Adds `delta` to the queue's unfinished-job count, and `finished` (if any) to its counts of finished jobs
// (written at once, locking the row, if it is this transaction's first change of the row, else at commit).
// Without a check against max_pending: enqueue.cpp adds this way to a queue that has none. False, and
// nothing recorded, when that first write finds no row (the queue was dropped). Requires an SPI connection.
bool adjust_depth(Datum queue_name, int64 delta, const finished_counts* finished = nullptr);

// True while this transaction has not changed any counter: the first change may then be written by the
// statement that makes it (see archive_jobs), which then reports it with depth_written.
bool depth_untouched();
// This backend's slot row of the queue was just written by this transaction's statement.
void depth_written(Datum queue_name);

// Counts `count` jobs enqueued into a queue without max_pending in shared memory when the transaction
// commits (the caller began counting: core/enqueue_counts.hpp), or in this backend's row if it is prepared.
void count_enqueue(Datum queue_name, int64 count);
// Gives back room an enqueue reserved (or counted) and did not use.
void give_back_depth(Datum queue_name, int64 count);
// Writes the queue's count from shared memory, and what this transaction counted for it there, into the
// queue's row of `slot`; the caller holds the queue's count lock. Returns what it took from shared memory.
int64 fold_enqueue_counts(Datum queue_name, int16 slot = depth_slot());
// Locks a counter row of the queue that no other transaction holds, without waiting, and returns its slot
// (adjust_depth_in_slot then writes it); -1 when every row is held. Requires an SPI connection.
int16 unlocked_depth_slot(Datum queue_name);
// adjust_depth, in the queue's row of `slot`.
bool adjust_depth_in_slot(Datum queue_name, int16 slot, int64 delta);

// Creates a new queue's counter rows. Requires an SPI connection.
void create_depth_rows(Datum queue_name);

// The queues that have counter rows (palloc'd in the caller's context), and how many. Requires an SPI
// connection. Not pgjq.queues: pg_restore may load a queue's rows and jobs before its settings.
char** queues_with_depth_rows(uint64* count);
// Makes the queue's counter rows count its live jobs, which the rows of a dump, or shared memory after a
// restart, may not: takes what shared memory counts for the queue (those jobs are among the live ones) and
// writes the difference into the row of `slot`. The caller holds the queue's count lock in ExclusiveLock, so
// that no transaction counts into the queue meanwhile. Returns the difference. Requires an SPI connection.
int64 recount_unfinished(const char* queue_name, int16 slot);
// Recounts every queue with counter rows, each under its count lock (waited for), into this backend's slot:
// what a COPY into pgjq's tables needs when it is done (core/counted_tables.hpp).
void recount_every_queue();

// The queue is being dropped with its counter rows: what this transaction added to them is not written
// (unless the drop rolls back with its subtransaction).
void forget_depth(const char* queue_name);

// At commit (hooks/transaction_hub.cpp): writes what the ledger holds in rows (the shared counts too if the
// transaction is preparing); after the commit, adds the shared counts; at the end of the transaction,
// whatever its outcome, empties it.
void write_depth_ledger(bool preparing);
void publish_enqueue_counts();
void forget_depth_ledger();

// The ledger follows subtransactions (hooks/transaction_hub.cpp).
void depth_ledger_subtransaction_committed(SubTransactionId sub, SubTransactionId parent);
void depth_ledger_subtransaction_aborted(SubTransactionId sub);

}  // namespace pgjq
