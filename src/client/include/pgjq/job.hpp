// pgjq/job.hpp: the values the client passes to and gets from the SQL API: jobs, their options,
// queue settings and statistics. Plain data; the decisions behind them are the server's.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <pgjq/export.hpp>

namespace pgjq
{

using clock = std::chrono::system_clock;
using time_point = clock::time_point;

// Mirrors the SQL enum pgjq.job_status, in its order.
enum class job_status
{
  waiting, // for its turn in its group, or for the jobs it depends on
  pending,
  claimed,
  running,
  completed,
  failed,
  cancelled
};

PGJQ_API std::string_view to_string(job_status status) noexcept;
// Throws bad_argument for a name the server does not use.
PGJQ_API job_status parse_job_status(std::string_view text);
PGJQ_API std::ostream &operator<<(std::ostream &out, job_status status);
// completed, failed (dead letter) and cancelled are final: nothing happens to the job any more.
PGJQ_API bool is_final(job_status status) noexcept;

// One row of the pgjq.jobs view (as claimed, or as looked up).
struct PGJQ_API job
{
  std::int64_t id = 0;
  std::string queue;
  std::string type;
  int priority = 0;
  job_status status = job_status::pending;
  // The jsonb payload and result as the server printed them, for callers with their own JSON library.
  std::string payload_text;
  std::optional<std::string> result_text;
  int attempts = 0;
  int max_attempts = 0;
  std::optional<int> progress;
  std::optional<std::string> current_stage;
  std::optional<std::string> last_error;
  std::optional<std::string> worker_id;
  std::optional<std::string> unique_key;
  std::optional<std::string> group_key;
  time_point run_at{};
  time_point created_at{};
  std::optional<time_point> lease_expires_at;
  // When it completed, failed for good or was cancelled.
  std::optional<time_point> finished_at;
  // Claimed under an execution timeout: the handler should be done by then (job_context::timed_out()).
  std::optional<time_point> timeout_at;
  // What the producer handed on with the job (enqueue_options::headers): a W3C traceparent and tracestate
  // to continue its trace in the handler, or other strings. Empty when it gave none, and from a database
  // before 0.3.0.
  std::map<std::string, std::string> headers;

  // Parsed on each call, so that callers who only want the text pay nothing.
  nlohmann::json payload() const;
  std::optional<nlohmann::json> result() const;
};

// Arguments of pgjq.enqueue / try_enqueue / enqueue_batch after the payload. The defaults are the SQL ones.
struct enqueue_options
{
  std::string queue = "default";
  int priority = 100;                    // higher runs first
  std::optional<time_point> run_at;      // not before; unset = now (server clock)
  std::optional<int> max_attempts;       // unset = the queue's setting
  std::optional<std::string> unique_key; // at most one unfinished job per key and queue (not for batches)
  // With unique_key: the key stays taken this long after the enqueue, even once the job has finished.
  std::optional<std::chrono::microseconds> unique_for;
  // Jobs of one group key run at most the queue's group_concurrency at a time, in enqueue order.
  std::optional<std::string> group_key;             // not for batches: see group_keys
  std::vector<std::int64_t> depends_on;             // wait until these jobs completed; cancelled if one fails for good
  std::optional<std::chrono::microseconds> timeout; // execution timeout; unset = the queue's job_timeout
  // enqueue_batch only: one key (or none) per payload, in the payloads' order; empty = none.
  std::vector<std::optional<std::string>> unique_keys;
  std::vector<std::optional<std::string>> group_keys;
  // Handed to the worker with the job (job::headers), for every job of a batch: the W3C trace context of the
  // enqueuing service ("traceparent", "tracestate") or other strings. At most 32, 4 kB in all; a traceparent
  // must be of the W3C form (the server refuses others: bad_argument). Needs pgjq 0.3.0 in the database.
  std::map<std::string, std::string> headers;
};

// Which jobs connection::jobs lists (pgjq.jobs as the role may read it), newest first; every criterion
// given must match.
struct job_listing
{
  std::optional<std::string> queue;
  std::optional<job_status> status;
  std::optional<std::string> job_type;
  std::optional<std::chrono::microseconds> older_than; // enqueued at least this long ago
  std::optional<bool> due_now; // true: only jobs due now (run_at passed); false: only jobs due later
  // Keyset paging: only jobs with a smaller id than this (the last id of the previous page). Unlike offset,
  // it costs the same on the last page of a million-job history as on the first.
  std::optional<std::int64_t> before_id;
  std::optional<time_point> finished_before; // only finished jobs, finished before this
  // Only jobs whose payload contains this JSON (PostgreSQL's @>: {"order": 17} matches every payload with
  // that key and value, among others). Read without an index: give a queue or a state too over a long history.
  std::optional<nlohmann::json> payload_contains;
  int limit = 50;          // rows returned (1-10000)
  std::int64_t offset = 0; // rows skipped first (prefer before_id over long histories)
};

// A queue's settings, as pgjq.queues holds them (create_queue and alter_queue set them). Durations are
// empty where the queue has none (no execution timeout).
struct queue_info
{
  std::string queue;
  std::optional<std::int64_t> max_pending;
  bool fifo = false;
  int max_attempts = 0;
  std::chrono::microseconds lease{}, retry_base{}, retry_cap{}, retention{}, rate_interval{};
  bool keep_completed = true;
  bool paused = false;
  int group_concurrency = 1;
  std::optional<int> max_running, rate_limit;
  std::optional<std::chrono::microseconds> job_timeout;
  time_point created_at{};
};

// A worker holding jobs of a queue now (claimed or running): its worker_id, the role that claimed them, how
// many, the oldest claim and the lease that expires first.
struct queue_worker
{
  std::string worker_id;
  std::optional<std::string> role; // empty for jobs claimed in a 0.1.0 database, which recorded no role
  std::int64_t jobs = 0;
  std::optional<time_point> oldest_claimed_at;
  std::optional<time_point> first_lease_expires_at;
};

// One failed attempt of a job, as pgjq.job_errors shows it (0.3.0).
struct job_error
{
  std::int64_t job_id = 0;
  int failure = 0; // the job's failures numbered from 1, counting on across retries by hand
  int attempt = 0; // the attempt that failed (a retry by hand counts attempts from 1 again)
  std::optional<std::string> worker_id;
  std::optional<time_point> started_at;
  time_point failed_at;
  std::string error;
  std::int64_t failures_not_kept = 0; // older failures of the job that were dropped (it keeps the newest 20)
};

// One maintenance duty of one database, as pgjq.maintenance_duties() shows it (0.2.0), with the state of the
// database's maintenance worker from pgjq.worker_status().
struct maintenance_duty
{
  std::string database;
  std::string duty;  // lease_recovery, due_jobs, schedules, prune, waiting_jobs, notification_relay, ...
  std::string state; // the database's: running, idle, waiting, restarting or stopped
  std::int64_t runs = 0, done = 0, errors = 0;
  std::optional<time_point> last_run;
  std::optional<time_point> next_run; // empty: only when woken
  std::optional<std::string> last_error;
};

// Queue settings for create_queue and alter_queue. Unset fields keep the server's default (create) or the
// current value (alter).
struct queue_options
{
  std::optional<std::int64_t> max_pending; // backpressure: unfinished jobs allowed before PJ001
  std::optional<bool> fifo;                // one job in flight at a time, in order
  std::optional<int> max_attempts;
  std::optional<std::chrono::microseconds> lease;
  std::optional<std::chrono::microseconds> retry_base; // first retry delay; doubles per attempt
  std::optional<std::chrono::microseconds> retry_cap;
  std::optional<std::chrono::microseconds> retention; // how long finished jobs are kept
  // false: a completed job is deleted at once instead of kept for `retention` (failed and cancelled jobs
  // are still kept); pgjq.jobs then no longer shows it, and its result is dropped.
  std::optional<bool> keep_completed;
  bool clear_max_pending = false;       // alter_queue only: remove the max_pending limit
  std::optional<int> group_concurrency; // jobs of one group key live at once (1: strictly one at a time)
  // The queue's jobs claimed or running at once, across all workers. alter_queue: 0 removes the cap.
  std::optional<int> max_running;
  // At most rate_limit claims per rate_interval (a bucket that refills continuously). alter_queue: 0 removes.
  std::optional<int> rate_limit;
  std::optional<std::chrono::microseconds> rate_interval;
  // Execution timeout of the queue's jobs. alter_queue: zero removes it.
  std::optional<std::chrono::microseconds> job_timeout;
};

// One row of the pgjq.queue_latency view (0.2.0): a queue's wait (due to claimed) or run (claimed to
// finished) times of the jobs finished since the server started; percentiles are estimated from histogram
// buckets (empty: no job yet).
struct queue_latency
{
  std::string queue;
  std::string measure; // "wait" or "run"
  std::int64_t jobs = 0;
  double sum_seconds = 0;
  std::optional<double> p50_seconds, p90_seconds, p99_seconds;
};

// One sample of a queue's figures, as the maintenance worker recorded it (pgjq.queue_history, 0.3.0).
struct queue_sample
{
  std::string queue;
  time_point sampled_at{};
  std::int64_t unfinished = 0, in_flight = 0;            // jobs not finished; of them, claimed or running
  std::int64_t completed = 0, failed = 0, cancelled = 0; // since the queue was created
  std::optional<std::chrono::microseconds> next_job_age; // how long the next job to claim has been due
  // The totals of its latency histograms (since the server started; empty without preload).
  std::optional<std::int64_t> wait_jobs, run_jobs;
  std::optional<double> wait_seconds, run_seconds;
};

// One row of the pgjq.queue_stats view.
struct queue_stats
{
  std::string queue;
  std::int64_t pending = 0;   // runnable now
  std::int64_t scheduled = 0; // pending with run_at in the future (includes retry backoff)
  std::int64_t claimed = 0;
  std::int64_t running = 0;
  // Totals since the queue was created (from 0.2.0's counters: pruning and deleting history do not lower them).
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::int64_t cancelled = 0;
  std::int64_t waiting = 0; // for their turn in a group or for jobs they depend on
  std::optional<std::chrono::microseconds> oldest_runnable_age;
  std::optional<std::int64_t> max_pending;
  bool fifo = false;
  bool paused = false;
};

// What a schedule does with firings missed while nothing fired (the server was down): `skip` drops those
// late by more than a minute, `run_once` enqueues one job for all of them.
enum class missed_firings
{
  skip,
  run_once
};

// Arguments of pgjq.schedule after the payload. The defaults are the SQL ones.
struct schedule_options
{
  std::string queue = "default";
  int priority = 100;
  std::optional<int> max_attempts; // unset = the queue's setting
  std::string time_zone = "UTC";   // a name of pg_timezone_names; cron times are its wall-clock times
  missed_firings missed = missed_firings::skip;
  bool paused = false;
};

// One row of pgjq.schedules.
struct schedule_info
{
  std::string name;
  std::string cron;
  std::string time_zone;
  std::string job_type;
  std::string payload_text;
  std::string queue;
  int priority = 100;
  std::optional<int> max_attempts;
  missed_firings missed = missed_firings::skip;
  bool paused = false;
  std::string scheduled_by;           // the role its jobs are enqueued as
  std::optional<time_point> next_run; // empty while paused
  std::optional<time_point> retry_at; // the firing at next_run was refused (last_error) and is tried again then
  int failures = 0;                   // refusals in a row
  std::optional<time_point> last_run;
  std::optional<std::int64_t> last_job_id;
  std::optional<std::string> last_error;
  std::optional<time_point> last_error_at;
  std::int64_t jobs_enqueued = 0;
  std::int64_t firings_missed = 0; // firings that got no job of their own (skipped, or coalesced into one)
};

// One row of the pgjq.workflows view (0.3.0): a workflow started with pgjq.start_workflow and how far its
// steps are.
struct workflow_info
{
  std::int64_t id = 0;
  std::string name;
  std::optional<std::string> key;
  std::string status;     // running, waiting (every unfinished step waits for an event or a time), completed,
                          // failed or cancelled
  std::string on_failure; // fail, continue or ignore
  int steps_total = 0, steps_finished = 0, steps_failed = 0;
  std::string started_by;
  std::optional<std::int64_t> parent_job; // the step that started it as a sub-workflow
  time_point created_at{};
  std::optional<time_point> finished_at;
};

// One step of a workflow, as pgjq.workflow_steps(id) returns it (0.3.0): the job that runs it.
struct workflow_step
{
  std::string name;
  std::int64_t job_id = 0;
  std::string queue;
  std::string job_type;
  job_status status = job_status::pending;
  std::vector<std::string> depends_on; // the names of the steps it waits for, sorted
  int attempts = 0;
  int max_attempts = 0;
  std::optional<std::string> last_error;
  std::optional<std::string> result_text; // JSON
  std::optional<time_point> run_at, created_at, started_at, finished_at;
  // Empty, or what it waits for: "steps" (its dependencies), "event NAME", "sleep" (a durable sleep) or
  // "time" (a retry's delay).
  std::optional<std::string> waiting_for;
};

// Which jobs retry_failed, cancel_jobs and delete_jobs take, besides their queue. Unset: any.
struct job_filter
{
  std::optional<std::string> job_type;
  // A time range [after, before): when the job failed (retry_failed), was enqueued (cancel_jobs) or
  // finished (delete_jobs).
  std::optional<time_point> after;
  std::optional<time_point> before;
  std::optional<job_status> status; // cancel_jobs: an unfinished status; delete_jobs: a final one
  int max_jobs = 1000;              // most jobs one call handles (1-10000)
};

// A NOTIFY received on a LISTENed channel.
struct notification
{
  std::string channel;
  std::string payload;
  int backend_pid = 0;
};

// The fixed channel names of the server's notifications.
inline constexpr const char *new_job_channel = "pgjq_new_job";           // payload: the queue name
inline constexpr const char *job_finished_channel = "pgjq_job_finished"; // payload: {"id":..,"queue":..,"status":..}

} // namespace pgjq
