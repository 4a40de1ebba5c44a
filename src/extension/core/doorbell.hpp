// doorbell.hpp: what a backend may ask of the maintenance side, as autovacuum offers AutoVacuumRequestWork():
// the maintenance side (maintenance/) implements these and keeps its shared state to itself. A transaction's
// side of each request lives with the domain (core/announcements.hpp, core/deadlines.hpp), which rings at
// commit. Nothing here raises: the requests are made after the commit.
#pragma once

#include "pg/limits.hpp"
#include "pg/pg.hpp"

namespace pgjq {

// What a maintenance worker must act on by a time: a job that falls due (a delayed enqueue, a retry with
// backoff, a lease recovery's requeue), a lease that ends (a claim), a schedule's firing.
enum class deadline_kind { job_due, lease_ends, schedule_due };
constexpr int k_deadline_kinds = 3;

namespace doorbell {

// Whether this backend can reach the maintenance side's shared state (with preload, always; without, while
// PostgreSQL's spare shared memory lasts). The first call attaches.
bool available();

// Whether a maintenance worker will serve `dboid` when its work falls due: a launcher runs (pgjq is preloaded),
// or a worker started by pgjq.start_worker() serves the database now.
bool maintenance_will_serve(Oid dboid);

// Tells the worker of `dboid` of a deadline, and wakes it (or, when nobody serves the database, the launcher)
// if it planned to sleep past it.
void report_deadline(Oid dboid, TimestampTz when, deadline_kind kind);

// Asks the launcher for a worker in `dboid` now (a transaction notified by itself, or start_worker());
// `orphaned`: events were left in a ring without a worker, so the next worker announces everything. No-op
// without a launcher.
void request_service(Oid dboid, bool orphaned);

// The notification relay (maintenance/notification_relay.cpp): a ring in shared memory per served database,
// into which committed transactions copy their events for the database's worker to send.
constexpr int k_queue_len = k_queue_name_max + 1;

struct finished_event {
    int64 id;
    char status[12];
    char queue[k_queue_len];
};

// A transaction's events, each labelled with the subtransaction that noted it.
struct queue_note {
    SubTransactionId subid;
    char queue[k_queue_len];
};
struct finished_note {
    SubTransactionId subid;
    finished_event event;
};
struct relay_handover {
    const queue_note* queues;  // queues with new runnable jobs
    int nqueues;
    const finished_note* finished;
    int nfinished;
    bool rows_replaced;  // live_jobs rows were replaced (the worker's vacuum hears of it)
};

struct relay_ring;  // the maintenance side's

// The ring a live worker serves for `dboid`, or nullptr (no preload, or nobody serves the database now).
relay_ring* serving_ring(Oid dboid);
// Copies a committed transaction's events into `ring` and wakes its worker; if the worker left meanwhile,
// asks the launcher for one that announces everything.
void hand_over(relay_ring* ring, const relay_handover& events);

}  // namespace doorbell

}  // namespace pgjq
