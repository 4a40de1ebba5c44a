// worker.cpp: the worker runtime. Each runner thread owns a connection: it LISTENs on pgjq_new_job,
// claims a batch, runs the handlers one by one, fails what threw, completes what succeeded together with
// its next claim (one complete_and_claim call), and sleeps on the socket until a NOTIFY, the idle timeout
// or a stop. The heartbeats are the lease_keeper's; the stop flag and signals are stop_signal's.
#include <pgjq/worker.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <unistd.h>
#include <vector>

#include "lease_keeper.hpp"
#include "stop_signal.hpp"

namespace pgjq
{

struct worker::impl
{
  explicit impl(worker_options o) : options(std::move(o)) {}

  void log(const std::string &message) const
  {
    if (options.log)
      options.log(message);
    else
      std::fprintf(stderr, "pgjq worker: %s\n", message.c_str());
  }

  worker_options options;
  std::map<std::string, handler> handlers;
  detail::stop_signal stop;
  std::atomic<bool> running{false};
  std::atomic<std::uint64_t> claimed{0}, completed{0}, failed{0}, released{0}, abandoned{0}, heartbeats{0},
      idle_waits{0}, reconnects{0};
};

namespace
{

std::string default_worker_id()
{
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0)
    std::snprintf(host, sizeof host, "localhost");
  return std::string(host) + ":" + std::to_string(getpid());
}

// How a call that finishes a job (complete, fail) ended.
enum class outcome
{
  done,
  not_ours, // PJ002/PJ003/P0002: cancelled, lease lost, or already finished by an earlier try
  failed    // some other error, or the server stayed unreachable: the lease will expire and recovery
            // gives the job to another worker
};

class runner
{
public:
  runner(worker::impl &w, detail::lease_keeper &keeper, std::string worker_id)
      : m_w(w), m_keeper(keeper), m_worker_id(std::move(worker_id))
  {
    for (const auto &[type, h] : m_w.handlers)
      m_types.push_back(type);
  }

  void run()
  {
    auto delay = m_w.options.reconnect_min;
    while (!m_w.stop.requested())
    {
      try
      {
        ensure_connection();
        std::vector<job> jobs = next_batch();
        delay = m_w.options.reconnect_min;
        if (jobs.empty())
        {
          idle_wait();
          continue;
        }
        m_w.claimed += jobs.size();
        process(jobs);
      }
      catch (const connection_lost &e)
      {
        m_broken = true;
        m_w.log("connection lost (" + std::string(e.what()) + "); reconnecting in " +
                std::to_string(delay.count()) + " ms");
        m_w.stop.sleep_for(delay);
        delay = std::min(delay * 2, m_w.options.reconnect_max);
      }
      catch (const std::exception &e)
      {
        // An unknown queue, a permission missing: nothing a tight loop would fix.
        m_w.log(std::string("claim failed: ") + e.what());
        m_w.stop.sleep_for(delay);
        delay = std::min(delay * 2, m_w.options.reconnect_max);
      }
    }
    // Stopping: the successes of the last batch are completed now rather than with a next claim.
    flush_done();
  }

private:
  // Claims the next batch. The previous batch's successes are completed in the same call and commit
  // (pgjq.complete_and_claim): at small batches the commit is most of a batch's cost. If that call is
  // refused (a job was cancelled or lost meanwhile: it is all or nothing), the successes are completed
  // on their own (one by one if need be) and the claim is made alone.
  std::vector<job> next_batch()
  {
    if (!m_done.empty())
    {
      try
      {
        std::vector<job> jobs =
            m_conn->complete_and_claim(m_worker_id, m_done, m_types, m_w.options.batch_size, m_w.options.queue);
        m_w.completed += m_done.size();
        release_done();
        return jobs;
      }
      catch (const connection_lost &)
      {
        throw; // reconnect and try again: the leases are still ours and heartbeated
      }
      catch (const std::exception &)
      {
        flush_done();
      }
    }
    return m_conn->claim(m_worker_id, m_types, m_w.options.batch_size, m_w.options.queue);
  }

  void flush_done()
  {
    complete_succeeded(m_done, m_done_held);
    release_done();
  }

  void release_done()
  {
    for (const auto &h : m_done_held)
      m_keeper.release(h->id);
    m_done.clear();
    m_done_held.clear();
  }

  void ensure_connection()
  {
    if (m_conn && !m_broken && m_conn->is_open())
      return;
    if (m_conn)
    {
      m_conn->reconnect(); // LISTENs again
      ++m_w.reconnects;
      m_w.log("reconnected");
    }
    else
    {
      m_conn = std::make_unique<connection>(m_w.options.conninfo);
      // LISTEN before the first claim, so that a job enqueued after that claim still wakes us.
      m_conn->listen(new_job_channel);
    }
    m_broken = false;
  }

  void idle_wait()
  {
    ++m_w.idle_waits;
    const auto deadline = std::chrono::steady_clock::now() + m_w.options.idle_timeout;
    while (!m_w.stop.requested())
    {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return;
      std::optional<notification> n = m_conn->wait_for_notification(left, m_w.stop.fd());
      if (!n)
        return; // idle timeout (e.g. a retry's backoff has passed, which sends no NOTIFY) or stop
      if (n->channel == new_job_channel && n->payload == m_w.options.queue)
        return;
    }
  }

  void process(const std::vector<job> &jobs)
  {
    std::vector<std::shared_ptr<detail::held_job>> held;
    held.reserve(jobs.size());
    for (const job &j : jobs)
    {
      held.push_back(std::make_shared<detail::held_job>(j.id, m_worker_id));
      m_keeper.hold(held.back());
    }
    std::vector<std::int64_t> succeeded;
    std::size_t next = 0;
    for (; next < jobs.size() && !m_w.stop.requested(); ++next)
      run_one(jobs[next], held[next], succeeded);
    // Shutting down: hand back the jobs not started, at once (retry_in 0) rather than after the lease.
    for (; next < jobs.size(); ++next)
    {
      if (held[next]->cancelled || held[next]->lost)
      {
        ++m_w.abandoned;
        continue;
      }
      const std::int64_t id = jobs[next].id;
      if (finish("release of job " + std::to_string(id), [&](connection &c) {
            c.fail(id, m_worker_id, "worker shut down before running the job", std::chrono::microseconds(0));
          }) == outcome::done)
        ++m_w.released;
    }
    // The successes stay held (and heartbeated) until the next claim completes them.
    for (const auto &h : held)
    {
      if (std::find(succeeded.begin(), succeeded.end(), h->id) != succeeded.end())
      {
        m_done.push_back(h->id);
        m_done_held.push_back(h);
      }
      else
        m_keeper.release(h->id);
    }
    if (m_w.stop.requested())
      flush_done();
  }

  void run_one(const job &j, const std::shared_ptr<detail::held_job> &h, std::vector<std::int64_t> &succeeded)
  {
    if (h->cancelled || h->lost)
    {
      ++m_w.abandoned;
      return;
    }
    job_context ctx(j, *m_conn, h, m_w.stop.flag());
    std::optional<std::string> error;
    try
    {
      m_w.handlers.at(j.type)(ctx);
    }
    catch (const job_cancelled &)
    {
      h->cancelled = true;
    }
    catch (const not_lease_holder &)
    {
      h->lost = true;
    }
    catch (const std::exception &e)
    {
      error = e.what();
    }
    catch (...)
    {
      error = "the handler threw an exception that is not a std::exception";
    }
    if (h->cancelled || h->lost)
    {
      // Completing or failing would be refused (PJ002/PJ003) and would poison the batch's complete_batch.
      ++m_w.abandoned;
      m_keeper.release(j.id);
      return;
    }
    if (error)
    {
      const std::string message = error->empty() ? "the handler failed" : *error;
      if (finish("fail of job " + std::to_string(j.id),
                 [&](connection &c) { c.fail(j.id, m_worker_id, message); }) == outcome::done)
        ++m_w.failed;
      m_keeper.release(j.id);
      return;
    }
    if (ctx.result())
    {
      if (finish("complete of job " + std::to_string(j.id),
                 [&](connection &c) { c.complete_raw(j.id, m_worker_id, *ctx.result()); }) == outcome::done)
        ++m_w.completed;
      m_keeper.release(j.id);
      return;
    }
    succeeded.push_back(j.id); // completed with the batch; still heartbeated until then
  }

  void complete_succeeded(const std::vector<std::int64_t> &ids,
                          const std::vector<std::shared_ptr<detail::held_job>> &held)
  {
    if (ids.empty())
      return;
    const outcome o = finish("complete_batch of " + std::to_string(ids.size()) + " jobs",
                             [&](connection &c) { c.complete_batch(ids, m_worker_id); });
    if (o == outcome::done)
    {
      m_w.completed += ids.size();
      return;
    }
    if (o == outcome::failed)
      return;
    // complete_batch is all or nothing and one job is not ours any more (cancelled after its handler
    // returned, or its lease lapsed): complete the others one by one.
    for (std::int64_t id : ids)
    {
      bool gone = false;
      for (const auto &h : held)
        if (h->id == id && (h->cancelled || h->lost))
          gone = true;
      if (!gone && finish("complete of job " + std::to_string(id),
                          [&](connection &c) { c.complete(id, m_worker_id); }) == outcome::done)
        ++m_w.completed;
      else
        ++m_w.abandoned;
    }
  }

  // Runs a call that finishes jobs, reconnecting (with backoff) if the session is lost, because a server
  // restart does not take the lease away: the same call succeeds on a new session. Not cut short by a
  // stop request, since finishing is exactly what a stopping worker must do.
  template <typename Call> outcome finish(const std::string &what, Call &&call)
  {
    auto delay = m_w.options.reconnect_min;
    for (int attempt = 0;; ++attempt)
    {
      try
      {
        ensure_connection();
        call(*m_conn);
        return outcome::done;
      }
      catch (const job_cancelled &)
      {
        return outcome::not_ours;
      }
      catch (const not_lease_holder &e)
      {
        m_w.log(what + ": " + e.what());
        return outcome::not_ours;
      }
      catch (const job_not_found &e)
      {
        m_w.log(what + ": " + e.what());
        return outcome::not_ours;
      }
      catch (const connection_lost &e)
      {
        m_broken = true;
        if (attempt >= max_finish_attempts)
        {
          m_w.log(what + " abandoned, the lease will expire: " + e.what());
          return outcome::failed;
        }
        std::this_thread::sleep_for(delay);
        delay = std::min(delay * 2, m_w.options.reconnect_max);
      }
      catch (const std::exception &e)
      {
        m_w.log(what + " failed: " + e.what());
        return outcome::failed;
      }
    }
  }

  static constexpr int max_finish_attempts = 8;

  worker::impl &m_w;
  detail::lease_keeper &m_keeper;
  const std::string m_worker_id;
  std::vector<std::string> m_types;
  std::unique_ptr<connection> m_conn;
  bool m_broken = false;
  std::vector<std::int64_t> m_done;                         // succeeded, to be completed by the next claim
  std::vector<std::shared_ptr<detail::held_job>> m_done_held;
};

} // namespace

// job_context ------------------------------------------------------------------------------------------

job_context::job_context(const pgjq::job &job, connection &conn, std::shared_ptr<detail::held_job> held,
                         const std::atomic<bool> &stopping)
    : m_job(job), m_conn(conn), m_held(std::move(held)), m_stopping(stopping)
{
}

const std::string &job_context::worker_id() const noexcept { return m_held->worker_id; }

bool job_context::cancelled() const noexcept { return m_held->cancelled.load(); }

void job_context::progress(int percent, const std::optional<std::string> &current_stage)
{
  try
  {
    m_conn.progress(m_job.id, m_held->worker_id, percent, current_stage);
  }
  catch (const job_cancelled &)
  {
    m_held->cancelled = true;
    throw;
  }
  catch (const not_lease_holder &)
  {
    m_held->lost = true;
    throw;
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
  detail::lease_keeper keeper(w.options.conninfo, w.options.heartbeat_interval,
                              [&w](const std::string &m) { w.log(m); }, w.heartbeats);
  std::vector<std::thread> threads;
  for (int i = 0; i < w.options.concurrency; ++i)
  {
    std::string id = w.options.concurrency > 1 ? w.options.worker_id + "/" + std::to_string(i) : w.options.worker_id;
    threads.emplace_back([&w, &keeper, id] {
      try
      {
        runner(w, keeper, id).run();
      }
      catch (const std::exception &e)
      {
        w.log(std::string("runner stopped: ") + e.what());
      }
    });
  }
  for (std::thread &t : threads)
    t.join();
  keeper.stop();
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
  s.heartbeats = w.heartbeats;
  s.idle_waits = w.idle_waits;
  s.reconnects = w.reconnects;
  return s;
}

} // namespace pgjq
