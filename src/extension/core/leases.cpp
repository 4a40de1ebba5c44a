// leases.cpp: lease recovery (see leases.hpp).
#include "core/leases.hpp"

#include "core/lifecycle.hpp"
#include "core/spi.hpp"

namespace pgjq {

static SPIPlanPtr s_requeue_expired, s_spent_expired, s_next_expiry;

// clang-format off
static const plan_text k_requeue_expired = {
    "WITH expired AS MATERIALIZED ("
    "  SELECT id FROM pgjq.live_jobs"
    "   WHERE status <> 'pending' AND lease_expires_at < now() AND attempts < max_attempts"
    "   FOR UPDATE SKIP LOCKED)"
    " UPDATE pgjq.live_jobs j SET status = 'pending', run_at = now(), worker_id = NULL, lease_expires_at = NULL,"
    "   last_error = pg_catalog.format('lease expired: worker %s stopped reporting', j.worker_id)"
    "  WHERE j.id = ANY (ARRAY(SELECT id FROM expired))",
    0, {}};
static const plan_text k_spent_expired = {
    "SELECT coalesce(array_agg(id), '{}') FROM ("
    "  SELECT id FROM pgjq.live_jobs"
    "   WHERE status <> 'pending' AND lease_expires_at < now() AND attempts >= max_attempts"
    "   FOR UPDATE SKIP LOCKED) AS spent",
    0, {}};
// Only future expiries: an expired lease that recovery skipped (its row is locked by a worker that is
// finishing the job) must not make the worker spin; it is looked at again after pgjq.naptime, which the
// second column tells the maintenance worker (it must not leave the database meanwhile).
static const plan_text k_next_expiry = {
    "SELECT min(lease_expires_at) FILTER (WHERE lease_expires_at > now()),"
    "       coalesce(bool_or(lease_expires_at <= now()), false)"
    "  FROM pgjq.live_jobs WHERE status <> 'pending'",
    0, {}};
// clang-format on

int64 recover_expired_leases()
{
    uint64 requeued = run_plan(saved_plan(&s_requeue_expired, k_requeue_expired), nullptr, nullptr);
    run_plan(saved_plan(&s_spent_expired, k_spent_expired), nullptr, nullptr);
    bool isnull, found;
    Datum spent = first_value(&isnull, &found);
    archive_request r = {spent,
                         "failed",
                         nullptr,
                         nullptr,
                         InvalidOid,
                         nullptr,
                         "lease expired on the last attempt: the worker stopped reporting"};
    uint64 failed = archive_jobs(r);
    return static_cast<int64>(requeued + failed);
}

TimestampTz next_lease_expiry(bool* expired_left)
{
    run_plan(saved_plan(&s_next_expiry, k_next_expiry), nullptr, nullptr);
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
