// leased_runner.cpp: the worker's runner for leased claims. It claims a batch, runs the handlers one by
// one, fails what threw, completes what succeeded together with its next claim (one complete_and_claim
// call), leaves alone the jobs a handler parked (workflow steps waiting for an event or a time), and hands
// back the jobs it did not start when stopping. The lease_keeper heartbeats what it holds.
#include "runner.hpp"

#include <algorithm>
#include <thread>

#include "timeouts.hpp"

namespace pgjq
{
namespace
{

// How a call that finishes a job (complete, fail) ended.
enum class outcome
{
  done,
  not_ours, // PJ002/PJ003/P0002: cancelled, lease lost, or already finished by an earlier try
  failed    // some other error, or the server stayed unreachable: the lease will expire and recovery
            // gives the job to another worker
};

class leased_runner final : public detail::runner
{
public:
  leased_runner(worker::impl &w, detail::lease_keeper &keeper, std::string worker_id)
      : runner(w, std::move(worker_id)), m_keeper(keeper)
  {
  }

private:
  // Claims the next batch. The previous batch's successes are completed in the same call and commit
  // (pgjq.complete_and_claim): at small batches the commit is most of a batch's cost. If that call is
  // refused (a job was cancelled or lost meanwhile: it is all or nothing), the successes are completed
  // on their own (one by one if need be) and the claim is made alone.
  std::vector<job> next_batch() override
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

  // Stopping: the successes of the last batch are completed now rather than with a next claim.
  void finish() override { flush_done(); }

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

  void process(const std::vector<job> &jobs) override
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
      if (finish("release of job " + std::to_string(id),
                 [&](connection &c) {
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
    if (h->parked)
    {
      // wait_for_event or sleep_until gave the job back to the server until its event or time: completing
      // or failing it now would be refused (no lease), or take it from whoever holds it next.
      ++m_w.parked;
      m_keeper.release(j.id);
      return;
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
      if (finish("fail of job " + std::to_string(j.id), [&](connection &c) { c.fail(j.id, m_worker_id, message); }) ==
          outcome::done)
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
        delay = detail::doubled_up_to(delay, m_w.options.reconnect_max);
      }
      catch (const std::exception &e)
      {
        m_w.log(what + " failed: " + e.what());
        return outcome::failed;
      }
    }
  }

  static constexpr int max_finish_attempts = 8;

  detail::lease_keeper &m_keeper;
  std::vector<std::int64_t> m_done; // succeeded, to be completed by the next claim
  std::vector<std::shared_ptr<detail::held_job>> m_done_held;
};

} // namespace

std::unique_ptr<detail::runner> detail::make_leased_runner(worker::impl &w, lease_keeper &keeper, std::string worker_id)
{
  return std::make_unique<leased_runner>(w, keeper, std::move(worker_id));
}

} // namespace pgjq
