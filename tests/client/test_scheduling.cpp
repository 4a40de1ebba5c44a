// test_scheduling.cpp: the client's calls for group keys, dependencies, per-queue caps and limits, timeouts
// and uniqueness windows, and a worker's handler told that its job timed out.
#include "fixture.hpp"

using namespace pgjq_test;

BOOST_AUTO_TEST_SUITE(scheduling)

BOOST_AUTO_TEST_CASE(jobs_of_one_group_key_are_handed_out_one_at_a_time_in_enqueue_order)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o = q.into();
  o.group_key = "customer-1";
  const std::int64_t first = db.enqueue("t", {{"n", 1}}, o);
  const std::int64_t second = db.enqueue("t", {{"n", 2}}, o);
  o.group_key = "customer-2";
  const std::int64_t other = db.enqueue("t", {{"n", 3}}, o);
  BOOST_TEST(db.get_job(second)->status == pgjq::job_status::waiting);
  BOOST_TEST(*db.get_job(second)->group_key == "customer-1");
  BOOST_TEST(stats_of(db, q).waiting == 1);

  std::vector<pgjq::job> batch = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(batch.size() == 2u);
  BOOST_TEST(batch[0].id == first);
  BOOST_TEST(batch[1].id == other);
  BOOST_TEST(db.claim("w", {}, 10, q.name()).empty());
  db.complete(first, "w");
  batch = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(batch.size() == 1u);
  BOOST_TEST(batch[0].id == second);
}

BOOST_AUTO_TEST_CASE(a_dependent_job_waits_until_its_dependencies_completed)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t parent = db.enqueue("parent", empty, q.into());
  pgjq::enqueue_options o = q.into();
  o.depends_on = {parent};
  const std::int64_t child = db.enqueue("child", empty, o);
  BOOST_TEST(db.get_job(child)->status == pgjq::job_status::waiting);
  std::vector<pgjq::job> batch = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(batch.size() == 1u);
  BOOST_TEST(batch[0].id == parent);
  db.complete(parent, "w");
  batch = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(batch.size() == 1u);
  BOOST_TEST(batch[0].id == child);
}

BOOST_AUTO_TEST_CASE(a_batch_takes_a_unique_and_a_group_key_per_payload)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o = q.into();
  o.unique_keys = {"a", std::nullopt, "a"};
  o.group_keys = {"g", "g", std::nullopt};
  const std::vector<std::int64_t> ids = db.enqueue_batch("t", objects(3), o);
  BOOST_REQUIRE(ids.size() == 3u);
  BOOST_TEST(ids[0] == ids[2]); // the same unique key: one job
  BOOST_TEST(db.get_job(ids[1])->status == pgjq::job_status::waiting);

  pgjq::enqueue_options single = q.into();
  single.group_keys = {"g"};
  BOOST_CHECK_THROW(db.enqueue("t", empty, single), pgjq::usage_error);
  pgjq::enqueue_options batch = q.into();
  batch.group_key = "g";
  BOOST_CHECK_THROW(db.enqueue_batch("t", objects(1), batch), pgjq::usage_error);
  pgjq::enqueue_options mismatched = q.into();
  mismatched.unique_keys = {"only-one"};
  BOOST_CHECK_THROW(db.enqueue_batch("t", objects(2), mismatched), pgjq::bad_argument);
}

BOOST_AUTO_TEST_CASE(a_unique_key_with_a_window_stays_taken_after_its_job_finished)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o = q.into();
  o.unique_key = "nightly";
  o.unique_for = std::chrono::hours(1);
  const std::int64_t id = db.enqueue("t", empty, o);
  db.cancel(id);
  BOOST_TEST(db.enqueue("t", empty, o) == id);
}

BOOST_AUTO_TEST_CASE(queue_caps_limits_and_timeouts_are_set_and_removed)
{
  pgjq::queue_options settings;
  settings.max_running = 1;
  settings.group_concurrency = 3;
  scoped_queue q(settings);
  pgjq::connection db(conninfo());
  for (int i = 0; i < 3; ++i)
    db.enqueue("t", empty, q.into());
  BOOST_TEST(db.claim("w", {}, 10, q.name()).size() == 1u);
  BOOST_TEST(db.claim("w", {}, 10, q.name()).empty());

  pgjq::queue_options change;
  change.max_running = 0; // removes the cap
  change.rate_limit = 1;
  change.rate_interval = std::chrono::hours(1);
  change.job_timeout = std::chrono::seconds(30);
  db.alter_queue(q.name(), change);
  std::vector<pgjq::job> batch = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(batch.size() == 1u); // the rate limit: one claim an hour
  BOOST_REQUIRE(batch[0].timeout_at.has_value());
  BOOST_TEST((*batch[0].timeout_at > pgjq::clock::now() + std::chrono::seconds(20)));

  pgjq::queue_options bad;
  bad.group_concurrency = 0;
  BOOST_CHECK_THROW(db.alter_queue(q.name(), bad), pgjq::bad_argument);
}

BOOST_AUTO_TEST_CASE(a_handler_that_runs_past_its_timeout_is_told_to_stop_and_its_reports_are_refused)
{
  pgjq::queue_options settings;
  settings.job_timeout = std::chrono::milliseconds(300);
  scoped_queue q(settings);
  pgjq::connection db(conninfo());
  pgjq::worker_options o = worker_options_for(q);
  o.heartbeat_interval = 100ms;
  pgjq::worker w(o);
  std::atomic<bool> told{false};
  std::atomic<bool> progress_refused{false};
  // A hung handler, were it not for the flag: it only returns once told to stop.
  w.on("hang",
       [&](pgjq::job_context &ctx)
       {
         const auto deadline = std::chrono::steady_clock::now() + 20s;
         while (!ctx.should_stop() && std::chrono::steady_clock::now() < deadline)
           std::this_thread::sleep_for(10ms);
         told = ctx.timed_out();
         try
         {
           ctx.progress(50);
         }
         catch (const pgjq::job_timed_out &)
         {
           progress_refused = true;
         }
       });
  const std::int64_t id = db.enqueue("hang", empty, q.into());
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return told.load(); }, 10s));
  BOOST_REQUIRE(wait_until([&] { return w.stats().abandoned == 1u; }, 10s));
  t.stop();
  BOOST_TEST(progress_refused.load());
  BOOST_TEST(w.stats().completed == 0u);
  // The server fails the attempt when the lease (capped at the timeout) is recovered.
  BOOST_TEST(db.recover_stale() == 1);
  const std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->attempts == 1);
  BOOST_TEST(j->last_error->find("timed out") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
