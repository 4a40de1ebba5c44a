// lease_keeper.cpp: heartbeats every held job whose last heartbeat (or claim) is older than the interval,
// and stops heartbeating a job as soon as the server says it is cancelled, timed out or no longer ours.
#include "lease_keeper.hpp"

#include <vector>

#include <pgjq/connection.hpp>

#include "timeouts.hpp"

namespace pgjq::detail
{

lease_keeper::lease_keeper(std::string conninfo, connection_options session, std::chrono::milliseconds interval,
                           std::function<void(const std::string &)> log, std::atomic<std::uint64_t> &heartbeats)
    : m_conninfo(std::move(conninfo)), m_session(std::move(session)), m_interval(clock_duration(interval)),
      m_log(std::move(log)), m_heartbeats(heartbeats), m_thread([this] { loop(); })
{
}

lease_keeper::~lease_keeper() { stop(); }

void lease_keeper::hold(std::shared_ptr<held_job> job)
{
  std::lock_guard<std::mutex> lock(m_mutex);
  const std::int64_t id = job->id;
  m_held[id] = entry{std::move(job), std::chrono::steady_clock::now()};
}

void lease_keeper::release(std::int64_t job_id)
{
  std::lock_guard<std::mutex> lock(m_mutex);
  m_held.erase(job_id);
}

void lease_keeper::stop()
{
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable())
    m_thread.join();
}

void lease_keeper::loop()
{
  // Check often enough that no lease goes more than a quarter interval past its due time.
  using duration = std::chrono::steady_clock::duration;
  const duration tick = std::max<duration>(std::chrono::milliseconds(10),
                                           std::min<duration>(m_interval / 4, std::chrono::milliseconds(1000)));
  std::unique_ptr<connection> conn;
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_stop)
  {
    m_wake.wait_for(lock, tick, [this] { return m_stop; });
    if (m_stop)
      break;
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<held_job>> due;
    for (const auto &[id, e] : m_held)
      if (now - e.last_beat >= m_interval && !e.job->parked) // a parked job has no lease to extend
        due.push_back(e.job);
    if (due.empty())
      continue;
    lock.unlock();
    for (const auto &job : due)
    {
      try
      {
        // Opened on first need: a worker whose jobs are short never holds this second session.
        if (!conn || !conn->is_open())
          conn = std::make_unique<connection>(m_conninfo, m_session);
        conn->heartbeat(job->id, job->worker_id);
        ++m_heartbeats;
        std::lock_guard<std::mutex> relock(m_mutex);
        auto it = m_held.find(job->id);
        if (it != m_held.end())
          it->second.last_beat = std::chrono::steady_clock::now();
        continue;
      }
      catch (const job_cancelled &)
      {
        job->cancelled = true;
      }
      catch (const job_timed_out &)
      {
        job->timed_out = true;
        job->lost = true;
      }
      catch (const not_lease_holder &)
      {
        job->lost = true;
      }
      catch (const job_not_found &)
      {
        job->lost = true;
      }
      catch (const connection_lost &e)
      {
        // Retried at the next tick; the lease outlives a short outage.
        m_log("heartbeat of job " + std::to_string(job->id) + " failed: " + e.what());
        conn.reset();
        break;
      }
      catch (const std::exception &e)
      {
        m_log("heartbeat of job " + std::to_string(job->id) + " failed: " + e.what());
        continue;
      }
      // The job is not ours any more: stop heartbeating it.
      std::lock_guard<std::mutex> relock(m_mutex);
      m_held.erase(job->id);
    }
    lock.lock();
  }
}

} // namespace pgjq::detail
