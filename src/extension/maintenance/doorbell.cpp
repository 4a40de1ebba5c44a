// doorbell.cpp: the maintenance side's answers to the requests of core/doorbell.hpp about its workers' slots
// (the relay's are in notification_relay.cpp, which owns the rings). Each takes the shared state's lock for a
// few loads and stores and sets a latch after releasing it.
#include "core/doorbell.hpp"

#include "maintenance/shared_state.hpp"

namespace pgjq::doorbell {

bool available()
{
    return worker_state_no_error() != nullptr;
}

bool maintenance_will_serve(Oid dboid)
{
    worker_shared* state = worker_state_no_error();
    if (state == nullptr)
        return false;
    LWLockAcquire(&state->lock, LW_SHARED);
    const db_slot* slot = find_slot(state, dboid);
    bool served = state->launcher_pid != 0 || (slot != nullptr && slot->pid != 0);
    LWLockRelease(&state->lock);
    return served;
}

void report_deadline(Oid dboid, TimestampTz due, deadline_kind kind)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr)
        return;
    Latch* latch = nullptr;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    // With a launcher every database's deadlines are kept, served or not; without one only a serving
    // worker can act on them.
    db_slot* slot = state->launcher_pid != 0 ? find_or_add_slot(state, dboid) : find_slot(state, dboid);
    if (slot != nullptr && (slot->pid != 0 || state->launcher_pid != 0)) {
        // The worker takes the earliest reported due time at its next look and includes it in that
        // look's due window, so a job that committed late (after that look's snapshot, or
        // after its run_at had passed) is notified too. next_wake == 0 means a round is running.
        TimestampTz* reported = reported_deadline_field(slot, kind);
        bool earlier = *reported == 0 || due < *reported;
        slot->reports[static_cast<int>(kind)]++;  // even when absorbed by an earlier one
        if (earlier)
            *reported = due;
        if (slot->pid != 0) {
            if (slot->next_wake == 0 || due < slot->next_wake)
                latch = slot->latch;
        } else if (earlier && due < slot->deadline) {
            latch = state->launcher_latch;  // nobody serves the database: the launcher starts a worker in time
        }
    }
    LWLockRelease(&state->lock);
    if (latch != nullptr)
        SetLatch(latch);
}

void request_service(Oid dboid, bool orphaned)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr)
        return;
    TimestampTz now = GetCurrentTimestamp();
    Latch* launcher = nullptr;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    if (state->launcher_pid != 0) {
        db_slot* slot = find_or_add_slot(state, dboid);
        // While a worker serves the database nothing is needed, unless it is leaving (orphaned events).
        if (slot != nullptr && !slot->disabled && (slot->pid == 0 || orphaned)) {
            if (orphaned)
                slot->relay_orphaned = true;
            if (slot->requested_at == 0) {
                slot->requested_at = now;
                launcher = state->launcher_latch;
            }
        }
    }
    LWLockRelease(&state->lock);
    if (launcher != nullptr)
        SetLatch(launcher);
}

}  // namespace pgjq::doorbell
