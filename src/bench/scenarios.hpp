// scenarios.hpp: the scenarios of issue 5, their sizes, and the results they hand to the report.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench.hpp"
#include "driver.hpp"

namespace pgjq::bench
{

// How much each scenario does. The defaults keep a full `make bench` near 15 minutes on 2 cores.
struct config
{
  int runs = 3; // repetitions of each throughput/latency measurement
  int enqueue_connections = 4;
  std::int64_t enqueue_single_jobs = 60000; // 1 job per transaction: 6 s a run, the commit's flush is noisy
  std::int64_t enqueue_b100_jobs = 100000;
  std::int64_t enqueue_b1000_jobs = 200000;
  int drain_workers = 4;
  std::int64_t drain_jobs_b1 = 20000;
  std::int64_t drain_jobs_b10 = 100000;
  std::int64_t drain_jobs_b100 = 200000;
  std::int64_t e2e_jobs = 100000; // also the peers' job count
  int steady_seconds = 60;
  int steady_runs = 3;
  int steady_producers = 2;
  int steady_workers = 4;
  int steady_per_txn = 10;
  int steady_batch = 10;
  std::int64_t steady_prefill = 10000;
  int latency_jobs = 2000;
  int latency_gap_ms = 10; // each enqueue waits U(0, gap) ms after the worker went idle
  std::vector<std::int64_t> depths{1000, 100000, 1000000};
  int depth_samples = 200;                                             // per run and depth
  std::vector<std::int64_t> snapshot_finished{10000, 100000, 1000000}; // jobs finished under the old snapshot
  std::vector<std::int64_t> bigtx_sizes{1, 100, 10000, 100000};        // calls per transaction
  std::int64_t bigtx_min_calls = 10000;                                // smaller transactions are repeated to this
  std::vector<std::int64_t> group_keys{1000, 100000};                  // the groups scenario's sizes
  std::vector<std::int64_t> stats_history{10000, 10000000};            // the stats scenario's finished jobs
  // The workflows scenario: a fan-out of this many children (at most 10 000, a step's parents) with a root
  // and a join; a chain of this many steps (at most 10 000, one start_workflow call); this many workflows of
  // 3 steps, drained at each of the batches.
  std::int64_t workflow_children = 10000;
  std::int64_t workflow_chain = 100;
  std::int64_t workflow_count = 1000;
  int workflow_workers = 4;       // runners of the fan-out and of the workflows of 3 steps (the chain has 1)
  int workflow_fanout_batch = 10; // the worker runtime's default batch
  std::vector<int> workflow_batches{1, 10, 100};
  std::string cluster_router;                  // --cluster: the router of three nodes (cluster scenario)
  int cluster_calls = 2000;                    // per run, for the router's cost per call
  std::int64_t cluster_jobs_per_queue = 30000; // 1 node against 3 nodes
  std::set<std::string> scenarios{"enqueue",  "drain", "e2e",    "steady", "latency",   "depth",
                                  "snapshot", "bigtx", "groups", "stats",  "workflows", "cluster"};

  bool wants(const std::string &s) const { return scenarios.count(s) > 0; }
};

struct steady_point
{
  double t = 0;
  double queue_mb = 0;
  double history_mb = 0;
  std::int64_t backlog = 0;
};

struct depth_point
{
  std::int64_t depth = 0;
  summary claim_ms;
  summary enqueue_ms;
};

struct results
{
  std::vector<figure> figures;
  std::map<std::string, std::vector<steady_point>> steady_series; // by system, last run
  std::map<std::string, std::vector<depth_point>> depth_series;   // by system
  std::vector<std::string> notes;

  void add(const std::string &id, const std::string &label, const std::string &unit, bool higher_is_better,
           const std::string &system, const summary &value, const std::string &note = {});
  const figure *find(const std::string &id, const std::string &system) const;
};

// A line of progress on stderr, tagged with the system's name.
void progress(const driver &d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Each runs one scenario for one system and appends its figures. Progress goes to stderr.
void scenario_enqueue(driver &d, const config &c, results &r);
void scenario_drain(driver &d, const config &c, results &r);
void scenario_e2e(driver &d, const config &c, results &r);
void scenario_steady(driver &d, const config &c, results &r);
void scenario_latency(driver &d, const config &c, results &r);
void scenario_depth(driver &d, const config &c, results &r);
void scenario_snapshot(driver &d, const config &c, results &r);
void scenario_bigtx(driver &d, const config &c, results &r);
void scenario_groups(driver &d, const config &c, results &r);
void scenario_stats(driver &d, const config &c, results &r);
void scenario_slots(driver &d, const config &c, results &r);
void scenario_workflows(driver &d, const config &c, results &r);
void scenario_cluster(driver &d, const config &c, results &r); // cluster.cpp

} // namespace pgjq::bench
