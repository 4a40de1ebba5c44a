// worker_commit.hpp: how a worker's own transactions commit. A worker call (claim_job_batch,
// complete_and_claim, complete, complete_batch, fail, heartbeat, progress) that is a transaction by itself
// writes nothing but pgjq's job state. Losing such a commit in a server crash only repeats what
// at-least-once delivery already allows: a lost claim leaves the job pending, a lost completion or failure
// leaves it claimed until its lease is recovered and it runs again, a lost heartbeat shortens its lease.
// So unless pgjq.synchronous_worker_commit is on, such a transaction commits without waiting for its WAL
// to be flushed (synchronous_commit = off for it alone); the WAL writer flushes it within a few
// wal_writer_delay. A commit is a fixed cost of a few hundred microseconds of server CPU (docs/benchmarks.md,
// "Where the time goes"), which bounds a drain at small claim batches. Enqueues, and any transaction block (BEGIN ... COMMIT),
// whose own writes may be the caller's, commit as the session says.
#pragma once

namespace pgjq {

// Called by the worker calls above, as they start.
void relax_worker_commit();

}  // namespace pgjq
