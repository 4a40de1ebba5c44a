// scenarios.cpp: the measurements of issue 5, written once against the driver interface so that pgjq and
// the seed recipe go through exactly the same steps, timers and sizes. Every timed run starts from a reset
// queue (or a known state) after a CHECKPOINT, so that one run's leftovers do not bill the next.
#include "scenarios.hpp"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

namespace pgjq::bench
{

void results::add(const std::string &id, const std::string &label, const std::string &unit, bool higher_is_better,
                  const std::string &system, const summary &value, const std::string &note)
{
  figures.push_back(figure{id, label, unit, higher_is_better, system, value, note});
}

const figure *results::find(const std::string &id, const std::string &system) const
{
  for (const figure &f : figures)
    if (f.id == id && f.system == system)
      return &f;
  return nullptr;
}

void progress(const driver &d, const char *fmt, ...)
{
  std::fprintf(stderr, "  [%s] ", d.name().c_str());
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

namespace
{

void checkpoint(driver &d) { d.admin().exec("CHECKPOINT"); }

std::vector<std::unique_ptr<session>> open_sessions(driver &d, int n, int first_index = 0)
{
  std::vector<std::unique_ptr<session>> out;
  for (int i = 0; i < n; ++i)
    out.push_back(d.open(first_index + i));
  return out;
}

// Enqueues jobs first .. first+n-1 in calls of `chunk`, spread over `connections` sessions. Returns seconds.
double load(driver &d, std::int64_t first, std::int64_t n, int connections, int chunk = 1000)
{
  auto sessions = open_sessions(d, connections, 100);
  std::atomic<std::int64_t> next{0};
  const auto t0 = steady::now();
  run_threads(connections,
              [&](int w)
              {
                for (;;)
                {
                  const std::int64_t at = next.fetch_add(chunk);
                  if (at >= n)
                    break;
                  sessions[static_cast<std::size_t>(w)]->enqueue_batch(
                      first + at, static_cast<int>(std::min<std::int64_t>(chunk, n - at)));
                }
              });
  return seconds_between(t0, steady::now());
}

// Workers claim `batch`, run a no-op handler and complete, until the queue is empty. Returns seconds and
// the number of jobs completed, or a negative time when the system has no in-transaction claims.
double drain(driver &d, int workers, int batch, std::int64_t &completed_out, bool in_transaction = false)
{
  auto sessions = open_sessions(d, workers);
  std::atomic<std::int64_t> completed{0};
  std::atomic<bool> unsupported{false};
  const auto t0 = steady::now();
  run_threads(workers,
              [&](int w)
              {
                session &s = *sessions[static_cast<std::size_t>(w)];
                if (in_transaction)
                {
                  int n = s.begin_and_claim(batch);
                  unsupported = unsupported || n < 0;
                  while (n > 0)
                  {
                    const int done = n; // the no-op handler has run for each
                    n = s.complete_commit_and_claim(batch);
                    completed += done;
                  }
                  return;
                }
                int n = s.claim(batch);
                while (n > 0)
                {
                  const int done = n; // the no-op handler has run for each
                  n = s.complete_and_claim(batch);
                  completed += done;
                }
              });
  const double secs = seconds_between(t0, steady::now());
  completed_out = completed.load();
  return unsupported ? -1 : secs;
}

std::string jobs_note(std::int64_t jobs, int runs)
{
  return std::to_string(jobs) + " jobs, " + std::to_string(runs) + " runs";
}

double median_of(std::vector<double> v) { return summarize(std::move(v)).median; }

// What a timed run costs per job, beside its speed: the whole server's CPU (every process of the cluster,
// the pgjq maintenance worker and autovacuum included), the bench's own CPU (the client side of every
// call) and the WAL written. Read before the run and after it, then added as three figures.
class run_costs
{
public:
  void start(driver &d)
  {
    m_server = read_server_usage(d.admin());
    m_client = bench_cpu_seconds();
  }

  // After the run's sessions have closed or while they are still open: a live backend's CPU is read from
  // its own counters, an exited one's from the postmaster's.
  void stop(driver &d, std::int64_t jobs)
  {
    const double client = bench_cpu_seconds();
    const server_usage server = read_server_usage(d.admin());
    if (jobs <= 0)
      return;
    const double n = static_cast<double>(jobs);
    if (m_server.cpu_seconds >= 0 && server.cpu_seconds >= 0)
      m_cpu.push_back((server.cpu_seconds - m_server.cpu_seconds) * 1e6 / n);
    m_client_cpu.push_back((client - m_client) * 1e6 / n);
    m_wal.push_back((server.wal_bytes - m_server.wal_bytes) / n);
  }

  // The last run's costs, for the progress line.
  std::string last() const
  {
    char line[160];
    std::snprintf(line, sizeof line, "per job: server CPU %.1f us, bench CPU %.1f us, WAL %.0f bytes",
                  m_cpu.empty() ? -1.0 : m_cpu.back(), m_client_cpu.empty() ? -1.0 : m_client_cpu.back(),
                  m_wal.empty() ? -1.0 : m_wal.back());
    return line;
  }

  // The server CPU is left out when the bench could not read it in every run (another machine or user).
  void add_to(results &r, const std::string &id, const std::string &label, const std::string &system, std::size_t runs,
              const std::string &note) const
  {
    if (m_cpu.size() == runs)
      r.add(id + "_cpu", label + ": server CPU per job", "µs", false, system, summarize(m_cpu), note);
    if (!m_client_cpu.empty())
      r.add(id + "_client_cpu", label + ": bench client CPU per job", "µs", false, system, summarize(m_client_cpu),
            note);
    if (!m_wal.empty())
      r.add(id + "_wal", label + ": WAL per job", "bytes", false, system, summarize(m_wal), note);
  }

private:
  server_usage m_server;
  double m_client = 0;
  std::vector<double> m_cpu, m_client_cpu, m_wal;
};

} // namespace

// The floor under a single-job enqueue: a bare single-row INSERT, one per transaction, into a copy of
// pgjq.live_jobs with the same defaults, constraints and indexes, from as many connections, in the same
// database. What pgjq adds on top of it (capabilities, checks, backpressure, the notification) is the gap.
void bare_insert(driver &d, const config &c, results &r)
{
  std::vector<double> rates;
  run_costs costs;
  for (int run = 0; run < c.runs; ++run)
  {
    d.reset();
    d.admin().exec("DROP TABLE IF EXISTS public.bare_jobs; CREATE TABLE public.bare_jobs (LIKE pgjq.live_jobs "
                   "INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)");
    checkpoint(d);
    std::vector<pg_session> sessions;
    for (int i = 0; i < c.enqueue_connections; ++i)
    {
      sessions.emplace_back(d.conninfo());
      sessions.back().prepare(
          "bare_insert",
          "INSERT INTO public.bare_jobs (queue_name, job_type, payload) VALUES ('default', 'email', $1)");
    }
    std::atomic<std::int64_t> next{0};
    costs.start(d);
    const auto t0 = steady::now();
    run_threads(c.enqueue_connections,
                [&](int w)
                {
                  for (;;)
                  {
                    const std::int64_t at = next.fetch_add(1);
                    if (at >= c.enqueue_single_jobs)
                      break;
                    const std::string payload = "{\"i\": " + std::to_string(at) + "}";
                    result_guard res(
                        sessions[static_cast<std::size_t>(w)].exec_prepared("bare_insert", {payload.c_str()}));
                  }
                });
    rates.push_back(static_cast<double>(c.enqueue_single_jobs) / seconds_between(t0, steady::now()));
    costs.stop(d, c.enqueue_single_jobs);
    progress(d, "bare INSERT run %d: %.0f rows/s; %s", run + 1, rates.back(), costs.last().c_str());
  }
  d.admin().exec("DROP TABLE IF EXISTS public.bare_jobs");
  const std::string label =
      "bare INSERT into a copy of pgjq.live_jobs (same indexes), 1 row per transaction, 4 connections";
  r.add("enqueue_bare_insert", label, "jobs/s", true, d.name(), summarize(rates),
        jobs_note(c.enqueue_single_jobs, c.runs));
  costs.add_to(r, "enqueue_bare_insert", label, d.name(), rates.size(), jobs_note(c.enqueue_single_jobs, c.runs));
}

void scenario_enqueue(driver &d, const config &c, results &r)
{
  struct variant
  {
    int per_call;
    std::int64_t jobs;
    const char *id;
    const char *label;
  };
  const variant variants[] = {
      {1, c.enqueue_single_jobs, "enqueue_1", "enqueue, 1 job per transaction, 4 connections"},
      {100, c.enqueue_b100_jobs, "enqueue_100", "enqueue, 100 per call, 4 connections"},
      {1000, c.enqueue_b1000_jobs, "enqueue_1000", "enqueue, 1000 per call, 4 connections"},
  };
  for (const variant &v : variants)
  {
    std::vector<double> rates;
    run_costs costs;
    for (int run = 0; run < c.runs; ++run)
    {
      d.reset();
      checkpoint(d);
      auto sessions = open_sessions(d, c.enqueue_connections);
      std::atomic<std::int64_t> next{0};
      costs.start(d);
      const auto t0 = steady::now();
      run_threads(c.enqueue_connections,
                  [&](int w)
                  {
                    session &s = *sessions[static_cast<std::size_t>(w)];
                    for (;;)
                    {
                      const std::int64_t at = next.fetch_add(v.per_call);
                      if (at >= v.jobs)
                        break;
                      if (v.per_call == 1)
                        s.enqueue_one(at);
                      else
                        s.enqueue_batch(at, static_cast<int>(std::min<std::int64_t>(v.per_call, v.jobs - at)));
                    }
                  });
      rates.push_back(static_cast<double>(v.jobs) / seconds_between(t0, steady::now()));
      costs.stop(d, v.jobs);
      progress(d, "%s run %d: %.0f jobs/s; %s", v.id, run + 1, rates.back(), costs.last().c_str());
    }
    r.add(v.id, v.label, "jobs/s", true, d.name(), summarize(rates), jobs_note(v.jobs, c.runs));
    costs.add_to(r, v.id, v.label, d.name(), rates.size(), jobs_note(v.jobs, c.runs));
  }
  if (d.name() == "pgjq")
    bare_insert(d, c, r);
}

void scenario_drain(driver &d, const config &c, results &r)
{
  struct variant
  {
    int batch;
    std::int64_t jobs;
    bool discard;        // completed jobs deleted, not kept as history
    bool in_transaction; // pgjq.claim_in_transaction: jobs held by the worker's open transaction
  };
  const variant variants[] = {{1, c.drain_jobs_b1, false, false},     {10, c.drain_jobs_b10, false, false},
                              {100, c.drain_jobs_b100, false, false}, {100, c.drain_jobs_b100, true, false},
                              {1, c.drain_jobs_b1, false, true},      {10, c.drain_jobs_b10, false, true},
                              {100, c.drain_jobs_b100, false, true},  {100, c.drain_jobs_b100, true, true}};
  for (const auto &[batch, jobs, discard, in_transaction] : variants)
  {
    std::vector<double> rates;
    run_costs costs;
    for (int run = 0; run < c.runs; ++run)
    {
      d.reset();
      if ((discard && !d.discard_completed()) || (in_transaction && !d.claims_in_transaction()))
        break;
      load(d, 0, jobs, 2);
      d.vacuum_analyze();
      checkpoint(d);
      costs.start(d);
      std::int64_t completed = 0;
      const double secs = drain(d, c.drain_workers, batch, completed, in_transaction);
      if (secs < 0)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the workers' backends exit (their CPU is counted)
      costs.stop(d, completed);
      if (completed != jobs)
        progress(d, "WARNING: drain completed %lld of %lld jobs", static_cast<long long>(completed),
                 static_cast<long long>(jobs));
      rates.push_back(static_cast<double>(completed) / secs);
      progress(d, "drain batch %d%s%s run %d: %.0f jobs/s; %s", batch, discard ? " (completed not kept)" : "",
               in_transaction ? " (in-transaction claims)" : "", run + 1, rates.back(), costs.last().c_str());
    }
    if (rates.empty())
      continue;
    const std::string id =
        "drain_b" + std::to_string(batch) + (discard ? "_not_kept" : "") + (in_transaction ? "_in_transaction" : "");
    const std::string label =
        "drain, claim batch " + std::to_string(batch) + ", " + std::to_string(c.drain_workers) + " workers" +
        (discard ? ", completed jobs not kept (pgjq: keep_completed => false)" : "") +
        (in_transaction ? ", claims held by the worker's transaction (pgjq: claim_in_transaction)" : "");
    r.add(id, label, "jobs/s", true, d.name(), summarize(rates), jobs_note(jobs, c.runs));
    costs.add_to(r, id, label, d.name(), rates.size(), jobs_note(jobs, c.runs));
  }
}

void scenario_e2e(driver &d, const config &c, results &r)
{
  std::vector<double> enq, drn, total;
  for (int run = 0; run < c.runs; ++run)
  {
    d.reset();
    checkpoint(d);
    const double t_enq = load(d, 0, c.e2e_jobs, 1, 1000);
    std::int64_t completed = 0;
    const double t_drain = drain(d, c.drain_workers, 100, completed);
    enq.push_back(static_cast<double>(c.e2e_jobs) / t_enq);
    drn.push_back(static_cast<double>(completed) / t_drain);
    total.push_back(static_cast<double>(completed) / (t_enq + t_drain));
    progress(d, "e2e run %d: enqueue %.0f, drain %.0f, total %.0f jobs/s", run + 1, enq.back(), drn.back(),
             total.back());
  }
  const std::string n = jobs_note(c.e2e_jobs, c.runs);
  r.add("e2e_enqueue", "end to end: enqueue, 1000 per call, 1 connection", "jobs/s", true, d.name(), summarize(enq), n);
  r.add("e2e_drain", "end to end: then drain, batch 100, " + std::to_string(c.drain_workers) + " workers", "jobs/s",
        true, d.name(), summarize(drn), n);
  r.add("e2e_total", "end to end: jobs / (enqueue time + drain time)", "jobs/s", true, d.name(), summarize(total), n);
}

void scenario_steady(driver &d, const config &c, results &r)
{
  std::vector<double> rate, enq_rate, backlog, start_mb, end_mb, growth, history_mb, dead;
  std::string detail_last;
  for (int run = 0; run < c.steady_runs; ++run)
  {
    d.reset();
    load(d, 0, c.steady_prefill, 1);
    d.vacuum_analyze();
    checkpoint(d);
    const table_sizes before = d.sizes();
    const std::int64_t pending_before = d.pending();

    const int producers = c.steady_producers, workers = c.steady_workers;
    auto sessions = open_sessions(d, producers + workers);
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> next{c.steady_prefill}, enqueued{0}, completed{0};
    std::int64_t completed_in_window = 0, enqueued_in_window = 0;
    std::vector<steady_point> series;
    const auto t0 = steady::now();
    run_threads(producers + workers + 1,
                [&](int i)
                {
                  if (i < producers)
                  {
                    session &s = *sessions[static_cast<std::size_t>(i)];
                    while (!stop)
                    {
                      s.enqueue_batch(next.fetch_add(c.steady_per_txn), c.steady_per_txn);
                      enqueued += c.steady_per_txn;
                    }
                  }
                  else if (i < producers + workers)
                  {
                    session &s = *sessions[static_cast<std::size_t>(i)];
                    int n = s.claim(c.steady_batch);
                    while (!stop)
                    {
                      if (n == 0)
                      {
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        n = s.claim(c.steady_batch);
                        continue;
                      }
                      const int done = n;
                      n = s.complete_and_claim(c.steady_batch);
                      completed += done;
                    }
                    s.complete_held();
                  }
                  else
                  {
                    // The monitor: sizes once a second (pg_total_relation_size only stats files: no effect on the run).
                    pg_session mon(d.conninfo());
                    const std::string q = d.name() == "pgjq" ? "SELECT pg_total_relation_size('pgjq.live_jobs') + "
                                                               "pg_total_relation_size('pgjq.queue_depth'), "
                                                               "pg_total_relation_size('pgjq.finished_jobs')"
                                                             : "SELECT pg_total_relation_size('jobs'), 0";
                    for (int sec = 0;; ++sec)
                    {
                      const double t = seconds_between(t0, steady::now());
                      result_guard res(mon.query(q));
                      series.push_back(steady_point{t, std::atof(res.value(0, 0)) / 1048576.0,
                                                    std::atof(res.value(0, 1)) / 1048576.0,
                                                    pending_before + enqueued.load() - completed.load()});
                      if (sec >= c.steady_seconds)
                        break;
                      std::this_thread::sleep_until(t0 + std::chrono::seconds(sec + 1));
                    }
                    completed_in_window = completed.load();
                    enqueued_in_window = enqueued.load();
                    stop = true;
                  }
                });
    const double secs = series.back().t;
    const table_sizes after = d.sizes();
    const std::int64_t pending_after = d.pending();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double dead_after = static_cast<double>(d.dead_tuples());
    const std::string detail = d.size_detail();
    detail_last = detail;
    if (!detail.empty())
      progress(d, "steady run %d: queue tables at end: %s", run + 1, detail.c_str());

    rate.push_back(static_cast<double>(completed_in_window) / secs);
    enq_rate.push_back(static_cast<double>(enqueued_in_window) / secs);
    backlog.push_back(static_cast<double>(pending_after - pending_before));
    start_mb.push_back(static_cast<double>(before.queue) / 1048576.0);
    end_mb.push_back(static_cast<double>(after.queue) / 1048576.0);
    growth.push_back(static_cast<double>(after.queue) / static_cast<double>(std::max<std::int64_t>(before.queue, 1)));
    history_mb.push_back(static_cast<double>(after.history) / 1048576.0);
    dead.push_back(dead_after);
    r.steady_series[d.name()] = series;
    progress(d,
             "steady run %d: %.0f completed/s, %.0f enqueued/s, backlog %+lld, queue tables %.1f -> %.1f MB, "
             "history %.1f MB, %.0f dead tuples",
             run + 1, rate.back(), static_cast<double>(enqueued_in_window) / secs,
             static_cast<long long>(pending_after - pending_before), start_mb.back(), end_mb.back(), history_mb.back(),
             dead.back());
  }
  const std::string n = std::to_string(c.steady_runs) + " run(s) of " + std::to_string(c.steady_seconds) + " s, " +
                        std::to_string(c.steady_producers) + " producers x " + std::to_string(c.steady_per_txn) +
                        " jobs/txn, " + std::to_string(c.steady_workers) + " workers x batch " +
                        std::to_string(c.steady_batch) + ", " + std::to_string(c.steady_prefill) + " jobs prefilled";
  r.add("steady_completed", "steady: completed jobs/s", "jobs/s", true, d.name(), summarize(rate), n);
  r.add("steady_enqueued", "steady: enqueued jobs/s (producers run flat out)", "jobs/s", true, d.name(),
        summarize(enq_rate));
  r.add("steady_backlog", "steady: backlog change (pending jobs, + = producers ahead)", "jobs", false, d.name(),
        summarize(backlog));
  r.add("steady_size_start", "steady: queue table + indexes at start", "MB", false, d.name(), summarize(start_mb));
  r.add("steady_size_end", "steady: queue table + indexes at end", "MB", false, d.name(), summarize(end_mb),
        detail_last);
  r.add("steady_size_growth", "steady: queue table + indexes, end / start", "x", false, d.name(), summarize(growth));
  r.add("steady_history_end",
        "steady: finished-jobs table at end (pgjq only; the recipe keeps them in its queue table)", "MB", false,
        d.name(), summarize(history_mb));
  r.add("steady_dead", "steady: dead tuples in the queue tables at end", "tuples", false, d.name(), summarize(dead));
}

void scenario_latency(driver &d, const config &c, results &r)
{
  std::vector<double> p50, p99, pmax;
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> gap(0.0, static_cast<double>(c.latency_gap_ms));
  for (int run = 0; run < c.runs; ++run)
  {
    d.reset();
    checkpoint(d);
    const std::size_t n = static_cast<std::size_t>(c.latency_jobs);
    std::vector<steady::time_point> started(n);
    std::atomic<std::int64_t> last{-1};
    auto worker = d.start_latency_worker(
        [&](std::int64_t i)
        {
          const auto now = steady::now();
          if (i >= 0 && static_cast<std::size_t>(i) < n)
            started[static_cast<std::size_t>(i)] = now;
          last.store(i);
        });
    auto producer = d.open(0);
    std::vector<double> lat;
    lat.reserve(n);
    int early = 0, lost = 0;
    worker->wait_idle();
    for (std::size_t i = 0; i < n; ++i)
    {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(gap(rng)));
      producer->enqueue_one(static_cast<std::int64_t>(i));
      const auto committed = steady::now();
      const auto deadline = committed + std::chrono::seconds(10);
      while (last.load() != static_cast<std::int64_t>(i) && steady::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (last.load() != static_cast<std::int64_t>(i))
      {
        ++lost;
        continue;
      }
      double ms = ms_between(committed, started[i]);
      if (ms < 0)
      {
        ++early; // the handler started before the producer saw its commit acknowledged
        ms = 0;
      }
      lat.push_back(ms);
      worker->wait_idle();
    }
    worker->stop();
    p50.push_back(percentile(lat, 50));
    p99.push_back(percentile(lat, 99));
    pmax.push_back(percentile(lat, 100));
    progress(d, "latency run %d: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d before the ack, %d lost)", run + 1,
             p50.back(), p99.back(), pmax.back(), early, lost);
  }
  const std::string note = std::to_string(c.latency_jobs) + " jobs, " + std::to_string(c.runs) + " runs";
  r.add("latency_p50", "enqueue commit -> handler start, p50", "ms", false, d.name(), summarize(p50), note);
  r.add("latency_p99", "enqueue commit -> handler start, p99", "ms", false, d.name(), summarize(p99), note);
  r.add("latency_max", "enqueue commit -> handler start, max", "ms", false, d.name(), summarize(pmax), note);
}

namespace
{

// Per run: `samples` claims of one job (timed; the completion after it is not) and `samples` backpressured
// single enqueues (timed), so the depth stays where it is. Returns the per-run medians.
void sample_depth(driver &d, const config &c, std::vector<double> &claim_ms, std::vector<double> *enqueue_ms,
                  std::int64_t &next_index)
{
  auto s = d.open(0);
  for (int run = 0; run < c.runs; ++run)
  {
    std::vector<double> cl, en;
    for (int k = 0; k < c.depth_samples; ++k)
    {
      auto t0 = steady::now();
      s->claim(1);
      cl.push_back(ms_between(t0, steady::now()));
      s->complete_held();
      if (enqueue_ms)
      {
        t0 = steady::now();
        if (!s->enqueue_backpressured(next_index++))
          throw std::runtime_error("backpressured enqueue refused: the bench's limit is too low");
        en.push_back(ms_between(t0, steady::now()));
      }
    }
    claim_ms.push_back(median_of(cl));
    if (enqueue_ms)
      enqueue_ms->push_back(median_of(en));
  }
}

} // namespace

void scenario_depth(driver &d, const config &c, results &r)
{
  d.reset();
  d.set_backpressure(1000000000);
  std::int64_t loaded = 0, next_index = 0;
  for (const std::int64_t depth : c.depths)
  {
    if (depth > loaded)
    {
      const double secs = load(d, loaded, depth - loaded, 2);
      progress(d, "depth: loaded %lld jobs in %.1f s", static_cast<long long>(depth - loaded), secs);
      loaded = depth;
      next_index = depth;
    }
    d.vacuum_analyze();
    checkpoint(d);
    std::vector<double> cl, en;
    sample_depth(d, c, cl, &en, next_index);
    depth_point p{depth, summarize(cl), summarize(en)};
    r.depth_series[d.name()].push_back(p);
    const std::string ds = std::to_string(depth);
    const std::string note = std::to_string(c.depth_samples) + " samples x " + std::to_string(c.runs) + " runs, median";
    r.add("depth_claim_" + ds, "claim 1 job at " + ds + " pending", "ms", false, d.name(), p.claim_ms, note);
    r.add("depth_enqueue_" + ds, "backpressured enqueue at " + ds + " pending", "ms", false, d.name(), p.enqueue_ms,
          note);
    progress(d, "depth %lld: claim %.3f ms, backpressured enqueue %.3f ms", static_cast<long long>(depth),
             p.claim_ms.median, p.enqueue_ms.median);
  }
}

// Another session holds a REPEATABLE READ snapshot while H jobs are enqueued and finished (drained in
// claims of 1 000, to build the held-back history quickly); then 10 000 more are drained in claims of 10 by
// 4 workers, whose rate at each H is the curve of how the history slows a drain, and 1 000 more are
// enqueued and a claim is sampled as in *depth*. The claim after 100 000 keeps its historical id,
// snapshot_claim.
void scenario_snapshot(driver &d, const config &c, results &r)
{
  constexpr std::int64_t measured = 10000;
  for (const std::int64_t held : c.snapshot_finished)
  {
    std::vector<double> rates, cl;
    for (int run = 0; run < c.runs; ++run)
    {
      d.reset();
      pg_session holder(d.conninfo());
      holder.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
      holder.scalar("SELECT count(*) FROM pg_class"); // takes the snapshot
      load(d, 0, held, 2);
      std::int64_t completed = 0;
      drain(d, c.drain_workers, 1000, completed);
      load(d, held, measured, 2);
      const double secs = drain(d, c.drain_workers, 10, completed);
      rates.push_back(static_cast<double>(completed) / secs);
      load(d, held + measured, 1000, 1);
      std::int64_t next = held + measured + 1000;
      std::vector<double> run_claims;
      sample_depth(d, c, run_claims, nullptr, next);
      cl.push_back(median_of(run_claims));
      holder.exec("COMMIT");
      progress(d, "snapshot: %lld finished under an old snapshot, run %d: drain %.0f jobs/s, then claim %.3f ms",
               static_cast<long long>(held), run + 1, rates.back(), cl.back());
    }
    const std::string hs = std::to_string(held);
    const std::string note = std::to_string(c.runs) + " runs";
    r.add("snapshot_drain_" + hs,
          "drain of " + std::to_string(measured) + " jobs (batch 10, " + std::to_string(c.drain_workers) +
              " workers) after " + hs + " finished under an old snapshot",
          "jobs/s", true, d.name(), summarize(rates), note);
    r.add(held == 100000 ? std::string("snapshot_claim") : "snapshot_claim_" + hs,
          "claim 1 job at 1000 pending after " + hs + " finished, old snapshot held", "ms", false, d.name(),
          summarize(cl), std::to_string(c.depth_samples) + " samples x " + note + ", median of each run");
  }
}

void scenario_bigtx(driver &d, const config &c, results &r)
{
  for (const char *call : {"enqueue", "try_enqueue", "insert", "complete", "fail", "cancel"})
    for (const std::int64_t n : c.bigtx_sizes)
    {
      // Small transactions are repeated so that each run makes at least bigtx_min_calls calls.
      const std::int64_t repeat = std::max<std::int64_t>(1, c.bigtx_min_calls / n);
      std::vector<double> us;
      for (int run = 0; run < c.runs; ++run)
      {
        d.reset();
        if (!d.prepare_calls(call, n * repeat))
          return;
        checkpoint(d);
        double secs = 0;
        for (std::int64_t k = 0; k < repeat; ++k)
          secs += d.calls_in_one_transaction(call, n);
        us.push_back(secs * 1e6 / static_cast<double>(n * repeat));
        progress(d, "%s, %lld calls per transaction, run %d: %.1f us per call", call, static_cast<long long>(n),
                 run + 1, us.back());
      }
      const std::string ns = std::to_string(n);
      r.add(std::string("bigtx_") + call + "_" + ns, std::string(call) + ", " + ns + " calls in one transaction",
            "us per call", false, d.name(), summarize(us),
            std::to_string(n * repeat) + " calls per run, " + std::to_string(c.runs) + " runs");
    }
}

// Group keys (pgjq only; the recipe has none): a claim's cost with 1 000 and 100 000 keys of which 99 % are
// blocked (their job in flight, the next one waiting). Waiting jobs are outside the claim index, so the
// claim should cost the same at both sizes. Each sample is an in-transaction claim of one job, rolled back,
// so the queue is the same for every sample.
void scenario_groups(driver &d, const config &c, results &r)
{
  if (d.name() != "pgjq")
    return;
  for (const std::int64_t keys : c.group_keys)
  {
    std::vector<double> ms;
    for (int run = 0; run < c.runs; ++run)
    {
      d.reset();
      pg_session &db = d.admin();
      // Two jobs per key: the first pending, the second waiting behind it.
      for (std::int64_t first = 0; first < keys; first += 5000)
      {
        const std::string last = std::to_string(std::min(keys, first + 5000) - 1);
        db.exec("SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g % 2) FROM generate_series(0, 2 * (" + last + " - " +
                std::to_string(first) + ") + 1) g), 'default', group_keys => (SELECT array_agg('k' || (" +
                std::to_string(first) + " + g / 2)) FROM generate_series(0, 2 * (" + last + " - " +
                std::to_string(first) + ") + 1) g))");
      }
      // 99 % of the keys blocked: their first job claimed and held.
      std::int64_t blocked = 0;
      while (blocked < keys * 99 / 100)
        blocked +=
            db.scalar_int("SELECT count(*) FROM pgjq.claim_job_batch('blocker', NULL, " +
                          std::to_string(std::min<std::int64_t>(10000, keys * 99 / 100 - blocked)) + ", 'default')");
      d.vacuum_analyze();
      checkpoint(d);
      for (int i = 0; i < c.depth_samples; ++i)
      {
        const auto t0 = steady::now();
        db.exec("BEGIN; SELECT count(*) FROM pgjq.claim_in_transaction('w', NULL, 1, 'default'); ROLLBACK");
        ms.push_back(seconds_between(t0, steady::now()) * 1e3);
      }
      progress(d, "groups: %lld keys, %lld blocked, run %d: claim %.3f ms (median)", static_cast<long long>(keys),
               static_cast<long long>(blocked), run + 1, median_of(ms));
    }
    const std::string ks = std::to_string(keys);
    r.add("groups_claim_" + ks, "claim 1 job, " + ks + " group keys, 99% blocked", "ms", false, d.name(), summarize(ms),
          std::to_string(c.depth_samples) + " samples x " + std::to_string(c.runs) + " runs");
  }
}

// Statistics (pgjq only): what reading a queue's figures costs with 10 000 and 10 000 000 finished jobs in
// the history. The views of 0.2.0 read counters and shared memory, so they should cost the same at both
// sizes; beside them, the count by status over the history that 0.1.0's queue_stats made (and that
// dashboards of other queues make), for scale. The history is written straight into pgjq.finished_jobs, with
// triggers off (no notices for jobs that never ran).
void scenario_stats(driver &d, const config &c, results &r)
{
  if (d.name() != "pgjq")
    return;
  const std::pair<const char *, const char *> reads[] = {
      // Every column is used, so that the planner cannot skip the subqueries behind one.
      {"queue_metrics", "SELECT sum(unfinished + completed + failed + cancelled + workers"
                        " + coalesce(extract(epoch FROM next_job_age), 0) + paused::int) FROM pgjq.queue_metrics"},
      {"queue_latency", "SELECT sum(jobs + coalesce(mean_seconds + p50_seconds + p90_seconds + p99_seconds, 0))"
                        " FROM pgjq.queue_latency"},
      {"metrics", "SELECT length(pgjq.metrics())"},
      {"history_count", "SELECT count(*) FROM (SELECT status, count(*) FROM pgjq.finished_jobs"
                        " WHERE queue_name = 'default' GROUP BY status) s"}};
  for (const std::int64_t history : c.stats_history)
  {
    d.reset();
    pg_session &db = d.admin();
    db.exec("SET session_replication_role = replica");
    for (std::int64_t first = 1; first <= history; first += 1000000)
    {
      const std::int64_t last = std::min(history, first + 999999);
      db.exec("INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, run_at,"
              " events_count, worker_id, claimed_at, created_at, started_at, completed_at, finished_at, attempts,"
              " max_attempts) SELECT 1000000000000 + g, 'default', 't', 100, 'completed', '{}', now(), 0, 'w',"
              " now(), now(), now(), now(), now(), 1, 5 FROM generate_series(" +
              std::to_string(first) + ", " + std::to_string(last) + ") g");
    }
    db.exec("RESET session_replication_role");
    d.vacuum_analyze();
    checkpoint(d);
    const std::string hs = std::to_string(history);
    for (const auto &[name, sql] : reads)
    {
      std::vector<double> ms;
      const int samples = std::string(name) == "history_count" ? std::max(3, c.depth_samples / 20) : c.depth_samples;
      for (int i = 0; i < samples; ++i)
      {
        const auto t0 = steady::now();
        db.scalar(sql);
        ms.push_back(seconds_between(t0, steady::now()) * 1e3);
      }
      progress(d, "stats: %s with %lld finished jobs: %.3f ms (median of %d)", name, static_cast<long long>(history),
               median_of(ms), samples);
      r.add(std::string("stats_") + name + "_" + hs,
            std::string("read ") +
                (std::string(name) == "metrics"         ? "pgjq.metrics()"
                 : std::string(name) == "history_count" ? "a count by status over the history (0.1.0's queue_stats)"
                                                        : "pgjq." + std::string(name)) +
                ", " + hs + " finished jobs",
            "ms", false, d.name(), summarize(ms), std::to_string(samples) + " samples");
    }
  }
}

// Counter slots (pgjq only): backpressured enqueues by 8 producers, each writing its own counter row of
// pgjq.queue_depth (as pgjq picks them: with preload a free slot per session) against all of them forced
// onto one (pgjq.depth_slot = 0), which is what producers whose slots collide pay: each waits for the
// others' commits on the shared row. Runs alternate between the two.
void scenario_slots(driver &d, const config &c, results &r)
{
  if (d.name() != "pgjq")
    return;
  constexpr int producers = 8;
  std::vector<double> own, shared;
  for (int run = 0; run < c.runs; ++run)
    for (const bool share : {false, true})
    {
      d.reset();
      d.set_backpressure(1000000000);
      checkpoint(d);
      auto sessions = open_sessions(d, producers);
      if (share)
        for (auto &s : sessions)
          s->force_depth_slot(0);
      std::atomic<std::int64_t> next{0};
      const auto t0 = steady::now();
      run_threads(producers,
                  [&](int w)
                  {
                    session &s = *sessions[static_cast<std::size_t>(w)];
                    for (std::int64_t at; (at = next.fetch_add(1)) < c.enqueue_single_jobs;)
                      if (!s.enqueue_backpressured(at))
                        throw std::runtime_error("slots: an enqueue was refused below the limit");
                  });
      (share ? shared : own).push_back(static_cast<double>(c.enqueue_single_jobs) / seconds_between(t0, steady::now()));
      progress(d, "slots run %d, %s: %.0f jobs/s", run + 1, share ? "one shared slot" : "own slots",
               (share ? shared : own).back());
    }
  const std::string note = jobs_note(c.enqueue_single_jobs, c.runs) + ", 8 producers, runs alternated";
  r.add("slots_own", "backpressured enqueue, 8 producers, a counter slot each", "jobs/s", true, d.name(),
        summarize(own), note);
  r.add("slots_shared", "backpressured enqueue, 8 producers, one counter slot", "jobs/s", true, d.name(),
        summarize(shared), note);
}

namespace
{

// The job type of every job the workflows scenario drains, workflow step or plain job; the worker claims
// no other.
const char *const step_type = "step";
// At most this many steps (or jobs) go in one call: pgjq's limit on steps per start_workflow or add_steps
// call, and on jobs per enqueue_batch.
constexpr std::int64_t per_call = 10000;

std::string range_text(std::int64_t first, std::int64_t last)
{
  return std::to_string(first) + ", " + std::to_string(last);
}

// n plain jobs of the step type, each with the payload a step has ({}).
void enqueue_plain(pg_session &db, std::int64_t n)
{
  for (std::int64_t first = 1; first <= n; first += per_call)
    db.exec("SELECT pgjq.enqueue_batch('" + std::string(step_type) +
            "', (SELECT jsonb_agg('{}'::jsonb) FROM generate_series(" +
            range_text(first, std::min(n, first + per_call - 1)) + ")))");
}

// A root, `children` steps after it and a join after every child. start_workflow takes at most 10 000
// steps and a producer has no call that adds more afterwards, so a seed step of another job type (never
// claimed by the timed worker) is claimed here and adds them with add_steps, as a running step fans out,
// in the transaction that completes it: at its commit the root becomes runnable.
void start_fanout(pg_session &db, std::int64_t children)
{
  db.scalar_int("SELECT pgjq.start_workflow('bench-fanout', '[{\"name\": \"seed\", \"job_type\": \"seed\"}]')");
  db.exec("BEGIN");
  try
  {
    const std::string seed =
        std::to_string(db.scalar_int("SELECT id FROM pgjq.claim_job_batch('bench-setup', ARRAY['seed'], 1)"));
    auto add = [&](const std::string &steps)
    { db.exec("SELECT pgjq.add_steps(" + seed + ", 'bench-setup', " + steps + ")"); };
    const std::string type = std::string("'") + step_type + "'";
    add("jsonb_build_array(jsonb_build_object('name', 'root', 'job_type', " + type +
        ", 'after', '[\"seed\"]'::jsonb))");
    for (std::int64_t first = 1; first <= children; first += per_call)
      add("(SELECT jsonb_agg(jsonb_build_object('name', 'c' || g, 'job_type', " + type +
          ", 'after', '[\"root\"]'::jsonb)) FROM generate_series(" +
          range_text(first, std::min(children, first + per_call - 1)) + ") g)");
    add("jsonb_build_array(jsonb_build_object('name', 'join', 'job_type', " + type +
        ", 'after', (SELECT jsonb_agg('c' || g) FROM generate_series(1, " + std::to_string(children) + ") g)))");
    db.exec("SELECT pgjq.complete(" + seed + ", 'bench-setup')");
    db.exec("COMMIT");
  }
  catch (...)
  {
    db.exec("ROLLBACK");
    throw;
  }
}

// Steps s1 .. s<steps>, each after the one before it.
void start_chain(pg_session &db, std::int64_t steps)
{
  db.scalar_int("SELECT pgjq.start_workflow('bench-chain', (SELECT jsonb_agg(jsonb_build_object('name', 's' || g, "
                "'job_type', '" +
                std::string(step_type) +
                "', 'after', CASE WHEN g = 1 THEN '[]'::jsonb ELSE jsonb_build_array('s' || (g - 1)) END) ORDER BY g)"
                " FROM generate_series(1, " +
                std::to_string(steps) + ") g))");
}

// `count` workflows of three steps: a, then b and c after a.
void start_threes(pg_session &db, std::int64_t count)
{
  const std::string t = std::string("\"job_type\": \"") + step_type + "\"";
  db.exec("SELECT count(pgjq.start_workflow('bench-three', '[{\"name\": \"a\", " + t + "}, {\"name\": \"b\", " + t +
          ", \"after\": [\"a\"]}, {\"name\": \"c\", " + t + ", \"after\": [\"a\"]}]')) FROM generate_series(1, " +
          std::to_string(count) + ")");
}

// One timed drain of `jobs` jobs by the worker runtime, after `setup` (not timed); checks that every job
// completed and, for workflows, that every workflow did. Returns jobs per second.
double drain_steps(driver &d, const std::function<void(pg_session &)> &setup, std::int64_t jobs, int runners, int batch,
                   bool workflows, run_costs &costs, std::uint64_t &idle_waits)
{
  d.reset();
  pg_session &db = d.admin();
  setup(db);
  d.vacuum_analyze();
  db.exec("VACUUM ANALYZE pgjq.workflow_runs, pgjq.workflow_run_steps, pgjq.workflow_edges");
  checkpoint(d);
  costs.start(d);
  const worker_run run = d.run_worker(step_type, runners, batch, jobs, std::chrono::seconds(300));
  if (run.seconds <= 0)
    throw std::runtime_error("workflows: " + d.name() + " has no worker runtime");
  std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the runners' backends exit (their CPU is counted)
  costs.stop(d, jobs);
  idle_waits = run.idle_waits;
  const std::int64_t completed = db.scalar_int("SELECT count(*) FROM pgjq.finished_jobs WHERE job_type = '" +
                                               std::string(step_type) + "' AND status = 'completed'");
  const std::int64_t live = db.scalar_int("SELECT count(*) FROM pgjq.live_jobs");
  const std::int64_t open =
      workflows ? db.scalar_int("SELECT count(*) FROM pgjq.workflows WHERE status <> 'completed'") : 0;
  if (completed != jobs || live != 0 || open != 0)
    throw std::runtime_error("workflows: " + std::to_string(completed) + " of " + std::to_string(jobs) +
                             " jobs completed, " + std::to_string(live) + " jobs live, " + std::to_string(open) +
                             " workflows unfinished after the drain");
  return static_cast<double>(jobs) / run.seconds;
}

} // namespace

// Workflows (pgjq only): what a workflow step costs against a plain job, both drained by the client's
// worker runtime (pgjq::worker: LISTEN, claim, a no-op handler, the batch completed with the next claim)
// until every job ran. The runtime is the loop a step needs: a step that waits for others is claimable
// only once the commit of its last parent's completion has released it, so its worker finds nothing, sleeps
// on LISTEN and is woken by the release's notification; the drain loop of the other scenarios stops at the
// first empty claim. In each run the workflow and the plain jobs alternate (the workflow first in odd runs),
// each from a reset queue after a CHECKPOINT, starting the workflows or enqueueing the jobs untimed.
// The overhead ratio is, run by run, the plain jobs' rate over the steps': time per step / time per job.
void scenario_workflows(driver &d, const config &c, results &r)
{
  if (d.name() != "pgjq")
    return;
  struct variant
  {
    std::string id, label, plain_label;
    std::int64_t jobs;
    int runners, batch;
    std::function<void(pg_session &)> start;
    bool per_step_ms; // the figure is ms per step rather than steps/s
  };
  const std::string workers = std::to_string(c.workflow_workers) + " workers";
  const std::string children = std::to_string(c.workflow_children);
  std::vector<variant> variants;
  variants.push_back({"wf_fanout",
                      "workflow fan-out: a root, " + children + " children after it, a join after them; " + workers +
                          ", batch " + std::to_string(c.workflow_fanout_batch),
                      std::to_string(c.workflow_children + 2) + " plain jobs, the same workers",
                      c.workflow_children + 2, c.workflow_workers, c.workflow_fanout_batch,
                      [&c](pg_session &db) { start_fanout(db, c.workflow_children); }, false});
  variants.push_back(
      {"wf_chain",
       "workflow chain of " + std::to_string(c.workflow_chain) + " steps, each after the one before; 1 worker, batch 1",
       std::to_string(c.workflow_chain) + " plain jobs one after the other, 1 worker, batch 1", c.workflow_chain, 1, 1,
       [&c](pg_session &db) { start_chain(db, c.workflow_chain); }, true});
  for (const int batch : c.workflow_batches)
    variants.push_back(
        {"wf_three_b" + std::to_string(batch),
         std::to_string(c.workflow_count) + " workflows of 3 steps (a; b and c after a); " + workers + ", batch " +
             std::to_string(batch),
         std::to_string(3 * c.workflow_count) + " plain jobs, the same workers, batch " + std::to_string(batch),
         3 * c.workflow_count, c.workflow_workers, batch, [&c](pg_session &db) { start_threes(db, c.workflow_count); },
         false});

  for (const variant &v : variants)
  {
    std::vector<double> steps, plain, ratio;
    run_costs step_costs, plain_costs;
    for (int run = 0; run < c.runs; ++run)
    {
      double rate[2] = {0, 0}; // [0] workflow, [1] plain
      for (const bool workflow : run % 2 == 0 ? std::vector<bool>{true, false} : std::vector<bool>{false, true})
      {
        std::uint64_t idle = 0;
        const auto enqueue = [&v](pg_session &db) { enqueue_plain(db, v.jobs); };
        const double x = drain_steps(d, workflow ? v.start : enqueue, v.jobs, v.runners, v.batch, workflow,
                                     workflow ? step_costs : plain_costs, idle);
        rate[workflow ? 0 : 1] = x;
        (workflow ? steps : plain).push_back(v.per_step_ms ? 1e3 / x : x);
        progress(d, "%s run %d, %s: %.0f jobs/s (%.3f ms each), %llu idle waits; %s", v.id.c_str(), run + 1,
                 workflow ? "workflow" : "plain jobs", x, 1e3 / x, static_cast<unsigned long long>(idle),
                 (workflow ? step_costs : plain_costs).last().c_str());
      }
      ratio.push_back(rate[1] / rate[0]);
    }
    const std::string note = jobs_note(v.jobs, c.runs) + ", workflow and plain jobs alternated";
    const std::string unit = v.per_step_ms ? "ms" : "jobs/s";
    r.add(v.id + "_steps", v.label + (v.per_step_ms ? ": time per step" : ""), unit, !v.per_step_ms, d.name(),
          summarize(steps), note);
    r.add(v.id + "_plain", v.plain_label + (v.per_step_ms ? ": time per job" : ""), unit, !v.per_step_ms, d.name(),
          summarize(plain), note);
    r.add(v.id + "_overhead", v.label + ": time per step / time per plain job", "x", false, d.name(), summarize(ratio),
          note);
    if (!v.per_step_ms)
    {
      step_costs.add_to(r, v.id + "_steps", v.label, d.name(), steps.size(), note);
      plain_costs.add_to(r, v.id + "_plain", v.plain_label, d.name(), plain.size(), note);
    }
  }
}

} // namespace pgjq::bench
