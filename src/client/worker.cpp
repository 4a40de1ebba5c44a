// worker.cpp: the worker's public face: options, handlers, run() starting one runner thread per unit of
// concurrency, stop() and stats(), and the job_context a handler sees. How a runner claims, runs and
// reports is runner.cpp's and the two runners' (leased_runner.cpp, transaction_runner.cpp); the heartbeats
// are the lease_keeper's; the stop flag and signals are stop_signal's.
#include <pgjq/worker.hpp>

#include <cstdio>
#include <thread>
#include <unistd.h>
#include <vector>

#include "codec.hpp"
#include "runner.hpp"

namespace pgjq
{

namespace
{

std::string default_worker_id()
{
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0)
    std::snprintf(host, sizeof host, "localhost");
  return std::string(host) + ":" + std::to_string(getpid());
}

// Runs a call about the held job; what a refusal says about the job (cancelled, timed out, not ours) is
// noted on it before the error goes on to the handler, so that the runner knows not to report the job.
template <typename Call> auto noting(detail::held_job &held, Call &&call) -> decltype(call())
{
  try
  {
    return call();
  }
  catch (const job_cancelled &)
  {
    held.cancelled = true;
    throw;
  }
  catch (const job_timed_out &)
  {
    held.timed_out = true;
    held.lost = true;
    throw;
  }
  catch (const not_lease_holder &)
  {
    held.lost = true;
    throw;
  }
}

} // namespace

void worker::impl::log(const std::string &message) const
{
  if (options.log)
    options.log(message);
  else
    std::fprintf(stderr, "pgjq worker: %s\n", message.c_str());
}

// job_context ------------------------------------------------------------------------------------------

job_context::job_context(const pgjq::job &job, connection &conn, std::shared_ptr<detail::held_job> held,
                         const std::atomic<bool> &stopping)
    : m_job(job), m_conn(conn), m_held(std::move(held)), m_stopping(stopping)
{
}

const std::string &job_context::worker_id() const noexcept { return m_held->worker_id; }

bool job_context::cancelled() const noexcept { return m_held->cancelled.load(); }

bool job_context::timed_out() const noexcept
{
  return m_held->timed_out.load() || (m_job.timeout_at && clock::now() >= *m_job.timeout_at);
}

bool job_context::should_stop() const noexcept
{
  return cancelled() || timed_out() || m_held->lost.load() || parked() || stop_requested();
}

void job_context::progress(int percent, const std::optional<std::string> &current_stage)
{
  if (m_held->in_transaction)
    throw usage_error("pgjq::job_context::progress: a job held by the worker's transaction "
                      "(worker_options::in_transaction) has no progress: nothing it writes is seen before it ends");
  require_not_parked("progress");
  try
  {
    noting(*m_held, [&] { m_conn.progress(m_job.id, m_held->worker_id, percent, current_stage); });
  }
  catch (const connection_lost &)
  {
    // Progress is advisory: drop this report, and reopen the session for the next one (and for the
    // runner's complete, which would otherwise reconnect itself).
    try
    {
      m_conn.reconnect();
    }
    catch (const std::exception &)
    {
    }
  }
}

void job_context::require_step_call(const char *method) const
{
  // The server's step calls act on a job its worker holds under a lease (status claimed or running,
  // worker_id set); an in-transaction claim writes neither until it is reported, so they would all be
  // refused as PJ002.
  if (m_held->in_transaction)
    throw usage_error(std::string("pgjq::job_context::") + method +
                      ": a job held by the worker's transaction (worker_options::in_transaction) has no lease, "
                      "which the step calls of a workflow need: run workflow steps with leased claims");
  require_not_parked(method);
}

void job_context::require_not_parked(const char *method) const
{
  if (m_held->parked)
    throw usage_error(std::string("pgjq::job_context::") + method + ": job " + std::to_string(m_job.id) +
                      " is parked (wait_for_event or sleep_until returned so): return from the handler; it runs "
                      "again from the start when the job is claimed again");
}

// Workflow steps ---------------------------------------------------------------------------------------

std::vector<step_result> job_context::step_results(const std::optional<std::string> &after_step, int max_results)
{
  return m_conn.step_results(m_job.id, after_step, max_results);
}

std::vector<step_result> job_context::all_step_results(int page_size)
{
  return m_conn.all_step_results(m_job.id, page_size);
}

nlohmann::json job_context::checkpoint(const std::string &name, const nlohmann::json &value)
{
  require_step_call("checkpoint");
  return noting(*m_held, [&] { return m_conn.checkpoint(m_job.id, m_held->worker_id, name, value); });
}

nlohmann::json job_context::checkpoints() { return m_conn.checkpoints(m_job.id); }

std::optional<nlohmann::json> job_context::wait_for_event(const std::string &event_name,
                                                          std::chrono::microseconds timeout)
{
  require_step_call("wait_for_event");
  std::optional<nlohmann::json> payload =
      noting(*m_held, [&] { return m_conn.wait_for_event(m_job.id, m_held->worker_id, event_name, timeout); });
  if (!payload)
    m_held->parked = true;
  return payload;
}

bool job_context::sleep_until(const std::string &name, time_point wake_at)
{
  require_step_call("sleep_until");
  const bool slept = noting(*m_held, [&] { return m_conn.sleep_until(m_job.id, m_held->worker_id, name, wake_at); });
  if (!slept)
    m_held->parked = true;
  return slept;
}

std::vector<std::int64_t> job_context::add_steps(const step_list &steps)
{
  require_step_call("add_steps");
  return noting(*m_held, [&] { return m_conn.add_steps(m_job.id, m_held->worker_id, steps); });
}

bool job_context::parked() const noexcept { return m_held->parked.load(); }

void job_context::set_result(const nlohmann::json &result) { set_result_raw(detail::encode_json(result, "result")); }

void job_context::set_result_raw(std::string result_json)
{
  if (m_held->in_transaction)
    throw usage_error("pgjq::job_context::set_result: a job held by the worker's transaction "
                      "(worker_options::in_transaction) has no result; write it through transaction()");
  require_not_parked("set_result");
  detail::check_text(result_json, "result"); // now, in the handler, rather than when the batch is reported
  m_result = std::move(result_json);
}

connection &job_context::transaction()
{
  if (!m_held->in_transaction)
    throw usage_error("pgjq::job_context::transaction: only in in-transaction mode (worker_options::in_transaction); "
                      "a leased job's completion is a transaction of its own");
  if (!m_held->savepoint)
  {
    m_conn.execute("SAVEPOINT pgjq_job");
    m_held->savepoint = true;
  }
  return m_conn;
}

// worker -----------------------------------------------------------------------------------------------

worker::worker(worker_options options) : m_impl(std::make_unique<impl>(std::move(options)))
{
  worker_options &o = m_impl->options;
  if (o.worker_id.empty())
    o.worker_id = default_worker_id();
  if (o.concurrency < 1 || o.batch_size < 1)
    throw usage_error("pgjq::worker: concurrency and batch_size must be at least 1");
  if (o.idle_timeout.count() <= 0 || o.heartbeat_interval.count() <= 0 || o.reconnect_min.count() <= 0 ||
      o.reconnect_max < o.reconnect_min)
    throw usage_error("pgjq::worker: timeouts must be positive and reconnect_max >= reconnect_min");
}

worker::~worker() { stop(); }

void worker::on(const std::string &job_type, handler h)
{
  if (m_impl->running)
    throw usage_error("pgjq::worker::on: register handlers before run()");
  if (!h)
    throw usage_error("pgjq::worker::on: empty handler for job type " + job_type);
  m_impl->handlers[job_type] = std::move(h);
}

void worker::run()
{
  impl &w = *m_impl;
  if (w.handlers.empty())
    throw usage_error("pgjq::worker::run: no handler registered");
  if (w.running.exchange(true))
    throw usage_error("pgjq::worker::run: already running");
  struct running_flag
  {
    std::atomic<bool> &flag;
    ~running_flag() { flag = false; }
  } reset_running{w.running};

  std::optional<detail::signal_scope> signals;
  if (w.options.handle_signals)
    signals.emplace(w.stop);
  // In-transaction claims hold no lease, so nothing needs heartbeats.
  std::optional<detail::lease_keeper> keeper;
  if (!w.options.in_transaction)
    keeper.emplace(
        w.options.conninfo, w.options.session, w.options.heartbeat_interval, [&w](const std::string &m) { w.log(m); },
        w.heartbeats);
  std::vector<std::thread> threads;
  for (int i = 0; i < w.options.concurrency; ++i)
  {
    std::string id = w.options.concurrency > 1 ? w.options.worker_id + "/" + std::to_string(i) : w.options.worker_id;
    threads.emplace_back(
        [&w, &keeper, id]
        {
          try
          {
            std::unique_ptr<detail::runner> r =
                keeper ? detail::make_leased_runner(w, *keeper, id) : detail::make_transaction_runner(w, id);
            r->run();
          }
          catch (const std::exception &e)
          {
            w.log(std::string("runner stopped: ") + e.what());
          }
        });
  }
  for (std::thread &t : threads)
    t.join();
  if (keeper)
    keeper->stop();
}

void worker::stop() noexcept { m_impl->stop.request(); }

bool worker::stopping() const noexcept { return m_impl->stop.requested(); }

worker_stats worker::stats() const
{
  const impl &w = *m_impl;
  worker_stats s;
  s.claimed = w.claimed;
  s.completed = w.completed;
  s.failed = w.failed;
  s.released = w.released;
  s.abandoned = w.abandoned;
  s.parked = w.parked;
  s.heartbeats = w.heartbeats;
  s.idle_waits = w.idle_waits;
  s.reconnects = w.reconnects;
  return s;
}

} // namespace pgjq
