// prune.cpp: the duty that deletes finished jobs (completed, failed, cancelled) older than their queue's
// retention, every pgjq.prune_interval, in transactions of at most pgjq.prune_batch_size rows that take
// their row locks with SKIP LOCKED, so that pruning never holds long locks; and, from 0.2.0, the expired
// uniqueness windows (enqueue's unique_for) with them; from 0.3.0 the finished workflows past their
// retention, whole (core/workflows.hpp), and the failed attempts of jobs gone (core/attempt_errors.hpp).
#include "core/attempt_errors.hpp"
#include "core/workflows.hpp"
#include "maintenance/duty.hpp"
#include "pg/catalog.hpp"
#include "pg/settings.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

constexpr int k_max_batches_per_run = 20;  // then the duty yields to the others and runs again at once

SPIPlanPtr s_prune;
SPIPlanPtr s_any_finished;
SPIPlanPtr s_prune_windows;

// clang-format off
// Any row past its queue's retention is older than the shortest retention: that bound lets the BRIN
// index on finished_at skip the recent part of the table.
const plan_text k_prune = {
    "WITH doomed AS MATERIALIZED ("
    "  SELECT f.id FROM pgjq.finished_jobs f JOIN pgjq.queues q ON q.queue_name = f.queue_name"
    "   WHERE f.finished_at < (SELECT now() - min(retention) FROM pgjq.queues)"
    "     AND f.finished_at < now() - q.retention"
    "   LIMIT $1 FOR UPDATE OF f SKIP LOCKED)"
    " DELETE FROM pgjq.finished_jobs f WHERE f.id = ANY (ARRAY(SELECT id FROM doomed))",
    1, {INT4OID}};
// Whether a later prune may find anything: with no finished job, only a job that finishes brings the
// worker back (its notification asks the launcher for one).
const plan_text k_any_finished = {"SELECT EXISTS (SELECT FROM pgjq.finished_jobs)", 0, {}};
const plan_text k_prune_windows = {
    "DELETE FROM pgjq.unique_windows w WHERE (w.queue_name, w.enqueued_by, w.unique_key) IN ("
    "  SELECT queue_name, enqueued_by, unique_key FROM pgjq.unique_windows WHERE expires_at < now()"
    "   LIMIT $1 FOR UPDATE SKIP LOCKED)",
    1, {INT4OID}};
// clang-format on

duty_outcome run(maintenance_round& round)
{
    int64 pruned = 0;
    for (int batch = 0; batch < k_max_batches_per_run; batch++) {
        CHECK_FOR_INTERRUPTS();
        begin_duty_transaction("pgjq maintenance: pruning finished jobs");
        test_failure_point("prune");
        Datum values[1] = {Int32GetDatum(prune_batch_size)};
        uint64 deleted = run_plan(saved_plan(&s_prune, k_prune), values, nullptr);
        if (batch == 0 && !database_at_0_1_0())
            run_plan(saved_plan(&s_prune_windows, k_prune_windows), values, nullptr);
        if (batch == 0 && workflows_installed())
            prune_workflows(prune_batch_size);  // workflows, not jobs: not counted in what the duty pruned
        if (batch == 0)
            prune_attempt_errors(prune_batch_size);  // the failed attempts of jobs gone: nor these
        bool any_left = true;
        if (deleted < static_cast<uint64>(prune_batch_size)) {
            run_plan(saved_plan(&s_any_finished, k_any_finished), nullptr, nullptr);
            bool isnull, found;
            Datum value = first_value(&isnull, &found);
            any_left = found && !isnull && DatumGetBool(value);
        }
        commit_duty_transaction();
        pruned += static_cast<int64>(deleted);
        if (deleted < static_cast<uint64>(prune_batch_size)) {
            TimestampTz next = TimestampTzPlusMilliseconds(round.now, prune_interval_s * 1000L);
            return {next, pruned, any_left ? next : DT_NOEND};
        }
    }
    TimestampTz now = GetCurrentTimestamp();
    return {now, pruned, now};  // more to prune
}

}  // namespace

extern const pgjq::duty k_prune_duty = {"prune", run, nullptr};
