// wake.cpp: waking the maintenance worker when a transaction commits a delayed job or a lease.
//
// Enqueue and the trigger pgjq.wake_maintenance (a job rescheduled by an UPDATE) report pending jobs whose
// run_at lies in the future; a claim reports when its lease ends; an ordinary enqueue reports nothing. The
// earliest of each kind is remembered for the transaction; at commit, when the jobs are visible, the worker
// of this database is told and its latch is set if it planned to sleep past that time. A rolled-back
// transaction tells nobody.
#include "maintenance/wake.hpp"

#include "maintenance/notification_relay.hpp"
#include "maintenance/shared_state.hpp"
#include "pg/boundary.hpp"
#include "pg/trigger.hpp"

namespace {

using namespace pgjq;

// The earliest deadline of each kind this transaction reported; 0: none.
TimestampTz s_pending[k_deadline_kinds];

}  // namespace

namespace pgjq {

void wake_worker_for(Oid dboid, TimestampTz due, deadline_kind kind)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr)
        return;
    Latch* latch = nullptr;
    SpinLockAcquire(&state->mutex);
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
    SpinLockRelease(&state->mutex);
    if (latch != nullptr)
        SetLatch(latch);
}

void wake_maintenance_for_commit()
{
    for (int k = 0; k < k_deadline_kinds; k++)
        if (s_pending[k] != 0)
            wake_worker_for(MyDatabaseId, s_pending[k], static_cast<deadline_kind>(k));  // never raises
    forget_wakes();
}

void forget_wakes()
{
    memset(s_pending, 0, sizeof s_pending);
}

void wake_maintenance_at_commit(TimestampTz when, deadline_kind kind)
{
    if (worker_state_no_error() == nullptr)
        return;
    TimestampTz* pending = &s_pending[static_cast<int>(kind)];
    if (*pending == 0 || when < *pending)
        *pending = when;
}

}  // namespace pgjq

PGJQ_FUNCTION(wake_maintenance)
{
    TriggerData* trigger = trigger_data(fcinfo, "wake_maintenance");
    HeapTuple row = new_row(trigger);
    TupleDesc desc = trigger->tg_relation->rd_att;
    bool isnull;
    Datum run_at = heap_getattr(row, SPI_fnumber(desc, "run_at"), desc, &isnull);
    if (!isnull)
        wake_maintenance_at_commit(DatumGetTimestampTz(run_at));
    pgjq::note_live_rows_replaced();  // a retry delayed by its backoff is announced only once due
    return PointerGetDatum(row);
}
