// bench.hpp: what every part of pgjq-bench shares: timing, summaries of repeated runs, a small RAII libpq
// session for the bench's own SQL (setup, sizes, the recipe), and the result record the report prints.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace pgjq::bench
{

using steady = std::chrono::steady_clock;

inline double seconds_between(steady::time_point a, steady::time_point b)
{
  return std::chrono::duration<double>(b - a).count();
}
inline double ms_between(steady::time_point a, steady::time_point b) { return seconds_between(a, b) * 1e3; }

// The median of repeated runs with their spread (stats.cpp).
struct summary
{
  double median = 0, min = 0, max = 0;
  int runs = 0;
};
summary summarize(std::vector<double> values);
// p in [0, 100], nearest-rank on a sorted copy.
double percentile(std::vector<double> values, double p);

// A session for the bench's own statements (pg_util.cpp). Errors throw std::runtime_error with the server's
// message. Not thread-safe.
class pg_session
{
public:
  explicit pg_session(const std::string &conninfo);
  // Borrows a session owned elsewhere (the pgjq client's), for statements the client has no method for.
  static pg_session borrow(PGconn *conn);
  pg_session(pg_session &&other) noexcept;
  pg_session(const pg_session &) = delete;
  pg_session &operator=(const pg_session &) = delete;
  ~pg_session();

  PGconn *get() const noexcept { return m_conn; }
  // Runs SQL without parameters (several statements allowed); throws on error.
  void exec(const std::string &sql);
  // The first column of the first row as text; empty optional for NULL or no row.
  std::optional<std::string> scalar(const std::string &sql);
  std::int64_t scalar_int(const std::string &sql);
  // Runs SQL without parameters and returns its checked result (wrap it in a result_guard).
  PGresult *query(const std::string &sql);
  void prepare(const std::string &name, const std::string &sql);
  // Runs a prepared statement with text parameters (nullptr = NULL); returns the result (caller PQclears it
  // through result_guard) after checking it.
  PGresult *exec_prepared(const std::string &name, const std::vector<const char *> &params);

private:
  pg_session() = default;
  PGconn *m_conn = nullptr;
  bool m_owned = true;
};

// What the whole server has used so far (usage.cpp): CPU seconds of every process of the cluster
// (negative when the bench cannot see them: another machine or another user), and WAL bytes written.
struct server_usage
{
  double cpu_seconds = -1;
  double wal_bytes = 0;
};
server_usage read_server_usage(pg_session &s);
// CPU seconds used by the bench's own threads so far (usage.cpp).
double bench_cpu_seconds();

// Owns a PGresult.
class result_guard
{
public:
  explicit result_guard(PGresult *res) noexcept : m_res(res) {}
  result_guard(const result_guard &) = delete;
  result_guard &operator=(const result_guard &) = delete;
  ~result_guard();
  PGresult *get() const noexcept { return m_res; }
  int rows() const noexcept;
  long affected() const noexcept;
  const char *value(int row, int col) const noexcept;

private:
  PGresult *m_res;
};

// The JSON payload of job i, the same for every system: {"user_id": i, "template": "welcome"}.
std::string payload(std::int64_t i);
// A JSON array of the payloads of jobs first .. first+n-1.
std::string payload_array(std::int64_t first, int n);
// Reads user_id back out of a payload as the server prints it.
std::int64_t payload_index(const std::string &payload_text);

// Runs fn(0..n-1) on n threads, joins them all, rethrows the first exception.
void run_threads(int n, const std::function<void(int)> &fn);

// One measured figure of one system, as the report prints it.
struct figure
{
  std::string id;    // stable key, e.g. "drain_b10"
  std::string label; // what the table row says
  std::string unit;  // "jobs/s", "ms", "MB", "tuples", "jobs"
  bool higher_is_better = true;
  std::string system; // "pgjq", "recipe", "pg-boss", "graphile-worker"
  summary value;
  std::string note; // free text (e.g. "start 2.1 -> end 3.0")
};

} // namespace pgjq::bench
