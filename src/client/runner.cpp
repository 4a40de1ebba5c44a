// runner.cpp: the loop every runner thread shares, its session (LISTEN, reconnect) and its idle sleep.
#include "runner.hpp"

#include <algorithm>

#include "timeouts.hpp"

namespace pgjq
{

namespace detail
{

runner::runner(worker::impl &w, std::string worker_id) : m_w(w), m_worker_id(std::move(worker_id))
{
  for (const auto &[type, h] : m_w.handlers)
    m_types.push_back(type);
}

void runner::run()
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
      batch_lost();
      m_w.log("connection lost (" + std::string(e.what()) + "); reconnecting in " + std::to_string(delay.count()) +
              " ms");
      m_w.stop.sleep_for(delay);
      delay = detail::doubled_up_to(delay, m_w.options.reconnect_max);
    }
    catch (const std::exception &e)
    {
      // An unknown queue, a permission missing: nothing a tight loop would fix.
      batch_lost();
      m_w.log(std::string("claim or report failed: ") + e.what());
      m_w.stop.sleep_for(delay);
      delay = detail::doubled_up_to(delay, m_w.options.reconnect_max);
    }
  }
  finish();
}

void runner::ensure_connection()
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
    m_conn = std::make_unique<connection>(m_w.options.conninfo, m_w.options.session);
    // LISTEN before the first claim, so that a job enqueued after that claim still wakes us.
    if (m_conn->can_listen())
      m_conn->listen(new_job_channel);
  }
  m_broken = false;
}

void runner::idle_wait()
{
  ++m_w.idle_waits;
  const auto deadline = detail::deadline_after(m_w.options.idle_timeout);
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

} // namespace detail
} // namespace pgjq
