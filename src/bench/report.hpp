// report.hpp: turns results into what `make bench` shows and keeps: a Markdown table, a CSV, gnuplot data
// and the gnuplot script for the PNG plots, and the check of the performance bar of issue 5.
#pragma once

#include <string>
#include <vector>

#include "scenarios.hpp"

namespace pgjq::bench
{

// Reads the JSON lines printed by bench/peers/run.sh (pg-boss, graphile-worker) and adds
// their enqueue, process and total jobs/s as the e2e_* figures of those systems. Returns a message for the
// report (what was read, or why nothing was).
std::string add_peer_results(const std::string &jsonl_path, results &r);

// header: lines printed above the table (settings, machine, worker path).
std::string markdown(const results &r, const std::vector<std::string> &header);
void write_csv(const results &r, const std::string &path);
// Writes *.dat files and plots.gp into dir; `gnuplot plots.gp` run in dir draws the PNGs.
void write_plot_inputs(const results &r, const std::string &dir);

} // namespace pgjq::bench
