// test_worker_in_transaction.cpp: the worker in in-transaction mode (worker_options::in_transaction): a
// handler's writes commit with its job's completion or not at all, a failing handler's writes are undone
// while its batch stands, the batch is held (not claimable) while it runs, a stop hands back the jobs not
// started untouched, and the calls that need a lease are refused.
#include "fixture.hpp"

#include <mutex>

#include <libpq-fe.h>

using namespace pgjq_test;

namespace
{

// A table of the test's own, named after its queue, dropped with the fixture.
class scoped_table
{
public:
  explicit scoped_table(const scoped_queue &q) : m_name("written_by_" + q.name())
  {
    pgjq::connection(conninfo()).execute("CREATE TABLE " + m_name + " (n integer PRIMARY KEY)");
  }
  ~scoped_table()
  {
    try
    {
      pgjq::connection(conninfo()).execute("DROP TABLE IF EXISTS " + m_name);
    }
    catch (...)
    {
    }
  }
  const std::string &name() const noexcept { return m_name; }

private:
  std::string m_name;
};

pgjq::worker_options in_transaction_options(const scoped_queue &q, int batch_size)
{
  pgjq::worker_options o = worker_options_for(q);
  o.in_transaction = true;
  o.batch_size = batch_size;
  return o;
}

pgjq::queue_options one_attempt()
{
  pgjq::queue_options qo;
  qo.max_attempts = 1;
  return qo;
}

} // namespace

BOOST_AUTO_TEST_SUITE(worker_in_transaction)

BOOST_AUTO_TEST_CASE(a_handlers_writes_commit_with_its_completion_and_a_failing_handlers_are_undone)
{
  scoped_queue q(one_attempt());
  scoped_table t(q);
  pgjq::connection db(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("write", objects(4), q.into());
  pgjq::worker w(in_transaction_options(q, 4)); // one batch: the failure must not take the others with it
  w.on("write",
       [&](pgjq::job_context &ctx)
       {
         const int i = ctx.payload()["i"].get<int>();
         pgjq::connection &tx = ctx.transaction();
         tx.execute("INSERT INTO " + t.name() + " VALUES (" + std::to_string(i) + ")");
         tx.enqueue("follow_up", {{"after", i}}, q.into()); // a job chain, as atomic as the write
         if (i == 2)
           throw std::runtime_error("job 2 refuses");
       });
  worker_thread run(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().completed + w.stats().failed == 4; }, 20s));
  run.stop();
  BOOST_TEST(run.error().empty());

  BOOST_TEST(scalar(db.native_handle(), "SELECT count(*) FROM " + t.name()) == 3);
  BOOST_TEST(scalar(db.native_handle(), "SELECT count(*) FROM " + t.name() + " WHERE n = 2") == 0);
  for (std::size_t i = 0; i < ids.size(); ++i)
  {
    std::optional<pgjq::job> j = db.get_job(ids[i]);
    BOOST_REQUIRE(j.has_value());
    BOOST_TEST(j->attempts == 1);
    BOOST_TEST(j->worker_id.value_or("") == "test-worker-" + q.name());
    if (i == 2)
    {
      BOOST_TEST(j->status == pgjq::job_status::failed);
      BOOST_TEST(j->last_error.value_or("") == "job 2 refuses");
    }
    else
      BOOST_TEST(j->status == pgjq::job_status::completed);
  }
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.pending == 3); // the follow-ups of the three that succeeded, and not of the one that failed
  BOOST_TEST(w.stats().claimed == 4u);
  BOOST_TEST(w.stats().completed == 3u);
  BOOST_TEST(w.stats().failed == 1u);
  BOOST_TEST(w.stats().heartbeats == 0u);
}

BOOST_AUTO_TEST_CASE(a_handler_that_swallows_an_sql_error_fails_its_job_and_its_batch_goes_on)
{
  scoped_queue q(one_attempt());
  scoped_table t(q);
  pgjq::connection db(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("write", objects(3), q.into());
  pgjq::worker w(in_transaction_options(q, 3));
  w.on("write",
       [&](pgjq::job_context &ctx)
       {
         const int i = ctx.payload()["i"].get<int>();
         ctx.transaction().execute("INSERT INTO " + t.name() + " VALUES (" + std::to_string(i) + ")");
         if (i == 1)
         {
           try
           {
             ctx.transaction().execute("INSERT INTO " + t.name() + " VALUES (1)"); // duplicate key
           }
           catch (const pgjq::error &)
           {
             // swallowed: the transaction is aborted all the same
           }
         }
       });
  worker_thread run(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().completed + w.stats().failed == 3; }, 20s));
  run.stop();
  BOOST_TEST(run.error().empty());
  BOOST_TEST(w.stats().claimed == 3u); // one batch, run once: not rolled back and run again
  BOOST_TEST(w.stats().abandoned == 0u);
  BOOST_TEST(scalar(db.native_handle(), "SELECT count(*) FROM " + t.name()) == 2);
  std::optional<pgjq::job> failed = db.get_job(ids[1]);
  BOOST_REQUIRE(failed.has_value());
  BOOST_TEST(failed->status == pgjq::job_status::failed);
  BOOST_TEST(failed->last_error.value_or("").find("aborted by an SQL error") != std::string::npos);
  BOOST_TEST(db.get_job(ids[0])->status == pgjq::job_status::completed);
  BOOST_TEST(db.get_job(ids[2])->status == pgjq::job_status::completed);
}

BOOST_AUTO_TEST_CASE(a_failure_whose_message_the_server_refuses_is_recorded_with_the_reason)
{
  scoped_queue q(one_attempt());
  pgjq::connection db(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("t", objects(2), q.into());
  pgjq::worker_options o = in_transaction_options(q, 2);
  std::vector<std::string> log;
  std::mutex log_mutex;
  o.log = [&](const std::string &m)
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    log.push_back(m);
  };
  pgjq::worker w(o);
  w.on("t",
       [](pgjq::job_context &ctx)
       {
         if (ctx.payload()["i"].get<int>() == 0)
           throw std::runtime_error("not UTF-8: \xff\xfe"); // refused by the server as a text parameter
       });
  worker_thread run(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().completed + w.stats().failed == 2; }, 20s));
  run.stop();
  BOOST_TEST(w.stats().claimed == 2u); // recorded in the first batch, not rolled back and claimed again
  std::optional<pgjq::job> failed = db.get_job(ids[0]);
  BOOST_REQUIRE(failed.has_value());
  BOOST_TEST(failed->status == pgjq::job_status::failed);
  BOOST_TEST(failed->last_error.value_or("").find("its message was refused") != std::string::npos);
  BOOST_TEST(db.get_job(ids[1])->status == pgjq::job_status::completed);
  std::lock_guard<std::mutex> lock(log_mutex);
  BOOST_TEST(log.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_running_batch_is_held_and_a_stop_hands_back_the_jobs_not_started_untouched)
{
  scoped_queue q;
  pgjq::connection db(conninfo()), other(conninfo());
  const std::vector<std::int64_t> ids = db.enqueue_batch("slow", objects(5), q.into());
  pgjq::worker w(in_transaction_options(q, 5));
  std::atomic<int> started{0};
  w.on("slow",
       [&](pgjq::job_context &ctx)
       {
         ++started;
         while (!ctx.stop_requested()) // the first job runs until the test stops the worker
           std::this_thread::sleep_for(5ms);
       });
  worker_thread run(w);
  BOOST_REQUIRE(wait_until([&] { return started.load() >= 1; }, 10s));
  // the whole batch is held by the worker's transaction, started or not, and nothing is written yet
  BOOST_TEST(other.claim("w2", {}, 10, q.name()).empty());
  BOOST_TEST(other.get_job(ids[0])->status == pgjq::job_status::pending);
  run.stop();
  BOOST_TEST(run.error().empty());
  const pgjq::worker_stats ws = w.stats();
  BOOST_TEST(started.load() == 1);
  BOOST_TEST(ws.completed == 1u);
  BOOST_TEST(ws.released == 4u);
  BOOST_TEST(ws.claimed == ws.completed + ws.released);
  for (std::size_t i = 0; i < ids.size(); ++i)
  {
    std::optional<pgjq::job> j = other.get_job(ids[i]);
    BOOST_REQUIRE(j.has_value());
    if (i < ws.completed)
      BOOST_TEST(j->status == pgjq::job_status::completed);
    else
    {
      BOOST_TEST(j->status == pgjq::job_status::pending);
      BOOST_TEST(j->attempts == 0); // never claimed in a way that counts: the transaction reported nothing
    }
  }
  BOOST_TEST(other.claim("w2", {}, 10, q.name()).size() == 5u - ws.completed);
}

BOOST_AUTO_TEST_CASE(progress_and_set_result_need_a_lease_and_transaction_needs_in_transaction_mode)
{
  scoped_queue q(one_attempt());
  pgjq::connection db(conninfo());
  const std::int64_t progress_job = db.enqueue("progress", empty, q.into());
  const std::int64_t result_job = db.enqueue("result", empty, q.into());
  {
    pgjq::worker w(in_transaction_options(q, 10));
    w.on("progress", [](pgjq::job_context &ctx) { ctx.progress(50); });
    w.on("result", [](pgjq::job_context &ctx) { ctx.set_result({{"ok", true}}); });
    worker_thread run(w);
    BOOST_REQUIRE(wait_until([&] { return w.stats().failed == 2; }, 20s));
  }
  for (std::int64_t id : {progress_job, result_job})
  {
    std::optional<pgjq::job> j = db.get_job(id);
    BOOST_REQUIRE(j.has_value());
    BOOST_TEST(j->status == pgjq::job_status::failed);
    BOOST_TEST(j->last_error.value_or("").find("worker_options::in_transaction") != std::string::npos);
  }

  const std::int64_t leased_job = db.enqueue("transaction", empty, q.into());
  pgjq::worker leased(worker_options_for(q));
  leased.on("transaction", [](pgjq::job_context &ctx) { ctx.transaction(); });
  worker_thread run(leased);
  std::optional<pgjq::job> j = db.wait_for_completion(leased_job, 20s);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->status == pgjq::job_status::failed);
  BOOST_TEST(j->last_error.value_or("").find("only in in-transaction mode") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
