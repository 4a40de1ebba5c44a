// retry.cpp: retry, an admin's re-drive of a failed or cancelled job: pending now, with its full
// max_attempts again and the same id. Only the job's queue's admins may; to anyone else the job does not
// exist. A job whose unique_key another unfinished job holds now cannot come back (PJ004, naming it).
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/depth.hpp"
#include "core/refusals.hpp"
#include "core/spi.hpp"
#include "core/sqlstate.hpp"
#include "core/waiting_jobs.hpp"
#include "maintenance/notification_relay.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_state, s_key_holder;

// clang-format off
const plan_text k_state = {"SELECT queue_name, status::text FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
const plan_text k_key_holder = {
    "SELECT f.unique_key, l.id, l.status::text FROM pgjq.finished_jobs f"
    "  JOIN pgjq.live_jobs l ON l.queue_name = f.queue_name AND l.unique_key = f.unique_key WHERE f.id = $1",
    1, {INT8OID}};
// A job of a group comes back waiting for its turn in it (the commit starts it when it may).
#define REVIVE(added_columns, added_values, group_key)                                                 \
    "WITH revived AS ("                                                                                \
    "  DELETE FROM pgjq.finished_jobs WHERE id = $1 AND status IN ('failed', 'cancelled') RETURNING *)" \
    " INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, unique_key,"     \
    "   created_at, max_attempts, last_error" added_columns ")"                                        \
    " SELECT id, queue_name, job_type, priority, payload, now(), unique_key, created_at, max_attempts, last_error" \
    added_values "   FROM revived"                                                                    \
    " ON CONFLICT (queue_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING queue_name, " group_key
versioned_plan s_revive = {
    {REVIVE(", enqueued_by, claimed_by, group_key, depends_on, timeout, status",
            ", enqueued_by, claimed_by, group_key, depends_on, timeout,"
            " CASE WHEN group_key IS NULL THEN 'pending' ELSE 'waiting' END::pgjq.job_status",
            "group_key"),
     1, {INT8OID}},
    {REVIVE("", "", "NULL::text"), 1, {INT8OID}}};
// clang-format on

}  // namespace

PGJQ_API_FUNCTION(retry)
{
    require_some(call, cap_admin);
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    Datum values[1] = {Int64GetDatum(job_id)};
    run_plan(saved_plan(&s_state, k_state), values, nullptr, 1);
    if (SPI_processed == 0 || !holds(call, cap_admin, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)))
        raise_no_such_job(job_id);
    char* status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    if (strcmp(status, "failed") != 0 && strcmp(status, "cancelled") != 0)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("job %lld is %s", (long long) job_id, status),
                 errdetail("Only failed or cancelled jobs can be retried.")));
    run_plan(saved_plan(&s_key_holder, k_key_holder), values, nullptr, 1);
    if (SPI_processed > 0) {
        HeapTuple holder = SPI_tuptable->vals[0];
        TupleDesc desc = SPI_tuptable->tupdesc;
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_UNIQUE_KEY_HELD),
                 errmsg("job %lld cannot be retried: unique_key \"%s\" is held by job %s", (long long) job_id,
                        SPI_getvalue(holder, desc, 1), SPI_getvalue(holder, desc, 2)),
                 errdetail("Job %s is %s, and a unique_key is held by one unfinished job of a queue at a time.",
                           SPI_getvalue(holder, desc, 2), SPI_getvalue(holder, desc, 3)),
                 errhint("Retry once that job has finished, or cancel it.")));
    }
    // A job enqueued with the key since the look above: the statement deleted the history row and inserted
    // nothing, and this ERROR takes the delete back.
    if (run_plan(saved_plan(&s_revive, call.legacy), values, nullptr) == 0)
        ereport(ERROR,
                (errcode(PGJQ_ERRCODE_UNIQUE_KEY_HELD),
                 errmsg("job %lld cannot be retried: another job took its unique_key meanwhile", (long long) job_id),
                 errhint("Retry once that job has finished, or cancel it.")));
    bool isnull, no_group;
    Datum queue_name = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    Datum group_key = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &no_group);
    if (no_group)
        announce_new_jobs(TextDatumGetCString(queue_name));  // runnable now
    else
        note_group_changed(TextDatumGetCString(queue_name), TextDatumGetCString(group_key));
    adjust_depth(queue_name, 1);
    SPI_finish();
    PG_RETURN_VOID();
}
