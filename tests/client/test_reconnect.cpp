// test_reconnect.cpp: a worker survives a server restart: it notices the lost session, reconnects with
// backoff, LISTENs again and processes the jobs enqueued afterwards.
#include "fixture.hpp"

#include <cstdlib>
#include <mutex>

using namespace pgjq_test;

namespace
{

std::string env(const char *name)
{
  const char *value = std::getenv(name);
  return value ? value : "";
}

// Quoted for the shell: single quotes, with embedded single quotes closed, escaped and reopened.
std::string sh(const std::string &word)
{
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

} // namespace

BOOST_AUTO_TEST_SUITE(reconnect)

BOOST_AUTO_TEST_CASE(the_worker_reconnects_after_a_server_restart)
{
  const std::string pg_ctl = env("PGJQ_TEST_PGCTL"), pgdata = env("PGJQ_TEST_PGDATA"), log = env("PGJQ_TEST_PGLOG");
  BOOST_REQUIRE_MESSAGE(
      !pg_ctl.empty() && !pgdata.empty(),
      "set PGJQ_TEST_PGCTL and PGJQ_TEST_PGDATA to restart the server (scripts/client_tests.sh does)");
  scoped_queue q;
  pgjq::worker_options o = worker_options_for(q);
  o.reconnect_min = 50ms;
  o.reconnect_max = 500ms;
  std::vector<std::string> messages;
  std::mutex m;
  o.log = [&](const std::string &line)
  {
    std::lock_guard<std::mutex> lock(m);
    messages.push_back(line);
  };
  pgjq::worker w(o);
  w.on("t", [](pgjq::job_context &) {});
  worker_thread t(w);

  {
    pgjq::connection db(conninfo());
    const std::int64_t before = db.enqueue("t", empty, q.into());
    std::optional<pgjq::job> j = db.wait_for_completion(before, 10s);
    BOOST_REQUIRE(j.has_value());
    BOOST_TEST(j->status == pgjq::job_status::completed);
  }

  const std::string cmd = sh(pg_ctl) + " restart -m fast -w -t 60 -D " + sh(pgdata) +
                          (log.empty() ? std::string(" >/dev/null") : " -l " + sh(log)) + " >/dev/null 2>&1";
  BOOST_REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, "pg_ctl restart failed: " << cmd);

  pgjq::connection db(conninfo());
  const std::int64_t after = db.enqueue("t", empty, q.into());
  std::optional<pgjq::job> j = db.wait_for_completion(after, 30s);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_TEST(w.stats().reconnects >= 1u);
  t.stop();
  std::lock_guard<std::mutex> lock(m);
  for (const std::string &line : messages)
    BOOST_TEST_MESSAGE("worker: " << line);
}

BOOST_AUTO_TEST_SUITE_END()
