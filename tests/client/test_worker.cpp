// test_worker.cpp: the worker runtime: handlers, NOTIFY wake-up, retries to the dead letter, results and
// progress, cancellation, successes completed with the next claim, graceful shutdown by stop() and SIGTERM.
#include "fixture.hpp"

#include <csignal>
#include <iostream>
#include <mutex>
#include <set>

#include <libpq-fe.h>

using namespace pgjq_test;

BOOST_AUTO_TEST_SUITE(worker_runtime)

BOOST_AUTO_TEST_CASE(the_worker_runs_the_handler_of_each_type_and_completes_the_jobs)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  std::mutex m;
  std::multiset<std::string> seen;
  pgjq::worker w(worker_options_for(q));
  w.on("email",
       [&](pgjq::job_context &ctx)
       {
         std::lock_guard<std::mutex> lock(m);
         seen.insert("email:" + ctx.payload()["to"].get<std::string>());
       });
  w.on("report",
       [&](pgjq::job_context &ctx)
       {
         std::lock_guard<std::mutex> lock(m);
         seen.insert("report:" + ctx.payload()["name"].get<std::string>());
       });
  const std::int64_t a = db.enqueue("email", {{"to", "alice"}}, q.into());
  const std::int64_t b = db.enqueue("report", {{"name", "sales"}}, q.into());
  const std::int64_t other = db.enqueue("unhandled", empty, q.into());
  worker_thread t(w);
  for (std::int64_t id : {a, b})
  {
    std::optional<pgjq::job> j = db.wait_for_completion(id, 10s);
    BOOST_REQUIRE(j.has_value());
    BOOST_TEST(j->status == pgjq::job_status::completed);
  }
  t.stop();
  BOOST_TEST(t.error().empty());
  BOOST_TEST(seen == (std::multiset<std::string>{"email:alice", "report:sales"}));
  // Only registered types are claimed.
  BOOST_TEST(db.get_job(other)->status == pgjq::job_status::pending);
  BOOST_TEST(w.stats().completed == 2u);
}

BOOST_AUTO_TEST_CASE(an_idle_worker_wakes_on_notify_well_before_its_idle_timeout)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::worker_options o = worker_options_for(q);
  o.idle_timeout = 60s; // only a notification can wake it in time
  pgjq::worker w(o);
  std::atomic<std::int64_t> ran_at_ns{0};
  w.on("ping", [&](pgjq::job_context &) { ran_at_ns = std::chrono::steady_clock::now().time_since_epoch().count(); });
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().idle_waits >= 1; }, 10s));
  std::this_thread::sleep_for(100ms); // it is asleep on the socket now
  const auto enqueued = std::chrono::steady_clock::now();
  db.enqueue("ping", empty, q.into());
  BOOST_REQUIRE(wait_until([&] { return ran_at_ns.load() != 0; }, 20s));
  const auto latency = std::chrono::steady_clock::duration(ran_at_ns.load()) - enqueued.time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::microseconds>(latency).count() / 1000.0;
  std::cout << "NOTIFY wake-up latency (enqueue commit to handler start): " << ms << " ms" << std::endl;
  BOOST_TEST(ms < 5000.0);
}

BOOST_AUTO_TEST_CASE(a_handler_exception_is_retried_then_dead_lettered_with_its_message)
{
  pgjq::queue_options qo;
  qo.max_attempts = 3;
  qo.retry_base = 20ms;
  qo.retry_cap = 100ms;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  pgjq::worker_options o = worker_options_for(q);
  o.idle_timeout = 50ms; // a backoff ends without a NOTIFY
  pgjq::worker w(o);
  std::atomic<int> calls{0};
  w.on("flaky", [&](pgjq::job_context &) { throw std::runtime_error("boom #" + std::to_string(++calls)); });
  const std::int64_t id = db.enqueue("flaky", empty, q.into());
  worker_thread t(w);
  std::optional<pgjq::job> j = db.wait_for_completion(id, 20s);
  t.stop();
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::failed);
  BOOST_TEST(j->attempts == 3);
  BOOST_TEST(j->last_error.value_or("") == "boom #3");
  BOOST_TEST(calls.load() == 3);
  BOOST_TEST(w.stats().failed == 3u);
  BOOST_TEST(stats_of(db, q).failed == 1);
}

BOOST_AUTO_TEST_CASE(a_handler_result_and_progress_are_stored)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::worker w(worker_options_for(q));
  std::atomic<int> progress_seen{-1};
  w.on("report",
       [&](pgjq::job_context &ctx)
       {
         ctx.progress(60, std::string("rendering"));
         pgjq::connection peek(conninfo());
         progress_seen = peek.get_job(ctx.job().id)->progress.value_or(-1);
         ctx.set_result({{"pages", 12}});
       });
  const std::int64_t id = db.enqueue("report", empty, q.into());
  worker_thread t(w);
  std::optional<pgjq::job> j = db.wait_for_completion(id, 10s);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_REQUIRE(j->result().has_value());
  BOOST_TEST((*j->result())["pages"] == 12);
  BOOST_TEST(progress_seen.load() == 60);
}

BOOST_AUTO_TEST_CASE(a_cancelled_running_job_stops_being_heartbeated)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::worker_options o = worker_options_for(q);
  o.heartbeat_interval = 100ms;
  pgjq::worker w(o);
  std::atomic<bool> started{false}, saw_cancel{false}, let_go{false};
  // The handler notices the cancellation but keeps running until the test lets it go: the heartbeats must
  // stop because the server said "cancelled", not because the handler returned.
  w.on("long",
       [&](pgjq::job_context &ctx)
       {
         started = true;
         const auto deadline = std::chrono::steady_clock::now() + 20s;
         while (!let_go && std::chrono::steady_clock::now() < deadline)
         {
           if (ctx.cancelled())
             saw_cancel = true;
           std::this_thread::sleep_for(10ms);
         }
       });
  const std::int64_t id = db.enqueue("long", empty, q.into());
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return started.load(); }, 10s));
  BOOST_REQUIRE(wait_until([&] { return w.stats().heartbeats >= 2; }, 10s));
  BOOST_REQUIRE(db.cancel(id));
  BOOST_REQUIRE(wait_until([&] { return saw_cancel.load(); }, 10s));
  const std::uint64_t beats = w.stats().heartbeats;
  std::this_thread::sleep_for(600ms); // six intervals, the handler still running
  BOOST_TEST(w.stats().heartbeats == beats);
  let_go = true;
  t.stop();
  BOOST_TEST(db.get_job(id)->status == pgjq::job_status::cancelled);
  BOOST_TEST(w.stats().abandoned == 1u);
  BOOST_TEST(w.stats().completed == 0u);
}

BOOST_AUTO_TEST_CASE(successes_are_completed_together_with_the_next_claim_never_one_call_per_job)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  PGconn *raw = db.native_handle();
  BOOST_REQUIRE_MESSAGE(scalar(raw, "SELECT (current_setting('track_functions') = 'all')::int") == 1,
                        "this test counts calls in pg_stat_user_functions: run with track_functions = all");
  const std::string count_sql = "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions "
                                "WHERE schemaname = 'pgjq' AND funcname = ";
  auto calls = [&](const char *fn)
  {
    scalar(raw, "SELECT count(*) FROM (SELECT pg_stat_clear_snapshot()) AS s");
    return scalar(raw, count_sql + "'" + fn + "'");
  };
  // Settle the counts of earlier tests' sessions, which are flushed when they end.
  std::this_thread::sleep_for(1500ms);
  const std::int64_t loop_before = calls("complete_and_claim"), batch_before = calls("complete_batch"),
                     single_before = calls("complete");

  db.enqueue_batch("t", objects(20), q.into());
  pgjq::worker_options o = worker_options_for(q);
  o.batch_size = 10;
  o.idle_timeout = 60s; // no idle re-claims while the test counts
  pgjq::worker w(o);
  w.on("t", [](pgjq::job_context &) {});
  {
    worker_thread t(w);
    BOOST_REQUIRE(wait_until([&] { return stats_of(db, q).completed == 20; }, 20s));
  } // the worker's sessions end here and flush their function statistics
  BOOST_TEST(w.stats().completed == 20u);
  // two batches of 10: the second claim completes the first batch, a third (empty) claim the second
  BOOST_REQUIRE(wait_until([&] { return calls("complete_and_claim") - loop_before >= 2; }, 10s));
  BOOST_TEST(calls("complete_and_claim") - loop_before == 2);
  BOOST_TEST(calls("complete_batch") - batch_before == 0);
  BOOST_TEST(calls("complete") - single_before == 0);
}

BOOST_AUTO_TEST_CASE(stopping_finishes_the_running_jobs_and_leaves_none_claimed)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  db.enqueue_batch("slow", objects(20), q.into());
  pgjq::worker_options o = worker_options_for(q);
  o.concurrency = 2;
  o.batch_size = 5;
  pgjq::worker w(o);
  std::atomic<int> started{0};
  w.on("slow",
       [&](pgjq::job_context &)
       {
         ++started;
         std::this_thread::sleep_for(150ms);
       });
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return started.load() >= 2; }, 10s));
  t.stop();
  BOOST_TEST(t.error().empty());
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.claimed == 0);
  BOOST_TEST(s.running == 0);
  BOOST_TEST(s.completed == started.load()); // every started job was finished, not abandoned
  BOOST_TEST(s.completed + s.pending == 20); // the rest went straight back to pending (retry_in 0)
  BOOST_TEST(w.stats().released > 0u);
  BOOST_TEST(w.stats().released + w.stats().completed == w.stats().claimed);
}

BOOST_AUTO_TEST_CASE(sigterm_stops_the_worker_gracefully)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  db.enqueue_batch("slow", objects(6), q.into());
  pgjq::worker_options o = worker_options_for(q);
  o.handle_signals = true;
  o.batch_size = 6;
  pgjq::worker w(o);
  std::atomic<int> started{0};
  w.on("slow",
       [&](pgjq::job_context &)
       {
         ++started;
         std::this_thread::sleep_for(200ms);
       });
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return started.load() >= 1; }, 10s));
  BOOST_REQUIRE(kill(getpid(), SIGTERM) == 0);
  BOOST_REQUIRE(wait_until([&] { return w.stopping(); }, 5s));
  t.join();
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.claimed + s.running == 0);
  BOOST_TEST(s.completed >= 1);
  BOOST_TEST(s.completed + s.pending == 6);
}

BOOST_AUTO_TEST_SUITE_END()
