// test_in_transaction.cpp: claims held by the worker's open transaction (begin_and_claim,
// complete_and_commit, complete_commit_and_claim, claim_in_transaction, fail_in_transaction): one round
// trip each way, other sessions skip the held jobs, and an error or a lost session leaves the jobs runnable.
#include "fixture.hpp"

#include <libpq-fe.h>

using namespace pgjq_test;

namespace
{

std::vector<std::int64_t> ids_of(const std::vector<pgjq::job> &jobs)
{
  std::vector<std::int64_t> ids;
  for (const pgjq::job &j : jobs)
    ids.push_back(j.id);
  return ids;
}
} // namespace

BOOST_AUTO_TEST_SUITE(in_transaction)

BOOST_AUTO_TEST_CASE(begin_and_claim_holds_the_jobs_until_complete_and_commit)
{
  scoped_queue q;
  pgjq::connection worker(conninfo()), other(conninfo());
  const std::int64_t a = worker.enqueue("t", empty, q.into());
  const std::int64_t b = worker.enqueue("t", empty, q.into());
  const std::int64_t c = worker.enqueue("t", empty, q.into());

  std::vector<pgjq::job> jobs = worker.begin_and_claim("w1", {}, 2, q.name());
  BOOST_REQUIRE(jobs.size() == 2u);
  BOOST_TEST(jobs[0].id == a);
  BOOST_TEST(jobs[1].id == b);
  BOOST_TEST(jobs[0].attempts == 1);
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_INTRANS);
  // another worker, leased or in a transaction, gets only the job nobody holds
  std::vector<pgjq::job> leased = other.claim("w2", {}, 10, q.name());
  BOOST_REQUIRE(leased.size() == 1u);
  BOOST_TEST(leased[0].id == c);

  BOOST_TEST(worker.complete_and_commit(ids_of(jobs), "w1") == 2);
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_IDLE);
  for (std::int64_t id : {a, b})
  {
    std::optional<pgjq::job> done = other.get_job(id);
    BOOST_REQUIRE(done.has_value());
    BOOST_TEST(done->status == pgjq::job_status::completed);
    BOOST_TEST(done->attempts == 1);
    BOOST_TEST(done->worker_id.value_or("") == "w1");
  }
}

BOOST_AUTO_TEST_CASE(begin_and_claim_ends_the_transaction_when_it_claims_nothing)
{
  scoped_queue q;
  pgjq::connection worker(conninfo());
  BOOST_TEST(worker.begin_and_claim("w1", {}, 10, q.name()).empty());
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_IDLE);
  // and refuses to open a second transaction inside the caller's
  worker.execute("BEGIN");
  BOOST_CHECK_THROW(worker.begin_and_claim("w1", {}, 10, q.name()), pgjq::usage_error);
  worker.execute("ROLLBACK");
}

BOOST_AUTO_TEST_CASE(a_failed_completion_rolls_the_transaction_back_and_the_jobs_stay_runnable)
{
  scoped_queue q;
  pgjq::connection worker(conninfo()), other(conninfo());
  const std::int64_t a = worker.enqueue("t", empty, q.into());
  const std::int64_t b = worker.enqueue("t", empty, q.into());
  std::vector<pgjq::job> jobs = worker.begin_and_claim("w1", {}, 1, q.name());
  BOOST_REQUIRE(jobs.size() == 1u);
  // a job this transaction does not hold: PJ002, and the session is usable again at once
  BOOST_CHECK_THROW(worker.complete_and_commit({a, b}, "w1"), pgjq::not_lease_holder);
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_IDLE);
  std::optional<pgjq::job> job = other.get_job(a);
  BOOST_REQUIRE(job.has_value());
  BOOST_TEST(job->status == pgjq::job_status::pending);
  BOOST_TEST(job->attempts == 0);
  BOOST_TEST(worker.begin_and_claim("w1", {}, 1, q.name()).size() == 1u);
  worker.execute("ROLLBACK");
}

BOOST_AUTO_TEST_CASE(complete_commit_and_claim_commits_the_batch_and_holds_the_next_in_a_new_transaction)
{
  scoped_queue q;
  pgjq::connection worker(conninfo()), other(conninfo());
  const std::vector<std::int64_t> ids = worker.enqueue_batch("t", objects(5), q.into());
  BOOST_CHECK_THROW(worker.complete_commit_and_claim({}, "w1", {}, 2, q.name()), pgjq::usage_error); // no transaction
  std::vector<pgjq::job> first = worker.begin_and_claim("w1", {}, 2, q.name());
  BOOST_REQUIRE(first.size() == 2u);

  std::vector<pgjq::job> second = worker.complete_commit_and_claim(ids_of(first), "w1", {}, 2, q.name());
  BOOST_REQUIRE(second.size() == 2u);
  BOOST_TEST(second[0].id == ids[2]);
  BOOST_TEST(second[1].id == ids[3]);
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_INTRANS);
  // the first batch is committed, the second is held
  BOOST_TEST(other.get_job(ids[0])->status == pgjq::job_status::completed);
  BOOST_TEST(other.get_job(ids[1])->status == pgjq::job_status::completed);
  std::vector<pgjq::job> leased = other.claim("w2", {}, 10, q.name());
  BOOST_REQUIRE(leased.size() == 1u);
  BOOST_TEST(leased[0].id == ids[4]);
  other.complete(ids[4], "w2");

  // a completion that is refused rolls back and claims nothing: the held jobs are runnable again
  BOOST_CHECK_THROW(worker.complete_commit_and_claim({ids[2], ids[4]}, "w1", {}, 2, q.name()), pgjq::not_lease_holder);
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_IDLE);
  BOOST_TEST(other.get_job(ids[2])->status == pgjq::job_status::pending);

  // the last batch: nothing left to claim, so the new transaction is closed again
  std::vector<pgjq::job> last = worker.begin_and_claim("w1", {}, 2, q.name());
  BOOST_REQUIRE(last.size() == 2u);
  BOOST_TEST(worker.complete_commit_and_claim(ids_of(last), "w1", {}, 2, q.name()).empty());
  BOOST_TEST(PQtransactionStatus(worker.native_handle()) == PQTRANS_IDLE);
  BOOST_TEST(stats_of(other, q).completed == 5);
}

BOOST_AUTO_TEST_CASE(a_session_that_dies_releases_its_jobs_at_once)
{
  scoped_queue q;
  pgjq::connection other(conninfo());
  const std::int64_t a = other.enqueue("t", empty, q.into());
  {
    pgjq::connection doomed(conninfo());
    BOOST_REQUIRE(doomed.begin_and_claim("w1", {}, 1, q.name()).size() == 1u);
    BOOST_TEST(other.claim("w2", {}, 1, q.name()).empty());
  } // closed without commit: the server rolls the transaction back
  std::vector<pgjq::job> jobs;
  for (int i = 0; i < 50 && jobs.empty(); ++i)
  {
    jobs = other.claim("w2", {}, 1, q.name());
    if (jobs.empty())
      std::this_thread::sleep_for(20ms);
  }
  BOOST_REQUIRE(jobs.size() == 1u);
  BOOST_TEST(jobs[0].id == a);
  BOOST_TEST(jobs[0].attempts == 1);
}

BOOST_AUTO_TEST_CASE(fail_in_transaction_counts_the_attempt_and_schedules_the_retry)
{
  scoped_queue q;
  pgjq::connection worker(conninfo());
  const std::int64_t a = worker.enqueue("t", empty, q.into());
  pgjq::transaction tx(worker);
  BOOST_REQUIRE(worker.claim_in_transaction("w1", {}, 1, q.name()).size() == 1u);
  BOOST_TEST(worker.fail_in_transaction(a, "w1", "boom", std::chrono::seconds(60)) == pgjq::job_status::pending);
  tx.commit();
  std::optional<pgjq::job> job = worker.get_job(a);
  BOOST_REQUIRE(job.has_value());
  BOOST_TEST(job->status == pgjq::job_status::pending);
  BOOST_TEST(job->attempts == 1);
  BOOST_TEST(job->last_error.value_or("") == "boom");
  BOOST_TEST(worker.claim("w2", {}, 1, q.name()).empty()); // not due for a minute
}

BOOST_AUTO_TEST_SUITE_END()
