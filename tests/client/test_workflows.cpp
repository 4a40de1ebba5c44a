// test_workflows.cpp: the client's reading of workflows (pgjq.workflows, pgjq.workflow_steps) and its
// cancel and retry, on a workflow of two steps started in SQL.
#include "fixture.hpp"

using namespace pgjq_test;

namespace
{

// Starts a workflow "NAME" in the queue: fetch, then store after it. Returns its id.
std::int64_t start_two_steps(pgjq::connection &db, const scoped_queue &q, const std::string &name)
{
  const std::string steps =
      nlohmann::json::array({{{"name", "fetch"}, {"job_type", "fetch"}, {"queue", q.name()}},
                             {{"name", "store"}, {"job_type", "store"}, {"queue", q.name()}, {"after", {"fetch"}}}})
          .dump();
  return scalar(db.native_handle(),
                "SELECT pgjq.start_workflow('" + name + "', '" + steps + "', workflow_key => '" + name + "_key')");
}

const pgjq::workflow_step &step(const std::vector<pgjq::workflow_step> &steps, const std::string &name)
{
  for (const pgjq::workflow_step &s : steps)
    if (s.name == name)
      return s;
  BOOST_FAIL("no step " + name);
  throw std::logic_error("unreachable");
}

} // namespace

BOOST_AUTO_TEST_SUITE(workflows)

BOOST_AUTO_TEST_CASE(a_workflow_is_listed_with_its_steps_cancelled_and_retried)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::string name = q.name() + "_wf";
  const std::int64_t id = start_two_steps(db, q, name);

  std::optional<pgjq::workflow_info> w = db.get_workflow(id);
  BOOST_REQUIRE(w.has_value());
  BOOST_TEST(w->name == name);
  BOOST_TEST((w->key == name + "_key"));
  BOOST_TEST(w->status == "running");
  BOOST_TEST(w->on_failure == "fail");
  BOOST_TEST(w->steps_total == 2);
  BOOST_TEST(w->steps_finished == 0);
  BOOST_TEST(w->started_by == PQuser(db.native_handle()));
  BOOST_TEST(!w->parent_job.has_value());
  BOOST_TEST(!w->finished_at.has_value());
  bool listed = false;
  for (const pgjq::workflow_info &each : db.workflows())
    listed = listed || each.id == id;
  BOOST_TEST(listed);

  std::vector<pgjq::workflow_step> steps = db.workflow_steps(id);
  BOOST_REQUIRE(steps.size() == 2u);
  BOOST_TEST(step(steps, "fetch").depends_on.empty());
  BOOST_TEST((step(steps, "fetch").status == pgjq::job_status::pending));
  BOOST_TEST((step(steps, "store").depends_on == std::vector<std::string>{"fetch"}));
  BOOST_TEST((step(steps, "store").waiting_for == std::optional<std::string>("steps")));
  BOOST_TEST(step(steps, "store").queue == q.name());
  BOOST_TEST(step(steps, "store").job_type == "store");

  std::vector<pgjq::job> claimed = db.claim("w", {"fetch"}, 10, q.name());
  BOOST_REQUIRE(claimed.size() == 1u);
  BOOST_TEST(claimed[0].id == step(steps, "fetch").job_id);
  db.complete(claimed[0].id, "w", {{"pages", 3}});
  steps = db.workflow_steps(id);
  BOOST_TEST((step(steps, "fetch").status == pgjq::job_status::completed));
  BOOST_REQUIRE(step(steps, "fetch").result_text.has_value());
  BOOST_TEST(nlohmann::json::parse(*step(steps, "fetch").result_text) == (nlohmann::json{{"pages", 3}}));
  BOOST_TEST(step(steps, "fetch").finished_at.has_value());
  BOOST_TEST(step(steps, "fetch").attempts == 1);

  BOOST_TEST(db.cancel_workflow(id) == 1); // store, not yet run
  w = db.get_workflow(id);
  BOOST_TEST(w->status == "cancelled");
  BOOST_TEST(w->finished_at.has_value());
  BOOST_TEST((step(db.workflow_steps(id), "store").status == pgjq::job_status::cancelled));
  bool only_cancelled = true;
  for (const pgjq::workflow_info &each : db.workflows(std::string("cancelled"), 10000))
    only_cancelled = only_cancelled && each.status == "cancelled";
  BOOST_TEST(only_cancelled);

  BOOST_TEST(db.retry_workflow(id) == 1);
  BOOST_TEST(db.get_workflow(id)->status == "running");
  BOOST_TEST((step(db.workflow_steps(id), "store").status == pgjq::job_status::pending)); // fetch is done
}

BOOST_AUTO_TEST_CASE(an_unknown_workflow_is_empty_and_a_bad_limit_refused)
{
  pgjq::connection db(conninfo());
  BOOST_TEST(!db.get_workflow(987654321).has_value());
  BOOST_TEST(db.workflow_steps(987654321).empty());
  BOOST_CHECK_THROW(db.workflows(std::nullopt, 0), pgjq::bad_argument);
  BOOST_CHECK_THROW(db.workflows(std::nullopt, 10001), pgjq::bad_argument);
}

BOOST_AUTO_TEST_SUITE_END()
