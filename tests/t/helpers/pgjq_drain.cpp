// pgjq_drain.cpp: a worker for the TAP tests, built on the C++ client's runtime (pgjq::worker): it runs
// every job of type "t" of one queue, printing "ran <id>" for each, until SIGTERM. Its conninfo may name
// several hosts (target_session_attrs=read-write), so that it follows a failover like an application would.
// Usage: pgjq_drain CONNINFO QUEUE
#include <pgjq/client.hpp>

#include <cstdio>

int main(int argc, char **argv)
{
  if (argc != 3)
  {
    std::fprintf(stderr, "usage: %s CONNINFO QUEUE\n", argv[0]);
    return 2;
  }
  pgjq::worker_options options;
  options.conninfo = argv[1];
  options.queue = argv[2];
  options.worker_id = "drain";
  options.batch_size = 10;
  options.idle_timeout = std::chrono::milliseconds(500);
  options.reconnect_max = std::chrono::milliseconds(1000);
  options.log = [](const std::string &message) { std::fprintf(stderr, "pgjq_drain: %s\n", message.c_str()); };
  pgjq::worker worker(options);
  worker.on("t",
            [](pgjq::job_context &job)
            {
              std::printf("ran %lld\n", static_cast<long long>(job.job().id));
              std::fflush(stdout);
            });
  worker.run();
  return 0;
}
