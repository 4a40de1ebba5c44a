// visibility.cpp: what the calling role may read and do. may_read_queue and may_read_job are the row
// filters of the views pgjq.queue_stats and pgjq.jobs (and of pgjq.queues' row security): each role sees
// the queues and jobs that core/privileges.hpp lets it read. They run as the reader, who is who they ask
// about. holds_capability answers a tool that offers an action only to a role the call would not refuse.
#include "core/api_function.hpp"
#include "pg/args.hpp"

PGJQ_FUNCTION(may_read_queue)
{
    char* queue_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
    PG_RETURN_BOOL(pgjq::may_read_queue(GetUserId(), queue_name));
}

PGJQ_FUNCTION(may_read_job)
{
    if (PG_ARGISNULL(0))
        PG_RETURN_BOOL(false);
    char* queue_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
    Oid enqueued_by = PG_ARGISNULL(1) ? InvalidOid : PG_GETARG_OID(1);
    PG_RETURN_BOOL(pgjq::may_read_job(GetUserId(), queue_name, enqueued_by));
}

PGJQ_API_FUNCTION(holds_capability)
{
    char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
    uint8 cap = pgjq::capability_named(name);
    if (cap == 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unknown capability \"%s\"", name),
                 errhint("The capabilities are producer, worker, admin and observer.")));
    PG_RETURN_BOOL(pgjq::holds(call, cap, text_to_cstring(PG_GETARG_TEXT_PP(1))));
}
