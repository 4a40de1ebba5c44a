// recovery.cpp: recover_stale (expired leases) and prune (finished jobs past an age).
//
// Recovery locks with SKIP LOCKED: a job whose worker is completing it right now is left to that
// worker, and a job recovered first makes the worker's later call fail with PJ002 (not the holder).
#include "args.hpp"
#include "boundary.hpp"
#include "lifecycle.hpp"
#include "spi_plans.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_requeue_expired, s_spent_expired, s_prune;

const plan_text k_requeue_expired = {
    "WITH expired AS MATERIALIZED ("
    "  SELECT id FROM pgjq.live_jobs"
    "   WHERE status <> 'pending' AND lease_expires_at < now() AND attempts < max_attempts"
    "   FOR UPDATE SKIP LOCKED)"
    " UPDATE pgjq.live_jobs j SET status = 'pending', run_at = now(), worker_id = NULL, lease_expires_at = NULL,"
    "   last_error = pg_catalog.format('lease expired: worker %s stopped reporting', j.worker_id)"
    "  WHERE j.id = ANY (ARRAY(SELECT id FROM expired))",
    0, {}};
const plan_text k_spent_expired = {
    "SELECT coalesce(array_agg(id), '{}') FROM ("
    "  SELECT id FROM pgjq.live_jobs"
    "   WHERE status <> 'pending' AND lease_expires_at < now() AND attempts >= max_attempts"
    "   FOR UPDATE SKIP LOCKED) AS spent",
    0, {}};
const plan_text k_prune = {
    "DELETE FROM pgjq.finished_jobs WHERE finished_at < now() - $1", 1, {INTERVALOID}};

} // namespace

PGJQ_FUNCTION(recover_stale)
{
    SPI_connect();
    uint64 requeued = run_plan(saved_plan(&s_requeue_expired, k_requeue_expired), nullptr, nullptr);
    run_plan(saved_plan(&s_spent_expired, k_spent_expired), nullptr, nullptr);
    bool isnull, found;
    Datum spent = first_value(&isnull, &found);
    uint64 failed = archive_jobs(spent, nullptr, "failed", nullptr,
                                 "lease expired on the last attempt: the worker stopped reporting", nullptr);
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(requeued + failed));
}

PGJQ_FUNCTION(prune)
{
    require_arg(fcinfo, 0, "older_than");
    Interval* older_than = optional_interval_arg(fcinfo, 0, "older_than", true);
    SPI_connect();
    Datum values[1] = {IntervalPGetDatum(older_than)};
    uint64 pruned = run_plan(saved_plan(&s_prune, k_prune), values, nullptr);
    SPI_finish();
    PG_RETURN_INT64(static_cast<int64>(pruned));
}
