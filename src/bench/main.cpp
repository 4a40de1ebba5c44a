// main.cpp: pgjq-bench's command line: which databases, which scenarios at which sizes, where the report
// goes. Runs each selected scenario for pgjq and for the seed recipe, back to back (enqueue and drain in
// alternated rounds), so that every ratio compares numbers of the same invocation.
//
//   pgjq-bench --pgjq=CONNINFO --recipe=CONNINFO --recipe-sql=bench/recipe.sql --out=DIR [--peers=FILE]
//              [--runs=3] [--scenarios=enqueue,drain,e2e,...] [--quick] [size options]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "report.hpp"
#include "rounds.hpp"
#include "scenarios.hpp"

using namespace pgjq::bench;

namespace
{

void usage()
{
  std::fprintf(
      stderr,
      "usage: pgjq-bench --pgjq=CONNINFO --recipe=CONNINFO --recipe-sql=FILE --out=DIR [--peers=FILE]\n"
      "  [--runs=N]\n"
      "  [--scenarios=enqueue,drain,e2e,steady,latency,depth,snapshot,bigtx,groups,stats,slots,workflows,cluster]\n"
      "  [--cluster=ROUTER_CONNINFO] [--quick]\n"
      "  [--drain-jobs=B1,B10,B100] [--e2e-jobs=N] [--steady-seconds=N] [--steady-runs=N]\n"
      "  [--latency-jobs=N] [--depths=A,B,C] [--depth-samples=N] [--recipe-poll-ms=N]\n"
      "  [--workflow-sizes=CHILDREN,CHAIN,WORKFLOWS] [--workflow-workers=N]\n");
}

std::vector<std::int64_t> int_list(const std::string &s)
{
  std::vector<std::int64_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    out.push_back(std::stoll(item));
  return out;
}

std::string slurp(const std::string &path)
{
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

int main(int argc, char **argv)
{
  config c;
  std::string pgjq_conn, recipe_conn, recipe_sql_path, out_dir = ".", peers_path;
  int poll_ms = 10;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq), val = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--help" || key == "-h")
    {
      usage();
      return 0;
    }
    else if (key == "--pgjq")
      pgjq_conn = val;
    else if (key == "--recipe")
      recipe_conn = val;
    else if (key == "--recipe-sql")
      recipe_sql_path = val;
    else if (key == "--out")
      out_dir = val;
    else if (key == "--peers")
      peers_path = val;
    else if (key == "--runs")
      c.runs = std::stoi(val);
    else if (key == "--scenarios")
    {
      c.scenarios.clear();
      std::stringstream in(val);
      std::string s;
      while (std::getline(in, s, ','))
        c.scenarios.insert(s);
    }
    else if (key == "--drain-jobs")
    {
      const auto v = int_list(val);
      if (v.size() != 3)
        return usage(), 2;
      c.drain_jobs_b1 = v[0], c.drain_jobs_b10 = v[1], c.drain_jobs_b100 = v[2];
    }
    else if (key == "--e2e-jobs")
      c.e2e_jobs = std::stoll(val);
    else if (key == "--steady-seconds")
      c.steady_seconds = std::stoi(val);
    else if (key == "--steady-runs")
      c.steady_runs = std::stoi(val);
    else if (key == "--latency-jobs")
      c.latency_jobs = std::stoi(val);
    else if (key == "--depths")
      c.depths = int_list(val);
    else if (key == "--depth-samples")
      c.depth_samples = std::stoi(val);
    else if (key == "--workflow-sizes")
    {
      // A join has at most 10 000 parents and a chain goes in one start_workflow call of at most 10 000 steps.
      const auto v = int_list(val);
      if (v.size() != 3 || v[0] < 1 || v[0] > 10000 || v[1] < 1 || v[1] > 10000 || v[2] < 1)
        return usage(), 2;
      c.workflow_children = v[0], c.workflow_chain = v[1], c.workflow_count = v[2];
    }
    else if (key == "--workflow-workers")
      c.workflow_workers = std::stoi(val);
    else if (key == "--cluster")
      c.cluster_router = val;
    else if (key == "--recipe-poll-ms")
      poll_ms = std::stoi(val);
    else if (key == "--quick")
    {
      // A smoke run of every scenario in about a minute: the numbers are not comparable with full runs.
      c.runs = 1;
      c.enqueue_single_jobs = 2000, c.enqueue_b100_jobs = 20000, c.enqueue_b1000_jobs = 20000;
      c.drain_jobs_b1 = 2000, c.drain_jobs_b10 = 10000, c.drain_jobs_b100 = 20000;
      c.e2e_jobs = 10000, c.steady_seconds = 5, c.steady_runs = 1, c.latency_jobs = 200;
      c.depths = {1000, 10000}, c.depth_samples = 50, c.snapshot_finished = {1000, 10000};
      c.bigtx_sizes = {1, 100, 10000}, c.bigtx_min_calls = 1000;
      c.group_keys = {1000, 10000};
      c.stats_history = {1000, 100000};
      c.cluster_calls = 200, c.cluster_jobs_per_queue = 3000;
      c.workflow_children = 1000, c.workflow_chain = 20, c.workflow_count = 100;
    }
    else
    {
      usage();
      return 2;
    }
  }
  if (pgjq_conn.empty() || recipe_conn.empty() || recipe_sql_path.empty())
  {
    usage();
    return 2;
  }

  try
  {
    auto pgjq = make_pgjq_driver(pgjq_conn);
    auto recipe = make_recipe_driver(recipe_conn, slurp(recipe_sql_path), poll_ms);
    pgjq->reset();
    recipe->reset();

    std::vector<std::string> header;
    pg_session &admin = pgjq->admin();
    header.push_back("Server: " + admin.scalar("SELECT version()").value_or("?"));
    std::string settings = "Settings:";
    for (const char *g : {"fsync", "synchronous_commit", "wal_sync_method", "full_page_writes", "shared_buffers",
                          "max_wal_size", "checkpoint_timeout", "autovacuum", "max_connections"})
      settings += std::string(" ") + g + "=" + admin.scalar(std::string("SHOW ") + g).value_or("?");
    header.push_back(settings);
    header.push_back("pgjq workers: " + pgjq->worker_path() + ".");
    header.push_back("recipe workers: " + recipe->worker_path() + "; an idle recipe worker polls every " +
                     std::to_string(poll_ms) + " ms.");
    auto n = [](std::int64_t v) { return std::to_string(v); };
    std::string depths;
    for (const std::int64_t d : c.depths)
      depths += (depths.empty() ? "" : "/") + n(d);
    std::string held;
    for (const std::int64_t k : c.snapshot_finished)
      held += (held.empty() ? "" : "/") + n(k);
    std::string bigtx;
    for (const std::int64_t k : c.bigtx_sizes)
      bigtx += (bigtx.empty() ? "" : "/") + n(k);
    header.push_back(
        "Sizes: " + n(c.runs) + " runs; enqueue " + n(c.enqueue_single_jobs) + "/" + n(c.enqueue_b100_jobs) + "/" +
        n(c.enqueue_b1000_jobs) + " jobs (1/100/1000 per call); drain " + n(c.drain_jobs_b1) + "/" +
        n(c.drain_jobs_b10) + "/" + n(c.drain_jobs_b100) + " jobs (batch 1/10/100); end to end " + n(c.e2e_jobs) +
        " jobs; steady " + n(c.steady_runs) + " x " + n(c.steady_seconds) + " s; latency " + n(c.latency_jobs) +
        " jobs; depth " + depths + " pending, " + n(c.depth_samples) + " samples per run; old snapshot after " + held +
        " finished jobs; big transactions of " + bigtx + " calls; workflows: a fan-out of " + n(c.workflow_children) +
        ", a chain of " + n(c.workflow_chain) + ", " + n(c.workflow_count) + " workflows of 3 steps.");
    for (const std::string &h : header)
      std::fprintf(stderr, "%s\n", h.c_str());

    results r;
    const std::pair<const char *, scenario_fn> plan[] = {
        {"enqueue", scenario_enqueue},   {"drain", scenario_drain},     {"e2e", scenario_e2e},
        {"steady", scenario_steady},     {"latency", scenario_latency}, {"depth", scenario_depth},
        {"snapshot", scenario_snapshot}, {"bigtx", scenario_bigtx},     {"groups", scenario_groups},
        {"stats", scenario_stats},       {"slots", scenario_slots},     {"workflows", scenario_workflows},
        {"cluster", scenario_cluster}};
    // The short scenarios whose ratios issue 19 judges run in alternated rounds (rounds.hpp); the others
    // keep their series and samples of every run of one system together.
    const std::set<std::string> alternated{"enqueue", "drain"};
    for (const auto &[name, run] : plan)
    {
      if (!c.wants(name))
        continue;
      std::fprintf(stderr, "== scenario %s\n", name);
      const auto t0 = steady::now();
      if (alternated.count(name))
        run_in_rounds(name, run, {pgjq.get(), recipe.get()}, c, r);
      else
        for (driver *d : {pgjq.get(), recipe.get()})
          run_guarded(name, run, *d, c, r, r);
      std::fprintf(stderr, "   (%s took %.0f s)\n", name, seconds_between(t0, steady::now()));
    }
    if (!peers_path.empty())
    {
      const std::string msg = add_peer_results(peers_path, r);
      r.notes.push_back(msg);
    }
    else
      r.notes.push_back("peers: not run (no --peers file)");

    const std::string md = markdown(r, header);
    std::ofstream(out_dir + "/results.md") << md;
    write_csv(r, out_dir + "/results.csv");
    write_plot_inputs(r, out_dir);
    std::cout << md;
    return 0;
  }
  catch (const std::exception &e)
  {
    std::fprintf(stderr, "pgjq-bench: %s\n", e.what());
    return 1;
  }
}
