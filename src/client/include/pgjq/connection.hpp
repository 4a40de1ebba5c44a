// pgjq/connection.hpp: one database session speaking the pgjq SQL API. Every method is one call of a SQL
// function (prepared once per session, parameters bound), so the queue's rules live in one place: the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <pgjq/error.hpp>
#include <pgjq/job.hpp>
#include <pgjq/workflow.hpp>

// libpq's handle, declared as libpq-fe.h does, so that this header does not need libpq's.
typedef struct pg_conn PGconn;

namespace pgjq
{

namespace detail
{
class result;
struct statement;
} // namespace detail

// How a connection uses its session.
struct connection_options
{
  // For a pooler in transaction mode (PgBouncer's pool_mode = transaction), where consecutive transactions
  // may run on different server sessions, each also used by other clients: keep no state in the session.
  // Every call is sent with its SQL and parameter types (the unnamed statement) instead of a named
  // prepared statement, chained calls wait for each transaction's end before sending the next, and LISTEN
  // goes to listen_conninfo. Costs a parse per call.
  bool pooled = false;
  // pooled only: a direct connection to the server (not through the pooler) on which to LISTEN; opened on
  // the first listen(). Empty: nothing can be LISTENed (listen() throws usage_error), so a worker claims
  // again every idle_timeout and wait_for_completion re-reads the job at growing intervals instead.
  std::string listen_conninfo;
};

// Move-only RAII session. Not thread-safe: give each thread its own connection.
class PGJQ_API connection
{
public:
  // Opens (and owns) a session; throws connection_lost when the server cannot be reached.
  explicit connection(const std::string &conninfo, const connection_options &options = {});
  // Borrows the caller's session without taking ownership, so that enqueue can run inside the caller's
  // own transaction: if it rolls back, the job never existed. The caller keeps it open while this lives.
  explicit connection(PGconn *borrowed, const connection_options &options = {});

  connection(connection &&other) noexcept;
  connection &operator=(connection &&other) noexcept;
  connection(const connection &) = delete;
  connection &operator=(const connection &) = delete;
  ~connection();

  PGconn *native_handle() const noexcept { return m_conn; }
  bool is_open() const noexcept;
  // Reopens an owned session after connection_lost, then LISTENs again on the channels it listened to.
  void reconnect();
  const connection_options &options() const noexcept { return m_options; }
  // False for a pooled connection without listen_conninfo.
  bool can_listen() const noexcept { return !m_options.pooled || !m_options.listen_conninfo.empty(); }

  // Producers ----------------------------------------------------------------------------------------
  std::int64_t enqueue(const std::string &job_type, const nlohmann::json &payload = nlohmann::json::object(),
                       const enqueue_options &options = {});
  std::int64_t enqueue_raw(const std::string &job_type, const std::string &payload_json,
                           const enqueue_options &options = {});
  // Empty when the queue is full (PJ001) instead of throwing queue_full.
  std::optional<std::int64_t> try_enqueue(const std::string &job_type,
                                          const nlohmann::json &payload = nlohmann::json::object(),
                                          const enqueue_options &options = {});
  std::optional<std::int64_t> try_enqueue_raw(const std::string &job_type, const std::string &payload_json,
                                              const enqueue_options &options = {});
  // One call, all or nothing; the ids come back in the payloads' order. options.unique_key is not allowed.
  std::vector<std::int64_t> enqueue_batch(const std::string &job_type, const std::vector<nlohmann::json> &payloads,
                                          const enqueue_options &options = {});
  // payloads_json is a JSON array whose element i becomes job i.
  std::vector<std::int64_t> enqueue_batch_raw(const std::string &job_type, const std::string &payloads_json,
                                              const enqueue_options &options = {});
  // True if it cancelled the job, false if the job had already finished.
  bool cancel(std::int64_t job_id);

  // Workers ------------------------------------------------------------------------------------------
  // Leases up to batch_size runnable jobs of the given types (all types when empty) to worker_id.
  std::vector<job> claim(const std::string &worker_id, const std::vector<std::string> &job_types = {},
                         int batch_size = 10, const std::string &queue = "default");
  // A worker's loop in one call and one commit: completes completed_ids (all or nothing, as complete_batch;
  // empty completes nothing) and claims the next batch (as claim).
  std::vector<job> complete_and_claim(const std::string &worker_id, const std::vector<std::int64_t> &completed_ids,
                                      const std::vector<std::string> &job_types = {}, int batch_size = 10,
                                      const std::string &queue = "default");

  // In-transaction claims (pgjq.claim_in_transaction): the jobs are held by the open transaction's row
  // locks, nothing is written until they are reported, and a rollback or a lost session releases them at
  // once. No lease, heartbeat or progress. Report every job before COMMIT.
  // Claims in the transaction the caller opened (usage: BEGIN, claim, handle, report, COMMIT).
  std::vector<job> claim_in_transaction(const std::string &worker_id, const std::vector<std::string> &job_types = {},
                                        int batch_size = 10, const std::string &queue = "default");
  // BEGIN and claim_in_transaction in one round trip. When nothing is claimed the transaction is ended
  // again, so the caller can wait for a notification. Throws usage_error if a transaction is already open.
  std::vector<job> begin_and_claim(const std::string &worker_id, const std::vector<std::string> &job_types = {},
                                   int batch_size = 10, const std::string &queue = "default");
  // All or nothing, as complete_batch; returns the count.
  int complete_in_transaction(const std::vector<std::int64_t> &job_ids, const std::string &worker_id);
  // complete_in_transaction and COMMIT in one round trip. If the completion fails, the transaction is
  // rolled back (the jobs are runnable again) and the error is thrown.
  int complete_and_commit(const std::vector<std::int64_t> &job_ids, const std::string &worker_id);
  // A worker's loop in one round trip per batch: complete_in_transaction(completed_ids), COMMIT, BEGIN and
  // claim_in_transaction. Returns the next batch, held by the new transaction (closed again when empty).
  // Needs an open transaction. If the completion fails, the transaction is rolled back and nothing is
  // claimed; if only the claim fails, the completion is committed. Either way the error is thrown.
  std::vector<job> complete_commit_and_claim(const std::vector<std::int64_t> &completed_ids,
                                             const std::string &worker_id,
                                             const std::vector<std::string> &job_types = {}, int batch_size = 10,
                                             const std::string &queue = "default");
  // As fail, for a job claimed in this transaction; its attempt counts. Commit afterwards.
  job_status fail_in_transaction(std::int64_t job_id, const std::string &worker_id, const std::string &error_message,
                                 std::optional<std::chrono::microseconds> retry_in = std::nullopt);

  void complete(std::int64_t job_id, const std::string &worker_id);
  void complete(std::int64_t job_id, const std::string &worker_id, const nlohmann::json &result);
  void complete_raw(std::int64_t job_id, const std::string &worker_id, const std::string &result_json);
  // All or nothing: throws not_lease_holder / job_cancelled if any id is not held. Returns the count.
  int complete_batch(const std::vector<std::int64_t> &job_ids, const std::string &worker_id);
  // Returns pending when the job will be retried (after retry_in, or the queue's backoff when unset),
  // failed when it is dead-lettered.
  job_status fail(std::int64_t job_id, const std::string &worker_id, const std::string &error_message,
                  std::optional<std::chrono::microseconds> retry_in = std::nullopt);
  void progress(std::int64_t job_id, const std::string &worker_id, int percent,
                const std::optional<std::string> &current_stage = std::nullopt);
  // Extends the lease; returns the new expiry.
  time_point heartbeat(std::int64_t job_id, const std::string &worker_id);

  // Waiting ------------------------------------------------------------------------------------------
  // The job once it is final (completed, failed or cancelled), or empty after the timeout. LISTENs on
  // pgjq_job_finished, then reads the job once to close the race with a job that finished before the
  // LISTEN, then sleeps on the socket: no polling. A notice can still be missed (a session lost meanwhile,
  // a relay that could not deliver), so the job is read again at the deadline, and after reconnecting an
  // owned session that was lost during the wait (it retries until the deadline, then throws
  // connection_lost). A pooled connection without listen_conninfo reads the job at growing intervals
  // (50 ms to 1 s) instead. Throws job_not_found for an unknown id, usage_error inside a transaction block
  // (notifications are only delivered between transactions). A job of a queue
  // with keep_completed = false has no row once completed: it comes back as last seen unfinished, with
  // status completed and no result (or with only id, queue and status if it completed between the LISTEN
  // and the first read), and is job_not_found if it had completed before the wait began. (A job deleted
  // with its queue by drop_queue(force => true) during the wait can be mistaken for a completed one.)
  std::optional<job> wait_for_completion(std::int64_t job_id, std::chrono::milliseconds timeout);

  // Notifications ------------------------------------------------------------------------------------
  void listen(const std::string &channel);
  void unlisten(const std::string &channel);
  // The next notification on a LISTENed channel, or empty after the timeout, or as soon as interrupt_fd
  // (if >= 0) becomes readable: a worker's stop pipe. Throws connection_lost if the session dies meanwhile.
  std::optional<notification> wait_for_notification(std::chrono::milliseconds timeout, int interrupt_fd = -1);

  // Reading ------------------------------------------------------------------------------------------
  std::optional<job> get_job(std::int64_t job_id);
  // The job's failed attempts, oldest first (pgjq.job_errors, 0.3.0): empty for a job that never failed or
  // that this role may not read, and in a database still at 0.2.0 or 0.1.0.
  std::vector<job_error> job_errors(std::int64_t job_id);
  // The jobs that match, newest first (throws bad_argument for a limit outside 1-10000 or a negative offset).
  std::vector<job> jobs(const job_listing &listing);
  // How many jobs match (listing's limit and offset aside), counting no further than at_most (1-10000000):
  // a figure for a confirmation that never scans more than that. Throws bad_argument outside that range.
  std::int64_t count_jobs(const job_listing &listing, std::int64_t at_most);
  // pgjq.metrics(): the queues' figures in the Prometheus text format.
  std::string metrics();
  // Every maintenance duty of every database pgjq serves (needs admin or observer on every queue).
  std::vector<maintenance_duty> maintenance();
  // Whether a maintenance worker serves this database (pgjq preloaded, so its launcher runs, or
  // pgjq.start_worker() called here): without one, schedules do not fire and job timeouts are not enforced.
  // Empty when this role may not read pgjq.worker_status() (admin or observer of every queue).
  std::optional<bool> maintenance_served();
  std::vector<queue_stats> stats();
  // The queue's settings, or empty when there is no such queue.
  std::optional<queue_info> get_queue(const std::string &queue);
  // The workers holding its jobs now (as pgjq.jobs shows them to this role), those holding most first.
  std::vector<queue_worker> queue_workers(const std::string &queue);
  // pgjq.holds_capability (0.3.0): whether this session's role holds the capability (producer, worker,
  // admin, observer) for the queue. Empty in a database still at 0.2.0 or 0.1.0, which cannot say.
  std::optional<bool> holds_capability(const std::string &capability, const std::string &queue);
  // pgjq.queue_latency (0.2.0): wait and run times per queue the role may read.
  std::vector<queue_latency> latency();
  // pgjq.queue_history (0.3.0): the samples of the queues the role may read taken at or after `since` and
  // before `until`, oldest first, at most 100000. Empty in a database before 0.3.0, which keeps none.
  std::vector<queue_sample> queue_history(time_point since, time_point until);
  std::optional<queue_stats> stats(const std::string &queue);

  // Administration -----------------------------------------------------------------------------------
  void create_queue(const std::string &queue, const queue_options &options = {});
  void alter_queue(const std::string &queue, const queue_options &options);
  void drop_queue(const std::string &queue, bool force = false);
  void pause_queue(const std::string &queue);
  void resume_queue(const std::string &queue);
  // Sends a failed or cancelled job back to pending.
  void retry(std::int64_t job_id);
  // Returns jobs whose lease expired to pending (the maintenance worker also does this); returns the count.
  int recover_stale();
  // Deletes finished jobs older than the given age; returns the count.
  std::int64_t prune(std::chrono::microseconds older_than);

  // Periodic jobs ------------------------------------------------------------------------------------
  // Creates the schedule, or replaces the one of that name (keeping its history); returns its first firing
  // (empty when paused). Its jobs are enqueued as this session's role, which must be a producer of the queue.
  std::optional<time_point> schedule(const std::string &name, const std::string &cron, const std::string &job_type,
                                     const nlohmann::json &payload = nlohmann::json::object(),
                                     const schedule_options &options = {});
  // False when there is no such schedule (that this role may see).
  bool unschedule(const std::string &name);
  bool pause_schedule(const std::string &name);
  // Fires next at the first firing after now; what it missed while paused is not made up for.
  bool resume_schedule(const std::string &name);
  // The schedules this role may read, by name.
  std::vector<schedule_info> schedules();
  std::optional<schedule_info> get_schedule(const std::string &name);
  // The next `count` firings of a cron expression in a time zone, after `after` (unset: now).
  std::vector<time_point> next_firings(const std::string &cron, const std::string &time_zone = "UTC",
                                       std::optional<time_point> after = std::nullopt, int count = 10);

  // Bulk operations (a queue's admins) -------------------------------------------------------------------
  // Each handles at most filter.max_jobs jobs, skipping rows other transactions hold, and returns how many
  // it handled: call again until 0 (each call is its own transaction unless the caller opened one).
  // Failed jobs back to pending (filter.status must be unset).
  std::int64_t retry_failed(const std::string &queue, const job_filter &filter = {});
  // Unfinished jobs cancelled; their workers learn it at their next call.
  std::int64_t cancel_jobs(const std::string &queue, const job_filter &filter = {});
  // Finished jobs deleted from the history.
  std::int64_t delete_jobs(const std::string &queue, const job_filter &filter = {});

  // Workflows (0.3.0) ----------------------------------------------------------------------------------
  // The workflows this role may read (pgjq.workflows), newest first; status (running, waiting, completed,
  // failed, cancelled) unset: any. Throws bad_argument for a limit outside 1-10000.
  std::vector<workflow_info> workflows(const std::optional<std::string> &status = std::nullopt, int limit = 50);
  // Empty for an unknown workflow or one this role may not read.
  std::optional<workflow_info> get_workflow(std::int64_t workflow_id);
  // Its steps, by job id (empty for an unknown or unreadable workflow).
  std::vector<workflow_step> workflow_steps(std::int64_t workflow_id);
  // pgjq.cancel_workflow: its unfinished steps cancelled; returns how many.
  std::int64_t cancel_workflow(std::int64_t workflow_id);
  // pgjq.retry_workflow: its failed and cancelled steps back to pending (their dependents wait again);
  // returns how many.
  std::int64_t retry_workflow(std::int64_t workflow_id);
  // Starts the workflow; returns its id. Its steps without `after` become runnable when the transaction
  // commits, so inside the caller's own transaction (a borrowed session) a rollback leaves no workflow.
  // With a key, an unfinished workflow of this role with that key is returned instead and nothing is added.
  // Throws bad_argument for steps the server refuses (a cycle, a bound), permission_denied without the
  // producer capability on a step's queue.
  std::int64_t start_workflow(const workflow_builder &workflow);
  // Sends the event to the steps of the queue that wait for it (wait_for_event), or keeps it keep_for for
  // the steps that will; returns the count of jobs woken.
  std::int64_t signal(const std::string &event_name, const nlohmann::json &payload = nlohmann::json::object(),
                      const std::string &queue = "default",
                      std::chrono::microseconds keep_for = std::chrono::hours(24 * 7));

  // A step's own calls, by the worker that holds its job (as for heartbeat; else not_lease_holder). Inside
  // a worker's handler, job_context offers the same calls for the job it runs.
  // The steps job_id depends on, by step name: the page of at most max_results after after_step.
  std::vector<step_result> step_results(std::int64_t job_id,
                                        const std::optional<std::string> &after_step = std::nullopt,
                                        int max_results = 1000);
  // Every page of step_results, read page_size at a time.
  std::vector<step_result> all_step_results(std::int64_t job_id, int page_size = 1000);
  // Records value under name for this job, the first time only; returns what is recorded (the first value).
  nlohmann::json checkpoint(std::int64_t job_id, const std::string &worker_id, const std::string &name,
                            const nlohmann::json &value);
  // Everything recorded for the job: {"name": value, ...}, with pgjq's own records of its waits and sleeps
  // under names beginning with "pgjq:".
  nlohmann::json checkpoints(std::int64_t job_id);
  // The event's payload; or empty: the job is parked (no lease, no attempt counted) until the event comes or
  // the timeout passes, and the caller must leave it alone, completing or failing nothing. Claimed again
  // then, the same call returns the payload, or throws event_timed_out (PJ006) if the timeout came first.
  std::optional<nlohmann::json> wait_for_event(std::int64_t job_id, const std::string &worker_id,
                                               const std::string &event_name,
                                               std::chrono::microseconds timeout = std::chrono::hours(24 * 7));
  // True: the job already slept until wake_at under this name (go on). False: parked until wake_at, as
  // wait_for_event parks it.
  bool sleep_until(std::int64_t job_id, const std::string &worker_id, const std::string &name, time_point wake_at);
  // Adds steps to the job's workflow (a dynamic fan-out); their `after` may name steps already in it.
  // Returns the new steps' job ids, in order.
  std::vector<std::int64_t> add_steps(std::int64_t job_id, const std::string &worker_id, const step_list &steps);

  // Runs a statement without parameters (BEGIN, COMMIT, SET ...). For the caller's own SQL, not the queue's.
  void execute(const std::string &sql);

private:
  // Runs a statement of the call catalogue (preparing it on first use) with bound parameters.
  detail::result run(const detail::statement &statement, const std::vector<std::optional<std::string>> &params);
  // One command of a pipeline: a parameterless command (BEGIN, COMMIT), or, when command is null, a
  // statement of the call catalogue with its parameters.
  struct pipeline_step
  {
    const char *command;
    const detail::statement *statement = nullptr;
    const std::vector<std::optional<std::string>> *args = nullptr;
    bool sync_after = false; // end a segment here: an error skips only the rest of its own segment
  };
  // The steps in one round trip (libpq pipeline mode); returns the rows of steps[wanted_step]. On an error
  // the rest of the segment is skipped, an aborted transaction is rolled back once all segments are done,
  // and the first error is thrown.
  detail::result run_pipeline(const std::vector<pipeline_step> &steps, std::size_t wanted_step);
  // Throws connection_lost on a dead session, else usage_error unless PQtransactionStatus is `wanted`.
  void require_transaction_status(int wanted, const char *method, const char *otherwise) const;
  // The jobs an in-transaction claim returned. With none, or if they cannot be read, the claim's
  // transaction is rolled back.
  std::vector<job> claimed_or_rolled_back(detail::result claimed);
  void prepare(const detail::statement &statement);
  // Checks every argument (check_text, naming its parameter) and points libpq's parameter array at args
  // (which must outlive it). Sends nothing: a refused argument leaves the session as it was.
  std::vector<const char *> bind(const detail::statement &statement,
                                 const std::vector<std::optional<std::string>> &args) const;
  // The rule for text sent on this session: detail::check_text (no NUL byte, UTF-8), and on a session whose
  // client_encoding is not UTF8 (a borrowed one) ASCII only, as the server would read the client's UTF-8
  // as its own encoding; throws usage_error for that.
  void check_text(std::string_view text, std::string_view argument) const;
  void close() noexcept;
  // What the database's pgjq has beyond 0.2.0, asked once per session: a database updated meanwhile (ALTER
  // EXTENSION pgjq UPDATE) is served as before until the session is reopened.
  struct server_features
  {
    bool job_headers = false;      // 0.3.0: jobs carry headers (trace context)
    bool job_errors = false;       // 0.3.0: pgjq.job_errors
    bool holds_capability = false; // 0.3.0: pgjq.holds_capability
    bool queue_history = false;    // 0.3.0: pgjq.queue_history
  };
  const server_features &features();
  // A statement returning job rows, or its form with the jobs' headers where the database has them; checks
  // `args` first (bind), so that a refused argument sends nothing.
  const detail::statement &job_rows(const detail::statement &plain, const detail::statement &with_headers,
                                    const std::vector<std::optional<std::string>> &args);
  // An enqueue's statement, with headers when the options have some (then refused on a database before 0.3.0).
  const detail::statement &enqueue_statement(const detail::statement &plain, const detail::statement &with_headers,
                                             const enqueue_options &options,
                                             const std::vector<std::optional<std::string>> &args);
  // Collects the notifications libpq has buffered, keeping those of channels this object LISTENs to.
  void collect_notifications();
  // wait_for_completion's parts: reading the job until it is final, with notices or without.
  std::optional<job> wait_for_completion_polling(std::int64_t job_id, std::chrono::steady_clock::time_point deadline);
  // Reopens the session lost during a wait, retrying until the deadline.
  void reconnect_before(std::chrono::steady_clock::time_point deadline);

  PGconn *m_conn = nullptr;
  bool m_owned = false;
  connection_options m_options;
  std::unique_ptr<connection> m_listener; // pooled: the direct session that LISTENs
  std::string m_conninfo;                 // to reconnect an owned session
  std::set<std::string> m_prepared;       // statements prepared in this session
  bool m_checked_prepared = false;        // a borrowed session may hold our statements from an earlier wrapper
  std::set<std::string> m_listening;      // channels LISTENed on purpose (re-LISTENed on reconnect)
  std::deque<notification> m_notifications;
  std::optional<server_features> m_features;
};

// RAII transaction block on a connection: rolls back unless committed (errors in the destructor are
// swallowed, as destructors must not throw).
class PGJQ_API transaction
{
public:
  explicit transaction(connection &conn);
  transaction(const transaction &) = delete;
  transaction &operator=(const transaction &) = delete;
  ~transaction();

  void commit();
  void rollback();

private:
  connection &m_conn;
  bool m_open = true;
};

} // namespace pgjq
