// announcements.hpp: what a transaction tells listening workers, once it commits: queues with new runnable
// jobs (channel pgjq_new_job, payload the queue name) and finished jobs (pgjq_job_finished, payload
// {"id":N,"queue":"q","status":"completed|failed|cancelled"}).
//
// PostgreSQL lets one notifying transaction commit at a time: PreCommit_Notify takes a cluster-wide lock and
// keeps it until the commit record is flushed, so producers and workers that NOTIFY lose group commit
// (measured: 13.9k -> 5.9k commits/s with 4 clients). So when a maintenance worker serves the database, a
// transaction keeps its events and, once committed, hands them to the worker's relay
// (maintenance/notification_relay.cpp, through core/doorbell.hpp), which sends the NOTIFYs in a transaction of
// its own, many at a time. Channels and payloads are the same as when a transaction notifies itself, which it
// still does when no worker serves its database or pgjq was not preloaded. Whether a transaction relays or
// notifies itself is decided at its first event, once.
#pragma once

#include "core/claim_floor.hpp"
#include "core/doorbell.hpp"
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
// old row versions in live_jobs are dead, which the worker's vacuum hears of
// (maintenance/live_table_vacuum.cpp).
void announce_requeued_jobs(const char* queue_name);
// Rows of live_jobs this transaction updated or deleted without announcing anything (a retry delayed by
// its backoff, a withdrawn insert, a forced drop of a queue): only the worker's vacuum hears of them.
void note_live_rows_replaced();
void announce_finished(int64 job_id, const char* queue_name, const char* status);

// The payload of a finished job's notification, palloc'd: the one spelling of it, for both senders.
char* finished_payload(const doorbell::finished_event& event);

// The transaction hub (hooks/transaction_hub.cpp): a transaction that relays may not be prepared; at commit
// its events go to the relay (or, if it notified by itself, the launcher is asked for a worker); they end
// with the transaction and follow its subtransactions.
void refuse_prepare_with_announcements();
void hand_over_announcements();
void forget_announcements();
void announcements_subtransaction_committed(SubTransactionId subid, SubTransactionId parent);
void announcements_subtransaction_aborted(SubTransactionId subid);

}  // namespace pgjq
