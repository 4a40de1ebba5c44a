// test_throughput.cpp: four workers share ten thousand jobs; every job is run and completed exactly once.
// Sized for a two-core machine: the jobs do nothing, so the test measures the queue, not the handlers.
#include "fixture.hpp"

#include <iostream>
#include <unordered_map>

using namespace pgjq_test;

BOOST_AUTO_TEST_SUITE(throughput)

BOOST_AUTO_TEST_CASE(four_workers_complete_ten_thousand_jobs_exactly_once)
{
  constexpr int job_count = 10000, workers = 4, chunk = 1000;
  scoped_queue q;
  pgjq::connection db(conninfo());

  std::vector<std::int64_t> ids;
  ids.reserve(job_count);
  std::vector<std::atomic<int>> runs(job_count);
  std::unordered_map<std::int64_t, int> index; // filled before the workers start, then only read
  for (int start = 0; start < job_count; start += chunk)
  {
    std::vector<nlohmann::json> payloads;
    for (int i = start; i < start + chunk; ++i)
      payloads.push_back({{"n", i}});
    for (std::int64_t id : db.enqueue_batch("unit", payloads, q.into()))
    {
      index.emplace(id, static_cast<int>(ids.size()));
      ids.push_back(id);
    }
  }
  BOOST_REQUIRE(ids.size() == static_cast<std::size_t>(job_count));
  BOOST_REQUIRE(index.size() == static_cast<std::size_t>(job_count));

  std::vector<std::unique_ptr<pgjq::worker>> pool;
  std::atomic<int> unknown{0};
  for (int i = 0; i < workers; ++i)
  {
    pgjq::worker_options o = worker_options_for(q);
    o.worker_id += "-" + std::to_string(i);
    o.batch_size = 100;
    pool.push_back(std::make_unique<pgjq::worker>(o));
    pool.back()->on("unit",
                    [&](pgjq::job_context &ctx)
                    {
                      auto it = index.find(ctx.job().id);
                      if (it == index.end())
                        ++unknown;
                      else
                        ++runs[it->second];
                    });
  }
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::unique_ptr<worker_thread>> threads;
    for (auto &w : pool)
      threads.push_back(std::make_unique<worker_thread>(*w));
    BOOST_REQUIRE(wait_until([&] { return stats_of(db, q).completed == job_count; }, 180s));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << job_count << " jobs by " << workers << " workers in " << seconds << " s ("
            << static_cast<int>(job_count / seconds) << " jobs/s)" << std::endl;

  int never = 0, twice = 0;
  for (const std::atomic<int> &r : runs)
  {
    never += r.load() == 0;
    twice += r.load() > 1;
  }
  BOOST_TEST(never == 0);
  BOOST_TEST(twice == 0);
  BOOST_TEST(unknown.load() == 0);
  std::uint64_t completed = 0;
  for (auto &w : pool)
    completed += w->stats().completed;
  BOOST_TEST(completed == static_cast<std::uint64_t>(job_count));
  pgjq::queue_stats s = stats_of(db, q);
  BOOST_TEST(s.completed == job_count);
  BOOST_TEST(s.failed + s.pending + s.claimed + s.running == 0);
}

BOOST_AUTO_TEST_SUITE_END()
