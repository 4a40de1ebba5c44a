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
#include "pg/shared_region.hpp"

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

// The transaction hub (hooks/transaction_hub.cpp): a transaction that relays may not be prepared; at commit
// its events go to the ring (or, if it notified by itself, the launcher is asked for a worker); they end
// with the transaction and follow its subtransactions.
void refuse_prepare_with_announcements();
void hand_over_announcements();
void forget_announcements();
void announcements_subtransaction_committed(SubTransactionId subid, SubTransactionId parent);
void announcements_subtransaction_aborted(SubTransactionId subid);

// The rings in shared memory (preload only).
extern const shared_region k_relay_region;

}  // namespace pgjq
