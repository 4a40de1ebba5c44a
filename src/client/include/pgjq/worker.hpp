// pgjq/worker.hpp: the worker runtime. It LISTENs, claims in batches, runs the registered handlers,
// completes or fails each job, heartbeats held leases (or holds the batch in its transaction, see
// worker_options::in_transaction), reconnects after a server restart and stops gracefully. It decides
// nothing about the queue itself: every transition is a call of the SQL API.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <pgjq/connection.hpp>
#include <pgjq/job.hpp>

namespace pgjq
{

namespace detail
{
struct held_job;
}

// What a handler sees of the job it runs. Used only on the handler's own thread.
class PGJQ_API job_context
{
public:
  // Built by the worker for each job it runs.
  job_context(const pgjq::job &job, connection &conn, std::shared_ptr<detail::held_job> held,
              const std::atomic<bool> &stopping);

  const pgjq::job &job() const noexcept { return m_job; }
  nlohmann::json payload() const { return m_job.payload(); }
  const std::string &worker_id() const noexcept;

  // Reports progress (0..100) through pgjq.progress. Throws job_cancelled or not_lease_holder when the job
  // is no longer ours, which the worker treats as "stop, do not complete". A lost connection is not the
  // handler's problem: the report is dropped and the worker reconnects when the handler returns.
  // Leased claims only: throws usage_error in in-transaction mode.
  void progress(int percent, const std::optional<std::string> &current_stage = std::nullopt);
  // Completes the job with this result (one extra call) instead of in the batch's complete_batch.
  // Leased claims only: throws usage_error in in-transaction mode, where the handler writes its results
  // through transaction() instead.
  // Throws bad_argument for what JSON text cannot hold (NaN, Infinity, a NUL byte, text that is not UTF-8:
  // docs/client.md), so that the handler learns it before the job is reported.
  void set_result(const nlohmann::json &result);
  void set_result_raw(std::string result_json);
  const std::optional<std::string> &result() const noexcept { return m_result; }

  // In-transaction mode only (worker_options::in_transaction; usage_error otherwise): the worker's session,
  // inside the transaction that holds this job and will record its outcome. What the handler writes
  // through it commits together with the job's completion, or not at all: the first call opens a
  // savepoint, and if the handler throws (or leaves the transaction aborted) its writes are rolled back to
  // it before the failure is recorded. The handler must not COMMIT, ROLLBACK or release that savepoint.
  connection &transaction();

  // Workflow steps (0.3.0): the job's own calls of connection's step-side API (see there). Leased claims
  // only: checkpoint, wait_for_event, sleep_until and add_steps throw usage_error in in-transaction mode,
  // whose jobs have no lease for the server to check.
  // The steps this one depends on, by name: one page, or every page.
  std::vector<step_result> step_results(const std::optional<std::string> &after_step = std::nullopt,
                                        int max_results = 1000);
  std::vector<step_result> all_step_results(int page_size = 1000);
  // Records value under name the first time; returns what is recorded (the first value, on a later attempt).
  nlohmann::json checkpoint(const std::string &name, const nlohmann::json &value);
  nlohmann::json checkpoints();
  // The event's payload, or empty: the job is parked until the event comes (or the timeout passes, after
  // which the same call throws event_timed_out). Parked, the handler returns and the worker neither
  // completes nor fails the job, whatever the handler does then (returns, throws, sets a result): it is
  // claimed again when the event comes, and the handler runs from the start, so the same call then returns
  // the payload. Every call that acts on a parked job throws usage_error.
  //   std::optional<nlohmann::json> approval = job.wait_for_event("approved:" + id);
  //   if (!approval)
  //     return; // parked
  std::optional<nlohmann::json> wait_for_event(const std::string &event_name,
                                               std::chrono::microseconds timeout = std::chrono::hours(24 * 7));
  // True: the job slept until wake_at (go on); false: parked until then, as wait_for_event parks it.
  bool sleep_until(const std::string &name, time_point wake_at);
  // Adds steps to this job's workflow; returns their job ids.
  std::vector<std::int64_t> add_steps(const step_list &steps);
  // wait_for_event or sleep_until parked the job: return from the handler.
  bool parked() const noexcept;

  // The job was cancelled (seen by a heartbeat or a progress call): a long handler should return early.
  bool cancelled() const noexcept;
  // The job ran past its execution timeout (the queue's job_timeout or its own; known from the claim, and
  // from the server's PJ005 answer to a heartbeat or progress): the attempt is failed by the server whatever
  // the handler does now, so it should stop.
  bool timed_out() const noexcept;
  // Any reason to stop: cancelled, timed out, lease lost, parked, or the worker shutting down. What a long handler
  // checks between steps.
  bool should_stop() const noexcept;
  // The worker is shutting down: a long handler may return early by throwing; the job is then failed and
  // retried according to the queue's settings.
  bool stop_requested() const noexcept { return m_stopping.load(); }

private:
  // Throws usage_error if the job is parked: nothing may act on it any more in this run.
  void require_not_parked(const char *method) const;
  // Throws usage_error in in-transaction mode, or if the job is parked.
  void require_step_call(const char *method) const;

  const pgjq::job &m_job;
  connection &m_conn;
  std::shared_ptr<detail::held_job> m_held;
  const std::atomic<bool> &m_stopping;
  std::optional<std::string> m_result;
};

// Runs the job. Returning completes it; throwing fails it with the exception's message (retried or
// dead-lettered by the server according to the queue's max_attempts and backoff). A job the handler parked
// (job_context::wait_for_event, sleep_until) is neither completed nor failed.
using handler = std::function<void(job_context &)>;

struct worker_options
{
  std::string conninfo;
  // Through a pooler in transaction mode: session.pooled = true, and session.listen_conninfo a direct
  // connection for LISTEN (without one, an idle runner claims again every idle_timeout).
  connection_options session;
  std::string queue = "default";
  // Lease holder name; each runner thread appends "/<n>" when concurrency > 1. Default: host:pid.
  std::string worker_id;
  int concurrency = 1; // runner threads, each with its own connection
  int batch_size = 10; // jobs per claim
  // false: leased claims (claim, heartbeat, complete_and_claim): a job's claim is committed at once, so it
  // suits long jobs, reports progress and survives the worker's session. true: in-transaction claims
  // (pgjq.claim_in_transaction): each batch is held by the runner's open transaction, which records every
  // outcome and commits once per batch (complete_commit_and_claim); a crash or a lost session releases the
  // batch at once, and a handler's own writes through job_context::transaction() commit atomically with
  // its job's completion. For short jobs: the transaction, and its snapshot, stay open while the batch
  // runs. No heartbeats, no progress, no set_result. Every handler that writes opens a subtransaction
  // kept until the batch commits; beyond 64 in one transaction PostgreSQL's snapshots slow down
  // server-wide, so keep batch_size at most 64 when handlers write. A write that breaks a deferred
  // constraint fails only at COMMIT and takes the whole batch with it: check those inside the handler.
  bool in_transaction = false;
  std::chrono::milliseconds idle_timeout{5000};        // claim again after this long without a NOTIFY
  std::chrono::milliseconds heartbeat_interval{30000}; // keep well below the queue's lease
  std::chrono::milliseconds reconnect_min{100};        // reconnect backoff doubles from min up to max
  std::chrono::milliseconds reconnect_max{5000};
  bool handle_signals = true; // SIGINT/SIGTERM stop run() gracefully
  // Where the worker reports what it could not do (lost leases, reconnects). Default: stderr.
  std::function<void(const std::string &)> log;
};

// Counters for monitoring and tests.
struct worker_stats
{
  std::uint64_t claimed = 0;
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;    // handler errors reported with pgjq.fail
  std::uint64_t released = 0;  // claimed but not run at shutdown, handed back at once (leased: failed
                               // with retry_in 0; in-transaction: left unreported, so untouched)
  std::uint64_t abandoned = 0; // neither completed nor failed: cancelled or lease lost while held, or
                               // (in-transaction) rolled back with their transaction: runnable again
  std::uint64_t parked = 0;    // workflow steps parked by wait_for_event or sleep_until: claimed again later
  std::uint64_t heartbeats = 0;
  std::uint64_t idle_waits = 0; // times a runner went to sleep on LISTEN
  std::uint64_t reconnects = 0;
};

class PGJQ_API worker
{
public:
  explicit worker(worker_options options);
  worker(const worker &) = delete;
  worker &operator=(const worker &) = delete;
  ~worker();

  // Registers the handler of a job type; call before run(). Only registered types are claimed.
  void on(const std::string &job_type, handler h);

  // Runs until stop() or (with handle_signals) SIGINT/SIGTERM. On the way out each runner finishes the
  // handler it is in, completes what succeeded, and fails the jobs of its batch it did not start with
  // retry_in 0, so they go back to pending at once. Returns when every runner has stopped.
  void run();
  // Thread-safe; returns at once (run() returns when the runners are done).
  void stop() noexcept;
  bool stopping() const noexcept;

  worker_stats stats() const;

  struct impl;

private:
  std::unique_ptr<impl> m_impl;
};

} // namespace pgjq
