// test_round_trips.cpp: every call of the client against the server: what goes in comes back out.
#include "fixture.hpp"

#include <set>

#include <libpq-fe.h>

using namespace pgjq_test;

BOOST_AUTO_TEST_SUITE(round_trips)

BOOST_AUTO_TEST_CASE(enqueue_returns_an_id_whose_job_is_pending_with_its_payload)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o = q.into();
  o.priority = 7;
  const std::int64_t id = db.enqueue("email", {{"to", "alice@example.com"}, {"n", 1}}, o);
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->id == id);
  BOOST_TEST(j->queue == q.name());
  BOOST_TEST(j->type == "email");
  BOOST_TEST(j->priority == 7);
  BOOST_TEST(j->status == pgjq::job_status::pending);
  BOOST_TEST(j->payload()["to"] == "alice@example.com");
  BOOST_TEST(j->payload()["n"] == 1);
  BOOST_TEST(!j->result_text.has_value());
}

BOOST_AUTO_TEST_CASE(enqueue_raw_accepts_the_callers_own_json_text)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue_raw("raw", R"({"nested": {"list": [1, 2, 3]}, "text": "é\"x"})", q.into());
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->payload()["nested"]["list"][2] == 3);
  BOOST_TEST(j->payload()["text"] == "é\"x");
}

BOOST_AUTO_TEST_CASE(try_enqueue_returns_an_id_while_there_is_room_and_nothing_when_full)
{
  pgjq::queue_options qo;
  qo.max_pending = 2;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  BOOST_TEST(db.try_enqueue("a", empty, q.into()).has_value());
  BOOST_TEST(db.try_enqueue("a", empty, q.into()).has_value());
  BOOST_TEST(!db.try_enqueue("a", empty, q.into()).has_value());
  BOOST_TEST(stats_of(db, q).pending == 2);
}

BOOST_AUTO_TEST_CASE(enqueue_batch_returns_the_ids_in_payload_order)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  std::vector<nlohmann::json> payloads;
  for (int i = 0; i < 5; ++i)
    payloads.push_back({{"i", i}});
  const std::vector<std::int64_t> ids = db.enqueue_batch("batch", payloads, q.into());
  BOOST_REQUIRE(ids.size() == 5u);
  for (int i = 0; i < 5; ++i)
  {
    std::optional<pgjq::job> j = db.get_job(ids[i]);
    BOOST_REQUIRE(j.has_value());
    BOOST_TEST(j->payload()["i"] == i);
    BOOST_TEST(j->type == "batch");
  }
}

BOOST_AUTO_TEST_CASE(claim_leases_runnable_jobs_to_the_worker_highest_priority_first)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options low = q.into(), high = q.into();
  low.priority = 1;
  high.priority = 500;
  const std::int64_t a = db.enqueue("t", empty, low);
  const std::int64_t b = db.enqueue("t", empty, high);
  std::vector<pgjq::job> jobs = db.claim("w1", {}, 10, q.name());
  BOOST_REQUIRE(jobs.size() == 2u);
  BOOST_TEST(jobs[0].id == b);
  BOOST_TEST(jobs[1].id == a);
  for (const pgjq::job &j : jobs)
  {
    BOOST_TEST((j.status == pgjq::job_status::claimed || j.status == pgjq::job_status::running));
    BOOST_TEST(j.worker_id.value_or("") == "w1");
    BOOST_TEST(j.lease_expires_at.has_value());
  }
  BOOST_TEST(db.claim("w2", {}, 10, q.name()).empty());
}

BOOST_AUTO_TEST_CASE(claim_takes_only_the_requested_job_types_and_at_most_the_batch_size)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  for (int i = 0; i < 3; ++i)
    db.enqueue("email", empty, q.into());
  const std::int64_t report = db.enqueue("report", empty, q.into());
  std::vector<pgjq::job> reports = db.claim("w", {"report", "needs \"quoting\""}, 10, q.name());
  BOOST_REQUIRE(reports.size() == 1u);
  BOOST_TEST(reports[0].id == report);
  BOOST_TEST(db.claim("w", {"email"}, 2, q.name()).size() == 2u);
  BOOST_TEST(db.claim("w", {"email"}, 2, q.name()).size() == 1u);
}

BOOST_AUTO_TEST_CASE(complete_with_a_result_stores_the_result)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  db.complete(id, "w", {{"answer", 42}});
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_REQUIRE(j->result().has_value());
  BOOST_TEST((*j->result())["answer"] == 42);
  BOOST_TEST(j->finished_at.has_value());
}

BOOST_AUTO_TEST_CASE(complete_batch_completes_every_job_and_returns_the_count)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("t", objects(3), q.into());
  std::vector<pgjq::job> jobs = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE(jobs.size() == 3u);
  BOOST_TEST(db.complete_batch(ids, "w") == 3);
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.completed == 3);
  BOOST_TEST(s.claimed + s.running + s.pending == 0);
}

BOOST_AUTO_TEST_CASE(fail_returns_pending_while_attempts_remain_and_failed_at_the_last)
{
  pgjq::queue_options qo;
  qo.max_attempts = 2;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  BOOST_TEST(db.fail(id, "w", "first", std::chrono::microseconds(0)) == pgjq::job_status::pending);
  std::vector<pgjq::job> again = db.claim("w", {}, 1, q.name());
  BOOST_REQUIRE(again.size() == 1u);
  BOOST_TEST(again[0].last_error.value_or("") == "first");
  BOOST_TEST(db.fail(id, "w", "second") == pgjq::job_status::failed);
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::failed);
  BOOST_TEST(j->attempts == 2);
  BOOST_TEST(j->last_error.value_or("") == "second");
}

BOOST_AUTO_TEST_CASE(job_errors_lists_every_failed_attempt_with_its_worker_oldest_first)
{
  pgjq::queue_options qo;
  qo.max_attempts = 3;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_TEST(db.job_errors(id).empty());
  const auto before = pgjq::time_point::clock::now() - std::chrono::seconds(5);
  BOOST_REQUIRE(db.claim("w1", {}, 1, q.name()).size() == 1u);
  db.fail(id, "w1", "first", std::chrono::microseconds(0));
  BOOST_REQUIRE(db.claim("w2", {}, 1, q.name()).size() == 1u);
  db.fail(id, "w2", "second", std::chrono::microseconds(0));
  const std::vector<pgjq::job_error> errors = db.job_errors(id);
  BOOST_REQUIRE(errors.size() == 2u);
  BOOST_TEST(errors[0].job_id == id);
  BOOST_TEST(errors[0].failure == 1);
  BOOST_TEST(errors[0].attempt == 1);
  BOOST_TEST(errors[0].worker_id.value_or("") == "w1");
  BOOST_TEST(errors[0].error == "first");
  BOOST_TEST(errors[1].failure == 2);
  BOOST_TEST(errors[1].worker_id.value_or("") == "w2");
  BOOST_TEST(errors[1].error == "second");
  BOOST_REQUIRE(errors[1].started_at.has_value());
  BOOST_TEST((*errors[1].started_at >= before && *errors[1].started_at <= errors[1].failed_at));
  BOOST_TEST(errors[1].failures_not_kept == 0);
}

BOOST_AUTO_TEST_CASE(fail_with_a_delay_schedules_the_retry_for_later)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  BOOST_TEST(db.fail(id, "w", "later", std::chrono::hours(1)) == pgjq::job_status::pending);
  BOOST_TEST(db.claim("w", {}, 1, q.name()).empty());
  BOOST_TEST(stats_of(db, q).scheduled == 1);
}

BOOST_AUTO_TEST_CASE(progress_and_its_stage_are_recorded)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  db.progress(id, "w", 40, std::string("halfway"));
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->progress.value_or(-1) == 40);
  BOOST_TEST(j->current_stage.value_or("") == "halfway");
}

BOOST_AUTO_TEST_CASE(heartbeat_extends_the_lease)
{
  pgjq::queue_options qo;
  qo.lease = std::chrono::seconds(60);
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  std::vector<pgjq::job> jobs = db.claim("w", {}, 1, q.name());
  BOOST_REQUIRE(jobs.size() == 1u);
  BOOST_REQUIRE(jobs[0].lease_expires_at.has_value());
  std::this_thread::sleep_for(50ms);
  const pgjq::time_point expiry = db.heartbeat(id, "w");
  BOOST_TEST((expiry > *jobs[0].lease_expires_at));
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST((j->lease_expires_at == expiry));
}

BOOST_AUTO_TEST_CASE(cancel_returns_true_for_a_live_job_and_false_once_it_finished)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_TEST(db.cancel(id));
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::cancelled);
  BOOST_TEST(!db.cancel(id));
}

BOOST_AUTO_TEST_CASE(retry_sends_a_dead_lettered_job_back_to_pending)
{
  pgjq::queue_options qo;
  qo.max_attempts = 1;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  BOOST_REQUIRE(db.fail(id, "w", "boom") == pgjq::job_status::failed);
  db.retry(id);
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::pending);
  BOOST_TEST(db.claim("w", {}, 1, q.name()).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_job_scheduled_for_later_is_not_claimed_before_its_time)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o = q.into();
  o.run_at = pgjq::clock::now() + std::chrono::hours(1);
  const std::int64_t id = db.enqueue("t", empty, o);
  BOOST_TEST(db.claim("w", {}, 10, q.name()).empty());
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.scheduled == 1);
  BOOST_TEST(s.pending == 0);
  std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  // The timestamp travelled as text in UTC and came back as epoch seconds: same instant to the microsecond.
  const auto delta = std::chrono::duration_cast<std::chrono::microseconds>(j->run_at - *o.run_at).count();
  BOOST_TEST(std::abs(delta) <= 1);
}

BOOST_AUTO_TEST_CASE(jobs_lists_pending_jobs_due_now_or_due_later_apart)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t now_id = db.enqueue("t", empty, q.into());
  pgjq::enqueue_options later = q.into();
  later.run_at = pgjq::clock::now() + std::chrono::hours(1);
  const std::int64_t later_id = db.enqueue("t", empty, later);
  pgjq::job_listing l;
  l.queue = q.name();
  l.status = pgjq::job_status::pending;
  const auto ids = [&]()
  {
    std::vector<std::int64_t> out;
    for (const pgjq::job &j : db.jobs(l))
      out.push_back(j.id);
    return out;
  };
  BOOST_TEST(ids() == (std::vector<std::int64_t>{later_id, now_id}));
  l.due_now = true;
  BOOST_TEST(ids() == (std::vector<std::int64_t>{now_id}));
  l.due_now = false;
  BOOST_TEST(ids() == (std::vector<std::int64_t>{later_id}));
}

BOOST_AUTO_TEST_CASE(jobs_pages_by_id_and_count_jobs_stops_at_its_bound)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  std::vector<std::int64_t> enqueued;
  for (int i = 0; i < 7; ++i)
    enqueued.push_back(db.enqueue("t", empty, q.into()));
  pgjq::job_listing l;
  l.queue = q.name();
  l.limit = 3;
  std::vector<std::int64_t> seen;
  for (std::vector<pgjq::job> page; !(page = db.jobs(l)).empty(); l.before_id = page.back().id)
    for (const pgjq::job &j : page)
      seen.push_back(j.id);
  BOOST_TEST(seen == std::vector<std::int64_t>(enqueued.rbegin(), enqueued.rend()));
  l.before_id.reset();
  BOOST_TEST(db.count_jobs(l, 100) == 7);
  BOOST_TEST(db.count_jobs(l, 5) == 5);
  l.status = pgjq::job_status::failed;
  BOOST_TEST(db.count_jobs(l, 100) == 0);
  // Finished before a time: live jobs never, a completed one once that time is past its end.
  const std::vector<pgjq::job> claimed = db.claim("w", {}, 1, q.name());
  BOOST_REQUIRE(claimed.size() == 1);
  db.complete(claimed.front().id, "w");
  l.status.reset();
  l.finished_before = pgjq::clock::now() + std::chrono::hours(1);
  BOOST_TEST(db.count_jobs(l, 100) == 1);
  l.finished_before = pgjq::clock::now() - std::chrono::hours(1);
  BOOST_TEST(db.count_jobs(l, 100) == 0);
  BOOST_CHECK_THROW(db.count_jobs(l, 0), pgjq::bad_argument);
  // Planned with its filters at each call: never a prepared statement, whose generic plan would read the
  // whole history where an index finds the few rows a filter names.
  PGresult *prepared = PQexec(db.native_handle(), "SELECT count(*) FROM pg_catalog.pg_prepared_statements"
                                                  " WHERE name IN ('pgjq_list_jobs', 'pgjq_count_jobs')");
  BOOST_REQUIRE(PQresultStatus(prepared) == PGRES_TUPLES_OK);
  BOOST_TEST(std::string(PQgetvalue(prepared, 0, 0)) == "0");
  PQclear(prepared);
  BOOST_CHECK_THROW(db.count_jobs(l, 10000001), pgjq::bad_argument);
}

BOOST_AUTO_TEST_CASE(jobs_filter_by_payload_and_queue_workers_name_who_holds_what)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t a = db.enqueue("t", nlohmann::json{{"order", 17}, {"shop", "x"}}, q.into());
  db.enqueue("t", nlohmann::json{{"order", 18}}, q.into());
  pgjq::job_listing l;
  l.queue = q.name();
  l.payload_contains = nlohmann::json{{"order", 17}};
  const std::vector<pgjq::job> found = db.jobs(l);
  BOOST_REQUIRE(found.size() == 1);
  BOOST_TEST(found.front().id == a);
  BOOST_TEST(db.count_jobs(l, 10) == 1);
  l.payload_contains = nlohmann::json{{"order", "17"}}; // a string is not the number
  BOOST_TEST(db.jobs(l).empty());

  BOOST_TEST(db.queue_workers(q.name()).empty());
  BOOST_REQUIRE(db.claim("w-one", {}, 2, q.name()).size() == 2);
  const std::vector<pgjq::queue_worker> workers = db.queue_workers(q.name());
  BOOST_REQUIRE(workers.size() == 1);
  BOOST_TEST(workers.front().worker_id == "w-one");
  BOOST_TEST(workers.front().jobs == 2);
  BOOST_TEST(workers.front().role.has_value());
  BOOST_TEST(workers.front().first_lease_expires_at.has_value());
  BOOST_TEST(workers.front().oldest_claimed_at.has_value());
  // This test's role is the extension's owner: it holds every capability; an unknown one is refused.
  const std::optional<bool> admin = db.holds_capability("admin", q.name());
  BOOST_REQUIRE(admin.has_value());
  BOOST_TEST(*admin);
  BOOST_CHECK_THROW(db.holds_capability("root", q.name()), pgjq::bad_argument);
}

BOOST_AUTO_TEST_CASE(get_queue_returns_every_setting_and_nothing_for_an_unknown_queue)
{
  pgjq::queue_options qo;
  qo.max_attempts = 4;
  qo.retention = std::chrono::hours(30);
  qo.rate_limit = 20;
  qo.rate_interval = std::chrono::seconds(5);
  qo.keep_completed = false;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::optional<pgjq::queue_info> info = db.get_queue(q.name());
  BOOST_REQUIRE(info.has_value());
  BOOST_TEST(info->queue == q.name());
  BOOST_TEST(info->max_attempts == 4);
  BOOST_TEST(info->retention.count() == std::chrono::microseconds(std::chrono::hours(30)).count());
  BOOST_TEST(info->rate_limit.value_or(0) == 20);
  BOOST_TEST(info->rate_interval.count() == 5000000);
  BOOST_TEST(!info->keep_completed);
  BOOST_TEST(!info->max_pending.has_value());
  BOOST_TEST(!info->job_timeout.has_value());
  BOOST_TEST(!db.get_queue("no-such-queue-here").has_value());
}

BOOST_AUTO_TEST_CASE(queue_administration_round_trips_through_stats)
{
  pgjq::queue_options qo;
  qo.max_pending = 10;
  qo.fifo = true;
  qo.retry_base = 50ms;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.max_pending.value_or(0) == 10);
  BOOST_TEST(s.fifo);
  BOOST_TEST(!s.paused);

  pgjq::queue_options change;
  change.fifo = false;
  change.clear_max_pending = true;
  db.alter_queue(q.name(), change);
  s = stats_of(db, q);
  BOOST_TEST(!s.fifo);
  BOOST_TEST(!s.max_pending.has_value());

  db.pause_queue(q.name());
  BOOST_TEST(stats_of(db, q).paused);
  db.enqueue("t", empty, q.into());
  BOOST_TEST(db.claim("w", {}, 10, q.name()).empty());
  db.resume_queue(q.name());
  BOOST_TEST(!stats_of(db, q).paused);
  BOOST_TEST(db.claim("w", {}, 10, q.name()).size() == 1u);

  bool listed = false;
  for (const pgjq::queue_stats &each : db.stats())
    listed = listed || each.queue == q.name();
  BOOST_TEST(listed);

  const std::string extra = q.name() + "x";
  db.create_queue(extra);
  BOOST_TEST(db.stats(extra).has_value());
  db.drop_queue(extra);
  BOOST_TEST(!db.stats(extra).has_value());
}

BOOST_AUTO_TEST_CASE(stats_count_jobs_by_state)
{
  pgjq::queue_options qo;
  qo.max_attempts = 1;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("t", objects(5), q.into());
  std::vector<pgjq::job> jobs = db.claim("w", {}, 3, q.name());
  BOOST_REQUIRE(jobs.size() == 3u);
  db.complete(jobs[0].id, "w");
  db.fail(jobs[1].id, "w", "x");
  db.cancel(ids[4]);
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.completed == 1);
  BOOST_TEST(s.failed == 1);
  BOOST_TEST(s.cancelled == 1);
  BOOST_TEST(s.claimed + s.running == 1);
  BOOST_TEST(s.pending == 1);
  BOOST_TEST(s.oldest_runnable_age.has_value());
}

BOOST_AUTO_TEST_CASE(recover_stale_returns_expired_leases_to_pending_and_prune_deletes_old_jobs)
{
  pgjq::queue_options qo;
  qo.lease = 100ms;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::int64_t stale = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  std::this_thread::sleep_for(400ms);
  BOOST_TEST(db.recover_stale() >= 1);
  std::optional<pgjq::job> j = db.get_job(stale);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::pending);

  const std::int64_t done = db.enqueue("t", empty, q.into());
  BOOST_TEST(db.cancel(done));
  std::this_thread::sleep_for(50ms);
  BOOST_TEST(db.prune(std::chrono::microseconds(1)) >= 1);
  BOOST_TEST(!db.get_job(done).has_value());
}

BOOST_AUTO_TEST_CASE(listen_receives_the_new_job_notification_with_the_queue_name)
{
  scoped_queue q;
  pgjq::connection listener(conninfo());
  pgjq::connection producer(conninfo());
  listener.listen(pgjq::new_job_channel);
  producer.enqueue("t", empty, q.into());
  std::optional<pgjq::notification> n;
  // Other tests' queues may notify too: look for ours.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline)
  {
    n = listener.wait_for_notification(1s);
    if (n && n->payload == q.name())
      break;
  }
  BOOST_REQUIRE(n.has_value());
  BOOST_TEST(n->channel == pgjq::new_job_channel);
  BOOST_TEST(n->payload == q.name());
}

BOOST_AUTO_TEST_CASE(job_finished_notification_names_the_job_queue_and_status)
{
  scoped_queue q;
  pgjq::connection listener(conninfo());
  pgjq::connection db(conninfo());
  listener.listen(pgjq::job_finished_channel);
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  db.complete(id, "w");
  std::optional<pgjq::notification> n = listener.wait_for_notification(5s);
  BOOST_REQUIRE(n.has_value());
  const nlohmann::json payload = nlohmann::json::parse(n->payload);
  BOOST_TEST(payload["id"] == id);
  BOOST_TEST(payload["queue"] == q.name());
  BOOST_TEST(payload["status"] == "completed");
}

// Claims the queue's job from another session and completes it with {"ok": true} after a pause, so
// that a wait begun now has to be woken.
static std::thread complete_from_another_session(std::int64_t id, const std::string &queue)
{
  return std::thread(
      [id, queue]
      {
        pgjq::connection w(conninfo());
        w.claim("w", {}, 1, queue);
        std::this_thread::sleep_for(300ms);
        w.complete(id, "w", {{"ok", true}});
      });
}

BOOST_AUTO_TEST_CASE(wait_for_completion_returns_the_result_set_by_another_session)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  std::thread finisher = complete_from_another_session(id, q.name());
  const auto start = std::chrono::steady_clock::now();
  std::optional<pgjq::job> j = db.wait_for_completion(id, 10s);
  const auto waited = std::chrono::steady_clock::now() - start;
  finisher.join();
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_REQUIRE(j->result().has_value());
  BOOST_TEST((*j->result())["ok"] == true);
  BOOST_TEST_MESSAGE("wait_for_completion returned after "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
  BOOST_TEST((waited < 5s)); // woken by the notification, far before the 10 s timeout
}

BOOST_AUTO_TEST_CASE(a_queue_that_does_not_keep_completed_jobs_still_ends_the_wait)
{
  pgjq::queue_options qo;
  qo.keep_completed = false;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  std::thread finisher = complete_from_another_session(id, q.name());
  std::optional<pgjq::job> j = db.wait_for_completion(id, 10s);
  finisher.join();
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->id == id);
  BOOST_TEST(j->queue == q.name());
  BOOST_TEST(j->type == "t");
  BOOST_TEST(j->payload() == empty);
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_TEST(!j->result().has_value()); // dropped with the job
  BOOST_TEST(!db.get_job(id).has_value());
  // completed before the wait began: nothing is left to tell it from a job that never existed
  BOOST_CHECK_THROW(db.wait_for_completion(id, 100ms), pgjq::job_not_found);

  pgjq::queue_options keep;
  keep.keep_completed = true;
  db.alter_queue(q.name(), keep);
  const std::int64_t kept = db.enqueue("t", empty, q.into());
  db.claim("w", {}, 1, q.name());
  db.complete(kept, "w");
  std::optional<pgjq::job> row = db.get_job(kept);
  BOOST_REQUIRE(row.has_value());
  BOOST_TEST(row->status == pgjq::job_status::completed);
}

BOOST_AUTO_TEST_CASE(wait_for_completion_returns_at_once_for_a_job_that_already_finished)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  db.cancel(id);
  std::optional<pgjq::job> j = db.wait_for_completion(id, 0ms);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::cancelled);
}

BOOST_AUTO_TEST_CASE(wait_for_completion_returns_nothing_after_the_timeout)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_TEST(!db.wait_for_completion(id, 200ms).has_value());
  // It did not stay subscribed: later finishes would pile up in this session's libpq buffer.
  PGresult *res = PQexec(db.native_handle(), "SELECT count(*) FROM pg_catalog.pg_listening_channels()");
  BOOST_REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK);
  BOOST_TEST(std::string(PQgetvalue(res, 0, 0)) == "0");
  PQclear(res);
}

// Completes the job from another session whose notice is suppressed (triggers off for that session), as
// when a notice is lost: only reading the job again can tell a waiter that it finished.
static void complete_without_notice(std::int64_t id, const std::string &queue)
{
  pgjq::connection w(conninfo());
  w.execute("SET session_replication_role = replica");
  BOOST_REQUIRE(w.claim("w", {}, 1, queue).size() == 1u);
  w.complete(id, "w");
}

BOOST_AUTO_TEST_CASE(wait_for_completion_reads_the_job_again_at_its_deadline)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  std::thread finisher(
      [&]
      {
        std::this_thread::sleep_for(100ms);
        complete_without_notice(id, q.name());
      });
  std::optional<pgjq::job> j = db.wait_for_completion(id, 1s);
  finisher.join();
  BOOST_REQUIRE_MESSAGE(j.has_value(), "the job completed during the wait, but the wait said it did not finish");
  BOOST_TEST(j->status == pgjq::job_status::completed);
}

BOOST_AUTO_TEST_CASE(wait_for_completion_reconnects_and_reads_the_job_again_after_losing_its_session)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  const int waiter_pid = PQbackendPID(db.native_handle());
  std::optional<pgjq::job> j;
  std::string failure;
  std::thread waiter(
      [&]
      {
        try
        {
          j = db.wait_for_completion(id, 20s);
        }
        catch (const std::exception &e)
        {
          failure = e.what();
        }
      });
  pgjq::connection admin(conninfo());
  // The waiter has LISTENed and read the job once: it sleeps on its socket.
  const std::string asleep = "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(waiter_pid) +
                             " AND state = 'idle' AND query LIKE '%FROM pgjq.jobs WHERE id%'";
  BOOST_REQUIRE(wait_until([&] { return scalar(admin.native_handle(), asleep) == 1; }, 10s));
  complete_without_notice(id, q.name());
  scalar(admin.native_handle(), "SELECT pg_terminate_backend(" + std::to_string(waiter_pid) + ")::int");
  waiter.join();
  BOOST_REQUIRE_MESSAGE(failure.empty(), "the wait failed: " << failure);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_TEST(PQbackendPID(db.native_handle()) != waiter_pid); // a new session
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(trace_context)

const std::map<std::string, std::string> k_trace = {
    {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
    {"tracestate", "rojo=00f067aa0ba902b7"}};

BOOST_AUTO_TEST_CASE(headers_given_at_enqueue_reach_every_claim_and_the_history)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options traced = q.into();
  traced.headers = k_trace;
  const std::int64_t leased = db.enqueue("t", {{"n", 1}}, traced);
  const std::int64_t plain = db.enqueue("t", {{"n", 2}}, q.into());
  std::vector<pgjq::job> claimed = db.claim("w", {}, 10, q.name());
  BOOST_REQUIRE_EQUAL(claimed.size(), 2u);
  BOOST_TEST(claimed[0].id == leased);
  BOOST_TEST((claimed[0].headers == k_trace));
  BOOST_TEST(claimed[1].id == plain);
  BOOST_TEST(claimed[1].headers.empty());
  BOOST_TEST(db.complete_batch({leased, plain}, "w") == 2);
  std::optional<pgjq::job> finished = db.get_job(leased);
  BOOST_REQUIRE(finished.has_value());
  BOOST_TEST((finished->headers == k_trace));
  pgjq::job_listing listing;
  listing.queue = q.name();
  std::vector<pgjq::job> listed = db.jobs(listing);
  BOOST_REQUIRE_EQUAL(listed.size(), 2u);
  BOOST_TEST((listed[1].headers == k_trace));

  // A batch's headers go with each of its jobs, to the in-transaction claims too.
  traced.headers = {{"x-request-id", "batch-7"}};
  const std::vector<std::int64_t> batch = db.enqueue_batch("t", {{{"n", 3}}, {{"n", 4}}}, traced);
  std::vector<pgjq::job> held = db.begin_and_claim("w", {}, 10, q.name());
  BOOST_REQUIRE_EQUAL(held.size(), 2u);
  for (const pgjq::job &j : held)
    BOOST_TEST(j.headers.at("x-request-id") == "batch-7");
  db.execute("ROLLBACK");
  std::vector<pgjq::job> again = db.complete_and_claim("w", {}, {}, 10, q.name());
  BOOST_REQUIRE_EQUAL(again.size(), 2u);
  BOOST_TEST(again[0].headers.at("x-request-id") == "batch-7");
}

BOOST_AUTO_TEST_CASE(malformed_headers_are_refused_and_nothing_is_enqueued)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o = q.into();
  o.headers = {{"traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"}};
  BOOST_CHECK_THROW(db.enqueue("t", {}, o), pgjq::bad_argument);
  o.headers = {{"tracestate", std::string(5000, 'x')}};
  BOOST_CHECK_THROW(db.enqueue_batch("t", {{}, {}}, o), pgjq::bad_argument);
  o.headers = {{"x-bad", std::string("\xff", 1)}};
  BOOST_CHECK_THROW(db.try_enqueue("t", {}, o), pgjq::bad_argument);
  pgjq::job_listing listing;
  listing.queue = q.name();
  BOOST_TEST(db.jobs(listing).empty());
}

BOOST_AUTO_TEST_SUITE_END()
