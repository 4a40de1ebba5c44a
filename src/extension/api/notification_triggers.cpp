// notification_triggers.cpp: the notification triggers. Channel names are fixed (no user input ever builds one):
//   pgjq_new_job       payload: the queue name; once per queue per transaction, at commit
//   pgjq_job_finished  payload: {"id":N,"queue":"q","status":"completed|failed|cancelled"}
// Delivered at commit, never on rollback: either PostgreSQL's own NOTIFY in the transaction, or the
// relay of maintenance/notification_relay.cpp when a maintenance worker serves the database. Queue names are restricted
// to [a-z0-9_.-], so the JSON payload needs no escaping.
#include "core/announcements.hpp"
#include "pg/boundary.hpp"
#include "pg/trigger.hpp"

using pgjq::new_row;
using pgjq::trigger_data;

PGJQ_FUNCTION(notify_new_job)
{
    TriggerData* trigger = trigger_data(fcinfo, "notify_new_job");
    HeapTuple row = new_row(trigger);
    TupleDesc desc = trigger->tg_relation->rd_att;
    bool isnull;
    Datum queue = heap_getattr(row, SPI_fnumber(desc, "queue_name"), desc, &isnull);
    if (!isnull)
        pgjq::announce_requeued_jobs(TextDatumGetCString(queue));  // the trigger is on UPDATE only
    return PointerGetDatum(row);
}

PGJQ_FUNCTION(notify_job_finished)
{
    TriggerData* trigger = trigger_data(fcinfo, "notify_job_finished");
    HeapTuple row = new_row(trigger);
    TupleDesc desc = trigger->tg_relation->rd_att;
    bool id_null, queue_null, status_null;
    int64 id = DatumGetInt64(heap_getattr(row, SPI_fnumber(desc, "id"), desc, &id_null));
    Datum queue = heap_getattr(row, SPI_fnumber(desc, "queue_name"), desc, &queue_null);
    Datum status = heap_getattr(row, SPI_fnumber(desc, "status"), desc, &status_null);
    if (!id_null && !queue_null && !status_null)
        pgjq::announce_finished(id, TextDatumGetCString(queue), DatumGetCString(DirectFunctionCall1(enum_out, status)));
    return PointerGetDatum(row);
}
