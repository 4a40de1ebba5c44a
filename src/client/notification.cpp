// notification.cpp: LISTEN/UNLISTEN, sleeping on the session's socket until a notification arrives (the
// worker's wake-up and wait_for_completion are built on this), so that nobody polls the tables.
#include <pgjq/connection.hpp>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <thread>

#include "result.hpp"
#include "timeouts.hpp"

namespace pgjq
{

namespace
{

std::string quoted_identifier(PGconn *conn, const std::string &name)
{
  char *escaped = PQescapeIdentifier(conn, name.c_str(), name.size());
  if (escaped == nullptr)
    throw bad_argument(PQerrorMessage(conn), "22023");
  std::string out(escaped);
  PQfreemem(escaped);
  return out;
}

// The job id of a pgjq_job_finished payload ({"id":42,"queue":"default","status":"completed"}), or -1.
std::int64_t finished_job_id(const std::string &payload)
{
  const nlohmann::json parsed = nlohmann::json::parse(payload, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("id") || !parsed["id"].is_number_integer())
    return -1;
  return parsed["id"].get<std::int64_t>();
}

// A job of a queue with keep_completed = false leaves no row once completed. What is left of it: the row
// last seen (if any) and its finished notice (if one came); the status is the notice's, else completed.
// Parsed without throwing: any role may send on the channel.
job job_without_row(std::optional<job> last_seen, std::int64_t job_id, const std::string *notice_payload)
{
  job j = last_seen ? std::move(*last_seen) : job{};
  j.id = job_id;
  j.status = job_status::completed;
  j.result_text.reset();
  j.lease_expires_at.reset();
  if (notice_payload == nullptr)
    return j;
  const nlohmann::json parsed = nlohmann::json::parse(*notice_payload, nullptr, false);
  if (!parsed.is_object())
    return j;
  if (!last_seen && parsed.contains("queue") && parsed["queue"].is_string())
    j.queue = parsed["queue"].get<std::string>();
  if (parsed.contains("status") && parsed["status"].is_string())
    for (job_status s : {job_status::completed, job_status::failed, job_status::cancelled})
      if (to_string(s) == parsed["status"].get<std::string>())
        j.status = s;
  return j;
}

// {"overflow":true}: the server's notification relay had to drop finished-job notices, so any job
// may have finished unannounced: a waiter looks at its job again.
bool finished_notices_dropped(const std::string &payload)
{
  const nlohmann::json parsed = nlohmann::json::parse(payload, nullptr, false);
  return parsed.is_object() && parsed.value("overflow", false) == true;
}

} // namespace

void connection::listen(const std::string &channel)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  if (m_options.pooled)
  {
    // A LISTEN through the pooler would stay on whichever server session ran it, delivering to whoever
    // gets that session next.
    if (!can_listen())
      throw usage_error("pgjq::connection::listen: a pooled connection LISTENs only on a direct connection; "
                        "set connection_options::listen_conninfo");
    if (!m_listener)
      m_listener = std::make_unique<connection>(m_options.listen_conninfo);
    m_listener->listen(channel);
    return;
  }
  check_text(channel, "channel"); // before quoting: PQescapeIdentifier would end the name at a NUL byte
  execute("LISTEN " + quoted_identifier(m_conn, channel));
  m_listening.insert(channel);
}

void connection::unlisten(const std::string &channel)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  if (m_options.pooled)
  {
    if (m_listener)
      m_listener->unlisten(channel);
    return;
  }
  check_text(channel, "channel");
  m_listening.erase(channel);
  execute("UNLISTEN " + quoted_identifier(m_conn, channel));
}

void connection::collect_notifications()
{
  while (PGnotify *n = PQnotifies(m_conn))
  {
    // Pooled, whatever arrives here was LISTENed by another client on a shared server session.
    if (!m_options.pooled && m_listening.count(n->relname))
      m_notifications.push_back(notification{n->relname, n->extra ? n->extra : "", n->be_pid});
    PQfreemem(n);
  }
}

std::optional<notification> connection::wait_for_notification(std::chrono::milliseconds timeout, int interrupt_fd)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  if (m_listener)
    return m_listener->wait_for_notification(timeout, interrupt_fd);
  const auto deadline = detail::deadline_after(timeout);
  if (m_options.pooled)
  {
    // Nothing LISTENed: sleep out the timeout, unless interrupted.
    pollfd fd{interrupt_fd, POLLIN, 0};
    for (int left = detail::poll_timeout(deadline); left > 0; left = detail::poll_timeout(deadline))
    {
      const int rc = poll(&fd, interrupt_fd >= 0 ? 1 : 0, left);
      if (rc > 0 || (rc < 0 && errno != EINTR))
        break;
    }
    return std::nullopt;
  }
  for (;;)
  {
    collect_notifications();
    if (!m_notifications.empty())
    {
      notification n = std::move(m_notifications.front());
      m_notifications.pop_front();
      return n;
    }
    const int left = detail::poll_timeout(deadline);
    if (left == 0)
      return std::nullopt;
    const int sock = PQsocket(m_conn);
    if (sock < 0)
      detail::throw_connection_lost(m_conn, "the connection to the server was lost");
    pollfd fds[2] = {{sock, POLLIN, 0}, {interrupt_fd, POLLIN, 0}};
    const int rc = poll(fds, interrupt_fd >= 0 ? 2 : 1, left);
    if (rc < 0)
    {
      if (errno == EINTR)
        continue; // a signal (perhaps the one that stops a worker): look at the interrupt fd again
      throw error(std::string("poll failed: ") + std::strerror(errno), std::string());
    }
    if (interrupt_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      return std::nullopt;
    if (fds[0].revents != 0)
    {
      // EOF (the server went away) makes PQconsumeInput fail; a FATAL message (shutdown) breaks the session.
      if (PQconsumeInput(m_conn) == 0 || PQstatus(m_conn) == CONNECTION_BAD)
        detail::throw_connection_lost(m_conn, "the connection to the server was lost");
    }
  }
}

void connection::reconnect_before(std::chrono::steady_clock::time_point deadline)
{
  // Only a session this object owns can be reopened (a pooled listener always is).
  const bool main_lost = m_conn == nullptr || PQstatus(m_conn) == CONNECTION_BAD;
  if (main_lost && !m_owned)
    detail::throw_connection_lost(m_conn, "the connection to the server was lost");
  auto delay = std::chrono::milliseconds(50);
  for (;;)
  {
    try
    {
      if (main_lost)
        reconnect(); // LISTENs again, the listener included
      else if (m_listener)
        m_listener->reconnect();
      else
        detail::throw_connection_lost(m_conn, "the connection to the server was lost");
      return;
    }
    catch (const connection_lost &)
    {
      if (std::chrono::steady_clock::now() + delay >= deadline)
        throw;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(1000));
  }
}

std::optional<job> connection::wait_for_completion_polling(std::int64_t job_id,
                                                           std::chrono::steady_clock::time_point deadline)
{
  std::optional<job> current = get_job(job_id);
  if (!current)
    throw job_not_found("job " + std::to_string(job_id) + " does not exist", "P0002");
  auto interval = std::chrono::milliseconds(50);
  for (;;)
  {
    if (is_final(current->status))
      return current;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(interval, deadline - now));
    interval = std::min(interval * 2, std::chrono::milliseconds(1000));
    std::optional<job> next;
    try
    {
      next = get_job(job_id);
    }
    catch (const connection_lost &)
    {
      reconnect_before(deadline);
      next = get_job(job_id);
    }
    // Seen unfinished, now gone: deleted at completion (keep_completed = false).
    if (!next)
      return job_without_row(std::move(current), job_id, nullptr);
    current = std::move(next);
  }
}

std::optional<job> connection::wait_for_completion(std::int64_t job_id, std::chrono::milliseconds timeout)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  if (PQtransactionStatus(m_conn) != PQTRANS_IDLE)
    throw usage_error("pgjq::connection::wait_for_completion: inside a transaction block, where notifications "
                      "are not delivered");
  const auto deadline = detail::deadline_after(timeout);
  if (!can_listen())
    return wait_for_completion_polling(job_id, deadline);

  // LISTEN only for the wait (unless the caller listens anyway): a session that stayed subscribed would
  // buffer one notification per finished job in libpq until something read them.
  const auto listening = [this]
  {
    return m_listener ? m_listener->m_listening.count(job_finished_channel) != 0
                      : m_listening.count(job_finished_channel) != 0;
  };
  const bool transient = !listening();
  if (transient)
    listen(job_finished_channel);
  // Where the notices arrive: this session, or pooled, its direct listener (which listen() opened).
  const auto notices = [this]() -> connection & { return m_listener ? *m_listener : *this; };
  std::deque<notification> others; // notifications the caller LISTENs to, handed back afterwards
  struct restore
  {
    connection &self;
    bool transient;
    std::deque<notification> &others;
    ~restore()
    {
      connection &notices = self.m_listener ? *self.m_listener : self;
      for (auto it = others.rbegin(); it != others.rend(); ++it)
        notices.m_notifications.push_front(std::move(*it));
      if (!transient)
        return;
      try
      {
        self.unlisten(job_finished_channel);
      }
      catch (...)
      {
        // The session is broken; the caller sees that on its next call.
      }
    }
  } on_exit{*this, transient, others};

  // The job may have finished before the LISTEN took effect: its notification is gone, but its state is not.
  std::optional<job> current = get_job(job_id);
  if (!current)
  {
    // Unless it was deleted at completion after the LISTEN: then its notice may be here already.
    connection &from = notices();
    from.collect_notifications();
    for (auto it = from.m_notifications.begin(); it != from.m_notifications.end(); ++it)
      if (it->channel == job_finished_channel && finished_job_id(it->payload) == job_id)
      {
        job j = job_without_row(std::nullopt, job_id, &it->payload);
        from.m_notifications.erase(it);
        return j;
      }
    throw job_not_found("job " + std::to_string(job_id) + " does not exist", "P0002");
  }
  if (is_final(current->status))
    return current;
  job last_seen = *current;

  // Reads the job again; its final state, or empty (and last_seen updated) while it runs. notice: the
  // finished notice that prompted the read, if any.
  const auto read_again = [&](const std::string *notice) -> std::optional<job>
  {
    std::optional<job> now = get_job(job_id);
    // Seen unfinished, now gone: deleted at completion (keep_completed = false).
    if (!now)
      return job_without_row(last_seen, job_id, notice);
    if (is_final(now->status))
      return now;
    last_seen = std::move(*now);
    return std::nullopt;
  };
  for (;;)
  {
    try
    {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      // At the deadline, one last look: a notice may have been lost.
      if (left.count() <= 0)
        return read_again(nullptr);
      std::optional<notification> n = wait_for_notification(left);
      if (!n)
        continue;
      if (n->channel == job_finished_channel &&
          (finished_job_id(n->payload) == job_id || finished_notices_dropped(n->payload)))
      {
        if (std::optional<job> done = read_again(finished_job_id(n->payload) == job_id ? &n->payload : nullptr))
          return done;
        continue;
      }
      if (n->channel != job_finished_channel || !transient)
        others.push_back(std::move(*n));
    }
    catch (const connection_lost &)
    {
      // Notices sent while the session was away are lost: reconnect, then look at the job itself.
      reconnect_before(deadline);
      if (std::optional<job> done = read_again(nullptr))
        return done;
    }
  }
}

} // namespace pgjq
