// queue_samples.cpp: taking and pruning queue samples (see queue_samples.hpp).
#include "core/queue_samples.hpp"

#include "pg/catalog.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_take, s_prune;

// clang-format off
// One row per queue: pgjq.queue_metrics' counters (O(1) each), the jobs in flight counted on the in-flight
// index, and the wait and run histograms' totals (the charts difference them into means per interval).
const plan_text k_take = {
    "INSERT INTO pgjq.queue_samples (queue_name, sampled_at, unfinished, in_flight, completed, failed, cancelled,"
    "   next_job_age, wait_jobs, wait_seconds, run_jobs, run_seconds)"
    " SELECT m.queue_name, now(), m.unfinished,"
    "        (SELECT count(*) FROM pgjq.live_jobs l WHERE l.queue_name = m.queue_name AND l.status <> 'pending'),"
    "        m.completed, m.failed, m.cancelled, m.next_job_age, w.jobs, w.sum_seconds, r.jobs, r.sum_seconds"
    "   FROM pgjq.queue_metrics m"
    "   LEFT JOIN pgjq.latency_histograms() w ON w.queue_name = m.queue_name AND w.measure = 'wait'"
    "   LEFT JOIN pgjq.latency_histograms() r ON r.queue_name = m.queue_name AND r.measure = 'run'"
    " ON CONFLICT (queue_name, sampled_at) DO NOTHING",
    0, {}};
const plan_text k_prune = {
    "DELETE FROM pgjq.queue_samples WHERE ctid = ANY (ARRAY("
    "  SELECT ctid FROM pgjq.queue_samples WHERE sampled_at < now() - $1 LIMIT $2))",
    2, {INTERVALOID, INT4OID}};
// clang-format on

}  // namespace

namespace pgjq {

bool queue_samples_installed()
{
    return OidIsValid(pgjq_relation("queue_samples"));
}

int64 take_queue_samples()
{
    if (!queue_samples_installed())
        return 0;
    int64 sampled = static_cast<int64>(run_plan(saved_plan(&s_take, k_take), nullptr, nullptr));
    Interval retention = {};
    retention.time = k_queue_sample_retention_usecs;
    Datum values[2] = {IntervalPGetDatum(&retention), Int32GetDatum(k_queue_samples_pruned_per_run)};
    run_plan(saved_plan(&s_prune, k_prune), values, nullptr);
    return sampled;
}

}  // namespace pgjq
