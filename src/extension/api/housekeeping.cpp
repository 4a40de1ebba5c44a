// housekeeping.cpp: recover_stale (expired leases), prune (finished jobs, workflows and the failed attempts
// of jobs gone, past an age) and sample_queues (the charts' samples), for admins who run them by hand; the
// maintenance worker does them on its own (maintenance/lease_recovery.cpp, prune.cpp, queue_sampling.cpp).
#include "core/api_function.hpp"
#include "core/attempt_errors.hpp"
#include "core/leases.hpp"
#include "core/queue_samples.hpp"
#include "core/workflows.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_prune;

// clang-format off
const plan_text k_prune = {
    "DELETE FROM pgjq.finished_jobs WHERE finished_at < now() - $1", 1, {INTERVALOID}};
// clang-format on

}  // namespace

PGJQ_API_FUNCTION(recover_stale)
{
    require_every(call, cap_admin);
    SPI_connect();
    int64 recovered = recover_expired_leases();
    SPI_finish();
    PG_RETURN_INT32(static_cast<int32>(recovered));
}

PGJQ_API_FUNCTION(prune)
{
    require_every(call, cap_admin);
    require_arg(fcinfo, 0, "older_than");
    Interval* older_than = optional_interval_arg(fcinfo, 0, "older_than", k_retention_bounds);
    SPI_connect();
    Datum values[1] = {IntervalPGetDatum(older_than)};
    uint64 pruned = run_plan(saved_plan(&s_prune, k_prune), values, nullptr);
    // Workflows finished as long ago go too, whole (their count is not the jobs'), and the failed attempts
    // of jobs gone that failed as long ago.
    if (workflows_installed())
        prune_workflows(PG_INT32_MAX, older_than);
    prune_attempt_errors(PG_INT32_MAX, older_than);
    SPI_finish();
    PG_RETURN_INT64(static_cast<int64>(pruned));
}

PGJQ_API_FUNCTION(sample_queues)
{
    require_every(call, cap_admin);
    SPI_connect();
    int64 sampled = take_queue_samples();
    SPI_finish();
    PG_RETURN_INT64(sampled);
}
