// leases.cpp: lease recovery (see leases.hpp).
#include "core/leases.hpp"

#include "core/attempt_errors.hpp"
#include "core/lifecycle.hpp"
#include "pg/catalog.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace pgjq {

// clang-format off
// In flight: claimed or running. A lease that ended at the job's execution timeout (heartbeats cannot extend
// it further) means the job timed out.
#define EXPIRED(in_flight, attempts_condition, columns)                                               \
    "SELECT j.id" columns " FROM pgjq.live_jobs j"                                                     \
    " WHERE " in_flight " AND lease_expires_at < now() AND attempts " attempts_condition               \
    " FOR UPDATE SKIP LOCKED"
#define TIMED_OUT "j.timeout_at IS NOT NULL AND j.timeout_at <= j.lease_expires_at"
#define EXPIRY_REASON                                                                                  \
    "CASE WHEN " TIMED_OUT " THEN pg_catalog.format('timed out: worker %s ran past the job''s"         \
    " execution timeout of %s', j.worker_id, coalesce(j.timeout, (SELECT q.job_timeout"                \
    " FROM pgjq.queues q WHERE q.queue_name = j.queue_name)))"                                         \
    " ELSE pg_catalog.format('lease expired: worker %s stopped reporting', j.worker_id) END"
#define REQUEUE_WITH_ERROR                                                                             \
    "UPDATE pgjq.live_jobs j SET status = 'pending', run_at = now(), worker_id = NULL,"                 \
    "   lease_expires_at = NULL, timeout_at = NULL, last_error = "
static statement s_requeue_expired = {"leases.requeue_expired", {
    "WITH expired AS MATERIALIZED (" EXPIRED("status > 'pending'", "< max_attempts", "") ")"
    " " REQUEUE_WITH_ERROR EXPIRY_REASON "  WHERE j.id = ANY (ARRAY(SELECT id FROM expired))", 0, {}}};
// The expired jobs on their last attempt: those whose lease lapsed, and those that timed out.
#define SPENT_IDS                                                                                      \
    "SELECT coalesce(array_agg(id) FILTER (WHERE NOT timed_out), '{}'),"                               \
    "       coalesce(array_agg(id) FILTER (WHERE timed_out), '{}')"
#define TIMED_OUT_COLUMN ", coalesce(timeout_at <= lease_expires_at, false) AS timed_out"
static statement s_spent_expired = {"leases.spent_expired", {
    SPENT_IDS " FROM (" EXPIRED("status > 'pending'", ">= max_attempts", TIMED_OUT_COLUMN) ") AS spent", 0, {}}};
// The same two, recording each attempt's failure (core/attempt_errors.hpp; $1 the failures a job keeps).
#define FAILED_COLUMNS                                                                                 \
    ", j.attempts AS attempt, j.queue_name, j.enqueued_by, j.worker_id, " PGJQ_ATTEMPT_STARTED("j.")   \
    " AS started_at, " EXPIRY_REASON " AS error" TIMED_OUT_COLUMN
static SPIPlanPtr s_requeue_expired_recorded, s_spent_expired_recorded;
const plan_text k_requeue_expired_recorded = {
    "WITH expired AS MATERIALIZED (" EXPIRED("status > 'pending'", "< max_attempts", FAILED_COLUMNS) "),"
    " requeued AS (" REQUEUE_WITH_ERROR "x.error FROM expired x WHERE j.id = x.id RETURNING j.id),"
    PGJQ_RECORD_FAILED_ATTEMPTS("expired", "$1")
    " SELECT id FROM requeued", 1, {INT4OID}};
const plan_text k_spent_expired_recorded = {
    "WITH spent AS MATERIALIZED (" EXPIRED("status > 'pending'", ">= max_attempts", FAILED_COLUMNS) "),"
    PGJQ_RECORD_FAILED_ATTEMPTS("spent", "$1")
    " " SPENT_IDS " FROM spent", 1, {INT4OID}};
// Only future expiries: an expired lease that recovery skipped (its row is locked by a worker that is
// finishing the job) must not make the worker spin; it is looked at again after pgjq.naptime, which the
// second column tells the maintenance worker (it must not leave the database meanwhile).
#define NEXT_EXPIRY(in_flight)                                                                         \
    "SELECT min(lease_expires_at) FILTER (WHERE lease_expires_at > now()),"                            \
    "       coalesce(bool_or(lease_expires_at <= now()), false)"                                       \
    "  FROM pgjq.live_jobs WHERE " in_flight
static statement s_next_expiry = {"leases.next_expiry", {NEXT_EXPIRY("status > 'pending'"), 0, {}}};
// clang-format on

int64 recover_expired_leases()
{
    uint64 requeued;
    if (attempt_errors_installed()) {
        Datum kept = Int32GetDatum(k_kept_errors_per_job);
        requeued = run_plan(saved_plan(&s_requeue_expired_recorded, k_requeue_expired_recorded), &kept, nullptr);
        run_plan(saved_plan(&s_spent_expired_recorded, k_spent_expired_recorded), &kept, nullptr);
    } else {
        requeued = run_plan(saved_plan(&s_requeue_expired), nullptr, nullptr);
        run_plan(saved_plan(&s_spent_expired), nullptr, nullptr);
    }
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    Datum lapsed = SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull);
    Datum timed_out = SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull);
    archive_request r = {lapsed,
                         "failed",
                         nullptr,
                         nullptr,
                         InvalidOid,
                         nullptr,
                         "lease expired on the last attempt: the worker stopped reporting"};
    uint64 failed = archive_jobs(r);
    r.ids = timed_out;
    r.last_error = "timed out on the last attempt: the job ran past its execution timeout";
    failed += archive_jobs(r);
    return static_cast<int64>(requeued + failed);
}

TimestampTz next_lease_expiry(bool* expired_left)
{
    run_plan(saved_plan(&s_next_expiry), nullptr, nullptr);
    bool isnull, found;
    Datum value = first_value(&isnull, &found);
    TimestampTz next = (found && !isnull) ? DatumGetTimestampTz(value) : DT_NOEND;
    if (expired_left != nullptr) {
        bool left_null = true;
        Datum left = found ? SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &left_null) : (Datum) 0;
        *expired_left = !left_null && DatumGetBool(left);
    }
    return next;
}

}  // namespace pgjq
