// worker_wake.cpp: waking the maintenance worker when a transaction commits a delayed job.
//
// Enqueue (wake_maintenance_at_commit) and the trigger pgjq.wake_maintenance (a job rescheduled by an
// UPDATE) report pending jobs whose run_at lies in the future; an ordinary enqueue reports nothing. The
// earliest such run_at of the transaction is remembered; at commit, when the job is visible, the worker
// of this database is told about it and its latch is set if it planned to sleep past that time. A
// rolled-back transaction tells nobody.
#include "boundary.hpp"
#include "trigger.hpp"
#include "worker_state.hpp"

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

} // namespace

namespace pgjq {

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

} // namespace pgjq

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
