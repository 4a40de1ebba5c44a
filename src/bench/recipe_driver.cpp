// recipe_driver.cpp: the recipe (bench/recipe.sql) driven the way a competent user
// would drive it: plain libpq, every statement prepared once per session, the recipe's own functions for
// claiming (claim_job_batch) and completing one job (complete_job). Where the recipe has no call for what a
// scenario needs, the bench uses the obvious single statement and says so here:
//   - batches: INSERT ... SELECT FROM jsonb_array_elements($1) (the same JSON array pgjq.enqueue_batch takes);
//   - batch completion: the UPDATE of complete_job with id = ANY($1::uuid[]);
//   - backpressure: the INSERT only happens while count(*) of pending jobs is below the limit;
//   - an idle worker polls claim_job_batch every poll_ms (the recipe has no notification).
#include "driver.hpp"

#include <libpq-fe.h>

#include <limits>
#include <thread>

namespace pgjq::bench
{

namespace
{

class recipe_session final : public session
{
public:
  recipe_session(const std::string &conninfo, int index, const std::int64_t &max_pending)
      : m_db(conninfo), m_worker_id("bench-" + std::to_string(index)), m_max_pending(max_pending)
  {
    m_db.prepare("enqueue", "INSERT INTO jobs (job_type, data) VALUES ('email', $1::jsonb)");
    m_db.prepare("enqueue_batch",
                 "INSERT INTO jobs (job_type, data) SELECT 'email', x FROM jsonb_array_elements($1::jsonb) AS x");
    m_db.prepare("enqueue_bp", "INSERT INTO jobs (job_type, data) SELECT 'email', $1::jsonb "
                               "WHERE (SELECT count(*) FROM jobs WHERE status = 'pending') < $2::bigint");
    // what a handler needs, and what the pgjq driver's complete_and_claim fetches
    m_db.prepare("claim", "SELECT id, job_type, data, attempts FROM claim_job_batch($1::varchar, "
                          "ARRAY['email']::varchar[], $2::int)");
    m_db.prepare("complete", "SELECT complete_job($1::uuid)");
    m_db.prepare("complete_batch", "UPDATE jobs SET status = 'completed', progress = 100, completed_at = now() "
                                   "WHERE id = ANY($1::uuid[])");
  }

  void enqueue_one(std::int64_t i) override
  {
    const std::string p = payload(i);
    result_guard res(m_db.exec_prepared("enqueue", {p.c_str()}));
  }

  void enqueue_batch(std::int64_t first, int n) override
  {
    const std::string p = payload_array(first, n);
    result_guard res(m_db.exec_prepared("enqueue_batch", {p.c_str()}));
  }

  bool enqueue_backpressured(std::int64_t i) override
  {
    const std::string p = payload(i), limit = std::to_string(m_max_pending);
    result_guard res(m_db.exec_prepared("enqueue_bp", {p.c_str(), limit.c_str()}));
    return res.affected() == 1;
  }

  int claim(int batch) override
  {
    const std::string b = std::to_string(batch);
    result_guard res(m_db.exec_prepared("claim", {m_worker_id.c_str(), b.c_str()}));
    m_held.clear();
    for (int row = 0; row < res.rows(); ++row)
      m_held.emplace_back(res.value(row, 0));
    return static_cast<int>(m_held.size());
  }

  int complete_held() override
  {
    const int n = static_cast<int>(m_held.size());
    if (n == 1)
    {
      result_guard res(m_db.exec_prepared("complete", {m_held.front().c_str()}));
    }
    else if (n > 1)
    {
      std::string ids = "{";
      for (int k = 0; k < n; ++k)
      {
        if (k)
          ids += ',';
        ids += m_held[static_cast<std::size_t>(k)];
      }
      ids += '}';
      result_guard res(m_db.exec_prepared("complete_batch", {ids.c_str()}));
    }
    m_held.clear();
    return n;
  }

private:
  pg_session m_db;
  std::string m_worker_id;
  const std::int64_t &m_max_pending;
  std::vector<std::string> m_held;
};

// Polls claim_job_batch(…, 1) every poll_ms while the queue is empty.
class recipe_latency_worker final : public latency_worker
{
public:
  recipe_latency_worker(const std::string &conninfo, int poll_ms, std::function<void(std::int64_t)> on_start)
      : m_db(conninfo), m_poll_ms(poll_ms), m_on_start(std::move(on_start))
  {
    m_db.prepare("claim", "SELECT id, data FROM claim_job_batch('bench-latency', ARRAY['email']::varchar[], 1)");
    m_db.prepare("complete", "SELECT complete_job($1::uuid)");
    m_thread = std::thread([this] { loop(); });
  }
  ~recipe_latency_worker() override { stop(); }

  void wait_idle() override
  {
    const std::uint64_t seen = m_idle_at_start.load();
    while (m_empty_polls.load() <= seen)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  void stop() override
  {
    m_stop = true;
    if (m_thread.joinable())
      m_thread.join();
  }

private:
  void loop()
  {
    while (!m_stop)
    {
      result_guard res(m_db.exec_prepared("claim", {}));
      if (res.rows() == 0)
      {
        ++m_empty_polls;
        std::this_thread::sleep_for(std::chrono::milliseconds(m_poll_ms));
        continue;
      }
      m_idle_at_start = m_empty_polls.load();
      m_on_start(payload_index(res.value(0, 1)));
      result_guard done(m_db.exec_prepared("complete", {res.value(0, 0)}));
    }
  }

  pg_session m_db;
  int m_poll_ms;
  std::function<void(std::int64_t)> m_on_start;
  std::atomic<bool> m_stop{false};
  std::atomic<std::uint64_t> m_empty_polls{0}, m_idle_at_start{0};
  std::thread m_thread;
};

class recipe_driver final : public driver
{
public:
  recipe_driver(const std::string &conninfo, const std::string &recipe_sql, int poll_ms)
      : m_conninfo(conninfo), m_recipe_sql(recipe_sql), m_poll_ms(poll_ms), m_admin(conninfo)
  {
  }

  std::string name() const override { return "recipe"; }
  std::string worker_path() const override
  {
    return "claim_job_batch + complete_job (batch 1) or one UPDATE ... WHERE id = ANY($1) (batch > 1)";
  }

  void reset() override
  {
    m_admin.exec("SET client_min_messages = warning");
    m_admin.exec(m_recipe_sql);
    try
    {
      m_admin.exec("CREATE EXTENSION IF NOT EXISTS pgstattuple");
      m_pgstattuple = true;
    }
    catch (const std::exception &)
    {
      m_pgstattuple = false;
    }
    m_admin.exec("VACUUM ANALYZE jobs");
  }

  std::unique_ptr<session> open(int index) override
  {
    return std::make_unique<recipe_session>(m_conninfo, index, m_max_pending);
  }

  void set_backpressure(std::int64_t max_pending) override { m_max_pending = max_pending; }
  void vacuum_analyze() override { m_admin.exec("VACUUM ANALYZE jobs"); }

  table_sizes sizes() override
  {
    table_sizes s;
    s.queue = m_admin.scalar_int("SELECT pg_total_relation_size('jobs')");
    return s;
  }

  std::int64_t dead_tuples() override
  {
    if (m_pgstattuple)
      return m_admin.scalar_int("SELECT dead_tuple_count FROM pgstattuple('jobs')");
    return m_admin.scalar_int("SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'jobs'");
  }

  std::int64_t pending() override { return m_admin.scalar_int("SELECT count(*) FROM jobs WHERE status = 'pending'"); }

  std::unique_ptr<latency_worker> start_latency_worker(std::function<void(std::int64_t)> on_start) override
  {
    return std::make_unique<recipe_latency_worker>(m_conninfo, m_poll_ms, std::move(on_start));
  }

  pg_session &admin() override { return m_admin; }
  const std::string &conninfo() const override { return m_conninfo; }

private:
  std::string m_conninfo;
  std::string m_recipe_sql;
  int m_poll_ms;
  pg_session m_admin;
  std::int64_t m_max_pending = std::numeric_limits<std::int64_t>::max();
  bool m_pgstattuple = false;
};

} // namespace

std::unique_ptr<driver> make_recipe_driver(const std::string &conninfo, const std::string &recipe_sql, int poll_ms)
{
  return std::make_unique<recipe_driver>(conninfo, recipe_sql, poll_ms);
}

} // namespace pgjq::bench
