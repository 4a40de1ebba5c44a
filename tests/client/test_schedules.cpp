// test_schedules.cpp: the client's calls for periodic jobs and bulk operations. The test server does not
// preload pgjq, so a schedule is fired by hand (pgjq.fire_schedules(), what the maintenance worker does).
#include "fixture.hpp"

using namespace pgjq_test;

namespace
{

// Makes the schedule due now and fires it, as the maintenance worker would at its time.
void fire_now(pgjq::connection &db, const std::string &name)
{
  db.execute("BEGIN");
  db.execute("UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = '" + name + "'");
  db.execute("SELECT pgjq.fire_schedules()");
  db.execute("COMMIT");
}

} // namespace

BOOST_AUTO_TEST_SUITE(schedules)

BOOST_AUTO_TEST_CASE(a_schedule_is_created_listed_fired_as_an_ordinary_job_and_removed)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::string name = q.name() + "_nightly";
  pgjq::schedule_options o;
  o.queue = q.name();
  o.priority = 7;
  o.time_zone = "Europe/Paris";
  o.missed = pgjq::missed_firings::run_once;
  const std::optional<pgjq::time_point> first = db.schedule(name, "0 3 * * *", "report", {{"kind", "nightly"}}, o);
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST((*first > pgjq::clock::now()));
  const std::vector<pgjq::time_point> preview = db.next_firings("0 3 * * *", "Europe/Paris", std::nullopt, 2);
  BOOST_REQUIRE(preview.size() == 2u);
  BOOST_TEST((preview[0] == *first));
  BOOST_TEST((preview[1] - preview[0] >= std::chrono::hours(23)));

  std::optional<pgjq::schedule_info> s = db.get_schedule(name);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->cron == "0 3 * * *");
  BOOST_TEST(s->time_zone == "Europe/Paris");
  BOOST_TEST(s->queue == q.name());
  BOOST_TEST(s->priority == 7);
  BOOST_TEST((s->missed == pgjq::missed_firings::run_once));
  BOOST_TEST((s->next_run == first));
  BOOST_TEST(nlohmann::json::parse(s->payload_text) == (nlohmann::json{{"kind", "nightly"}}));
  bool listed = false;
  for (const pgjq::schedule_info &each : db.schedules())
    listed = listed || each.name == name;
  BOOST_TEST(listed);

  fire_now(db, name);
  s = db.get_schedule(name);
  BOOST_REQUIRE(s->last_job_id.has_value());
  BOOST_TEST(s->jobs_enqueued == 1);
  const std::optional<pgjq::job> fired = db.get_job(*s->last_job_id);
  BOOST_REQUIRE(fired.has_value());
  BOOST_TEST(fired->type == "report");
  BOOST_TEST(fired->priority == 7);
  BOOST_TEST(fired->payload() == (nlohmann::json{{"kind", "nightly"}}));
  std::vector<pgjq::job> batch = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(batch.size() == 1u);
  BOOST_TEST(batch[0].id == *s->last_job_id);

  BOOST_TEST(db.pause_schedule(name));
  BOOST_TEST(!db.get_schedule(name)->next_run.has_value());
  BOOST_TEST(db.resume_schedule(name));
  BOOST_TEST(db.get_schedule(name)->next_run.has_value());
  BOOST_TEST(db.unschedule(name));
  BOOST_TEST(!db.unschedule(name));
  BOOST_TEST(!db.get_schedule(name).has_value());
}

BOOST_AUTO_TEST_CASE(a_paused_schedule_has_no_first_firing_and_bad_cron_is_a_bad_argument)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::schedule_options o;
  o.queue = q.name();
  o.paused = true;
  BOOST_TEST(!db.schedule(q.name() + "_paused", "@every 10 seconds", "t", empty, o).has_value());
  BOOST_CHECK_THROW(db.schedule(q.name() + "_bad", "61 * * * *", "t", empty, o), pgjq::bad_argument);
  BOOST_CHECK_THROW(db.next_firings("0 0 30 2 *"), pgjq::bad_argument);
  o.time_zone = "Nowhere/Special";
  BOOST_CHECK_THROW(db.schedule(q.name() + "_bad", "@daily", "t", empty, o), pgjq::bad_argument);
  o.time_zone = "UTC";
  o.queue = q.name() + "_missing";
  BOOST_CHECK_THROW(db.schedule(q.name() + "_bad", "@daily", "t", empty, o), pgjq::unknown_queue);
  BOOST_TEST(db.unschedule(q.name() + "_paused"));
}

BOOST_AUTO_TEST_CASE(bulk_operations_take_batches_until_none_is_left)
{
  pgjq::queue_options settings;
  settings.max_attempts = 1;
  scoped_queue q(settings);
  pgjq::connection db(conninfo());
  db.enqueue_batch("dead", objects(5), q.into());
  for (const pgjq::job &j : db.claim("w", {"dead"}, 10, q.name()))
    db.fail(j.id, "w", "boom");
  db.enqueue_batch("live", objects(3), q.into());

  pgjq::job_filter filter;
  filter.max_jobs = 2;
  std::vector<std::int64_t> retried;
  for (std::int64_t n; (n = db.retry_failed(q.name(), filter)) > 0;)
    retried.push_back(n);
  BOOST_TEST((retried == std::vector<std::int64_t>{2, 2, 1}));
  BOOST_TEST(stats_of(db, q).pending == 8);

  filter.job_type = "live";
  filter.max_jobs = 1000;
  BOOST_TEST(db.cancel_jobs(q.name(), filter) == 3);
  filter.job_type.reset();
  filter.status = pgjq::job_status::cancelled;
  BOOST_TEST(db.delete_jobs(q.name(), filter) == 3);
  BOOST_TEST(db.delete_jobs(q.name(), filter) == 0);
  const pgjq::queue_stats stats = stats_of(db, q);
  BOOST_TEST(stats.pending == 5);
  // totals since the queue was created: deleting the history does not lower them
  BOOST_TEST(stats.cancelled == 3);
  BOOST_TEST(stats.failed == 5);

  BOOST_CHECK_THROW(db.retry_failed(q.name(), filter), pgjq::usage_error);
  filter.status = pgjq::job_status::pending;
  BOOST_CHECK_THROW(db.delete_jobs(q.name(), filter), pgjq::bad_argument);
  pgjq::job_filter too_many;
  too_many.max_jobs = 10001;
  BOOST_CHECK_THROW(db.cancel_jobs(q.name(), too_many), pgjq::bad_argument);
}

BOOST_AUTO_TEST_SUITE_END()
