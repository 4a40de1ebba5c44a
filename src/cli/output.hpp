// output.hpp: how the pgjq command line shows what it read: aligned tables for people, JSON for scripts.
#pragma once

#include <pgjq/client.hpp>

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace pgjq::cli
{

// "2026-11-25 04:01:02Z", UTC, to the second.
std::string format_time(time_point value);
// "3m12s", "1.5s", "250ms": an age or a duration for a table.
std::string format_age(std::chrono::microseconds value);

nlohmann::json to_json(const job &j);
// The job with its failed attempts, oldest first, under "errors" (pgjq show --json, the dashboard's detail).
nlohmann::json to_json(const job &j, const std::vector<job_error> &errors);
nlohmann::json to_json(const queue_stats &s);
// A row of `pgjq status`: the queue's figures and the failed jobs it keeps now (those retry --queue sends
// back), beside queue_stats' lifetime total of failures.
struct queue_status
{
  queue_stats stats;
  std::int64_t failed_now = 0;
};
nlohmann::json to_json(const queue_status &s);
nlohmann::json to_json(const schedule_info &s);
nlohmann::json to_json(const maintenance_duty &d);
nlohmann::json to_json(const job_error &e);
nlohmann::json to_json(const queue_info &q);
nlohmann::json to_json(const queue_latency &l);
nlohmann::json to_json(const workflow_info &w);
nlohmann::json to_json(const workflow_step &s);

// A listing as a JSON array of to_json(item).
template <typename Items> nlohmann::json json_array(const Items &items)
{
  nlohmann::json out = nlohmann::json::array();
  for (const auto &item : items)
    out.push_back(to_json(item));
  return out;
}

// Text a producer or worker wrote (job types, keys, worker ids, errors), made safe for a terminal: every
// control character (C0, DEL and C1, such as ESC starting a colour, title or cursor sequence) is shown as an
// escape (\n, \t, \x1b, \u009b) instead of being sent to the terminal. keep_newlines leaves line breaks in
// text printed over several lines (a pretty-printed payload). Invalid UTF-8 bytes are shown as \xNN.
std::string printable(const std::string &text, bool keep_newlines = false);

// A workflow's steps as a tree, one line per step (name, status, attempts, what it waits for) and a line for
// its last error: roots first, each step indented under the step it depends on that lies deepest in the
// graph, which also draws it below every step it waits for; a step after several is drawn once, with
// "(also after x, y)" naming the others. Every text is made printable().
void print_step_tree(std::ostream &out, const std::vector<workflow_step> &steps);

// Rows of cells under a header (each cell made printable()), each column as wide as its widest cell.
void print_table(std::ostream &out, const std::vector<std::string> &header,
                 const std::vector<std::vector<std::string>> &rows);

} // namespace pgjq::cli
