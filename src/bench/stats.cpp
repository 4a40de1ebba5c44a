// stats.cpp: medians, spreads and percentiles of the bench's samples; payload text shared by all systems;
// the thread helper the scenarios use.
#include "bench.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace pgjq::bench
{

summary summarize(std::vector<double> values)
{
  summary s;
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  s.runs = static_cast<int>(n);
  return s;
}

double percentile(std::vector<double> values, double p)
{
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  std::size_t rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(values.size()) + 0.999999);
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

std::string payload(std::int64_t i)
{
  char buf[96];
  std::snprintf(buf, sizeof buf, "{\"user_id\": %lld, \"template\": \"welcome\"}", static_cast<long long>(i));
  return buf;
}

std::string payload_array(std::int64_t first, int n)
{
  std::string out;
  out.reserve(static_cast<std::size_t>(n) * 48 + 2);
  out += '[';
  for (int k = 0; k < n; ++k)
  {
    if (k)
      out += ',';
    out += payload(first + k);
  }
  out += ']';
  return out;
}

std::int64_t payload_index(const std::string &text)
{
  const auto at = text.find("\"user_id\"");
  if (at == std::string::npos)
    return -1;
  const auto colon = text.find(':', at);
  if (colon == std::string::npos)
    return -1;
  return std::strtoll(text.c_str() + colon + 1, nullptr, 10);
}

void run_threads(int n, const std::function<void(int)> &fn)
{
  std::mutex m;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    threads.emplace_back(
        [&, i]
        {
          try
          {
            fn(i);
          }
          catch (...)
          {
            std::lock_guard<std::mutex> lock(m);
            if (!first)
              first = std::current_exception();
          }
        });
  for (auto &t : threads)
    t.join();
  if (first)
    std::rethrow_exception(first);
}

} // namespace pgjq::bench
