// cluster.cpp: the cluster scenario (pgjq only, with --cluster=ROUTER_CONNINFO): what the router costs per
// call against the same call on the node, and how producers and workers do with their queues on one node
// against the same queues spread over three. scripts/bench.sh starts the three nodes and the router as
// instances of their own on this machine, so that the nodes share its cores: see docs/scale-out.md for
// what the figure can and cannot show.
#include <atomic>
#include <map>

#include "scenarios.hpp"

namespace pgjq::bench
{

namespace
{

struct cluster_sessions
{
  pg_session router;
  std::map<int, std::string> node_conninfo;
};

// Microseconds per call of `sql` (one text parameter: the call's number) run n times on one session.
double us_per_call(pg_session &s, const std::string &name, const std::string &sql, int n)
{
  s.prepare(name, sql);
  const auto t0 = steady::now();
  for (int i = 0; i < n; ++i)
  {
    const std::string arg = std::to_string(i);
    result_guard res(s.exec_prepared(name, {arg.c_str()}));
  }
  return seconds_between(t0, steady::now()) * 1e6 / n;
}

// A claim of one job and its completion, n times; returns microseconds per job (two calls).
double us_per_claim_and_complete(pg_session &s, const std::string &queue, int n, int run)
{
  const std::string cl = "cl" + std::to_string(run), co = "co" + std::to_string(run);
  s.prepare(cl, "SELECT id FROM pgjq.claim_job_batch('bench', NULL, 1, '" + queue + "')");
  s.prepare(co, "SELECT pgjq.complete($1::bigint, 'bench')");
  const auto t0 = steady::now();
  for (int i = 0; i < n; ++i)
  {
    result_guard claimed(s.exec_prepared(cl, {}));
    if (claimed.rows() != 1)
      throw std::runtime_error("cluster scenario: the claim found no job");
    result_guard done(s.exec_prepared(co, {claimed.value(0, 0)}));
  }
  return seconds_between(t0, steady::now()) * 1e6 / n;
}

// Queues q0..q2 on the given nodes (each its own queue, made anew), placed through the router.
void make_queues(cluster_sessions &cs, const std::string &prefix, const std::vector<int> &nodes)
{
  for (std::size_t i = 0; i < nodes.size(); ++i)
  {
    const std::string q = prefix + std::to_string(i);
    cs.router.exec("SELECT pgjq.drop_queue('" + q +
                   "', force => true) FROM pgjq_router.placements WHERE queue_name = '" + q + "'");
    cs.router.exec("SELECT pgjq_router.place_queue('" + q + "', ARRAY[" + std::to_string(nodes[i]) +
                   "]); SELECT pgjq.create_queue('" + q + "')");
  }
}

// One producer thread per queue, each enqueueing `jobs` jobs in batches of 100 on its queue's node; then
// one worker thread per queue draining it with complete_and_claim, batch 100. Returns {enqueue, drain}
// jobs per second over all queues.
std::pair<double, double> produce_and_drain(cluster_sessions &cs, const std::string &prefix,
                                            const std::vector<int> &nodes, std::int64_t jobs)
{
  const int n = static_cast<int>(nodes.size());
  const auto t0 = steady::now();
  run_threads(n,
              [&](int i)
              {
                pg_session s(cs.node_conninfo.at(nodes[i]));
                const std::string q = prefix + std::to_string(i);
                for (std::int64_t first = 0; first < jobs; first += 100)
                  s.exec("SELECT pgjq.enqueue_batch('t', '" + payload_array(first, 100) + "', '" + q + "')");
              });
  const double enqueue_secs = seconds_between(t0, steady::now());
  std::atomic<std::int64_t> done{0};
  const auto t1 = steady::now();
  run_threads(n,
              [&](int i)
              {
                pg_session s(cs.node_conninfo.at(nodes[i]));
                const std::string q = prefix + std::to_string(i);
                s.prepare("cc",
                          "SELECT id FROM pgjq.complete_and_claim('bench', $1::bigint[], NULL, 100, '" + q + "')");
                std::string ids = "{}";
                for (;;)
                {
                  result_guard res(s.exec_prepared("cc", {ids.c_str()}));
                  if (res.rows() == 0)
                    break;
                  done += res.rows();
                  ids = "{";
                  for (int r = 0; r < res.rows(); ++r)
                    ids += (r ? "," : "") + std::string(res.value(r, 0));
                  ids += "}";
                }
              });
  const double drain_secs = seconds_between(t1, steady::now());
  const double total = static_cast<double>(jobs) * n;
  if (done.load() != static_cast<std::int64_t>(total))
    throw std::runtime_error("cluster scenario: drained " + std::to_string(done.load()) + " of " +
                             std::to_string(static_cast<std::int64_t>(total)) + " jobs");
  return {total / enqueue_secs, total / drain_secs};
}

} // namespace

void scenario_cluster(driver &d, const config &c, results &r)
{
  if (d.name() != "pgjq")
    return;
  if (c.cluster_router.empty())
  {
    r.notes.push_back(
        "cluster: not run (no --cluster=ROUTER_CONNINFO; scripts/bench.sh starts the nodes and the router)");
    return;
  }
  cluster_sessions cs{pg_session(c.cluster_router), {}};
  {
    result_guard nodes(cs.router.query("SELECT node, conninfo FROM pgjq_router.nodes()"));
    for (int i = 0; i < nodes.rows(); ++i)
      cs.node_conninfo[std::stoi(nodes.value(i, 0))] = nodes.value(i, 1);
  }
  if (cs.node_conninfo.size() < 3)
    throw std::runtime_error("cluster scenario: the router has fewer than three nodes");

  // The router's cost per call: the same calls on node 0 directly and through the router.
  make_queues(cs, "rc", {0});
  pg_session direct(cs.node_conninfo.at(0));
  std::vector<double> enq_direct, enq_router, cc_direct, cc_router;
  for (int run = 0; run < c.runs; ++run)
  {
    const std::string sql = "SELECT pgjq.enqueue('t', jsonb_build_object('n', $1::int), 'rc0')";
    enq_direct.push_back(us_per_call(direct, "e" + std::to_string(run), sql, c.cluster_calls));
    enq_router.push_back(us_per_call(cs.router, "e" + std::to_string(run), sql, c.cluster_calls));
    cc_direct.push_back(us_per_claim_and_complete(direct, "rc0", c.cluster_calls, run));
    cc_router.push_back(us_per_claim_and_complete(cs.router, "rc0", c.cluster_calls, run));
    progress(d,
             "cluster run %d: enqueue %.0f us on the node, %.0f us through the router; claim+complete %.0f / %.0f us",
             run + 1, enq_direct.back(), enq_router.back(), cc_direct.back(), cc_router.back());
  }
  const std::string calls =
      std::to_string(c.cluster_calls) + " calls per run, one session, " + std::to_string(c.runs) + " runs";
  r.add("cluster_enqueue_node", "cluster: enqueue on the node, one session", "us per call", false, "pgjq",
        summarize(enq_direct), calls);
  r.add("cluster_enqueue_router", "cluster: enqueue through the router, one session", "us per call", false, "pgjq",
        summarize(enq_router), calls);
  r.add("cluster_claim_complete_node", "cluster: claim 1 + complete on the node, one session", "us per job", false,
        "pgjq", summarize(cc_direct), calls);
  r.add("cluster_claim_complete_router", "cluster: claim 1 + complete through the router, one session", "us per job",
        false, "pgjq", summarize(cc_router), calls);

  // Three queues on one node against the same three queues on three nodes.
  std::vector<double> enq_one, drain_one, enq_three, drain_three;
  for (int run = 0; run < c.runs; ++run)
  {
    make_queues(cs, "one", {0, 0, 0});
    make_queues(cs, "three", {0, 1, 2});
    const auto [e1, d1] = produce_and_drain(cs, "one", {0, 0, 0}, c.cluster_jobs_per_queue);
    const auto [e3, d3] = produce_and_drain(cs, "three", {0, 1, 2}, c.cluster_jobs_per_queue);
    enq_one.push_back(e1), drain_one.push_back(d1), enq_three.push_back(e3), drain_three.push_back(d3);
    progress(d, "cluster run %d: 3 queues on 1 node: enqueue %.0f, drain %.0f jobs/s; on 3 nodes: %.0f, %.0f jobs/s",
             run + 1, e1, d1, e3, d3);
  }
  const std::string sizes = "3 queues x " + std::to_string(c.cluster_jobs_per_queue) +
                            " jobs, a producer (batch 100) and a worker (batch 100) per queue on its node";
  r.add("cluster_enqueue_1node", "cluster: enqueue, 3 queues on 1 node", "jobs/s", true, "pgjq", summarize(enq_one),
        sizes);
  r.add("cluster_enqueue_3nodes", "cluster: enqueue, 3 queues on 3 nodes", "jobs/s", true, "pgjq", summarize(enq_three),
        sizes);
  r.add("cluster_drain_1node", "cluster: drain, 3 queues on 1 node", "jobs/s", true, "pgjq", summarize(drain_one),
        sizes);
  r.add("cluster_drain_3nodes", "cluster: drain, 3 queues on 3 nodes", "jobs/s", true, "pgjq", summarize(drain_three),
        sizes);
}

} // namespace pgjq::bench
