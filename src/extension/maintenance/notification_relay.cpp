// notification_relay.cpp: the notification relay (see notification_relay.hpp): the rings in shared memory,
// the doorbell through which committed transactions fill them (core/doorbell.hpp), and the worker's delivery.
#include "maintenance/notification_relay.hpp"

#include "core/announcements.hpp"
#include "maintenance/duty.hpp"
#include "maintenance/shared_memory.hpp"

namespace {

constexpr int k_ring_queues = 32;      // more distinct queues than this in one delivery: announce all
constexpr int k_ring_finished = 4096;  // finished jobs waiting for the worker; beyond: overflow notice

}  // namespace

namespace pgjq::doorbell {

struct relay_ring {
    Oid dboid;     // the database this ring serves; kept when its worker exits, for the next one
    Latch* latch;  // the serving worker's latch; nullptr while no worker runs
    int nqueues;
    bool all_queues;  // more queues than fit: the worker announces every queue
    char queues[k_ring_queues][k_queue_len];
    int head;  // oldest finished event
    int count;
    bool finished_overflow;  // finished events were dropped: waiters are told to look again
    bool rows_replaced;      // a handed-over transaction finished or requeued jobs
    finished_event finished[k_ring_finished];
};

}  // namespace pgjq::doorbell

namespace {

using namespace pgjq;
using doorbell::finished_event;
using doorbell::k_queue_len;
using doorbell::relay_ring;

struct relay_shared {
    int nrings;
    relay_ring rings[FLEXIBLE_ARRAY_MEMBER];
};

relay_shared* s_relay = nullptr;
LWLockPadded* s_locks = nullptr;      // one per ring
relay_ring* s_worker_ring = nullptr;  // the ring this process serves (maintenance worker only)
// What the worker took from its ring for the delivery under way (allocated once).
char (*s_taken_queues)[k_queue_len] = nullptr;
finished_event* s_taken_finished = nullptr;
bool s_delivering = false;  // events were taken and their delivering transaction has not committed

// With the ring's lock held: the next delivery announces every queue and sends the overflow notice, for
// events that were taken and never sent.
void announce_everything_again(relay_ring* ring)
{
    ring->all_queues = true;
    ring->finished_overflow = true;
}

int ring_count()
{
    return max_worker_processes > 0 ? max_worker_processes : 1;
}

LWLock* ring_lock(const relay_ring* ring)
{
    return &s_locks[ring - s_relay->rings].lock;
}

}  // namespace

namespace pgjq::doorbell {

relay_ring* serving_ring(Oid dboid)
{
    if (s_relay == nullptr)
        return nullptr;
    for (int i = 0; i < s_relay->nrings; i++) {
        relay_ring* ring = &s_relay->rings[i];
        LWLockAcquire(ring_lock(ring), LW_SHARED);
        bool serves = ring->dboid == dboid && ring->latch != nullptr;
        LWLockRelease(ring_lock(ring));
        if (serves)
            return ring;
    }
    return nullptr;
}

// Runs after the commit is visible, where an ERROR is not allowed: nothing here raises.
void hand_over(relay_ring* ring, const relay_handover& events)
{
    LWLockAcquire(ring_lock(ring), LW_EXCLUSIVE);
    Latch* latch = ring->latch;
    if (ring->dboid == MyDatabaseId) {
        for (int i = 0; i < events.nqueues; i++) {
            bool known = ring->all_queues;
            for (int j = 0; !known && j < ring->nqueues; j++)
                known = strcmp(ring->queues[j], events.queues[i].queue) == 0;
            if (known)
                continue;
            if (ring->nqueues < k_ring_queues)
                strlcpy(ring->queues[ring->nqueues++], events.queues[i].queue, k_queue_len);
            else
                ring->all_queues = true;
        }
        for (int i = 0; i < events.nfinished; i++) {
            if (ring->count == k_ring_finished) {
                ring->finished_overflow = true;
                break;
            }
            ring->finished[(ring->head + ring->count) % k_ring_finished] = events.finished[i].event;
            ring->count++;
        }
        ring->rows_replaced |= events.rows_replaced || events.nfinished > 0;
    }
    bool orphaned = latch == nullptr || ring->dboid != MyDatabaseId;
    LWLockRelease(ring_lock(ring));
    // The worker left since this transaction chose to relay: the launcher starts one, which announces
    // every queue and sends the overflow notice, as the events may be in a ring another database took.
    if (orphaned)
        doorbell::request_service(MyDatabaseId, true);
    else
        SetLatch(latch);
}

}  // namespace pgjq::doorbell

namespace pgjq {

void relay_attach(Oid dboid, bool announce_everything)
{
    if (s_relay == nullptr)
        return;
    relay_ring* chosen = nullptr;
    for (int i = 0; i < s_relay->nrings && chosen == nullptr; i++) {
        relay_ring* ring = &s_relay->rings[i];
        LWLockAcquire(ring_lock(ring), LW_EXCLUSIVE);
        if (ring->dboid == dboid) {
            ring->latch = MyLatch;
            chosen = ring;
        }
        LWLockRelease(ring_lock(ring));
    }
    // A free ring, else one whose worker is gone and that holds nothing, else any whose worker is gone:
    // its leftovers are dropped, and its database's next worker announces everything (relay_orphaned).
    for (int pass = 0; pass < 3 && chosen == nullptr; pass++)
        for (int i = 0; i < s_relay->nrings && chosen == nullptr; i++) {
            relay_ring* ring = &s_relay->rings[i];
            LWLockAcquire(ring_lock(ring), LW_EXCLUSIVE);
            bool empty = ring->nqueues == 0 && ring->count == 0 && !ring->all_queues && !ring->finished_overflow;
            bool unserved = ring->latch == nullptr;
            if (pass == 0 ? !OidIsValid(ring->dboid) : unserved && (pass == 2 || empty)) {
                if (OidIsValid(ring->dboid) && !empty)
                    doorbell::request_service(ring->dboid, true);
                memset(ring, 0, offsetof(relay_ring, finished));
                ring->dboid = dboid;
                ring->latch = MyLatch;
                chosen = ring;
            }
            LWLockRelease(ring_lock(ring));
        }
    s_worker_ring = chosen;
    if (chosen == nullptr)
        return;
    if (announce_everything) {
        LWLockAcquire(ring_lock(chosen), LW_EXCLUSIVE);
        announce_everything_again(chosen);
        LWLockRelease(ring_lock(chosen));
    }
    s_taken_queues = static_cast<char(*)[k_queue_len]>(
        MemoryContextAlloc(TopMemoryContext, sizeof(char[k_queue_len]) * k_ring_queues));
    s_taken_finished =
        static_cast<finished_event*>(MemoryContextAlloc(TopMemoryContext, sizeof(finished_event) * k_ring_finished));
    before_shmem_exit(
        [](int, Datum) {
            LWLockAcquire(ring_lock(s_worker_ring), LW_EXCLUSIVE);
            s_worker_ring->latch = nullptr;
            if (s_delivering)
                announce_everything_again(s_worker_ring);  // for the next worker to send
            LWLockRelease(ring_lock(s_worker_ring));
        },
        (Datum) 0);
}

void relay_detach()
{
    if (s_worker_ring == nullptr)
        return;
    LWLockAcquire(ring_lock(s_worker_ring), LW_EXCLUSIVE);
    s_worker_ring->latch = nullptr;
    LWLockRelease(ring_lock(s_worker_ring));
}

// The worker's side: sends the NOTIFYs waiting in its ring in one transaction of its own (the caller
// holds none). Returns how many notifications were sent. The events are taken from the ring before they are
// sent; if the sending transaction never commits (an error, or the worker's exit), they are not lost
// silently: the next delivery (of this worker, or of the next one) announces every queue and sends the
// overflow notice, so that every waiter looks again.
relay_delivery relay_deliver()
{
    relay_ring* ring = s_worker_ring;
    if (ring == nullptr)
        return {0, false};
    MemoryContext caller = CurrentMemoryContext;

    // Take everything waiting, then notify without holding the lock.
    LWLockAcquire(ring_lock(ring), LW_EXCLUSIVE);
    if (s_delivering) {
        announce_everything_again(ring);
        s_delivering = false;
    }
    int nqueues = ring->nqueues, count = ring->count;
    bool all_queues = ring->all_queues, overflow = ring->finished_overflow;
    // Events lost to an overflow or with another ring may have been anything.
    bool rows_replaced = ring->rows_replaced || all_queues || overflow;
    ring->rows_replaced = false;
    if (nqueues == 0 && count == 0 && !all_queues && !overflow) {
        LWLockRelease(ring_lock(ring));
        return {0, rows_replaced};
    }
    memcpy(s_taken_queues, ring->queues, sizeof(char[k_queue_len]) * nqueues);
    for (int i = 0; i < count; i++)
        s_taken_finished[i] = ring->finished[(ring->head + i) % k_ring_finished];
    ring->nqueues = 0;
    ring->all_queues = false;
    ring->head = ring->count = 0;
    ring->finished_overflow = false;
    s_delivering = true;
    LWLockRelease(ring_lock(ring));

    test_failure_point("notification_relay");
    int64 sent = 0;
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    debug_query_string = "pgjq maintenance: relaying notifications";
    pgstat_report_activity(STATE_RUNNING, debug_query_string);
    if (all_queues) {
        SPI_connect();
        PushActiveSnapshot(GetTransactionSnapshot());
        if (SPI_execute("SELECT queue_name FROM pgjq.queues", true, 0) == SPI_OK_SELECT)
            for (uint64 i = 0; i < SPI_processed; i++) {
                char* name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
                if (name != nullptr) {
                    Async_Notify(k_new_job_channel, name);
                    sent++;
                }
            }
        PopActiveSnapshot();
        SPI_finish();
    } else {
        for (int i = 0; i < nqueues; i++, sent++)
            Async_Notify(k_new_job_channel, s_taken_queues[i]);
    }
    for (int i = 0; i < count; i++, sent++)
        Async_Notify(k_finished_channel, finished_payload(s_taken_finished[i]));
    if (overflow) {
        Async_Notify(k_finished_channel, "{\"overflow\":true}");
        sent++;
    }
    CommitTransactionCommand();
    s_delivering = false;
    MemoryContextSwitchTo(caller);
    debug_query_string = nullptr;
    pgstat_report_activity(STATE_IDLE, nullptr);
    return {sent, rows_replaced};
}

Size relay_shmem_size()
{
    return add_size(offsetof(relay_shared, rings), mul_size(sizeof(relay_ring), ring_count()));
}

void attach_relay(void* memory, bool created, LWLockPadded* locks)
{
    s_relay = static_cast<relay_shared*>(memory);
    if (created) {
        memset(s_relay, 0, relay_shmem_size());
        s_relay->nrings = ring_count();
    }
    s_locks = locks;
}

// One LWLock per ring.
const shared_region k_relay_region = {"pgjq notification relay", relay_shmem_size, ring_count, attach_relay};

}  // namespace pgjq

namespace {

using namespace pgjq;

// Runs at every wake-up (a committing transaction sets the latch when it hands over); nothing timed.
duty_outcome run(maintenance_round& round)
{
    relay_delivery delivered = relay_deliver();
    if (delivered.rows_replaced)
        round.jobs_moved = true;
    if (delivered.sent > 0)
        round.relayed = true;
    return {DT_NOEND, delivered.sent, DT_NOEND};
}

bool woken(const maintenance_round&)
{
    return s_worker_ring != nullptr;
}

}  // namespace

extern const pgjq::duty k_notification_relay_duty = {"notification_relay", run, woken};
