// test_workflow_steps.cpp: starting and running workflows (0.3.0) through the client: the builders' steps
// JSON and their refusals,
// start_workflow inside the caller's transaction, a fan-out and a join run by the worker and reading every
// result, a step parked by wait_for_event until another session signals, a park the worker respects
// whatever the handler does after it, PJ006, durable sleep, checkpoints, dynamic fan-out with paged
// results, and cancel/retry of a workflow.
#include "fixture.hpp"

#include <mutex>

#include <libpq-fe.h>

using namespace pgjq_test;

namespace
{

pgjq::step_options in(const scoped_queue &q)
{
  pgjq::step_options o;
  o.queue = q.name();
  return o;
}

// Requires that call throws E with this SQLSTATE and a message holding `names`.
template <typename E, typename Call>
void expect_refused(Call &&call, const std::string &sqlstate, const std::string &names)
{
  try
  {
    call();
  }
  catch (const E &e)
  {
    BOOST_TEST(e.sqlstate() == sqlstate, e.what());
    BOOST_TEST(std::string(e.what()).find(names) != std::string::npos,
               "\"" << e.what() << "\" does not name " << names);
    return;
  }
  catch (const std::exception &e)
  {
    BOOST_ERROR("wrong exception: " << e.what());
    return;
  }
  BOOST_ERROR("accepted; expected SQLSTATE " << sqlstate);
}

template <typename Call> void expect_usage_error(Call &&call, const std::string &names)
{
  try
  {
    call();
  }
  catch (const pgjq::usage_error &e)
  {
    BOOST_TEST(std::string(e.what()).find(names) != std::string::npos,
               "\"" << e.what() << "\" does not name " << names);
    return;
  }
  catch (const std::exception &e)
  {
    BOOST_ERROR("wrong exception: " << e.what());
    return;
  }
  BOOST_ERROR("accepted; expected usage_error");
}

const pgjq::workflow_step &step_named(const std::vector<pgjq::workflow_step> &steps, const std::string &name)
{
  for (const pgjq::workflow_step &s : steps)
    if (s.name == name)
      return s;
  BOOST_FAIL("no step " << name);
  throw; // not reached
}

std::string status_of(pgjq::connection &db, std::int64_t workflow_id)
{
  std::optional<pgjq::workflow_info> w = db.get_workflow(workflow_id);
  BOOST_REQUIRE(w.has_value());
  return w->status;
}

bool reaches(pgjq::connection &db, std::int64_t workflow_id, const std::string &status)
{
  return wait_until([&] { return status_of(db, workflow_id) == status; }, 20s);
}

std::optional<nlohmann::json> result_of(const pgjq::workflow_step &s)
{
  if (!s.result_text)
    return std::nullopt;
  return nlohmann::json::parse(*s.result_text);
}

// Claims the one job of the queue for worker w (the test plays the worker by hand).
pgjq::job claim_one(pgjq::connection &db, const scoped_queue &q, const std::string &w)
{
  std::vector<pgjq::job> jobs;
  BOOST_REQUIRE(wait_until(
      [&]
      {
        jobs = db.claim(w, {}, 1, q.name());
        return !jobs.empty();
      },
      20s));
  return jobs.front();
}

} // namespace

BOOST_AUTO_TEST_SUITE(workflow_steps)

BOOST_AUTO_TEST_CASE(the_builder_writes_every_step_as_given)
{
  const std::string odd = "a \"quoted\" name\\ with \xc3\xa9 and\ttab";
  pgjq::step_options slow;
  slow.queue = "images";
  slow.priority = 7;
  slow.max_attempts = 5;
  slow.timeout = std::chrono::microseconds(1500000);
  pgjq::workflow_builder wf("order-17");
  wf.step("fetch", "fetch", {{"url", odd}})
      .step(odd, "resize", {{"w", 100}}, slow)
      .after("fetch")
      .step("join", "join")
      .after({"fetch", odd});
  const nlohmann::json steps = nlohmann::json::parse(wf.to_json());
  BOOST_REQUIRE(steps.is_array());
  BOOST_REQUIRE(steps.size() == 3u);
  BOOST_TEST(steps[0]["name"] == "fetch");
  BOOST_TEST(steps[0]["job_type"] == "fetch");
  BOOST_TEST(steps[0]["payload"]["url"] == odd);
  BOOST_TEST(steps[0]["queue"] == "default");
  BOOST_TEST(steps[0]["priority"] == 100);
  BOOST_TEST(steps[0]["after"] == nlohmann::json::array());
  BOOST_TEST(!steps[0].contains("max_attempts")); // unset: the server's default
  BOOST_TEST(!steps[0].contains("timeout"));
  BOOST_TEST(steps[1]["name"] == odd);
  BOOST_TEST(steps[1]["queue"] == "images");
  BOOST_TEST(steps[1]["priority"] == 7);
  BOOST_TEST(steps[1]["max_attempts"] == 5);
  BOOST_TEST(steps[1]["timeout"] == "1500000 microseconds");
  BOOST_TEST(steps[1]["after"] == nlohmann::json::array({"fetch"}));
  BOOST_TEST(steps[2]["payload"] == nlohmann::json::object());
  BOOST_TEST(steps[2]["after"] == nlohmann::json::array({"fetch", odd}));
  BOOST_TEST(wf.name() == "order-17");
  BOOST_TEST(!wf.workflow_key().has_value());
  BOOST_TEST(wf.failure() == pgjq::failure_policy::fail);
}

BOOST_AUTO_TEST_CASE(the_builder_refuses_empty_duplicate_and_unknown_step_names)
{
  expect_refused<pgjq::bad_argument>([] { pgjq::workflow_builder wf(""); }, "22023", "name must not be empty");
  pgjq::workflow_builder wf("w");
  expect_usage_error([&] { wf.after("x"); }, "call step() first");
  expect_refused<pgjq::bad_argument>([&] { wf.step("", "t"); }, "22023", "must not be empty");
  wf.step("a", "t");
  expect_refused<pgjq::bad_argument>([&] { wf.step("a", "t"); }, "22023", "\"a\" is given twice");
  wf.step("b", "t");
  expect_refused<pgjq::bad_argument>([&] { wf.after("typo"); }, "22023", "\"b\" is after \"typo\"");
  expect_refused<pgjq::bad_argument>([&] { wf.after("b"); }, "22023", "\"b\" cannot wait for itself");
  wf.after("a");
  expect_refused<pgjq::bad_argument>([&] { wf.after("a"); }, "22023", "\"b\" is already after \"a\"");
  // A step names only steps added before it: no cycle can be built.
  wf.step("c", "t").after("b");
  expect_refused<pgjq::bad_argument>([&] { wf.step("d", "t").after({"c", "later"}); }, "22023", "\"later\"");
  // Nothing refused was added: the steps are a, b (after a), c (after b), d (after c).
  const nlohmann::json steps = nlohmann::json::parse(wf.to_json());
  BOOST_REQUIRE(steps.size() == 4u);
  BOOST_TEST(steps[1]["after"] == nlohmann::json::array({"a"}));
  BOOST_TEST(steps[3]["after"] == nlohmann::json::array({"c"}));

  // Steps added to a running workflow may name its steps, which only the server knows.
  pgjq::step_list more;
  more.step("e", "t").after({"a", "c"});
  expect_refused<pgjq::bad_argument>([&] { more.step("e", "t"); }, "22023", "\"e\" is given twice");
  expect_refused<pgjq::bad_argument>([&] { more.after("e"); }, "22023", "cannot wait for itself");
  BOOST_TEST(nlohmann::json::parse(more.to_json())[0]["after"] == nlohmann::json::array({"a", "c"}));
}

BOOST_AUTO_TEST_CASE(the_server_judges_the_bounds_of_the_steps)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::step_options o = in(q);
  o.priority = 40000; // beyond 0-32767
  expect_refused<pgjq::bad_argument>([&] { db.start_workflow(pgjq::workflow_builder("w").step("a", "t", empty, o)); },
                                     "22023", "priority");
  o = in(q);
  o.max_attempts = 0;
  expect_refused<pgjq::bad_argument>([&] { db.start_workflow(pgjq::workflow_builder("w").step("a", "t", empty, o)); },
                                     "22023", "max_attempts");
  expect_refused<pgjq::bad_argument>([&] { db.start_workflow(pgjq::workflow_builder("w")); }, "22023", "step");
  BOOST_TEST(stats_of(db, q).pending == 0);
}

BOOST_AUTO_TEST_CASE(start_workflow_in_the_callers_transaction_is_rolled_back_with_it)
{
  scoped_queue q;
  PGconn *app = PQconnectdb(conninfo().c_str());
  BOOST_REQUIRE(PQstatus(app) == CONNECTION_OK);
  std::int64_t id = 0;
  {
    pgjq::connection jobs(app);
    pgjq::transaction t(jobs);
    id = jobs.start_workflow(pgjq::workflow_builder("rolled-back").step("a", "t", empty, in(q)));
    BOOST_TEST(jobs.get_workflow(id).has_value()); // seen inside the transaction
  }                                                // rolled back
  pgjq::connection db(conninfo());
  BOOST_TEST(!db.get_workflow(id).has_value());
  BOOST_TEST(stats_of(db, q).pending == 0);
  {
    pgjq::connection jobs(app);
    pgjq::transaction t(jobs);
    id = jobs.start_workflow(pgjq::workflow_builder("kept").step("a", "t", empty, in(q)));
    t.commit();
  }
  BOOST_TEST(db.get_workflow(id).has_value());
  BOOST_TEST(stats_of(db, q).pending == 1);
  PQfinish(app);
}

BOOST_AUTO_TEST_CASE(a_workflow_key_returns_the_unfinished_workflow_instead_of_a_second)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::workflow_builder wf("order");
  wf.step("a", "t", empty, in(q)).key(q.name() + "-order-17").on_failure(pgjq::failure_policy::ignore);
  const std::int64_t first = db.start_workflow(wf);
  BOOST_TEST(db.start_workflow(wf) == first);
  BOOST_TEST(stats_of(db, q).pending == 1);
  const std::optional<pgjq::workflow_info> w = db.get_workflow(first);
  BOOST_REQUIRE(w.has_value());
  BOOST_TEST(w->name == "order");
  BOOST_TEST(w->key.value_or("") == q.name() + "-order-17");
  BOOST_TEST(w->on_failure == "ignore");
  BOOST_TEST(w->status == "running");
  BOOST_TEST(w->steps_total == 1);
  BOOST_TEST(!w->parent_job.has_value());
  BOOST_TEST(!w->finished_at.has_value());
}

// The three steps: resize-a and resize-b run at once (the fan-out), publish after both (the join). Publish
// waits for an event that the test signals from another session, then reads every result.
BOOST_AUTO_TEST_CASE(a_fan_out_and_a_join_run_by_the_worker_read_every_result_and_wait_for_a_signal)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::worker w(worker_options_for(q));
  std::mutex m;
  int publish_runs = 0;
  std::vector<pgjq::step_result> seen;
  nlohmann::json approval;
  w.on("resize",
       [](pgjq::job_context &job) {
         job.set_result({{"size", job.payload()["size"]}, {"url", "img-" + std::to_string(job.job().id)}});
       });
  w.on("publish",
       [&](pgjq::job_context &job)
       {
         {
           std::lock_guard<std::mutex> lock(m);
           ++publish_runs;
         }
         std::optional<nlohmann::json> event = job.wait_for_event("approved:" + q.name());
         if (!event)
           return; // parked
         std::vector<pgjq::step_result> results = job.all_step_results();
         nlohmann::json urls = nlohmann::json::array();
         for (const pgjq::step_result &r : results)
           urls.push_back(r.result().value_or(nullptr)["url"]);
         {
           std::lock_guard<std::mutex> lock(m);
           seen = results;
           approval = *event;
         }
         job.set_result({{"published", urls}, {"by", (*event)["by"]}});
       });
  pgjq::workflow_builder wf("images");
  wf.step("resize-a", "resize", {{"size", 100}}, in(q))
      .step("resize-b", "resize", {{"size", 200}}, in(q))
      .step("publish", "publish", empty, in(q))
      .after({"resize-a", "resize-b"});
  const std::int64_t id = db.start_workflow(wf);
  worker_thread t(w);

  // The join parks: the worker leaves it alone, and nothing of the workflow can run before the event.
  BOOST_REQUIRE(reaches(db, id, "waiting"));
  BOOST_REQUIRE(wait_until([&] { return w.stats().parked == 1u; }, 20s));
  std::vector<pgjq::workflow_step> steps = db.workflow_steps(id);
  BOOST_REQUIRE(steps.size() == 3u);
  BOOST_TEST(step_named(steps, "resize-a").status == pgjq::job_status::completed);
  BOOST_TEST(step_named(steps, "resize-b").status == pgjq::job_status::completed);
  const pgjq::workflow_step &publish = step_named(steps, "publish");
  BOOST_TEST(publish.status == pgjq::job_status::pending);
  BOOST_TEST(publish.waiting_for.value_or("") == "event approved:" + q.name());
  BOOST_TEST(publish.depends_on == (std::vector<std::string>{"resize-a", "resize-b"}));
  BOOST_TEST(!publish.result_text.has_value());
  BOOST_TEST(w.stats().completed == 2u);
  BOOST_TEST(w.stats().failed == 0u);

  // Another session signals; the join runs again from the start and gets the payload.
  pgjq::connection other(conninfo());
  BOOST_TEST(other.signal("approved:" + q.name(), {{"by", "alice"}}, q.name()) == 1);
  BOOST_REQUIRE(reaches(db, id, "completed"));
  t.stop();
  BOOST_TEST(t.error().empty());
  BOOST_TEST(publish_runs == 2);
  BOOST_TEST(approval == (nlohmann::json{{"by", "alice"}}));
  BOOST_REQUIRE(seen.size() == 2u);
  BOOST_TEST(seen[0].step_name == "resize-a");
  BOOST_TEST(seen[1].step_name == "resize-b");
  for (const pgjq::step_result &r : seen)
  {
    BOOST_TEST(r.status == pgjq::job_status::completed);
    BOOST_TEST(r.result().has_value());
    BOOST_TEST(!r.last_error.has_value());
  }
  BOOST_TEST(seen[0].result().value()["size"] == 100);
  BOOST_TEST(seen[1].result().value()["size"] == 200);
  steps = db.workflow_steps(id);
  const std::optional<nlohmann::json> published = result_of(step_named(steps, "publish"));
  BOOST_REQUIRE(published.has_value());
  BOOST_TEST((*published)["by"] == "alice");
  BOOST_TEST((*published)["published"] ==
             nlohmann::json::array({"img-" + std::to_string(step_named(steps, "resize-a").job_id),
                                    "img-" + std::to_string(step_named(steps, "resize-b").job_id)}));
  const std::optional<pgjq::workflow_info> done = db.get_workflow(id);
  BOOST_REQUIRE(done.has_value());
  BOOST_TEST(done->steps_finished == 3);
  BOOST_TEST(done->steps_failed == 0);
  BOOST_TEST(done->finished_at.has_value());
  BOOST_TEST(w.stats().completed == 3u);
  BOOST_TEST(w.stats().parked == 1u);
}

BOOST_AUTO_TEST_CASE(a_parked_job_is_neither_completed_nor_failed_whatever_its_handler_does_next)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  // The worker logs every report the server refuses: one of a parked job would show that it tried.
  std::mutex m;
  std::vector<std::string> logged;
  pgjq::worker_options o = worker_options_for(q);
  o.log = [&](const std::string &line)
  {
    std::lock_guard<std::mutex> lock(m);
    logged.push_back(line);
  };
  pgjq::worker w(o);
  std::atomic<int> refused{0};
  w.on("careless",
       [&](pgjq::job_context &job)
       {
         job.wait_for_event("never:" + q.name()); // the empty answer ignored
         try
         {
           job.set_result({{"done", true}});
         }
         catch (const pgjq::usage_error &)
         {
           ++refused;
         }
         try
         {
           job.checkpoint("after", 1);
         }
         catch (const pgjq::usage_error &)
         {
           ++refused;
         }
         throw std::runtime_error("and then it throws");
       });
  w.on("quiet", [&](pgjq::job_context &job) { job.sleep_until("nap", pgjq::clock::now() + std::chrono::hours(1)); });
  const std::int64_t id = db.start_workflow(pgjq::workflow_builder("careless")
                                                .step("throws", "careless", empty, in(q))
                                                .step("returns", "quiet", empty, in(q)));
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().parked == 2u; }, 20s));
  t.stop();
  BOOST_TEST(refused == 2);
  BOOST_TEST(w.stats().completed == 0u);
  BOOST_TEST(w.stats().failed == 0u);
  const std::vector<pgjq::workflow_step> steps = db.workflow_steps(id);
  BOOST_REQUIRE(steps.size() == 2u);
  for (const pgjq::workflow_step &s : steps)
  {
    BOOST_TEST(s.status == pgjq::job_status::pending);
    BOOST_TEST(!s.last_error.has_value());
    for (const std::string &line : logged)
      BOOST_TEST(line.find("job " + std::to_string(s.job_id)) == std::string::npos, line);
  }
  BOOST_TEST(step_named(steps, "throws").waiting_for.value_or("") == "event never:" + q.name());
  BOOST_TEST(step_named(steps, "returns").waiting_for.value_or("") == "sleep");
  BOOST_TEST(status_of(db, id) == "waiting");
}

BOOST_AUTO_TEST_CASE(an_event_that_does_not_come_in_time_throws_event_timed_out)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  db.start_workflow(pgjq::workflow_builder("late").step("only", "t", empty, in(q)));
  pgjq::job j = claim_one(db, q, "w");
  BOOST_TEST(!db.wait_for_event(j.id, "w", "late:" + q.name(), std::chrono::milliseconds(300)).has_value());
  // Parked: no lease, so the worker's calls are refused, and nobody can claim it before the timeout.
  BOOST_CHECK_THROW(db.heartbeat(j.id, "w"), pgjq::not_lease_holder);
  BOOST_TEST(db.claim("w", {}, 1, q.name()).empty());
  j = claim_one(db, q, "w");
  try
  {
    db.wait_for_event(j.id, "w", "late:" + q.name(), std::chrono::milliseconds(300));
    BOOST_ERROR("no event_timed_out");
  }
  catch (const pgjq::event_timed_out &e)
  {
    BOOST_TEST(e.sqlstate() == "PJ006");
  }
  // Held again: the worker decides, here to complete it.
  db.complete(j.id, "w");
  BOOST_TEST(db.get_job(j.id)->status == pgjq::job_status::completed);
}

BOOST_AUTO_TEST_CASE(an_event_signalled_before_the_wait_is_kept_for_it)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  BOOST_TEST(db.signal("early:" + q.name(), {{"n", 1}}, q.name(), std::chrono::hours(1)) == 0);
  db.start_workflow(pgjq::workflow_builder("early").step("only", "t", empty, in(q)));
  pgjq::job j = claim_one(db, q, "w");
  const std::optional<nlohmann::json> payload = db.wait_for_event(j.id, "w", "early:" + q.name());
  BOOST_REQUIRE(payload.has_value());
  BOOST_TEST(*payload == (nlohmann::json{{"n", 1}}));
}

BOOST_AUTO_TEST_CASE(sleep_until_parks_the_step_until_its_time_and_then_goes_on)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  db.start_workflow(pgjq::workflow_builder("nap").step("only", "t", empty, in(q)));
  pgjq::job j = claim_one(db, q, "w");
  const pgjq::time_point wake_at = pgjq::clock::now() + std::chrono::milliseconds(400);
  BOOST_TEST(!db.sleep_until(j.id, "w", "nap", wake_at));
  BOOST_TEST(db.claim("w", {}, 1, q.name()).empty());
  j = claim_one(db, q, "w");
  BOOST_TEST((pgjq::clock::now() >= wake_at));
  BOOST_TEST(db.sleep_until(j.id, "w", "nap", wake_at));
  db.complete(j.id, "w");
}

BOOST_AUTO_TEST_CASE(a_checkpoint_keeps_its_first_value)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  db.start_workflow(pgjq::workflow_builder("cp").step("only", "t", empty, in(q)));
  pgjq::job j = claim_one(db, q, "w");
  BOOST_TEST(db.checkpoints(j.id) == nlohmann::json::object());
  BOOST_TEST(db.checkpoint(j.id, "w", "charged", {{"receipt", "r-1"}}) == (nlohmann::json{{"receipt", "r-1"}}));
  BOOST_TEST(db.checkpoint(j.id, "w", "charged", {{"receipt", "r-2"}}) == (nlohmann::json{{"receipt", "r-1"}}));
  BOOST_TEST(db.checkpoint(j.id, "w", "mailed", true) == true);
  BOOST_TEST(db.checkpoints(j.id) == (nlohmann::json{{"charged", {{"receipt", "r-1"}}}, {"mailed", true}}));
  BOOST_CHECK_THROW(db.checkpoint(j.id, "intruder", "x", 1), pgjq::not_lease_holder);
}

// A step adds five steps and a join after them; the join reads their results two at a time.
BOOST_AUTO_TEST_CASE(add_steps_fans_out_at_run_time_and_the_join_pages_through_every_result)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.start_workflow(pgjq::workflow_builder("split").step("split", "t", empty, in(q)));
  pgjq::job split = claim_one(db, q, "w");
  pgjq::step_list parts;
  std::vector<std::string> names;
  for (int i = 0; i < 5; ++i)
  {
    names.push_back("part-" + std::to_string(i));
    parts.step(names.back(), "part", {{"i", i}}, in(q)).after("split");
  }
  parts.step("merge", "merge", empty, in(q)).after(names);
  const std::vector<std::int64_t> added = db.add_steps(split.id, "w", parts);
  BOOST_REQUIRE(added.size() == 6u);
  db.complete(split.id, "w");
  for (int i = 0; i < 5; ++i)
  {
    pgjq::job part = claim_one(db, q, "w");
    BOOST_TEST(part.type == "part");
    db.complete(part.id, "w", {{"square", part.payload()["i"].get<int>() * part.payload()["i"].get<int>()}});
  }
  pgjq::job merge = claim_one(db, q, "w");
  BOOST_TEST(merge.id == added.back());
  const std::vector<pgjq::step_result> first = db.step_results(merge.id, std::nullopt, 2);
  BOOST_REQUIRE(first.size() == 2u);
  BOOST_TEST(first[1].step_name == "part-1");
  BOOST_TEST(db.step_results(merge.id, std::string("part-3"), 2).size() == 1u);
  const std::vector<pgjq::step_result> all = db.all_step_results(merge.id, 2);
  BOOST_REQUIRE(all.size() == 5u);
  for (int i = 0; i < 5; ++i)
  {
    BOOST_TEST(all[i].step_name == names[i]);
    BOOST_TEST(all[i].result().value()["square"] == i * i);
  }
  BOOST_TEST(db.all_step_results(merge.id).size() == 5u); // one page
  db.complete(merge.id, "w");
  BOOST_TEST(status_of(db, id) == "completed");
  BOOST_TEST(db.get_workflow(id)->steps_total == 7);
}

BOOST_AUTO_TEST_CASE(a_failed_workflow_is_retried_and_a_running_one_cancelled)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::step_options once = in(q);
  once.max_attempts = 1;
  const std::int64_t id = db.start_workflow(
      pgjq::workflow_builder("fragile").step("a", "t", empty, once).step("b", "t", empty, in(q)).after("a"));
  pgjq::job a = claim_one(db, q, "w");
  BOOST_TEST(db.fail(a.id, "w", "broken") == pgjq::job_status::failed);
  BOOST_TEST(status_of(db, id) == "failed");
  std::vector<pgjq::workflow_step> steps = db.workflow_steps(id);
  BOOST_TEST(step_named(steps, "a").last_error.value_or("") == "broken");
  BOOST_TEST(step_named(steps, "b").status == pgjq::job_status::cancelled);
  BOOST_TEST(db.get_workflow(id)->steps_failed >= 1);

  BOOST_TEST(db.retry_workflow(id) == 2); // a failed, b cancelled
  BOOST_TEST(status_of(db, id) == "running");
  steps = db.workflow_steps(id);
  BOOST_TEST(step_named(steps, "a").status == pgjq::job_status::pending);
  BOOST_TEST(step_named(steps, "b").status == pgjq::job_status::waiting);
  BOOST_TEST(step_named(steps, "b").waiting_for.value_or("") == "steps");

  BOOST_TEST(db.cancel_workflow(id) == 2);
  BOOST_TEST(status_of(db, id) == "cancelled");
  BOOST_TEST(db.claim("w", {}, 10, q.name()).empty());
  BOOST_TEST(db.cancel_workflow(id) == 0);
}

// The server's step calls check the job's worker and status, which an in-transaction claim does not write.
BOOST_AUTO_TEST_CASE(a_step_held_by_an_in_transaction_claim_gets_no_step_calls)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  db.start_workflow(pgjq::workflow_builder("held").step("a", "t", empty, in(q)));
  std::vector<pgjq::job> held = db.begin_and_claim("w", {}, 1, q.name());
  BOOST_REQUIRE(held.size() == 1u);
  BOOST_CHECK_THROW(db.checkpoint(held[0].id, "w", "x", 1), pgjq::not_lease_holder);
  db.execute("ROLLBACK");

  pgjq::worker_options o = worker_options_for(q);
  o.in_transaction = true;
  pgjq::worker w(o);
  std::mutex m;
  std::vector<std::string> refused;
  bool read = false;
  w.on("t",
       [&](pgjq::job_context &job)
       {
         std::lock_guard<std::mutex> lock(m);
         read = job.all_step_results().empty() && job.checkpoints() == nlohmann::json::object();
         const std::vector<std::function<void()>> calls = {
             [&] { job.checkpoint("x", 1); }, [&] { job.wait_for_event("e"); },
             [&] { job.sleep_until("s", pgjq::clock::now()); },
             [&] { job.add_steps(pgjq::step_list().step("b", "t", empty, in(q))); }};
         for (const auto &call : calls)
           try
           {
             call();
           }
           catch (const pgjq::usage_error &e)
           {
             refused.push_back(e.what());
           }
       });
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().completed == 1u; }, 20s));
  t.stop();
  std::lock_guard<std::mutex> lock(m);
  BOOST_TEST(read);
  BOOST_REQUIRE(refused.size() == 4u);
  BOOST_TEST(refused[0].find("has no lease") != std::string::npos, refused[0]);
}

BOOST_AUTO_TEST_SUITE_END()
