// pgjq_cluster.cpp: the cluster client (pgjq::cluster) for the TAP tests.
//   pgjq_cluster work ROUTER QUEUE          runs every job of type "t" of QUEUE on every node that holds it,
//                                           printing "ran <id>" for each, until SIGTERM
//   pgjq_cluster produce ROUTER QUEUE N     enqueues N jobs of type "t", printing "enqueued <id>" for each
//                                           ("refused <why>" for one a node could not take)
//   pgjq_cluster produce-around ROUTER QUEUE
//                                           enqueues one job, waits for a line on stdin (the queue moves or
//                                           its node restarts meanwhile), then tries three more
#include <pgjq/client.hpp>

#include <cstdio>
#include <iostream>
#include <string>

namespace
{

int produce(const std::string &router, const std::string &queue, int jobs)
{
  pgjq::cluster::producer producer({router, "", std::chrono::milliseconds(5000)});
  pgjq::enqueue_options options;
  options.queue = queue;
  for (int i = 0; i < jobs; ++i)
  {
    try
    {
      std::printf("enqueued %lld\n", static_cast<long long>(producer.enqueue("t", {{"n", i}}, options)));
    }
    catch (const pgjq::error &e)
    {
      std::printf("refused %s\n", e.what()); // a node down: the next job may go to another
    }
  }
  return 0;
}

// One job, then (after a line on stdin: the test moves the queue or restarts its node meanwhile) three
// more with the placement and the sessions of before, each printed as enqueued or refused.
int produce_around(const std::string &router, const std::string &queue)
{
  // A refresh period longer than the test: a move is found through the node's refusal.
  pgjq::cluster::producer producer({router, "", std::chrono::hours(1)});
  pgjq::enqueue_options options;
  options.queue = queue;
  std::printf("enqueued %lld\n", static_cast<long long>(producer.enqueue("t", {}, options)));
  std::fflush(stdout);
  std::string line;
  std::getline(std::cin, line);
  for (int i = 0; i < 3; ++i)
  {
    try
    {
      std::printf("enqueued %lld\n", static_cast<long long>(producer.enqueue("t", {}, options)));
    }
    catch (const pgjq::error &e)
    {
      std::printf("refused %s\n", e.what());
    }
  }
  return 0;
}

int work(const std::string &router, const std::string &queue)
{
  pgjq::cluster::worker_options options;
  options.cluster.router_conninfo = router;
  options.worker.queue = queue;
  options.worker.batch_size = 10;
  options.worker.idle_timeout = std::chrono::milliseconds(500);
  options.worker.reconnect_max = std::chrono::milliseconds(1000);
  options.worker.log = [](const std::string &m) { std::fprintf(stderr, "pgjq_cluster: %s\n", m.c_str()); };
  options.cluster.placement_refresh = std::chrono::milliseconds(500);
  pgjq::cluster::worker worker(options);
  worker.on("t",
            [](pgjq::job_context &job)
            {
              std::printf("ran %lld\n", static_cast<long long>(job.job().id));
              std::fflush(stdout);
            });
  worker.run();
  return 0;
}

} // namespace

int main(int argc, char **argv)
{
  const std::string mode = argc > 1 ? argv[1] : "";
  try
  {
    if (mode == "work" && argc == 4)
      return work(argv[2], argv[3]);
    if (mode == "produce" && argc == 5)
      return produce(argv[2], argv[3], std::stoi(argv[4]));
    if (mode == "produce-around" && argc == 4)
      return produce_around(argv[2], argv[3]);
  }
  catch (const std::exception &e)
  {
    std::fprintf(stderr, "pgjq_cluster: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s work ROUTER QUEUE | produce ROUTER QUEUE N | produce-around ROUTER QUEUE\n", argv[0]);
  return 2;
}
