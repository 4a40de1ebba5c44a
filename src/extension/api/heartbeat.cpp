// heartbeat.cpp: heartbeat and progress. Both extend the lease by the queue's lease length, never past the
// job's execution timeout, after which both are refused (PJ005); progress also marks the job running. The
// lease is not indexed, so a heartbeat is usually a HOT update.
#include "core/api_function.hpp"
#include "core/job_columns.hpp"
#include "core/refusals.hpp"
#include "core/worker_commit.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

// clang-format off
// Both extend the lease, for the worker id ($2) and role (the last parameter) holding the job.
#define HEARTBEAT(lease)                                                                               \
    "UPDATE pgjq.live_jobs j SET heartbeat_at = now(), lease_expires_at = " lease                      \
    "  FROM pgjq.queues q"                                                                             \
    " WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending' AND q.queue_name = j.queue_name"
#define PROGRESS(lease)                                                                                \
    "UPDATE pgjq.live_jobs j SET status = 'running', progress = $3,"                                   \
    " current_stage = coalesce($4, j.current_stage), events_count = j.events_count + 1,"               \
    " started_at = CASE WHEN j.status = 'claimed' THEN now() ELSE j.started_at END,"                   \
    " heartbeat_at = now(), lease_expires_at = " lease                                                 \
    "  FROM pgjq.queues q"                                                                             \
    " WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending' AND q.queue_name = j.queue_name"
// least() skips a NULL timeout_at (no timeout).
#define LEASE_CURRENT "least(now() + q.lease, j.timeout_at)"
statement s_heartbeat = {"heartbeat.heartbeat", {HEARTBEAT(LEASE_CURRENT) PGJQ_HELD_BY_ROLE("j.", "$3") PGJQ_BEFORE_TIMEOUT("j.") " RETURNING j.lease_expires_at",
     3, {INT8OID, TEXTOID, REGROLEOID}}};
statement s_progress = {"heartbeat.progress", {PROGRESS(LEASE_CURRENT) PGJQ_HELD_BY_ROLE("j.", "$5") PGJQ_BEFORE_TIMEOUT("j."),
     5, {INT8OID, TEXTOID, INT4OID, TEXTOID, REGROLEOID}}};
// clang-format on

}  // namespace

PGJQ_API_FUNCTION(heartbeat)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    SPI_connect();
    Datum values[3] = {Int64GetDatum(job_id), CStringGetTextDatum(worker_id), ObjectIdGetDatum(call.caller)};
    if (run_plan(saved_plan(&s_heartbeat), values, nullptr) == 0)
        raise_not_held(job_id, worker_id, call.caller);
    bool isnull, found;
    TimestampTz expires = DatumGetTimestampTz(first_value(&isnull, &found));
    SPI_finish();
    PG_RETURN_TIMESTAMPTZ(expires);
}

PGJQ_API_FUNCTION(progress)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    int64 job_id = job_id_arg(fcinfo, 0);
    char* worker_id = short_text_arg(fcinfo, 1, "worker_id");
    int32 progress = int_arg_in_range(fcinfo, 2, "progress", 0, 100);
    char* stage = optional_short_text_arg(fcinfo, 3, "current_stage");
    SPI_connect();
    Datum values[5] = {Int64GetDatum(job_id), CStringGetTextDatum(worker_id), Int32GetDatum(progress),
                       stage ? CStringGetTextDatum(stage) : (Datum) 0, ObjectIdGetDatum(call.caller)};
    char nulls[5] = {' ', ' ', ' ', stage ? ' ' : 'n', ' '};
    if (run_plan(saved_plan(&s_progress), values, nulls) == 0)
        raise_not_held(job_id, worker_id, call.caller);
    SPI_finish();
    PG_RETURN_VOID();
}
