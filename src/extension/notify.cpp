// notify.cpp: the NOTIFY triggers. Channel names are fixed (no user input ever builds one):
//   pgjq_new_job       payload: the queue name; once per queue per (sub)transaction, at commit
//   pgjq_job_finished  payload: {"id":N,"queue":"q","status":"completed|failed|cancelled"}
// PostgreSQL delivers notifications at commit and drops them on rollback, which is exactly the
// transactional-enqueue promise. Queue names are restricted to [a-z0-9_.-], so they need no escaping.
#include "boundary.hpp"

namespace {

constexpr const char* k_new_job_channel = "pgjq_new_job";
constexpr const char* k_finished_channel = "pgjq_job_finished";

// Queues already notified in the current (sub)transaction. Async_Notify would de-duplicate too, but
// only after building the notification; this keeps a 1000-row batch at one call. Keyed by the
// subtransaction as well, because an aborted subtransaction discards its notifications.
constexpr int k_remembered_queues = 8;
LocalTransactionId s_lxid = InvalidLocalTransactionId;
SubTransactionId s_subxid = InvalidSubTransactionId;
int s_count = 0;
char s_queues[k_remembered_queues][NAMEDATALEN];

bool already_notified(const char* queue_name)
{
#if PG_VERSION_NUM >= 170000
    LocalTransactionId lxid = MyProc->vxid.lxid;
#else
    LocalTransactionId lxid = MyProc->lxid;
#endif
    SubTransactionId subxid = GetCurrentSubTransactionId();
    if (lxid != s_lxid || subxid != s_subxid) {
        s_lxid = lxid;
        s_subxid = subxid;
        s_count = 0;
    }
    for (int i = 0; i < s_count; i++)
        if (strcmp(s_queues[i], queue_name) == 0)
            return true;
    if (s_count < k_remembered_queues)
        strlcpy(s_queues[s_count++], queue_name, NAMEDATALEN);
    return false;
}

TriggerData* trigger_data(FunctionCallInfo fcinfo, const char* name)
{
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("%s must be called as a trigger", name)));
    return reinterpret_cast<TriggerData*>(fcinfo->context);
}

HeapTuple new_row(TriggerData* trigger)
{
    return TRIGGER_FIRED_BY_UPDATE(trigger->tg_event) ? trigger->tg_newtuple : trigger->tg_trigtuple;
}

} // namespace

PGJQ_FUNCTION(notify_new_job)
{
    TriggerData* trigger = trigger_data(fcinfo, "notify_new_job");
    HeapTuple row = new_row(trigger);
    TupleDesc desc = trigger->tg_relation->rd_att;
    bool isnull;
    Datum queue = heap_getattr(row, SPI_fnumber(desc, "queue_name"), desc, &isnull);
    if (!isnull) {
        char* queue_name = TextDatumGetCString(queue);
        if (!already_notified(queue_name))
            Async_Notify(k_new_job_channel, queue_name);
    }
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
    if (!id_null && !queue_null && !status_null) {
        char* payload = psprintf("{\"id\":%lld,\"queue\":\"%s\",\"status\":\"%s\"}", (long long) id,
                                 TextDatumGetCString(queue),
                                 DatumGetCString(DirectFunctionCall1(enum_out, status)));
        Async_Notify(k_finished_channel, payload);
    }
    return PointerGetDatum(row);
}
