// enqueue_counts.hpp: the jobs enqueued into queues without max_pending, counted in shared memory.
//
// Writing the backend's counter row of pgjq.queue_depth (core/depth.hpp) was a tenth of a single-job enqueue
// (the row update, its WAL, the relation's opens and locks) and all that kept it slower than a plain INSERT.
// A queue without max_pending needs its count only to show it (queue_metrics.unfinished, the
// pgjq_jobs_unfinished gauge), so an enqueue into one adds its jobs, when it commits, to the queue's entry
// here; the maintenance worker folds the entries into its counter rows (maintenance/count_fold.cpp), and
// whatever shows the count adds what is not folded yet (unfolded_enqueues).
// - Shared memory does not outlive the server, and a dump holds the rows alone. After each start, and after
//   a COPY into pgjq's tables commits (pg_restore), the worker reconciles every queue's rows with its live jobs
//   (one count per queue, under the queue's count lock), and only then do enqueues count here
//   (enqueue_counts_ready); until then they write their rows. A CREATE EXTENSION needs none: its tables are
//   empty (core/counted_tables.hpp).
// - A queue's count lock, a heavyweight lock on (pgjq.queue_depth, hash of the name): a counting transaction holds
//   it in RowExclusiveLock until it ends, as it would have held its row's lock; drop_queue, and alter_queue
//   when it sets max_pending, take it in ExclusiveLock, so they wait for those transactions and then take
//   the entry's count with them (into the rows, or away with them). The worker folds under RowExclusiveLock.
// - A prepared transaction writes its enqueues to its row (core/depth.cpp). One that took a count out
//   (drop_queue, alter_queue) or loaded pgjq's tables by COPY cannot be prepared: what it does to the counts
//   in shared memory must happen at its commit, which could come from another session, or after a restart.
// - Entries are keyed by database, pgjq.queue_depth's OID (an extension dropped and created again starts
//   afresh) and queue name; k_count_slots of them, freed only by a restart. A queue that finds no room
//   writes its rows.
// - A standby sees the rows only: it lags the primary by what the worker has not folded yet.
// - Enqueues count here only while a maintenance worker serves the database (and so folds); when it leaves,
//   they write their rows again, and what was counted stays until the next worker folds it.
// Without shared_preload_libraries there is no shared memory, and every enqueue writes its row as before.
#pragma once

#include "pg/pg.hpp"
#include "pg/shared_region.hpp"

namespace pgjq {

// Is there shared memory to count in (pgjq preloaded)?
bool enqueue_counts_available();
// Has the maintenance worker reconciled this database's rows since the server started?
bool enqueue_counts_reconciled();
// Do enqueues of this database count in shared memory now (preloaded, pgjq.shared_enqueue_counts on, the
// rows reconciled since the server started, and a worker serving the database to fold the counts)?
bool enqueue_counts_ready();
// The worker serves its database, which is reconciled: enqueues count in shared memory until it exits.
// stop_counting_when_leaving (called first, and needing no transaction) sees to the exit.
void stop_counting_when_leaving();
void start_counting();
// Is this database reconciled (just created, say) and not counting yet? The worker then runs its fold duty
// at once instead of at its next turn. Needs no transaction.
bool counting_may_start();

// An enqueue into a queue without max_pending is about to count in shared memory: takes the queue's count
// lock for the rest of the transaction and makes sure the queue has an entry. False (and no lock taken)
// when the table has no room: the enqueue writes its row.
bool begin_counting_enqueues(const char* queue_name);

// At commit (core/depth.cpp): adds `n` jobs to the queue's entry. Never raises.
void add_enqueue_count(const char* queue_name, int64 n);

// The jobs of the queue counted here and not yet in its rows (0 when none, or not preloaded).
int64 unfolded_enqueues(const char* queue_name);

// The queue's count lock: RowExclusiveLock counts and folds, ExclusiveLock waits for both. No-op without
// shared memory. try_: without waiting (by default); false when not granted.
void lock_queue_count(const char* queue_name, LOCKMODE mode);
bool try_lock_queue_count(const char* queue_name, LOCKMODE mode, bool dont_wait = true);

// Takes the count out of the queue's entry for this transaction to write into (or delete with) the queue's
// rows; the caller holds the count lock (in ExclusiveLock unless the database is reconciled). The count is still shown until the transaction ends; if it (or the
// subtransaction) rolls back, the count goes back into the entry. 0 when there is none.
int64 take_enqueue_count(const char* queue_name);

// The queues of this database whose entries hold a count (palloc'd), and how many.
char** queues_with_enqueue_counts(int* count);

// The maintenance worker reconciled this database's rows of queue_depth `depth_relid` (in transactions that
// committed): enqueues may count here from now on, unless the database stopped being reconciled since
// `epoch` (enqueue_counts_epoch(), read before the reconcile began). Needs no transaction.
uint32 enqueue_counts_epoch();
void mark_enqueue_counts_ready(Oid depth_relid, uint32 epoch, bool counting);
// This transaction loads rows into pgjq's tables in bulk (a COPY, as pg_restore does): once it commits, the
// database needs reconciling again.
void unreconcile_at_commit();
// This transaction created the extension (queue_depth `depth_relid`): its empty tables agree, so once it
// commits the database counts in shared memory without waiting for a reconcile.
void reconciled_at_commit(Oid depth_relid, uint32 epoch);

// Transaction ends (hooks/transaction_hub.cpp): the counts taken are settled, or put back. A transaction that
// took any, or loaded pgjq's tables by COPY, cannot be prepared.
void settle_taken_counts(bool committed);
void refuse_prepare_with_count_changes();
void enqueue_counts_subtransaction_aborted(SubTransactionId sub);  // puts back what it took

// With preload, the shared-memory hub (hooks/shared_memory_hub.cpp) reserves it.
extern const shared_region k_enqueue_counts_region;

}  // namespace pgjq
