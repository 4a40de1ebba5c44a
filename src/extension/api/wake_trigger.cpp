// wake_trigger.cpp: the trigger pgjq.wake_maintenance on live_jobs. A job rescheduled by an UPDATE (a retry
// with backoff, an owner's own UPDATE of run_at) tells the maintenance worker of its due time at commit
// (core/deadlines.hpp), and of its replaced row version (core/announcements.hpp).
#include "core/announcements.hpp"
#include "core/deadlines.hpp"
#include "pg/boundary.hpp"
#include "pg/trigger.hpp"

PGJQ_FUNCTION(wake_maintenance)
{
    TriggerData* trigger = pgjq::trigger_data(fcinfo, "wake_maintenance");
    HeapTuple row = pgjq::new_row(trigger);
    TupleDesc desc = trigger->tg_relation->rd_att;
    bool isnull;
    Datum run_at = heap_getattr(row, SPI_fnumber(desc, "run_at"), desc, &isnull);
    if (!isnull)
        pgjq::wake_maintenance_at_commit(DatumGetTimestampTz(run_at));
    pgjq::note_live_rows_replaced();  // a retry delayed by its backoff is announced only once due
    return PointerGetDatum(row);
}
