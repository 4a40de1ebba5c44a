// output.cpp: tables and JSON for the pgjq command line (see output.hpp).
#include "output.hpp"

#include <ctime>
#include <functional>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

namespace pgjq::cli
{

std::string format_time(time_point value)
{
  const std::time_t seconds = clock::to_time_t(value);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%SZ", &utc);
  return text;
}

std::string format_age(std::chrono::microseconds value)
{
  using namespace std::chrono;
  std::ostringstream out;
  const auto us = value.count();
  if (us < 1000000)
    out << us / 1000 << "ms";
  else if (us < 60000000)
    out << std::fixed << std::setprecision(1) << static_cast<double>(us) / 1e6 << "s";
  else if (us < 3600000000LL)
    out << us / 60000000 << "m" << (us / 1000000) % 60 << "s";
  else
    out << us / 3600000000LL << "h" << (us / 60000000) % 60 << "m";
  return out.str();
}

namespace
{
template <typename T> nlohmann::json optional_json(const std::optional<T> &value)
{
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
nlohmann::json optional_time(const std::optional<time_point> &value)
{
  return value ? nlohmann::json(format_time(*value)) : nlohmann::json(nullptr);
}
} // namespace

nlohmann::json to_json(const job &j)
{
  return {{"id", j.id},
          {"queue", j.queue},
          {"type", j.type},
          {"status", std::string(to_string(j.status))},
          {"priority", j.priority},
          {"attempts", j.attempts},
          {"max_attempts", j.max_attempts},
          {"payload", j.payload()},
          {"result", j.result() ? *j.result() : nlohmann::json(nullptr)},
          {"progress", optional_json(j.progress)},
          {"current_stage", optional_json(j.current_stage)},
          {"last_error", optional_json(j.last_error)},
          {"worker_id", optional_json(j.worker_id)},
          {"unique_key", optional_json(j.unique_key)},
          {"group_key", optional_json(j.group_key)},
          {"created_at", format_time(j.created_at)},
          {"run_at", format_time(j.run_at)},
          {"lease_expires_at", optional_time(j.lease_expires_at)},
          {"finished_at", optional_time(j.finished_at)},
          {"headers", j.headers}};
}

nlohmann::json to_json(const queue_stats &s)
{
  return {{"queue", s.queue},
          {"pending", s.pending},
          {"scheduled", s.scheduled},
          {"waiting", s.waiting},
          {"claimed", s.claimed},
          {"running", s.running},
          {"completed", s.completed},
          {"failed", s.failed},
          {"cancelled", s.cancelled},
          {"oldest_runnable_age_seconds",
           s.oldest_runnable_age ? nlohmann::json(static_cast<double>(s.oldest_runnable_age->count()) / 1e6)
                                 : nlohmann::json(nullptr)},
          {"max_pending", optional_json(s.max_pending)},
          {"fifo", s.fifo},
          {"paused", s.paused}};
}

nlohmann::json to_json(const queue_status &s)
{
  nlohmann::json out = to_json(s.stats);
  out["failed_now"] = s.failed_now;
  return out;
}

nlohmann::json to_json(const schedule_info &s)
{
  return {{"name", s.name},
          {"cron", s.cron},
          {"time_zone", s.time_zone},
          {"job_type", s.job_type},
          {"queue", s.queue},
          {"paused", s.paused},
          {"next_run", optional_time(s.next_run)},
          {"last_run", optional_time(s.last_run)},
          {"last_job_id", optional_json(s.last_job_id)},
          {"last_error", optional_json(s.last_error)},
          {"jobs_enqueued", s.jobs_enqueued},
          {"firings_missed", s.firings_missed}};
}

nlohmann::json to_json(const maintenance_duty &d)
{
  return {{"database", d.database},
          {"duty", d.duty},
          {"state", d.state},
          {"runs", d.runs},
          {"done", d.done},
          {"errors", d.errors},
          {"last_run", optional_time(d.last_run)},
          {"next_run", optional_time(d.next_run)},
          {"last_error", optional_json(d.last_error)}};
}

nlohmann::json to_json(const job &j, const std::vector<job_error> &errors)
{
  nlohmann::json out = to_json(j);
  out["errors"] = json_array(errors);
  return out;
}

nlohmann::json to_json(const queue_info &q)
{
  const auto seconds = [](std::chrono::microseconds d) { return static_cast<double>(d.count()) / 1e6; };
  return {{"queue", q.queue},
          {"max_pending", q.max_pending ? nlohmann::json(*q.max_pending) : nlohmann::json()},
          {"fifo", q.fifo},
          {"max_attempts", q.max_attempts},
          {"lease_s", seconds(q.lease)},
          {"retry_base_s", seconds(q.retry_base)},
          {"retry_cap_s", seconds(q.retry_cap)},
          {"retention_s", seconds(q.retention)},
          {"keep_completed", q.keep_completed},
          {"paused", q.paused},
          {"group_concurrency", q.group_concurrency},
          {"max_running", q.max_running ? nlohmann::json(*q.max_running) : nlohmann::json()},
          {"rate_limit", q.rate_limit ? nlohmann::json(*q.rate_limit) : nlohmann::json()},
          {"rate_interval_s", seconds(q.rate_interval)},
          {"job_timeout_s", q.job_timeout ? nlohmann::json(seconds(*q.job_timeout)) : nlohmann::json()},
          {"created_at", format_time(q.created_at)}};
}

nlohmann::json to_json(const job_error &e)
{
  return {{"failure", e.failure},
          {"attempt", e.attempt},
          {"worker_id", optional_json(e.worker_id)},
          {"started_at", optional_time(e.started_at)},
          {"failed_at", optional_time(e.failed_at)},
          {"error", e.error},
          {"failures_not_kept", e.failures_not_kept}};
}

nlohmann::json to_json(const workflow_info &w)
{
  return {{"id", w.id},
          {"name", w.name},
          {"key", optional_json(w.key)},
          {"status", w.status},
          {"on_failure", w.on_failure},
          {"steps_total", w.steps_total},
          {"steps_finished", w.steps_finished},
          {"steps_failed", w.steps_failed},
          {"started_by", w.started_by},
          {"parent_job", optional_json(w.parent_job)},
          {"created_at", format_time(w.created_at)},
          {"finished_at", optional_time(w.finished_at)}};
}

nlohmann::json to_json(const workflow_step &s)
{
  return {{"name", s.name},
          {"job_id", s.job_id},
          {"queue", s.queue},
          {"type", s.job_type},
          {"status", std::string(to_string(s.status))},
          {"depends_on", s.depends_on},
          {"attempts", s.attempts},
          {"max_attempts", s.max_attempts},
          {"last_error", optional_json(s.last_error)},
          {"result", s.result_text ? nlohmann::json::parse(*s.result_text) : nlohmann::json(nullptr)},
          {"run_at", optional_time(s.run_at)},
          {"created_at", optional_time(s.created_at)},
          {"started_at", optional_time(s.started_at)},
          {"finished_at", optional_time(s.finished_at)},
          {"waiting_for", optional_json(s.waiting_for)}};
}

nlohmann::json to_json(const queue_latency &l)
{
  return {{"queue", l.queue},
          {"measure", l.measure},
          {"jobs", l.jobs},
          {"sum_seconds", l.sum_seconds},
          {"p50_seconds", optional_json(l.p50_seconds)},
          {"p90_seconds", optional_json(l.p90_seconds)},
          {"p99_seconds", optional_json(l.p99_seconds)}};
}

void print_step_tree(std::ostream &out, const std::vector<workflow_step> &steps)
{
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < steps.size(); ++i)
    by_name.emplace(steps[i].name, i);
  // Each step's depth: 0 without a known parent, else one more than its deepest parent's. The graph has no
  // cycle (start_workflow and add_steps refuse one); `visiting` only keeps a bad answer from looping.
  std::vector<int> depth(steps.size(), -1);
  std::vector<bool> visiting(steps.size(), false);
  std::function<int(std::size_t)> depth_of = [&](std::size_t i)
  {
    if (depth[i] >= 0 || visiting[i])
      return std::max(depth[i], 0);
    visiting[i] = true;
    int d = 0;
    for (const std::string &parent : steps[i].depends_on)
      if (const auto p = by_name.find(parent); p != by_name.end())
        d = std::max(d, depth_of(p->second) + 1);
    visiting[i] = false;
    return depth[i] = d;
  };
  // The parent each step is drawn under (the deepest, the first by job id among equals), and its children in
  // the order of their job ids.
  std::vector<std::optional<std::size_t>> drawn_under(steps.size());
  std::vector<std::vector<std::size_t>> children(steps.size());
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < steps.size(); ++i)
  {
    for (const std::string &parent : steps[i].depends_on)
      if (const auto p = by_name.find(parent);
          p != by_name.end() && p->second != i &&
          (!drawn_under[i] || depth_of(p->second) > depth_of(*drawn_under[i]) ||
           (depth_of(p->second) == depth_of(*drawn_under[i]) && p->second < *drawn_under[i])))
        drawn_under[i] = p->second;
    if (drawn_under[i])
      children[*drawn_under[i]].push_back(i);
    else
      roots.push_back(i);
  }
  std::vector<bool> drawn(steps.size(), false);
  std::function<void(std::size_t, const std::string &, const std::string &, const std::string &)> draw =
      [&](std::size_t i, const std::string &lead, const std::string &branch, const std::string &below)
  {
    drawn[i] = true;
    const workflow_step &s = steps[i];
    out << lead << branch << printable(s.name) << "  " << to_string(s.status);
    if (s.waiting_for && s.status == job_status::waiting)
      out << " for " << printable(*s.waiting_for);
    else if (s.waiting_for)
      out << " (waiting for " << printable(*s.waiting_for) << ')';
    out << "  attempts " << s.attempts << '/' << s.max_attempts;
    std::string others;
    for (const std::string &parent : s.depends_on)
    {
      const auto p = by_name.find(parent);
      if (p == by_name.end() || !drawn_under[i] || p->second != *drawn_under[i])
        others += (others.empty() ? "" : ", ") + printable(parent);
    }
    if (!others.empty())
      out << "  (also after " << others << ')';
    out << '\n';
    std::vector<std::size_t> next;
    for (std::size_t c : children[i])
      if (!drawn[c])
        next.push_back(c);
    if (s.last_error)
      out << lead << below << (next.empty() ? "   " : "\u2502  ") << "last error: " << printable(*s.last_error) << '\n';
    for (std::size_t k = 0; k < next.size(); ++k)
    {
      const bool last = k + 1 == next.size();
      draw(next[k], lead + below, last ? "\u2514\u2500 " : "\u251c\u2500 ", last ? "   " : "\u2502  ");
    }
  };
  for (std::size_t r : roots)
    draw(r, "", "", "");
  // Steps no root leads to (only a graph with a cycle has them): drawn at the top, so that none is left out.
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (!drawn[i])
      draw(i, "", "", "");
}

std::string printable(const std::string &text, bool keep_newlines)
{
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto hex_escape = [&](const char *prefix, unsigned value, int width)
  {
    out += prefix;
    for (int shift = 4 * (width - 1); shift >= 0; shift -= 4)
      out += digits[(value >> shift) & 15];
  };
  for (std::size_t i = 0; i < text.size(); ++i)
  {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && keep_newlines)
      out += '\n';
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c < 0x20 || c == 0x7f)
      hex_escape("\\x", c, 2);
    else if (c < 0x80)
      out += static_cast<char>(c);
    else
    {
      // A UTF-8 sequence is copied whole when it is valid and not a C1 control (U+0080-U+009F, which
      // some terminals obey like ESC sequences); anything else is shown byte by byte.
      const int length = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      bool valid = length > 0 && i + length <= text.size();
      for (int k = 1; valid && k < length; ++k)
        valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (valid && length == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)
      {
        hex_escape("\\u00", static_cast<unsigned char>(text[i + 1]), 2);
        ++i;
      }
      else if (valid)
      {
        out.append(text, i, length);
        i += length - 1;
      }
      else
        hex_escape("\\x", c, 2);
    }
  }
  return out;
}

void print_table(std::ostream &out, const std::vector<std::string> &header,
                 const std::vector<std::vector<std::string>> &raw_rows)
{
  std::vector<std::vector<std::string>> rows;
  for (const auto &raw : raw_rows)
  {
    rows.emplace_back();
    for (const std::string &cell : raw)
      rows.back().push_back(printable(cell));
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c)
    width[c] = header[c].size();
  for (const auto &row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string> &cells)
  {
    for (std::size_t c = 0; c < cells.size(); ++c)
      out << (c ? "  " : "") << std::left << std::setw(c + 1 < cells.size() ? static_cast<int>(width[c]) : 0)
          << cells[c];
    out << '\n';
  };
  line(header);
  for (const auto &row : rows)
    line(row);
}

} // namespace pgjq::cli
