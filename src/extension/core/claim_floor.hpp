// claim_floor.hpp: where a queue's claims may start reading the claim index.
//
// A claim reads live_jobs_claim_idx (queue_name, priority DESC, id) from the queue's first entry. Every job
// claimed leaves its pending entry behind until vacuum removes it, and vacuum may not while a snapshot older
// than the claim is open (a long report, a session idle in transaction): after 100 000 jobs finished under
// such a snapshot a 1-job claim read every one of their entries and heap rows, 7.7 ms; from the floor, 0.08 ms.
//
// A queue's floor is the key (priority, id) of the last job a claim took: every entry before it was, for
// that claim, dead, taken by it, locked by another claim, not yet committed, not yet due, or of a type the
// claim does not take. So each set of job types claimed has a floor of its own. The last job
// rather than the first, so that the next claim does not read this claim's batch again: with the first,
// a drain at batch 100 read 6.5 claim-index entries and 3.5 heap rows per job it took. Claims start there
// for as long as nothing has made a job runnable before it:
// - a transaction that makes jobs of the queue runnable reports it at commit (runnable_at_commit): an
//   enqueue lowers the floor only if its first job lies before it, anything else (a retry, a requeue, a
//   waiting job's turn, a recovered lease, jobs falling due) drops the floor;
// - a claim that rolls back, or whose savepoint does, drops it: the jobs it held are pending again;
// - a claim passes over jobs not due yet only by the time it read the floor (not its transaction's start),
//   and delayed jobs report themselves when they fall due (the maintenance worker);
// - a floor lapses a second after a claim that read from the start set it, however far claims from the
//   floor moved it since, and a claim that finds nothing from the floor reads from the start: whatever else
//   puts a pending job back before the floor waits at most that long (a transaction other than a claim that
//   held a pending job's row lock while claims passed it: a cancel rolled back, a heartbeat arriving as its
//   job's lease is recovered; a prepared transaction that enqueued; delayed jobs falling due while no
//   maintenance worker runs).
//
// Floors live in shared memory (pgjq preloaded; otherwise claims read from the start, as before) and are used
// by leased claims at READ COMMITTED: the floor is read before the claim's statement takes its snapshot, and a
// claim sets it only if no transaction reported runnable jobs of the queue in between (an epoch counts them).
#pragma once

#include "pg/pg.hpp"
#include "pg/shared_region.hpp"

namespace pgjq {

// A position in claim order: higher priority first, then lower id.
struct job_key {
    int32 priority;
    int64 id;
};

// What a claim read before its snapshot.
struct claim_floor {
    int slot;  // -1: no floor can be kept for the queue (not preloaded, or no slot free)
    uint64 types;
    uint64 epoch;
    bool valid;  // key is where the claim may start
    job_key key;
    TimestampTz read_at;  // the claim takes jobs due by then
};

// Claims of different job types pass over different jobs: each set of types has its own floor (0: any type).
uint64 job_types_key(ArrayType* job_types);

claim_floor read_claim_floor(const char* queue_name, uint64 types);

// After a claim whose snapshot followed `seen`, and which passed over jobs not due by seen.read_at only:
// the last job it took (the last in claim order, read from the start or from the floor) becomes the floor,
// unless a transaction reported runnable jobs since. A claim from the floor never moves it back: claims that
// read the same floor end in any order, and each one's walk justifies its own position. A floor lapses a
// second after the claim that read from the start set it, whatever claims from the floor did since.
void advance_claim_floor(const char* queue_name, const claim_floor& seen, const job_key& last_taken,
                         bool read_from_start);

// This transaction makes jobs of the queue runnable: `first` (the first of them in claim order), or
// nullptr when that is unknown. Applied when the transaction commits.
void runnable_at_commit(const char* queue_name, const job_key* first);

// This transaction claimed jobs of the queue: if it (or the savepoint) rolls back they are pending again.
void claimed_in_transaction(const char* queue_name);

// The transaction hub (hooks/transaction_hub.cpp): at the end of the transaction, and when a savepoint
// rolls back.
void apply_floor_notes_at_commit();
void apply_floor_notes_at_abort();
void apply_floor_notes_at_prepare();
void claim_floors_subtransaction_aborted();

// With preload, the shared-memory hub (hooks/shared_memory_hub.cpp) reserves it.
extern const shared_region k_claim_floors_region;

}  // namespace pgjq
