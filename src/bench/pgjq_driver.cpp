// pgjq_driver.cpp: pgjq as the scenarios see it. Producers and workers go through the project's own C++
// client (pgjq::connection, pgjq::worker), so the client's cost is part of every figure. One exception:
// pgjq.complete_and_claim runs as a prepared statement on the client's own session
// (connection::native_handle) rather than through connection::complete_and_claim, which fetches every
// column; the statement fetches the four columns the recipe driver's claim fetches, so that both queues
// ship the same data per job in the drain scenarios.
#include "driver.hpp"

#include <pgjq/client.hpp>

#include <libpq-fe.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace pgjq::bench
{

namespace
{

const char *const job_type = "email";

// What a handler needs of a claimed job, and exactly what the recipe driver's claim fetches too, so that
// both queues print the same columns per job (the client's own claim fetches every column).
const char *const claim_columns = "id, job_type, payload, attempts";

class pgjq_session final : public session
{
public:
  pgjq_session(const std::string &conninfo, int index, bool use_complete_and_claim)
      : m_conn(conninfo), m_worker_id("bench-" + std::to_string(index)), m_cac(use_complete_and_claim)
  {
    if (m_cac)
    {
      m_raw.emplace(pg_session::borrow(m_conn.native_handle()));
      m_raw->prepare("bench_complete_and_claim",
                     std::string("SELECT ") + claim_columns +
                         " FROM pgjq.complete_and_claim($1::text, $2::bigint[], $3::text[], $4::integer, $5::text)");
    }
  }

  void enqueue_one(std::int64_t i) override { m_conn.enqueue_raw(job_type, payload(i)); }

  void enqueue_batch(std::int64_t first, int n) override
  {
    m_conn.enqueue_batch_raw(job_type, payload_array(first, n));
  }

  bool enqueue_backpressured(std::int64_t i) override
  {
    return m_conn.try_enqueue_raw(job_type, payload(i)).has_value();
  }

  bool force_depth_slot(int slot) override
  {
    const std::string value = std::to_string(slot);
    const char *params[] = {value.c_str()};
    PGresult *res = PQexecParams(m_conn.native_handle(), "SELECT set_config('pgjq.depth_slot', $1, false)", 1, nullptr,
                                 params, nullptr, nullptr, 0);
    const bool ok = PQresultStatus(res) == PGRES_TUPLES_OK;
    const std::string why = ok ? std::string() : PQresultErrorMessage(res);
    PQclear(res);
    if (!ok)
      throw std::runtime_error("cannot set pgjq.depth_slot: " + why);
    return true;
  }

  int claim(int batch) override
  {
    m_held.clear();
    for (const pgjq::job &j : m_conn.claim(m_worker_id, m_types, batch))
      m_held.push_back(j.id);
    return static_cast<int>(m_held.size());
  }

  int complete_held() override
  {
    const int n = static_cast<int>(m_held.size());
    if (n == 1)
      m_conn.complete(m_held.front(), m_worker_id);
    else if (n > 1)
      m_conn.complete_batch(m_held, m_worker_id);
    m_held.clear();
    return n;
  }

  int complete_and_claim(int batch) override
  {
    if (!m_cac)
      return session::complete_and_claim(batch);
    m_ids_text = "{";
    for (std::size_t k = 0; k < m_held.size(); ++k)
    {
      if (k)
        m_ids_text += ',';
      m_ids_text += std::to_string(m_held[k]);
    }
    m_ids_text += '}';
    const std::string batch_text = std::to_string(batch);
    result_guard res(m_raw->exec_prepared("bench_complete_and_claim", {m_worker_id.c_str(), m_ids_text.c_str(),
                                                                       "{email}", batch_text.c_str(), "default"}));
    m_held.clear();
    for (int row = 0; row < res.rows(); ++row)
      m_held.push_back(std::stoll(res.value(row, 0)));
    return static_cast<int>(m_held.size());
  }

  int begin_and_claim(int batch) override { return hold(m_conn.begin_and_claim(m_worker_id, m_types, batch)); }

  int complete_commit_and_claim(int batch) override
  {
    return hold(m_conn.complete_commit_and_claim(m_held, m_worker_id, m_types, batch));
  }

  int complete_and_commit() override
  {
    const int n = m_conn.complete_and_commit(m_held, m_worker_id);
    m_held.clear();
    return n;
  }

private:
  int hold(const std::vector<pgjq::job> &jobs)
  {
    m_held.clear();
    for (const pgjq::job &j : jobs)
      m_held.push_back(j.id);
    return static_cast<int>(m_held.size());
  }

  pgjq::connection m_conn;
  std::string m_worker_id;
  bool m_cac;
  std::optional<pg_session> m_raw;
  std::vector<std::string> m_types{job_type};
  std::vector<std::int64_t> m_held;
  std::string m_ids_text;
};

// The client's worker runtime with one runner: it LISTENs on pgjq_new_job and sleeps on the socket.
class pgjq_latency_worker final : public latency_worker
{
public:
  pgjq_latency_worker(const std::string &conninfo, std::function<void(std::int64_t)> on_start)
  {
    pgjq::worker_options o;
    o.conninfo = conninfo;
    o.worker_id = "bench-latency";
    o.handle_signals = false;
    o.concurrency = 1;
    m_worker = std::make_unique<pgjq::worker>(o);
    m_worker->on(job_type,
                 [this, on_start](pgjq::job_context &ctx)
                 {
                   m_idle_at_start = m_worker->stats().idle_waits;
                   on_start(payload_index(ctx.job().payload_text));
                 });
    m_thread = std::thread([this] { m_worker->run(); });
  }

  ~pgjq_latency_worker() override { stop(); }

  void wait_idle() override
  {
    const std::uint64_t seen = m_idle_at_start.load();
    while (m_worker->stats().idle_waits <= seen)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  void stop() override
  {
    if (m_thread.joinable())
    {
      m_worker->stop();
      m_thread.join();
    }
  }

private:
  std::unique_ptr<pgjq::worker> m_worker;
  std::atomic<std::uint64_t> m_idle_at_start{0};
  std::thread m_thread;
};

class pgjq_driver final : public driver
{
public:
  explicit pgjq_driver(const std::string &conninfo) : m_conninfo(conninfo), m_admin(conninfo) {}

  std::string name() const override { return "pgjq"; }

  std::string worker_path() const override
  {
    return std::string(m_cac ? "pgjq.complete_and_claim (one call per batch; raw libpq on the client's session)"
                             : "pgjq::connection::claim + complete/complete_batch (two calls per batch)") +
           "; in-transaction rows: pgjq::connection::begin_and_claim, then complete_commit_and_claim (one round "
           "trip per batch)";
  }

  void reset() override
  {
    m_admin.exec("SET client_min_messages = warning; DROP EXTENSION IF EXISTS pgjq CASCADE; CREATE EXTENSION pgjq");
    try
    {
      m_admin.exec("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS pgstattuple");
      m_pgstattuple = true;
    }
    catch (const std::exception &)
    {
      m_pgstattuple = false;
    }
    m_cac = m_admin.scalar("SELECT to_regprocedure('pgjq.complete_and_claim(text,bigint[],text[],integer,text)') "
                           "IS NOT NULL") == std::optional<std::string>("t");
    m_admin.exec("VACUUM ANALYZE pgjq.live_jobs, pgjq.finished_jobs, pgjq.queue_depth");
  }

  std::unique_ptr<session> open(int index) override { return std::make_unique<pgjq_session>(m_conninfo, index, m_cac); }

  void set_backpressure(std::int64_t max_pending) override
  {
    m_admin.exec("SELECT pgjq.alter_queue('default', max_pending => " + std::to_string(max_pending) + ")");
  }

  bool claims_in_transaction() const override { return true; }
  bool discard_completed() override
  {
    m_admin.exec("SELECT pgjq.alter_queue('default', keep_completed => false)");
    return true;
  }

  void vacuum_analyze() override
  {
    m_admin.exec("VACUUM ANALYZE pgjq.live_jobs, pgjq.finished_jobs, pgjq.queue_depth");
  }

  table_sizes sizes() override
  {
    table_sizes s;
    s.queue = m_admin.scalar_int("SELECT pg_total_relation_size('pgjq.live_jobs') + "
                                 "pg_total_relation_size('pgjq.queue_depth')");
    s.history = m_admin.scalar_int("SELECT pg_total_relation_size('pgjq.finished_jobs')");
    return s;
  }

  std::string size_detail() override
  {
    return m_admin
        .scalar("SELECT string_agg(format('%s %s MB (heap %s MB, %s dead)', c.relname, "
                "round(pg_total_relation_size(c.oid) / 1048576.0, 1), round(pg_relation_size(c.oid) / 1048576.0, 1), "
                "coalesce(s.n_dead_tup, 0)), ' + ' ORDER BY c.relname) "
                "FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid "
                "WHERE c.oid IN ('pgjq.live_jobs'::regclass, 'pgjq.queue_depth'::regclass)")
        .value_or("");
  }

  std::int64_t dead_tuples() override
  {
    if (m_pgstattuple)
      return m_admin.scalar_int("SELECT (SELECT dead_tuple_count FROM pgstattuple('pgjq.live_jobs')) + "
                                "(SELECT dead_tuple_count FROM pgstattuple('pgjq.queue_depth'))");
    return m_admin.scalar_int("SELECT sum(n_dead_tup) FROM pg_stat_user_tables WHERE schemaname = 'pgjq' "
                              "AND relname IN ('live_jobs', 'queue_depth')");
  }

  std::int64_t pending() override
  {
    return m_admin.scalar_int("SELECT count(*) FROM pgjq.live_jobs WHERE status = 'pending'");
  }

  std::unique_ptr<latency_worker> start_latency_worker(std::function<void(std::int64_t)> on_start) override
  {
    return std::make_unique<pgjq_latency_worker>(m_conninfo, std::move(on_start));
  }

  // enqueue, try_enqueue and insert need nothing; cancel needs pending jobs; complete and fail claimed ones.
  bool prepare_calls(const std::string &call, std::int64_t total) override
  {
    if (call == "enqueue" || call == "try_enqueue" || call == "insert")
      return true;
    if (call != "complete" && call != "fail" && call != "cancel")
      return false;
    for (std::int64_t done = 0; done < total; done += 10000)
      m_admin.exec("SELECT pgjq.enqueue_batch('email', (SELECT jsonb_agg(g) FROM generate_series(1, " +
                   std::to_string(std::min<std::int64_t>(10000, total - done)) + ") g))");
    if (call == "cancel")
      return true;
    std::int64_t claimed = 0;
    while (claimed < total)
    {
      const std::int64_t n =
          m_admin.scalar_int("SELECT count(*) FROM pgjq.claim_job_batch('bench-bigtx', NULL, 10000)");
      if (n == 0)
        throw std::runtime_error("prepare_calls: the queue ran out of jobs to claim");
      claimed += n;
    }
    return true;
  }

  double calls_in_one_transaction(const std::string &call, std::int64_t n) override
  {
    const std::string count = std::to_string(n);
    const std::string series = " FROM generate_series(1, " + count + ") g";
    const std::string claimed = " FROM (SELECT id FROM pgjq.live_jobs WHERE status = 'claimed' AND worker_id = "
                                "'bench-bigtx' LIMIT " +
                                count + ") j";
    std::string sql;
    if (call == "enqueue" || call == "try_enqueue")
      sql = "SELECT count(pgjq." + call + "('email', jsonb_build_object('i', g)))" + series;
    else if (call == "insert")
      sql = "WITH i AS (INSERT INTO pgjq.jobs (job_type, payload) SELECT 'email', jsonb_build_object('i', g)" + series +
            " RETURNING 1) SELECT count(*) FROM i";
    else if (call == "complete")
      sql = "SELECT count(pgjq.complete(id, 'bench-bigtx'))" + claimed;
    else if (call == "fail")
      sql = "SELECT count(pgjq.fail(id, 'bench-bigtx', 'bench'))" + claimed;
    else
      sql = "SELECT count(pgjq.cancel(id)) FROM (SELECT id FROM pgjq.live_jobs WHERE status = 'pending' LIMIT " +
            count + ") j";
    const auto t0 = steady::now();
    m_admin.exec("BEGIN");
    const std::int64_t done = m_admin.scalar_int(sql);
    m_admin.exec("COMMIT");
    const double secs = seconds_between(t0, steady::now());
    if (done != n)
      throw std::runtime_error("calls_in_one_transaction: " + std::to_string(done) + " of " + count + " " + call +
                               " calls done");
    return secs;
  }

  worker_run run_worker(const std::string &type, int runners, int batch, std::int64_t jobs,
                        std::chrono::seconds limit) override
  {
    pgjq::worker_options o;
    o.conninfo = m_conninfo;
    o.worker_id = "bench-runtime";
    o.handle_signals = false;
    o.concurrency = runners;
    o.batch_size = batch;
    pgjq::worker w(o);
    std::atomic<std::int64_t> handled{0};
    std::once_flag first_once;
    steady::time_point first{}, returned_at{};
    w.on(type,
         [&](pgjq::job_context &)
         {
           std::call_once(first_once, [&] { first = steady::now(); });
           if (++handled == jobs)
             w.stop(); // each runner completes what it ran, then returns
         });
    std::mutex m;
    std::condition_variable cv;
    bool returned = false;
    std::exception_ptr error;
    std::thread t(
        [&]
        {
          try
          {
            w.run();
          }
          catch (...)
          {
            error = std::current_exception();
          }
          const std::lock_guard<std::mutex> lock(m);
          returned_at = steady::now();
          returned = true;
          cv.notify_all();
        });
    {
      std::unique_lock<std::mutex> lock(m);
      if (!cv.wait_for(lock, limit, [&] { return returned; }))
      {
        lock.unlock();
        w.stop();
      }
    }
    t.join();
    if (error)
      std::rethrow_exception(error);
    if (handled.load() < jobs)
      throw std::runtime_error("the worker ran " + std::to_string(handled.load()) + " of " + std::to_string(jobs) +
                               " jobs within " + std::to_string(limit.count()) + " s");
    return {seconds_between(first, returned_at), w.stats().idle_waits};
  }

  pg_session &admin() override { return m_admin; }
  const std::string &conninfo() const override { return m_conninfo; }

private:
  std::string m_conninfo;
  pg_session m_admin;
  bool m_cac = false;
  bool m_pgstattuple = false;
};

} // namespace

std::unique_ptr<driver> make_pgjq_driver(const std::string &conninfo)
{
  return std::make_unique<pgjq_driver>(conninfo);
}

} // namespace pgjq::bench
