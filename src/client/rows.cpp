// rows.cpp: decoding the rows that the column lists of rows.hpp select.
#include "rows.hpp"

#include <cmath>

#include "codec.hpp"

namespace pgjq
{

namespace detail
{

namespace
{

std::optional<std::string> optional_text(const result &res, int row, int col)
{
  if (res.is_null(row, col))
    return std::nullopt;
  return res.text(row, col);
}

} // namespace

job read_job(const result &res, int row)
{
  job j;
  j.id = parse_int64(res.view(row, 0));
  j.queue = res.text(row, 1);
  j.type = res.text(row, 2);
  j.priority = static_cast<int>(parse_int64(res.view(row, 3)));
  j.status = parse_job_status(res.view(row, 4));
  j.payload_text = res.text(row, 5);
  j.result_text = optional_text(res, row, 6);
  j.attempts = static_cast<int>(parse_int64(res.view(row, 7)));
  j.max_attempts = static_cast<int>(parse_int64(res.view(row, 8)));
  if (!res.is_null(row, 9))
    j.progress = static_cast<int>(parse_int64(res.view(row, 9)));
  j.current_stage = optional_text(res, row, 10);
  j.last_error = optional_text(res, row, 11);
  j.worker_id = optional_text(res, row, 12);
  j.unique_key = optional_text(res, row, 13);
  if (!res.is_null(row, 14))
    j.run_at = parse_epoch(res.view(row, 14));
  if (!res.is_null(row, 15))
    j.created_at = parse_epoch(res.view(row, 15));
  if (!res.is_null(row, 16))
    j.lease_expires_at = parse_epoch(res.view(row, 16));
  if (!res.is_null(row, 17))
    j.finished_at = parse_epoch(res.view(row, 17));
  j.group_key = optional_text(res, row, 18);
  if (!res.is_null(row, 19))
    j.timeout_at = parse_epoch(res.view(row, 19));
  if (res.columns() > 20 && !res.is_null(row, 20))
    j.headers = decode_headers(res.view(row, 20));
  return j;
}

namespace
{

std::optional<time_point> optional_epoch(const result &res, int row, int col)
{
  if (res.is_null(row, col))
    return std::nullopt;
  return parse_epoch(res.view(row, col));
}

} // namespace

schedule_info read_schedule(const result &res, int row)
{
  schedule_info s;
  s.name = res.text(row, 0);
  s.cron = res.text(row, 1);
  s.time_zone = res.text(row, 2);
  s.job_type = res.text(row, 3);
  s.payload_text = res.text(row, 4);
  s.queue = res.text(row, 5);
  s.priority = static_cast<int>(parse_int64(res.view(row, 6)));
  if (!res.is_null(row, 7))
    s.max_attempts = static_cast<int>(parse_int64(res.view(row, 7)));
  s.missed = res.view(row, 8) == "run_once" ? missed_firings::run_once : missed_firings::skip;
  s.paused = parse_bool(res.view(row, 9));
  s.scheduled_by = res.text(row, 10);
  s.next_run = optional_epoch(res, row, 11);
  s.retry_at = optional_epoch(res, row, 12);
  s.failures = static_cast<int>(parse_int64(res.view(row, 13)));
  s.last_run = optional_epoch(res, row, 14);
  if (!res.is_null(row, 15))
    s.last_job_id = parse_int64(res.view(row, 15));
  s.last_error = optional_text(res, row, 16);
  s.last_error_at = optional_epoch(res, row, 17);
  s.jobs_enqueued = parse_int64(res.view(row, 18));
  s.firings_missed = parse_int64(res.view(row, 19));
  return s;
}

maintenance_duty read_maintenance_duty(const result &res, int row)
{
  maintenance_duty d;
  d.database = res.text(row, 0);
  d.duty = res.text(row, 1);
  d.state = res.text(row, 2);
  d.runs = parse_int64(res.view(row, 3));
  d.done = parse_int64(res.view(row, 4));
  d.errors = parse_int64(res.view(row, 5));
  d.last_run = optional_epoch(res, row, 6);
  d.next_run = optional_epoch(res, row, 7);
  d.last_error = optional_text(res, row, 8);
  return d;
}

queue_info read_queue_info(const result &res, int row)
{
  const auto duration = [&](int col) {
    return std::chrono::microseconds(static_cast<std::int64_t>(std::llround(parse_double(res.view(row, col)) * 1e6)));
  };
  queue_info q;
  q.queue = res.text(row, 0);
  if (!res.is_null(row, 1))
    q.max_pending = parse_int64(res.view(row, 1));
  q.fifo = parse_bool(res.view(row, 2));
  q.max_attempts = static_cast<int>(parse_int64(res.view(row, 3)));
  q.lease = duration(4);
  q.retry_base = duration(5);
  q.retry_cap = duration(6);
  q.retention = duration(7);
  q.keep_completed = parse_bool(res.view(row, 8));
  q.paused = parse_bool(res.view(row, 9));
  q.group_concurrency = static_cast<int>(parse_int64(res.view(row, 10)));
  if (!res.is_null(row, 11))
    q.max_running = static_cast<int>(parse_int64(res.view(row, 11)));
  if (!res.is_null(row, 12))
    q.rate_limit = static_cast<int>(parse_int64(res.view(row, 12)));
  q.rate_interval = duration(13);
  if (!res.is_null(row, 14))
    q.job_timeout = duration(14);
  q.created_at = *optional_epoch(res, row, 15);
  return q;
}

job_error read_job_error(const result &res, int row)
{
  job_error e;
  e.job_id = parse_int64(res.view(row, 0));
  e.failure = static_cast<int>(parse_int64(res.view(row, 1)));
  e.attempt = static_cast<int>(parse_int64(res.view(row, 2)));
  e.worker_id = optional_text(res, row, 3);
  e.started_at = optional_epoch(res, row, 4);
  e.failed_at = *optional_epoch(res, row, 5);
  e.error = res.text(row, 6);
  e.failures_not_kept = parse_int64(res.view(row, 7));
  return e;
}

queue_worker read_queue_worker(const result &res, int row)
{
  queue_worker w;
  w.worker_id = res.text(row, 0);
  w.role = optional_text(res, row, 1);
  w.jobs = parse_int64(res.view(row, 2));
  w.oldest_claimed_at = optional_epoch(res, row, 3);
  w.first_lease_expires_at = optional_epoch(res, row, 4);
  return w;
}

queue_latency read_latency(const result &res, int row)
{
  queue_latency l;
  l.queue = res.text(row, 0);
  l.measure = res.text(row, 1);
  l.jobs = parse_int64(res.view(row, 2));
  l.sum_seconds = parse_double(res.view(row, 3));
  std::optional<double> *percentiles[] = {&l.p50_seconds, &l.p90_seconds, &l.p99_seconds};
  for (int i = 0; i < 3; ++i)
    if (!res.is_null(row, 4 + i))
      *percentiles[i] = parse_double(res.view(row, 4 + i));
  return l;
}

queue_sample read_queue_sample(const result &res, int row)
{
  queue_sample s;
  s.queue = res.text(row, 0);
  s.sampled_at = parse_epoch(res.view(row, 1));
  s.unfinished = parse_int64(res.view(row, 2));
  s.in_flight = parse_int64(res.view(row, 3));
  s.completed = parse_int64(res.view(row, 4));
  s.failed = parse_int64(res.view(row, 5));
  s.cancelled = parse_int64(res.view(row, 6));
  if (!res.is_null(row, 7))
    s.next_job_age = std::chrono::microseconds(parse_int64(res.view(row, 7)));
  if (!res.is_null(row, 8))
    s.wait_jobs = parse_int64(res.view(row, 8));
  if (!res.is_null(row, 9))
    s.wait_seconds = parse_double(res.view(row, 9));
  if (!res.is_null(row, 10))
    s.run_jobs = parse_int64(res.view(row, 10));
  if (!res.is_null(row, 11))
    s.run_seconds = parse_double(res.view(row, 11));
  return s;
}

queue_stats read_stats(const result &res, int row)
{
  queue_stats s;
  s.queue = res.text(row, 0);
  s.pending = parse_int64(res.view(row, 1));
  s.scheduled = parse_int64(res.view(row, 2));
  s.claimed = parse_int64(res.view(row, 3));
  s.running = parse_int64(res.view(row, 4));
  s.completed = parse_int64(res.view(row, 5));
  s.failed = parse_int64(res.view(row, 6));
  s.cancelled = parse_int64(res.view(row, 7));
  if (!res.is_null(row, 8))
    s.oldest_runnable_age = std::chrono::microseconds(parse_int64(res.view(row, 8)));
  if (!res.is_null(row, 9))
    s.max_pending = parse_int64(res.view(row, 9));
  s.fifo = parse_bool(res.view(row, 10));
  s.paused = parse_bool(res.view(row, 11));
  s.waiting = parse_int64(res.view(row, 12));
  return s;
}

workflow_info read_workflow(const result &res, int row)
{
  workflow_info w;
  w.id = parse_int64(res.view(row, 0));
  w.name = res.text(row, 1);
  w.key = optional_text(res, row, 2);
  w.status = res.text(row, 3);
  w.on_failure = res.text(row, 4);
  w.steps_total = static_cast<int>(parse_int64(res.view(row, 5)));
  w.steps_finished = static_cast<int>(parse_int64(res.view(row, 6)));
  w.steps_failed = static_cast<int>(parse_int64(res.view(row, 7)));
  w.started_by = res.text(row, 8);
  if (!res.is_null(row, 9))
    w.parent_job = parse_int64(res.view(row, 9));
  w.created_at = parse_epoch(res.view(row, 10));
  w.finished_at = optional_epoch(res, row, 11);
  return w;
}

workflow_step read_workflow_step(const result &res, int row)
{
  workflow_step s;
  s.name = res.text(row, 0);
  s.job_id = parse_int64(res.view(row, 1));
  s.queue = res.text(row, 2);
  s.job_type = res.text(row, 3);
  s.status = parse_job_status(res.view(row, 4));
  if (!res.is_null(row, 5))
    s.depends_on = nlohmann::json::parse(res.view(row, 5)).get<std::vector<std::string>>();
  s.attempts = static_cast<int>(parse_int64(res.view(row, 6)));
  s.max_attempts = static_cast<int>(parse_int64(res.view(row, 7)));
  s.last_error = optional_text(res, row, 8);
  s.result_text = optional_text(res, row, 9);
  s.run_at = optional_epoch(res, row, 10);
  s.created_at = optional_epoch(res, row, 11);
  s.started_at = optional_epoch(res, row, 12);
  s.finished_at = optional_epoch(res, row, 13);
  s.waiting_for = optional_text(res, row, 14);
  return s;
}

step_result read_step_result(const result &res, int row)
{
  step_result s;
  s.step_name = res.text(row, 0);
  s.job_id = parse_int64(res.view(row, 1));
  s.status = parse_job_status(res.view(row, 2));
  s.result_text = optional_text(res, row, 3);
  s.last_error = optional_text(res, row, 4);
  return s;
}

} // namespace detail
} // namespace pgjq
