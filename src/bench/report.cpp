// report.cpp: the Markdown table (scenario | pgjq | recipe | ratio | pg-boss | graphile-worker), the CSV,
// the gnuplot inputs, and the verdict on each line of the performance bar. Only figures measured in the same
// invocation are compared.
#include "report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace pgjq::bench
{

namespace
{

const char *const systems[] = {"pgjq", "recipe", "pg-boss", "graphile-worker"};

std::string fmt_number(double v, const std::string &unit)
{
  char buf[64];
  if (std::isnan(v))
    return "n/a";
  if (unit == "jobs/s")
  {
    if (std::fabs(v) >= 100000)
      std::snprintf(buf, sizeof buf, "%.0fk", v / 1000);
    else if (std::fabs(v) >= 10000)
      std::snprintf(buf, sizeof buf, "%.1fk", v / 1000);
    else if (std::fabs(v) >= 1000)
      std::snprintf(buf, sizeof buf, "%.2fk", v / 1000);
    else
      std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  else if (unit == "ms")
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 10 ? "%.1f" : "%.3f", v);
  else if (unit == "µs")
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.1f", v);
  else if (unit == "MB" || unit == "x")
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string cell(const figure *f)
{
  if (!f)
    return "";
  std::string s = fmt_number(f->value.median, f->unit);
  if (f->value.runs > 1 && f->value.min != f->value.max)
    s += " (" + fmt_number(f->value.min, f->unit) + "–" + fmt_number(f->value.max, f->unit) + ")";
  return s;
}

double med(const results &r, const std::string &id, const std::string &system)
{
  const figure *f = r.find(id, system);
  return f ? f->value.median : NAN;
}

std::vector<std::string> row_ids(const results &r)
{
  std::vector<std::string> ids;
  for (const figure &f : r.figures)
    if (std::find(ids.begin(), ids.end(), f.id) == ids.end())
      ids.push_back(f.id);
  return ids;
}

struct check
{
  std::string what;
  double measured;
  double target;
  bool at_most; // measured must be <= target (else >=)
  std::string unit;
};

std::vector<check> bar_checks(const results &r)
{
  std::vector<check> out;
  auto ratio = [&](const std::string &id) { return med(r, id, "pgjq") / med(r, id, "recipe"); };
  for (const char *b : {"1", "10", "100"})
    out.push_back(
        {std::string("drain batch ") + b + ": pgjq / recipe", ratio(std::string("drain_b") + b), 2, false, "x"});
  out.push_back({"drain batch 100: pgjq jobs/s", med(r, "drain_b100", "pgjq"), 100000, false, "jobs/s"});
  // Not the bar's own terms (the recipe keeps its completed rows), so shown beside it, not instead of it.
  out.push_back({"(keep_completed => false) drain batch 100: pgjq / recipe",
                 med(r, "drain_b100_not_kept", "pgjq") / med(r, "drain_b100", "recipe"), 2, false, "x"});
  out.push_back({"(keep_completed => false) drain batch 100: pgjq jobs/s", med(r, "drain_b100_not_kept", "pgjq"),
                 100000, false, "jobs/s"});
  // The other worker mode: jobs held by the worker's open transaction (claim_in_transaction), completed
  // and committed in one round trip; the recipe's figure is its own (lease-less UPDATE) drain.
  for (const char *b : {"1", "10", "100"})
    out.push_back(
        {std::string("(claim_in_transaction) drain batch ") + b + ": pgjq / recipe",
         med(r, std::string("drain_b") + b + "_in_transaction", "pgjq") / med(r, std::string("drain_b") + b, "recipe"),
         2, false, "x"});
  out.push_back({"(claim_in_transaction) drain batch 100: pgjq jobs/s", med(r, "drain_b100_in_transaction", "pgjq"),
                 100000, false, "jobs/s"});
  out.push_back({"(claim_in_transaction, keep_completed => false) drain batch 100: pgjq / recipe",
                 med(r, "drain_b100_not_kept_in_transaction", "pgjq") / med(r, "drain_b100", "recipe"), 2, false, "x"});
  const double peer =
      std::max(std::isnan(med(r, "e2e_total", "pg-boss")) ? 0.0 : med(r, "e2e_total", "pg-boss"),
               std::isnan(med(r, "e2e_total", "graphile-worker")) ? 0.0 : med(r, "e2e_total", "graphile-worker"));
  out.push_back({"end to end: pgjq / best peer", peer > 0 ? med(r, "e2e_total", "pgjq") / peer : NAN, 5, false, "x"});
  out.push_back({"steady completed: pgjq / recipe", ratio("steady_completed"), 3, false, "x"});
  out.push_back({"steady: pgjq queue tables end / start", med(r, "steady_size_growth", "pgjq"), 2, true, "x"});
  for (const char *call : {"enqueue", "try_enqueue", "insert", "complete", "fail", "cancel"})
    out.push_back({std::string("big transaction: pgjq ") + call + " per call, 100000 / 100 calls",
                   med(r, std::string("bigtx_") + call + "_100000", "pgjq") /
                       med(r, std::string("bigtx_") + call + "_100", "pgjq"),
                   1.5, true, "x"});
  out.push_back({"claim latency: pgjq 1M / 1k pending",
                 med(r, "depth_claim_1000000", "pgjq") / med(r, "depth_claim_1000", "pgjq"), 1.2, true, "x"});
  out.push_back({"backpressured enqueue: pgjq 1M / 1k pending",
                 med(r, "depth_enqueue_1000000", "pgjq") / med(r, "depth_enqueue_1000", "pgjq"), 1.2, true, "x"});
  out.push_back({"enqueue -> handler p50 (pgjq)", med(r, "latency_p50", "pgjq"), 1, true, "ms"});
  out.push_back({"enqueue -> handler p99 (pgjq)", med(r, "latency_p99", "pgjq"), 5, true, "ms"});
  // Issue 19: producers at least as fast as the recipe, one job per transaction; and under a held snapshot
  // a claim no slower than the recipe's, and a drain that degrades no faster as the held-back history grows.
  out.push_back({"enqueue, 1 job per transaction: pgjq / recipe", ratio("enqueue_1"), 1, false, "x"});
  for (const char *held : {"10000", "100000", "1000000"})
  {
    const std::string id = std::string(held) == "100000" ? "snapshot_claim" : std::string("snapshot_claim_") + held;
    out.push_back({std::string("claim after ") + held + " finished under a held snapshot: pgjq / recipe", ratio(id), 1,
                   true, "x"});
  }
  auto degradation = [&](const std::string &system)
  { return med(r, "snapshot_drain_1000000", system) / med(r, "snapshot_drain_10000", system); };
  out.push_back({"drain under a held snapshot, 1M / 10k finished: pgjq's fall over the recipe's",
                 degradation("pgjq") / degradation("recipe"), 1, false, "x"});
  return out;
}

} // namespace

std::string add_peer_results(const std::string &path, results &r)
{
  std::ifstream in(path);
  if (!in)
    return "peers: no results (" + path + " not found); see the bench log for why they were skipped";
  std::map<std::string, std::map<std::string, std::vector<double>>> by_peer;
  std::map<std::string, std::string> versions;
  std::string line;
  std::int64_t jobs = 0;
  while (std::getline(in, line))
  {
    if (line.empty() || line[0] != '{')
      continue;
    try
    {
      const auto j = nlohmann::json::parse(line);
      const std::string peer = j.at("peer").get<std::string>();
      versions[peer] = j.value("version", "");
      jobs = j.value("jobs", 0);
      if (j.value("timedOut", false))
        continue;
      for (const char *k : {"enqueue_jobs_per_s", "process_jobs_per_s", "total_jobs_per_s"})
        by_peer[peer][k].push_back(j.at(k).get<double>());
    }
    catch (const std::exception &)
    {
    }
  }
  if (by_peer.empty())
    return "peers: " + path + " holds no completed run";
  std::string msg = "peers (" + std::to_string(jobs) + " jobs each, their best batching settings):";
  for (auto &[peer, m] : by_peer)
  {
    const std::string note = std::to_string(jobs) + " jobs, " + std::to_string(m["total_jobs_per_s"].size()) + " runs";
    r.add("e2e_enqueue", "", "jobs/s", true, peer, summarize(m["enqueue_jobs_per_s"]), note);
    r.add("e2e_drain", "", "jobs/s", true, peer, summarize(m["process_jobs_per_s"]), note);
    r.add("e2e_total", "", "jobs/s", true, peer, summarize(m["total_jobs_per_s"]), note);
    msg += " " + peer + " " + versions[peer] + " (" + std::to_string(m["total_jobs_per_s"].size()) + " runs);";
  }
  return msg;
}

std::string markdown(const results &r, const std::vector<std::string> &header)
{
  std::ostringstream out;
  for (const std::string &h : header)
    out << h << "\n";
  out << "\n| scenario | pgjq | recipe | ratio pgjq/recipe | pg-boss | graphile-worker |\n"
      << "|---|---|---|---|---|---|\n";
  for (const std::string &id : row_ids(r))
  {
    const figure *p = r.find(id, "pgjq");
    const figure *c = r.find(id, "recipe");
    const figure *any = p ? p : c ? c : r.find(id, "pg-boss") ? r.find(id, "pg-boss") : r.find(id, "graphile-worker");
    if (!any || any->label.empty())
      continue;
    std::string ratio;
    if (p && c && c->value.median != 0)
    {
      char buf[32];
      const double x = p->value.median / c->value.median;
      std::snprintf(buf, sizeof buf, x >= 100 ? "%.0f×" : x >= 10 ? "%.1f×" : "%.2f×", x);
      ratio = buf;
    }
    out << "| " << any->label << " (" << any->unit << (any->higher_is_better ? ", higher is better" : "") << ") | "
        << cell(p) << " | " << cell(c) << " | " << ratio << " | " << cell(r.find(id, "pg-boss")) << " | "
        << cell(r.find(id, "graphile-worker")) << " |\n";
  }
  out << "\nCells: median of the runs (min–max). Ratio = pgjq / recipe (for ms, µs, MB, bytes, tuples and "
         "jobs of backlog, lower is better).\n";
  out << "\n### The bar (issues 5 and 19)\n\n| criterion | measured | target | met |\n|---|---|---|---|\n";
  for (const check &k : bar_checks(r))
  {
    const bool known = !std::isnan(k.measured);
    const bool met = known && (k.at_most ? k.measured <= k.target : k.measured >= k.target);
    char m[48], t[48];
    std::snprintf(m, sizeof m, k.unit == "jobs/s" ? "%.0f" : "%.2f", k.measured);
    std::snprintf(t, sizeof t, k.unit == "jobs/s" ? "%s %.0f" : "%s %.2f", k.at_most ? "≤" : "≥", k.target);
    out << "| " << k.what << " | " << (known ? std::string(m) + " " + k.unit : "not measured") << " | " << t << " "
        << k.unit << " | " << (known ? (met ? "yes" : "**no**") : "–") << " |\n";
  }
  out << "\n";
  // What a producer can hope for: pgjq's single enqueue as a fraction of a bare INSERT into its own table.
  const double of_bare = med(r, "enqueue_1", "pgjq") / med(r, "enqueue_bare_insert", "pgjq");
  if (!std::isnan(of_bare))
  {
    char line[96];
    std::snprintf(line, sizeof line, "- enqueue, 1 job per transaction: pgjq / bare INSERT %.2f x\n", of_bare);
    out << line;
  }
  for (const figure &f : r.figures)
    if (f.id == "steady_size_end" && !f.note.empty())
      out << "- steady, " << f.system << " queue tables at end: " << f.note << "\n";
  for (const std::string &n : r.notes)
    out << "- " << n << "\n";
  return out.str();
}

void write_csv(const results &r, const std::string &path)
{
  std::ofstream out(path);
  out << "id,label,unit,higher_is_better,system,median,min,max,runs,note\n";
  auto q = [](const std::string &s)
  {
    std::string o = "\"";
    for (char ch : s)
      o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return o + "\"";
  };
  for (const figure &f : r.figures)
  {
    std::string label = f.label;
    if (label.empty())
      if (const figure *p = r.find(f.id, "pgjq"))
        label = p->label;
    out << f.id << "," << q(label) << "," << q(f.unit) << "," << (f.higher_is_better ? 1 : 0) << "," << f.system << ","
        << f.value.median << "," << f.value.min << "," << f.value.max << "," << f.value.runs << "," << q(f.note)
        << "\n";
  }
}

void write_plot_inputs(const results &r, const std::string &dir)
{
  // Throughput: one cluster of bars per jobs/s scenario; a system without any figure gets no bars (gnuplot
  // refuses a histogram column without a valid point).
  std::vector<int> plotted;
  {
    std::ofstream dat(dir + "/throughput.dat");
    dat << "# scenario pgjq recipe pg-boss graphile-worker (jobs/s; NaN = not measured)\n";
    for (const std::string &id : row_ids(r))
    {
      const figure *any = r.find(id, "pgjq") ? r.find(id, "pgjq") : r.find(id, "recipe");
      if (!any || any->unit != "jobs/s")
        continue;
      dat << '"' << id << '"';
      for (int k = 0; k < 4; ++k)
      {
        const double v = med(r, id, systems[k]);
        if (!std::isnan(v) && std::find(plotted.begin(), plotted.end(), k) == plotted.end())
          plotted.push_back(k);
        dat << ' ' << (std::isnan(v) ? std::string("NaN") : std::to_string(v));
      }
      dat << "\n";
    }
  }
  // Claim and backpressured-enqueue latency against depth.
  for (const auto &[system, points] : r.depth_series)
  {
    std::ofstream dat(dir + "/depth_" + system + ".dat");
    dat << "# pending claim_ms_median claim_min claim_max enqueue_ms_median enqueue_min enqueue_max\n";
    for (const depth_point &p : points)
      dat << p.depth << ' ' << p.claim_ms.median << ' ' << p.claim_ms.min << ' ' << p.claim_ms.max << ' '
          << p.enqueue_ms.median << ' ' << p.enqueue_ms.min << ' ' << p.enqueue_ms.max << "\n";
  }
  // Table sizes over the steady run.
  for (const auto &[system, points] : r.steady_series)
  {
    std::ofstream dat(dir + "/steady_" + system + ".dat");
    dat << "# seconds queue_tables_mb history_mb backlog_jobs\n";
    for (const steady_point &p : points)
      dat << p.t << ' ' << p.queue_mb << ' ' << p.history_mb << ' ' << p.backlog << "\n";
  }

  std::ofstream gp(dir + "/plots.gp");
  gp << "# Draws the PNGs from the .dat files beside it: gnuplot plots.gp\n"
        "set terminal pngcairo size 1000,560 font 'sans,10'\n"
        "set key top left\nset grid ytics\n\n";
  if (!plotted.empty())
  {
    gp << "set output 'throughput.png'\n"
          "set title 'Throughput per scenario (jobs/s, log scale; median of runs)'\n"
          "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
          "set boxwidth 0.9\nset logscale y\nset yrange [100:*]\nset xtics rotate by -30 noenhanced\n"
          "plot ";
    std::sort(plotted.begin(), plotted.end());
    for (std::size_t k = 0; k < plotted.size(); ++k)
      gp << (k ? ", '' using " : "'throughput.dat' using ") << plotted[k] + 2 << (k ? "" : ":xtic(1)") << " title '"
         << systems[plotted[k]] << "'";
    gp << "\n"
          "unset logscale y\nset yrange [*:*]\nset xtics norotate\nunset style\n\n";
  }
  if (!r.depth_series.empty())
  {
    gp << "set output 'depth_latency.png'\n"
          "set title 'Claim (1 job) and backpressured enqueue latency against pending jobs (median, ms)'\n"
          "set style data linespoints\nset logscale xy\nset xrange [500:2000000]\n"
          "set xtics (\"1k\" 1000, \"10k\" 10000, \"100k\" 100000, \"1M\" 1000000)\n"
          "set xlabel 'pending jobs'\nset ylabel 'ms (log scale)'\nset yrange [*:*]\nplot ";
    bool first = true;
    for (const auto &[system, points] : r.depth_series)
    {
      gp << (first ? "" : ", ") << "'depth_" << system << ".dat' using 1:2 with linespoints lw 2 title '" << system
         << " claim', 'depth_" << system << ".dat' using 1:5 with linespoints dt 2 title '" << system
         << " backpressured enqueue'";
      first = false;
    }
    gp << "\nunset logscale xy\nset xrange [*:*]\nset xtics autofreq\nunset xlabel\nunset ylabel\n\n";
  }
  if (!r.steady_series.empty())
  {
    gp << "set output 'steady_size.png'\n"
          "set title 'Table + index size during the steady run (MB)'\n"
          "set xlabel 'seconds'\nset ylabel 'MB'\nset yrange [0:*]\nplot ";
    bool first = true;
    for (const auto &[system, points] : r.steady_series)
    {
      gp << (first ? "" : ", ") << "'steady_" << system << ".dat' using 1:2 with lines lw 2 title '" << system
         << (system == "pgjq" ? " live queue tables" : " jobs table") << "'";
      if (system == "pgjq")
        gp << ", 'steady_pgjq.dat' using 1:3 with lines dt 2 lw 2 title 'pgjq finished-jobs table'";
      first = false;
    }
    gp << "\n";
  }
}

} // namespace pgjq::bench
