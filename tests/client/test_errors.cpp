// test_errors.cpp: each error class of the contract arrives as its own exception type, with the
// server's SQLSTATE and message.
#include "fixture.hpp"

#include <libpq-fe.h>

using namespace pgjq_test;

namespace
{

// Runs the call, requires that it throws E, and returns the exception for further checks.
template <typename E, typename Call> E expect_error(Call &&call, const std::string &sqlstate)
{
  try
  {
    call();
  }
  catch (const E &e)
  {
    BOOST_TEST(e.sqlstate() == sqlstate);
    BOOST_TEST(std::string(e.what()).size() > 0u);
    return e;
  }
  catch (const std::exception &e)
  {
    BOOST_FAIL("wrong exception: " << e.what());
  }
  BOOST_FAIL("no exception, expected SQLSTATE " << sqlstate);
  throw; // not reached
}

} // namespace

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(enqueue_into_a_full_queue_throws_queue_full)
{
  pgjq::queue_options qo;
  qo.max_pending = 1;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  db.enqueue("t", empty, q.into());
  expect_error<pgjq::queue_full>([&] { db.enqueue("t", empty, q.into()); }, "PJ001");
  // The session is still usable after an error outside a transaction block.
  BOOST_TEST(stats_of(db, q).pending == 1);
}

BOOST_AUTO_TEST_CASE(complete_by_a_worker_that_does_not_hold_the_job_throws_not_lease_holder)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  expect_error<pgjq::not_lease_holder>([&] { db.complete(id, "nobody"); }, "PJ002");
  BOOST_REQUIRE(db.claim("holder", {}, 1, q.name()).size() == 1u);
  expect_error<pgjq::not_lease_holder>([&] { db.complete(id, "intruder"); }, "PJ002");
  expect_error<pgjq::not_lease_holder>([&] { db.heartbeat(id, "intruder"); }, "PJ002");
  expect_error<pgjq::not_lease_holder>([&] { db.progress(id, "intruder", 10); }, "PJ002");
  expect_error<pgjq::not_lease_holder>([&] { db.fail(id, "intruder", "x"); }, "PJ002");
  expect_error<pgjq::not_lease_holder>([&] { db.complete_batch({id}, "intruder"); }, "PJ002");
}

BOOST_AUTO_TEST_CASE(calls_on_a_cancelled_held_job_throw_job_cancelled)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  BOOST_REQUIRE(db.cancel(id));
  expect_error<pgjq::job_cancelled>([&] { db.heartbeat(id, "w"); }, "PJ003");
  expect_error<pgjq::job_cancelled>([&] { db.progress(id, "w", 50); }, "PJ003");
  expect_error<pgjq::job_cancelled>([&] { db.complete(id, "w"); }, "PJ003");
}

BOOST_AUTO_TEST_CASE(complete_batch_is_all_or_nothing_when_one_job_was_cancelled)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("t", objects(3), q.into());
  BOOST_REQUIRE(db.claim("w", {}, 10, q.name()).size() == 3u);
  BOOST_REQUIRE(db.cancel(ids[1]));
  expect_error<pgjq::job_cancelled>([&] { db.complete_batch(ids, "w"); }, "PJ003");
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.completed == 0);
  BOOST_TEST(s.claimed + s.running == 2);
}

BOOST_AUTO_TEST_CASE(an_unknown_queue_throws_unknown_queue)
{
  pgjq::connection db(conninfo());
  pgjq::enqueue_options o;
  o.queue = "no_such_queue_here";
  expect_error<pgjq::unknown_queue>([&] { db.enqueue("t", empty, o); }, "42704");
  expect_error<pgjq::unknown_queue>([&] { db.pause_queue("no_such_queue_here"); }, "42704");
}

BOOST_AUTO_TEST_CASE(creating_an_existing_queue_throws_queue_exists)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  expect_error<pgjq::queue_exists>([&] { db.create_queue(q.name()); }, "42710");
}

BOOST_AUTO_TEST_CASE(an_unknown_job_id_throws_job_not_found)
{
  pgjq::connection db(conninfo());
  const std::int64_t missing = 9000000000000000000LL;
  expect_error<pgjq::job_not_found>([&] { db.cancel(missing); }, "P0002");
  expect_error<pgjq::job_not_found>([&] { db.retry(missing); }, "P0002");
  expect_error<pgjq::job_not_found>([&] { db.wait_for_completion(missing, 100ms); }, "P0002");
  BOOST_TEST(!db.get_job(missing).has_value());
}

BOOST_AUTO_TEST_CASE(bad_argument_values_throw_bad_argument)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  expect_error<pgjq::bad_argument>([&] { db.claim("w", {}, 0, q.name()); }, "22023");
  expect_error<pgjq::bad_argument>([&] { db.create_queue("Not A Valid Name!"); }, "22023");
  pgjq::enqueue_options o = q.into();
  o.max_attempts = 0;
  expect_error<pgjq::bad_argument>([&] { db.enqueue("t", empty, o); }, "22023");
  const std::int64_t id = db.enqueue("t", empty, q.into());
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  expect_error<pgjq::bad_argument>([&] { db.progress(id, "w", 101); }, "22023");
  expect_error<pgjq::bad_argument>([&] { db.enqueue_batch_raw("t", R"({"not": "an array"})", q.into()); }, "22023");
}

BOOST_AUTO_TEST_CASE(a_null_where_a_value_is_required_throws_bad_argument)
{
  pgjq::connection db(conninfo());
  expect_error<pgjq::bad_argument>([&] { db.execute("SELECT pgjq.enqueue(NULL)"); }, "22004");
}

BOOST_AUTO_TEST_CASE(a_payload_over_the_size_limit_throws_bad_argument)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  // Far above any sensible limit, far below what libpq and the server could carry.
  const std::string big = "{\"blob\": \"" + std::string(4 * 1024 * 1024, 'x') + "\"}";
  expect_error<pgjq::bad_argument>([&] { db.enqueue_raw("t", big, q.into()); }, "54000");
}

BOOST_AUTO_TEST_CASE(a_call_in_the_wrong_state_throws_wrong_state)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  expect_error<pgjq::wrong_state>([&] { db.retry(id); }, "55000");
  expect_error<pgjq::wrong_state>([&] { db.drop_queue(q.name()); }, "55006");
}

BOOST_AUTO_TEST_CASE(a_role_without_the_capability_gets_permission_denied)
{
  pgjq::connection admin(conninfo());
  const std::string role = "pgjq_test_nobody_" + std::to_string(getpid());
  admin.execute("CREATE ROLE " + role + " LOGIN");
  struct drop_role
  {
    pgjq::connection &admin;
    std::string role;
    ~drop_role()
    {
      try
      {
        admin.execute("DROP ROLE " + role);
      }
      catch (...)
      {
      }
    }
  } cleanup{admin, role};
  {
    pgjq::connection outsider(conninfo() + " user=" + role);
    expect_error<pgjq::permission_denied>([&] { outsider.enqueue("t", empty); }, "42501");
  }
}

BOOST_AUTO_TEST_CASE(an_unreachable_server_throws_connection_lost)
{
  BOOST_CHECK_THROW(pgjq::connection("host=/nonexistent/socket/dir port=1 connect_timeout=2"), pgjq::connection_lost);
}

BOOST_AUTO_TEST_CASE(a_terminated_session_throws_connection_lost_and_reconnect_recovers)
{
  scoped_queue q;
  pgjq::connection victim(conninfo());
  victim.enqueue("t", empty, q.into());
  const int pid = PQbackendPID(victim.native_handle());
  pgjq::connection admin(conninfo());
  admin.execute("SELECT pg_terminate_backend(" + std::to_string(pid) + ")");
  std::this_thread::sleep_for(100ms);
  BOOST_CHECK_THROW(victim.enqueue("t", empty, q.into()), pgjq::connection_lost);
  BOOST_TEST(!victim.is_open());
  victim.reconnect();
  BOOST_TEST(victim.is_open());
  victim.enqueue("t", empty, q.into());
  BOOST_TEST(stats_of(admin, q).pending == 2);
}

BOOST_AUTO_TEST_SUITE_END()
