// worker_wake.cpp: waking the maintenance worker when a transaction commits a delayed job.
//
// The trigger pgjq.wake_maintenance fires only for pending jobs whose run_at lies in the future (an
// ordinary enqueue never fires it). It remembers the earliest such run_at of the transaction; at
// commit, when the job is visible, the worker of this database is told about it and its latch is set
// if it planned to sleep past that time. A rolled-back transaction tells nobody.
#include "boundary.hpp"
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

} // namespace pgjq

PGJQ_FUNCTION(wake_maintenance)
{
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("wake_maintenance must be called as a trigger")));
    auto* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
    HeapTuple row = TRIGGER_FIRED_BY_UPDATE(trigger->tg_event) ? trigger->tg_newtuple : trigger->tg_trigtuple;
    TupleDesc desc = trigger->tg_relation->rd_att;
    bool isnull;
    Datum run_at = heap_getattr(row, SPI_fnumber(desc, "run_at"), desc, &isnull);
    if (!isnull && worker_state_no_error() != nullptr) {
        TimestampTz due = DatumGetTimestampTz(run_at);
        if (!s_pending || due < s_pending_due)
            s_pending_due = due;
        s_pending = true;
    }
    return PointerGetDatum(row);
}
