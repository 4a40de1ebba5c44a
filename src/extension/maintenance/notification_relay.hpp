// notification_relay.hpp: NOTIFY without serializing commits.
//
// PostgreSQL lets one notifying transaction commit at a time: PreCommit_Notify takes a cluster-wide
// lock and keeps it until the commit record is flushed, so producers and workers that NOTIFY lose group
// commit (measured: 13.9k -> 5.9k commits/s with 4 clients). With the relay, a transaction records its
// events (queues with new runnable jobs, finished jobs) and, once committed, hands them to its
// database's maintenance worker through shared memory; the worker sends the NOTIFYs in a transaction of
// its own, many at a time. Channels and payloads are the same as when a transaction notifies itself,
// which it still does when no worker serves its database or pgjq was not preloaded (the relay's memory
// is reserved at server start).
#pragma once

#include "core/claim_floor.hpp"
#include "pg/pg.hpp"

namespace pgjq {

constexpr const char* k_new_job_channel = "pgjq_new_job";
constexpr const char* k_finished_channel = "pgjq_job_finished";

// Records that runnable jobs appeared in `queue_name` / that a job finished, for this transaction:
// relayed after commit when a worker serves the database, notified directly otherwise. New runnable jobs
// also move the queue's claim floor at commit (core/claim_floor.hpp): `first` is the first of them in claim
// order when the caller knows it (an enqueue), nullptr otherwise.
void announce_new_jobs(const char* queue_name, const job_key* first = nullptr);
// Jobs back to pending (a retry, a lease's recovery): announced as new jobs, and, like a finished job, their
// old row versions in live_jobs are dead, which the worker's vacuum hears of (live_table_vacuum.cpp).
void announce_requeued_jobs(const char* queue_name);
// Rows of live_jobs this transaction updated or deleted without announcing anything (a retry delayed by
// its backoff, a withdrawn insert, a forced drop of a queue): only the worker's vacuum hears of them.
void note_live_rows_replaced();
void announce_finished(int64 job_id, const char* queue_name, const char* status);

// The worker claims its database's ring once the extension is there (so that backends relay to it) and
// keeps it; its notification_relay duty (duties.cpp) sends what the ring holds.
// `announce_everything`: events may have been lost with another ring (shared_state.hpp, relay_orphaned).
void relay_attach(Oid dboid, bool announce_everything);
// A worker about to exit on purpose: backends notify by themselves from now on (and ask the launcher for a
// worker); what the ring holds is still sent by relay_deliver().
void relay_detach();
// Sends what the ring holds now, in a transaction of its own.
struct relay_delivery {
    int64 sent;          // notifications
    bool rows_replaced;  // some of the delivered transactions finished or requeued jobs (dead row versions)
};
relay_delivery relay_deliver();

// Shared memory (preload only) and the transaction callbacks.
Size relay_shmem_size();
void relay_shmem_request();
void relay_shmem_startup();
void register_relay_callbacks();

}  // namespace pgjq
