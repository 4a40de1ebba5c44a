// fixture.hpp: what every client test shares: the server to talk to (PGJQ_CONNINFO), a private queue per
// test that is dropped afterwards, a worker running on its own thread, and waiting for a condition.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <libpq-fe.h>

#include <pgjq/client.hpp>

namespace pgjq_test
{

using namespace std::chrono_literals;

// An empty JSON object payload ({} alone would be JSON null).
inline const nlohmann::json empty = nlohmann::json::object();

inline std::vector<nlohmann::json> objects(std::size_t n)
{
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back({{"i", i}});
  return out;
}

inline std::string conninfo()
{
  const char *value = std::getenv("PGJQ_CONNINFO");
  BOOST_REQUIRE_MESSAGE(value != nullptr && *value != '\0',
                        "PGJQ_CONNINFO must name a database with the pgjq extension (scripts/client_tests.sh sets it)");
  return value;
}

// A queue only this test uses, so that tests cannot see each other's jobs.
class scoped_queue
{
public:
  explicit scoped_queue(const pgjq::queue_options &options = {}) : m_name(next_name())
  {
    pgjq::connection admin(conninfo());
    admin.create_queue(m_name, options);
  }
  scoped_queue(const scoped_queue &) = delete;
  scoped_queue &operator=(const scoped_queue &) = delete;
  ~scoped_queue()
  {
    try
    {
      // A fresh session: the test may have restarted the server or broken its own.
      pgjq::connection admin(conninfo());
      admin.drop_queue(m_name, /*force=*/true);
    }
    catch (...)
    {
    }
  }

  const std::string &name() const noexcept { return m_name; }
  pgjq::enqueue_options into() const
  {
    pgjq::enqueue_options o;
    o.queue = m_name;
    return o;
  }

private:
  static std::string next_name()
  {
    static std::atomic<int> counter{0};
    return "t" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  }
  std::string m_name;
};

inline pgjq::worker_options worker_options_for(const scoped_queue &q)
{
  pgjq::worker_options o;
  o.conninfo = conninfo();
  o.queue = q.name();
  o.worker_id = "test-worker-" + q.name();
  o.idle_timeout = 200ms;
  o.heartbeat_interval = 1s;
  o.handle_signals = false;
  return o;
}

// Runs a worker on its own thread; stops and joins it when it goes out of scope.
class worker_thread
{
public:
  explicit worker_thread(pgjq::worker &w)
      : m_worker(w), m_thread(
                         [this]
                         {
                           try
                           {
                             m_worker.run();
                           }
                           catch (const std::exception &e)
                           {
                             m_error = e.what();
                           }
                         })
  {
  }
  worker_thread(const worker_thread &) = delete;
  worker_thread &operator=(const worker_thread &) = delete;
  ~worker_thread() { stop(); }

  void stop()
  {
    m_worker.stop();
    join();
  }
  void join()
  {
    if (m_thread.joinable())
      m_thread.join();
  }
  // run()'s exception, if it threw (valid after join).
  const std::string &error() const noexcept { return m_error; }

private:
  pgjq::worker &m_worker;
  std::string m_error;
  std::thread m_thread;
};

// Polls the condition (tests may poll; the library may not) until it holds or the timeout passes.
inline bool wait_until(const std::function<bool()> &condition, std::chrono::milliseconds timeout)
{
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline)
  {
    if (condition())
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

// The first column of the first row of a query the test runs itself (0 for NULL).
inline std::int64_t scalar(PGconn *conn, const std::string &sql)
{
  PGresult *res = PQexec(conn, sql.c_str());
  BOOST_REQUIRE_MESSAGE(PQresultStatus(res) == PGRES_TUPLES_OK, sql << ": " << PQresultErrorMessage(res));
  const std::int64_t value = PQgetisnull(res, 0, 0) ? 0 : std::stoll(PQgetvalue(res, 0, 0));
  PQclear(res);
  return value;
}

inline pgjq::queue_stats stats_of(pgjq::connection &db, const scoped_queue &q)
{
  std::optional<pgjq::queue_stats> s = db.stats(q.name());
  BOOST_REQUIRE(s.has_value());
  return *s;
}

} // namespace pgjq_test
