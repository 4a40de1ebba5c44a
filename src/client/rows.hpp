// rows.hpp (internal): the column lists the client selects (statements.hpp uses them) and the decoding
// of their rows (rows.cpp), kept side by side so that a query and its reader cannot drift apart.
#pragma once

#include <pgjq/job.hpp>
#include <pgjq/workflow.hpp>

#include "result.hpp"

namespace pgjq::detail
{

// Columns of pgjq.jobs (and of claim_job_batch, which returns pgjq.jobs rows) read by read_job.
#define PGJQ_JOB_COLUMNS                                                                                               \
  "id, queue_name, job_type, priority, status, payload, result, attempts, max_attempts, progress, "                    \
  "current_stage, last_error, worker_id, unique_key, extract(epoch from run_at), "                                     \
  "extract(epoch from created_at), extract(epoch from lease_expires_at), "                                             \
  "extract(epoch from coalesce(completed_at, failed_at, cancelled_at)), group_key, extract(epoch from timeout_at)"
// From 0.3.0, whose jobs carry headers: the same, then the headers (read_job reads them when present).
#define PGJQ_JOB_COLUMNS_WITH_HEADERS PGJQ_JOB_COLUMNS ", headers"

// Columns of pgjq.queue_stats read by read_stats.
#define PGJQ_STATS_COLUMNS                                                                                             \
  "queue_name, pending, scheduled, claimed, running, completed, failed, cancelled, "                                   \
  "(extract(epoch from oldest_runnable_age) * 1000000)::bigint, max_pending, fifo, paused, waiting"

// Columns of pgjq.schedules read by read_schedule.
#define PGJQ_SCHEDULE_COLUMNS                                                                                          \
  "schedule_name, cron, time_zone, job_type, payload, queue_name, priority, max_attempts, missed, paused, "            \
  "scheduled_by, extract(epoch from next_run), extract(epoch from retry_at), failures, extract(epoch from last_run), " \
  "last_job_id, last_error, extract(epoch from last_error_at), jobs_enqueued, firings_missed"

// Columns of pgjq.workflows (0.3.0) read by read_workflow.
#define PGJQ_WORKFLOW_COLUMNS                                                                                          \
  "id, workflow_name, workflow_key, status, on_failure, steps_total, steps_finished, steps_failed, "                   \
  "started_by::text, parent_job, extract(epoch from created_at), extract(epoch from finished_at)"

// Columns of pgjq.workflow_steps(id) (0.3.0) read by read_workflow_step.
#define PGJQ_WORKFLOW_STEP_COLUMNS                                                                                     \
  "step_name, job_id, queue_name, job_type, status, to_jsonb(depends_on)::text, attempts, max_attempts, last_error, "  \
  "result, extract(epoch from run_at), extract(epoch from created_at), extract(epoch from started_at), "               \
  "extract(epoch from finished_at), waiting_for"

job read_job(const result &res, int row);
schedule_info read_schedule(const result &res, int row);
// The columns of calls::maintenance, in its order.
maintenance_duty read_maintenance_duty(const result &res, int row);
job_error read_job_error(const result &res, int row);
queue_worker read_queue_worker(const result &res, int row);
queue_info read_queue_info(const result &res, int row);
// The columns of calls::latency, in its order.
queue_latency read_latency(const result &res, int row);
queue_sample read_queue_sample(const result &res, int row);
queue_stats read_stats(const result &res, int row);
workflow_info read_workflow(const result &res, int row);
workflow_step read_workflow_step(const result &res, int row);
// The columns of calls::step_results, in its order.
step_result read_step_result(const result &res, int row);

} // namespace pgjq::detail
