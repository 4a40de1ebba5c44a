// wake.cpp: waking the maintenance worker when a transaction commits a delayed job.
//
// Enqueue (wake_maintenance_at_commit) and the trigger pgjq.wake_maintenance (a job rescheduled by an
// UPDATE) report pending jobs whose run_at lies in the future; an ordinary enqueue reports nothing. The
// earliest such run_at of the transaction is remembered; at commit, when the job is visible, the worker
// of this database is told about it and its latch is set if it planned to sleep past that time. A
// rolled-back transaction tells nobody.
#include "maintenance/wake.hpp"

#include "core/boundary.hpp"
#include "core/trigger.hpp"
#include "maintenance/shared_state.hpp"

namespace {

using namespace pgjq;

bool s_pending = false;
TimestampTz s_pending_due = 0;

void wake_at_commit(XactEvent event, void* arg)
{
    switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
        if (s_pending)
            wake_worker_for(MyDatabaseId, s_pending_due);  // never raises
        s_pending = false;
        break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
    case XACT_EVENT_PREPARE:
        s_pending = false;
        break;
    default:
        break;
    }
}

}  // namespace

namespace pgjq {

void wake_worker_for(Oid dboid, TimestampTz due)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr)
        return;
    Latch* latch = nullptr;
    SpinLockAcquire(&state->mutex);
    db_slot* slot = find_slot(state, dboid);
    if (slot != nullptr && slot->pid != 0) {
        // The worker takes the earliest reported due time at its next look and includes it in that
        // look's due window, so a job that committed late (after that look's snapshot, or
        // after its run_at had passed) is notified too. next_wake == 0 means a round is running.
        if (slot->reported_due == 0 || due < slot->reported_due)
            slot->reported_due = due;
        if (slot->next_wake == 0 || due < slot->next_wake)
            latch = slot->latch;
    }
    SpinLockRelease(&state->mutex);
    if (latch != nullptr)
        SetLatch(latch);
}

void register_wake_callback()
{
    RegisterXactCallback(wake_at_commit, nullptr);
}

void wake_maintenance_at_commit(TimestampTz due)
{
    if (worker_state_no_error() == nullptr)
        return;
    if (!s_pending || due < s_pending_due)
        s_pending_due = due;
    s_pending = true;
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
    return PointerGetDatum(row);
}
