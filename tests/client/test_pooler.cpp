// test_pooler.cpp: the client through a real PgBouncer in transaction mode (PGJQ_POOLED_CONNINFO, started by
// scripts/client_tests.sh with one server session per database and user, so that every pooled client of
// a test shares it): pooled connections keep no state in the session, LISTEN on a direct connection, and
// workers and waits work as they do without the pooler.
#include "fixture.hpp"

using namespace pgjq_test;

namespace
{

std::string pooled_conninfo()
{
  const char *value = std::getenv("PGJQ_POOLED_CONNINFO");
  BOOST_REQUIRE_MESSAGE(value != nullptr && *value != '\0',
                        "PGJQ_POOLED_CONNINFO must name PgBouncer in transaction mode (scripts/client_tests.sh "
                        "starts one)");
  return value;
}

pgjq::connection_options pooled(bool with_listener)
{
  pgjq::connection_options o;
  o.pooled = true;
  if (with_listener)
    o.listen_conninfo = conninfo();
  return o;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pooler)

// The premise of this file: without pooled mode, two clients' named statements meet on the one server
// session, which is what users of a shared pool saw.
BOOST_AUTO_TEST_CASE(named_statements_of_two_clients_collide_on_the_shared_server_session)
{
  scoped_queue q;
  pgjq::connection first(pooled_conninfo());
  pgjq::connection second(pooled_conninfo());
  first.enqueue("t", empty, q.into());
  try
  {
    second.enqueue("t", empty, q.into());
    BOOST_FAIL("the second client's PREPARE succeeded: is PgBouncer really sharing one session in transaction mode?");
  }
  catch (const pgjq::error &e)
  {
    BOOST_TEST(e.sqlstate() == "42P05");
  }
  // Leave the shared session as the other tests expect it.
  PQclear(PQexec(first.native_handle(), "DEALLOCATE ALL"));
}

BOOST_AUTO_TEST_CASE(pooled_clients_share_the_server_session_through_every_call)
{
  scoped_queue q;
  pgjq::connection a(pooled_conninfo(), pooled(false));
  pgjq::connection b(pooled_conninfo(), pooled(false));
  const std::int64_t first = a.enqueue("t", {{"n", 1}}, q.into());
  const std::int64_t second = b.enqueue("t", {{"n", 2}}, q.into());
  BOOST_TEST(a.try_enqueue("t", empty, q.into()).has_value());
  const std::vector<std::int64_t> batch = b.enqueue_batch("t", objects(3), q.into());
  BOOST_TEST(batch.size() == 3u);
  BOOST_TEST(stats_of(a, q).pending == 6);

  // An error on one client leaves the session usable for both.
  BOOST_CHECK_THROW(a.claim("w", {}, 1, "no_such_queue"), pgjq::error);
  std::vector<pgjq::job> claimed = b.claim("w", {}, 2, q.name());
  BOOST_REQUIRE_EQUAL(claimed.size(), 2u);
  BOOST_TEST(a.complete_batch({claimed[0].id}, "w") == 1);
  BOOST_TEST(b.fail(claimed[1].id, "w", "broken", std::chrono::microseconds(0)) == pgjq::job_status::pending);
  BOOST_TEST(a.cancel(first) == (claimed[0].id != first));

  // In-transaction claims: the transaction holds the server session until it ends.
  std::vector<pgjq::job> held = a.begin_and_claim("w", {}, 1, q.name());
  BOOST_REQUIRE_EQUAL(held.size(), 1u);
  std::vector<pgjq::job> next = a.complete_commit_and_claim({held[0].id}, "w", {}, 1, q.name());
  BOOST_REQUIRE_EQUAL(next.size(), 1u);
  BOOST_TEST(a.complete_and_commit({next[0].id}, "w") == 1);
  std::optional<pgjq::job> j = b.get_job(held[0].id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::completed);
  BOOST_TEST(b.get_job(second).has_value());
}

BOOST_AUTO_TEST_CASE(a_pooled_connection_listens_only_on_a_direct_connection)
{
  pgjq::connection without(pooled_conninfo(), pooled(false));
  BOOST_TEST(!without.can_listen());
  BOOST_CHECK_THROW(without.listen(pgjq::new_job_channel), pgjq::usage_error);

  pgjq::connection with(pooled_conninfo(), pooled(true));
  with.listen("pgjq_pooler_test");
  pgjq::connection other(conninfo());
  other.execute("NOTIFY pgjq_pooler_test, 'hello'");
  std::optional<pgjq::notification> n = with.wait_for_notification(10s);
  BOOST_REQUIRE(n.has_value());
  BOOST_TEST(n->payload == "hello");
  // Nothing was LISTENed through the pooler, where it would stay on the shared server session.
  pgjq::connection plain(pooled_conninfo(), pooled(false));
  PGresult *res = PQexec(plain.native_handle(), "SELECT count(*) FROM pg_catalog.pg_listening_channels()");
  BOOST_REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK);
  BOOST_TEST(std::string(PQgetvalue(res, 0, 0)) == "0");
  PQclear(res);
}

BOOST_AUTO_TEST_CASE(wait_for_completion_through_the_pooler_with_and_without_a_listener)
{
  scoped_queue q;
  for (const bool with_listener : {true, false})
  {
    pgjq::connection db(pooled_conninfo(), pooled(with_listener));
    const std::int64_t id = db.enqueue("t", empty, q.into());
    std::thread finisher(
        [id, queue = q.name()]
        {
          pgjq::connection w(conninfo());
          w.claim("w", {}, 1, queue);
          std::this_thread::sleep_for(300ms);
          w.complete(id, "w", {{"ok", true}});
        });
    std::optional<pgjq::job> j = db.wait_for_completion(id, 20s);
    finisher.join();
    BOOST_REQUIRE_MESSAGE(j.has_value(), "with_listener = " << with_listener);
    BOOST_TEST(j->status == pgjq::job_status::completed);
  }
}

BOOST_AUTO_TEST_CASE(pooled_workers_are_woken_through_their_direct_listener)
{
  for (const bool in_transaction : {false, true})
  {
    scoped_queue q;
    pgjq::worker_options o = worker_options_for(q);
    o.conninfo = pooled_conninfo();
    o.session = pooled(true);
    o.in_transaction = in_transaction;
    o.concurrency = 2;
    o.idle_timeout = 60s; // so that only a notification can wake an idle runner in time
    pgjq::worker w(o);
    std::atomic<int> ran{0};
    w.on("t", [&](pgjq::job_context &) { ++ran; });
    worker_thread t(w);
    BOOST_REQUIRE(wait_until([&] { return w.stats().idle_waits >= 2; }, 10s));

    pgjq::connection db(pooled_conninfo(), pooled(false));
    std::vector<std::int64_t> ids = db.enqueue_batch("t", objects(20), q.into());
    BOOST_REQUIRE_MESSAGE(wait_until([&] { return stats_of(db, q).completed == 20; }, 20s),
                          "in_transaction = " << in_transaction << ": " << ran.load() << " ran");
    BOOST_TEST(ran.load() == 20);
    t.stop();
    BOOST_TEST(t.error().empty());
  }
}

BOOST_AUTO_TEST_SUITE_END()
