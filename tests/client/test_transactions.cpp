// test_transactions.cpp: enqueue inside the caller's own transaction, on the caller's own PGconn:
// a rollback means the job never existed, and nobody is woken for it.
#include "fixture.hpp"

#include <libpq-fe.h>

using namespace pgjq_test;

namespace
{

// The caller's own libpq session, as an application using plain libpq (or libpqxx) would have it.
struct raw_session
{
  raw_session() : conn(PQconnectdb(conninfo().c_str()))
  {
    BOOST_REQUIRE_MESSAGE(PQstatus(conn) == CONNECTION_OK, PQerrorMessage(conn));
  }
  ~raw_session() { PQfinish(conn); }
  void exec(const char *sql)
  {
    PGresult *res = PQexec(conn, sql);
    const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
    const std::string message = PQresultErrorMessage(res);
    PQclear(res);
    BOOST_REQUIRE_MESSAGE(ok, sql << ": " << message);
  }
  PGconn *conn;
};

} // namespace

BOOST_AUTO_TEST_SUITE(transactions)

BOOST_AUTO_TEST_CASE(a_job_enqueued_in_a_rolled_back_transaction_never_exists)
{
  scoped_queue q;
  pgjq::connection observer(conninfo());
  observer.listen(pgjq::new_job_channel);
  raw_session app;
  app.exec("BEGIN");
  std::int64_t id = 0;
  {
    pgjq::connection borrowed(app.conn);
    id = borrowed.enqueue("email", {{"to", "x@example.com"}}, q.into());
  }
  app.exec("ROLLBACK");
  BOOST_TEST(!observer.get_job(id).has_value());
  BOOST_TEST(stats_of(observer, q).pending == 0);
  // The notification is sent at commit only: a rolled-back enqueue wakes nobody.
  std::optional<pgjq::notification> n;
  while ((n = observer.wait_for_notification(300ms)))
    BOOST_TEST(n->payload != q.name());
  // The borrowed session is still the caller's, open and usable.
  BOOST_TEST(PQstatus(app.conn) == CONNECTION_OK);
}

BOOST_AUTO_TEST_CASE(a_job_enqueued_in_a_transaction_appears_at_commit)
{
  scoped_queue q;
  pgjq::connection observer(conninfo());
  raw_session app;
  app.exec("BEGIN");
  pgjq::connection borrowed(app.conn);
  const std::int64_t id = borrowed.enqueue("email", empty, q.into());
  BOOST_TEST(!observer.get_job(id).has_value());
  app.exec("COMMIT");
  BOOST_TEST(observer.get_job(id).has_value());
}

BOOST_AUTO_TEST_CASE(a_second_wrapper_of_the_same_session_does_not_prepare_twice)
{
  scoped_queue q;
  raw_session app;
  {
    pgjq::connection first(app.conn);
    first.enqueue("t", empty, q.into());
  }
  app.exec("BEGIN");
  {
    // Preparing "pgjq_enqueue" again would fail and abort the caller's transaction.
    pgjq::connection second(app.conn);
    second.enqueue("t", empty, q.into());
  }
  app.exec("COMMIT");
  pgjq::connection observer(conninfo());
  BOOST_TEST(stats_of(observer, q).pending == 2);
}

BOOST_AUTO_TEST_CASE(the_transaction_guard_rolls_back_unless_committed)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  std::int64_t dropped = 0, kept = 0;
  {
    pgjq::transaction tx(db);
    dropped = db.enqueue("t", empty, q.into());
  }
  {
    pgjq::transaction tx(db);
    kept = db.enqueue("t", empty, q.into());
    tx.commit();
  }
  BOOST_TEST(!db.get_job(dropped).has_value());
  BOOST_TEST(db.get_job(kept).has_value());
}

BOOST_AUTO_TEST_CASE(commit_after_a_failed_statement_reports_the_rollback)
{
  pgjq::queue_options qo;
  qo.max_pending = 1;
  scoped_queue q(qo);
  pgjq::connection db(conninfo());
  pgjq::transaction tx(db);
  db.enqueue("t", empty, q.into());
  BOOST_CHECK_THROW(db.enqueue("t", empty, q.into()), pgjq::queue_full);
  BOOST_CHECK_THROW(tx.commit(), pgjq::error);
  BOOST_TEST(stats_of(db, q).pending == 0);
}

BOOST_AUTO_TEST_CASE(waiting_for_completion_inside_a_transaction_is_a_usage_error)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  pgjq::transaction tx(db);
  BOOST_CHECK_THROW(db.wait_for_completion(id, 10ms), pgjq::usage_error);
}

BOOST_AUTO_TEST_SUITE_END()
