// driver.hpp: what a scenario asks of a job queue, so that the same scenario code drives pgjq (through its
// C++ client, pgjq_driver.cpp) and the seed recipe (through plain libpq, recipe_driver.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bench.hpp"

namespace pgjq::bench
{

// One client session of a queue: a producer or a worker. Used by one thread.
class session
{
public:
  virtual ~session() = default;
  // One job in its own transaction (autocommit).
  virtual void enqueue_one(std::int64_t i) = 0;
  // Jobs first .. first+n-1 in one call (one transaction).
  virtual void enqueue_batch(std::int64_t first, int n) = 0;
  // One job, refused when the queue holds the driver's backpressure limit; false when refused.
  virtual bool enqueue_backpressured(std::int64_t i) = 0;
  // Makes this session write the counter row of `slot` (pgjq.depth_slot; needs a superuser); false if the
  // system has no counter slots.
  virtual bool force_depth_slot(int /*slot*/) { return false; }
  // Claims up to batch jobs for this session; they are held until completed. Returns how many.
  virtual int claim(int batch) = 0;
  // Completes the held jobs (one call: complete for one job, a batch completion for more). Returns how many.
  virtual int complete_held() = 0;
  // Completes the held jobs and claims the next batch; returns how many were claimed. The default is two
  // calls; pgjq uses complete_and_claim (one call, one commit) when the server has it.
  virtual int complete_and_claim(int batch)
  {
    complete_held();
    return claim(batch);
  }
  // In-transaction claims (pgjq.claim_in_transaction): opens a transaction and claims up to batch jobs
  // held by it; returns how many, or -1 if the system has no such claims. With none claimed the
  // transaction is already closed.
  virtual int begin_and_claim(int /*batch*/) { return -1; }
  // Completes the jobs begin_and_claim returned and commits.
  virtual int complete_and_commit() { return 0; }
  // Completes the held jobs, commits, and opens a transaction holding the next batch; returns how many were
  // claimed. The default is the two calls above; pgjq pipelines them into one round trip.
  virtual int complete_commit_and_claim(int batch)
  {
    complete_and_commit();
    return begin_and_claim(batch);
  }
};

// Sizes of a queue's tables, in bytes (table + indexes + TOAST).
struct table_sizes
{
  std::int64_t queue = 0;   // the tables workers touch (pgjq: live_jobs + queue_depth; recipe: jobs)
  std::int64_t history = 0; // where finished jobs go (pgjq: finished_jobs; recipe: none, they stay in jobs)
};

// Starts an idle worker for the latency scenario; on_start(i) is called as the handler of job i starts.
class latency_worker
{
public:
  virtual ~latency_worker() = default;
  // Blocks until the worker is idle again after the handler that started last (so the next job finds it
  // asleep: on LISTEN for pgjq, between polls for the recipe).
  virtual void wait_idle() = 0;
  virtual void stop() = 0;
};

// What run_worker reports.
struct worker_run
{
  double seconds = -1;          // from the first handler's start to the worker's return; negative: no runtime
  std::uint64_t idle_waits = 0; // times a runner went to sleep with nothing to claim
};

class driver
{
public:
  virtual ~driver() = default;
  virtual std::string name() const = 0;
  // How workers claim and complete, printed in the report.
  virtual std::string worker_path() const = 0;
  // Drops and recreates the queue: empty tables, fresh statistics.
  virtual void reset() = 0;
  virtual std::unique_ptr<session> open(int index) = 0;
  // Sets the backpressure limit used by enqueue_backpressured.
  virtual void set_backpressure(std::int64_t max_pending) = 0;
  // Until the next reset(), completed jobs are deleted rather than kept as history. False if the system
  // has no such setting.
  virtual bool discard_completed() { return false; }
  // Whether its sessions' begin_and_claim holds claims in the worker's transaction (asked before loading
  // the jobs of a drain that needs it).
  virtual bool claims_in_transaction() const { return false; }
  virtual void vacuum_analyze() = 0;
  virtual table_sizes sizes() = 0;
  // Which table holds what of sizes().queue, for the report ("live_jobs 1.2 MB + queue_depth 0.1 MB").
  virtual std::string size_detail() { return {}; }
  // Dead tuples in the queue tables (pgstattuple when available, else pg_stat_user_tables).
  virtual std::int64_t dead_tuples() = 0;
  virtual std::int64_t pending() = 0;
  virtual std::unique_ptr<latency_worker> start_latency_worker(std::function<void(std::int64_t)> on_start) = 0;
  // Big transactions: `call` ("enqueue" or "complete") made n times in one transaction, each a call of the
  // system's own function from one statement on the server (SELECT ... FROM generate_series), so that the
  // figure is the server's cost per call. prepare_calls readies `total` such calls (for "complete": that
  // many claimed jobs) and is not timed; calls_in_one_transaction returns seconds, COMMIT included. Both
  // return false / a negative time when the system has no such function.
  virtual bool prepare_calls(const std::string & /*call*/, std::int64_t /*total*/) { return false; }
  virtual double calls_in_one_transaction(const std::string & /*call*/, std::int64_t /*n*/) { return -1; }
  // The system's own worker runtime (pgjq: pgjq::worker, which LISTENs, claims, runs handlers and
  // completes each batch with its next claim), with `runners` runner threads claiming `batch` jobs of
  // `job_type` of the default queue, and a handler that does nothing, until `jobs` handlers have run and
  // their jobs are completed. Throws if that has not happened within `limit`. A system without a worker
  // runtime returns a negative time.
  virtual worker_run run_worker(const std::string & /*job_type*/, int /*runners*/, int /*batch*/, std::int64_t /*jobs*/,
                                std::chrono::seconds /*limit*/)
  {
    return {};
  }
  // Admin session on the driver's database (CHECKPOINT, old snapshots, sizes).
  virtual pg_session &admin() = 0;
  virtual const std::string &conninfo() const = 0;
};

std::unique_ptr<driver> make_pgjq_driver(const std::string &conninfo);
// recipe_sql: the text of bench/recipe.sql, run to (re)create the recipe's table and functions.
// poll_ms: how often an idle recipe worker polls (the recipe has no notification).
std::unique_ptr<driver> make_recipe_driver(const std::string &conninfo, const std::string &recipe_sql, int poll_ms);

} // namespace pgjq::bench
