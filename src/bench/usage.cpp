// usage.cpp: what the server and the bench itself have used so far, read before and after a scenario so
// that its cost per job can be printed beside its speed: the CPU time of every process of the cluster, the
// WAL it has written, and the CPU time of the bench's own threads (the client side of every call).
#include "bench.hpp"

#include <dirent.h>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace pgjq::bench
{

namespace
{

struct proc_times
{
  long parent = 0;
  double own = 0;      // user + system seconds of the process
  double children = 0; // of its children that exited and were waited for
};

// Fields of /proc/PID/stat after the command name, which may itself hold spaces and parentheses.
std::optional<proc_times> read_stat(const std::string &pid)
{
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(in, line))
    return std::nullopt;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::vector<std::string> f{std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
  if (f.size() < 15)
    return std::nullopt;
  // f[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  proc_times t;
  t.parent = std::stol(f[1]);
  t.own = (std::stod(f[11]) + std::stod(f[12])) / tick;
  t.children = (std::stod(f[13]) + std::stod(f[14])) / tick;
  return t;
}

// The postmaster's own time, its reaped children's, and its live children's: every process of the cluster.
double cluster_cpu_seconds(long postmaster)
{
  double total = 0;
  if (DIR *proc = opendir("/proc"))
  {
    while (dirent *e = readdir(proc))
    {
      if (e->d_name[0] < '0' || e->d_name[0] > '9')
        continue;
      std::optional<proc_times> t = read_stat(e->d_name);
      if (t && t->parent == postmaster)
        total += t->own;
    }
    closedir(proc);
  }
  std::optional<proc_times> pm = read_stat(std::to_string(postmaster));
  if (!pm)
    return -1;
  return total + pm->own + pm->children;
}

} // namespace

server_usage read_server_usage(pg_session &s)
{
  server_usage u;
  u.wal_bytes = static_cast<double>(s.scalar_int("SELECT (pg_catalog.pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"));
  // The postmaster's pid is the first line of postmaster.pid: readable when the bench runs as the cluster's
  // owner on its machine, as scripts/bench.sh does. Otherwise the CPU figures are left out.
  std::ifstream pid_file(s.scalar("SELECT pg_catalog.current_setting('data_directory')").value_or("") +
                         "/postmaster.pid");
  long postmaster = 0;
  if (pid_file >> postmaster && postmaster > 0)
    u.cpu_seconds = cluster_cpu_seconds(postmaster);
  return u;
}

double bench_cpu_seconds()
{
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0)
    return -1;
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

} // namespace pgjq::bench
