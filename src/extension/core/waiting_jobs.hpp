// waiting_jobs.hpp: jobs that may not run yet. A job waits (status 'waiting', outside the claim index) for its
// turn in its group (a group is a queue's, a group_key's and the role's that enqueued: at most the queue's
// group_concurrency of a group's jobs are live, in enqueue order) and for the jobs it depends on (depends_on, with a row per unmet dependency in
// pgjq.job_dependencies). What lets a waiting job start happens in other transactions, which cannot see
// each other's uncommitted work; so each transaction settles what it changed as it commits, in a fixed
// protocol that lets the later of two transactions see the earlier:
// - dependencies: the producer of a dependent locks its unfinished parents' rows (FOR KEY SHARE) at commit
//   and checks them again; the transaction that finishes a parent deletes its row (a conflicting lock)
//   and looks for dependents at commit. Whichever comes second sees the other's work.
// - groups: every transaction that adds a waiting job to a group or takes a live job out of one takes the
//   group's lock (an advisory lock, one of k_group_lock_buckets per queue, in a fixed order) at commit and
//   starts the group's next jobs while it has room.
// Both run with the latest snapshot, so they also work under REPEATABLE READ. A transaction's notes may
// name more than it changed (a rolled-back subtransaction's): settling re-reads the state and does nothing
// where nothing is due. The maintenance worker's waiting_jobs duty settles anything left (a database whose
// cache did not yet know dependencies were in use, a queue whose group_concurrency was raised).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// A waiting job entered the group of `queue_name`, `group_key` and the enqueuing role `enqueued_by`, or a live
// one left it: at commit, the group's next jobs start while it has room.
void note_group_changed(const char* queue_name, Oid enqueued_by, const char* group_key);

// Job `job_id` waits for the unfinished jobs `parents` (n of them; its rows of pgjq.job_dependencies exist):
// at commit they are locked and checked again.
void note_new_dependent(int64 job_id, const int64* parents, int n);

// Jobs left pgjq.live_jobs (completed, failed or cancelled); `ids` is an int8[]. At commit their dependents
// are released (a completed job) or cancelled (a failed or cancelled one). Only needed where
// dependencies_in_use().
void note_finished(Datum ids);

// At commit (hooks/transaction_hub.cpp): settles what the notes say. At the end of the transaction, whatever
// its outcome: forgets them.
void settle_waiting_jobs();
void forget_waiting_jobs_ledger();

// The maintenance worker's sweep (and alter_queue after raising group_concurrency): notes every group with
// room and waiting jobs, of `queue_name` (nullptr: of every queue), and the dependencies on jobs that are no
// longer live, so that the commit settles them. Return how many they noted. Require an SPI connection.
int64 note_groups_with_room(const char* queue_name);
int64 note_stale_dependencies();
// Runs `plan` (no parameters; its first value an int8[] of jobs that left pgjq.live_jobs) and notes those
// jobs as finished; returns how many. Requires an SPI connection.
int64 note_finished_by(SPIPlanPtr plan);

}  // namespace pgjq
