// pgjq_demo.cpp: the README's first program. A producer and a worker share one run: the producer
// enqueues email and report jobs into its own queue, and a job that mails the report, which waits until the
// report has completed (depends_on); the worker claims and runs them (one email fails once and is retried
// after a short backoff, the report reports progress), the producer waits for each job through
// pgjq_job_finished and prints where every job ended.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <pgjq/client.hpp>

namespace
{

using namespace std::chrono_literals;

const std::string demo_queue = "demo";

void create_queue_state(pgjq::connection &db)
{
  // A fresh cluster has no pgjq yet; where it exists this is a no-op (the NOTICE is silenced).
  db.execute("SET client_min_messages = warning");
  db.execute("CREATE EXTENSION IF NOT EXISTS pgjq");
  db.execute("RESET client_min_messages");
  try
  {
    db.drop_queue(demo_queue, /*force=*/true);
  }
  catch (const pgjq::unknown_queue &)
  {
    // First run.
  }
  pgjq::queue_options options;
  options.max_attempts = 3;
  options.retry_base = 200ms; // so that the retry below happens while you watch
  options.retry_cap = 1s;
  options.lease = 30s;
  db.create_queue(demo_queue, options);
}

// The worker's handlers print what they do; the mutex keeps lines whole.
std::mutex print_mutex;
void say(const std::string &line)
{
  std::lock_guard<std::mutex> lock(print_mutex);
  std::cout << line << std::endl;
}

void register_handlers(pgjq::worker &w)
{
  // The SMTP server "times out" the first time Bob's email is sent.
  auto failed_once = std::make_shared<std::set<std::int64_t>>();
  w.on("email",
       [failed_once](pgjq::job_context &ctx)
       {
         const pgjq::job &job = ctx.job();
         const std::string to = ctx.payload().value("to", "");
         const bool retry = failed_once->count(job.id) > 0;
         say("  Worker claimed job #" + std::to_string(job.id) + " (email" + (retry ? ", retry" : "") + ")");
         say("    Sending email to: " + to);
         std::this_thread::sleep_for(100ms);
         if (to == "bob@example.com" && !retry)
         {
           failed_once->insert(job.id);
           say("    Failed: SMTP server timed out (will be retried after a backoff)");
           throw std::runtime_error("SMTP server timed out");
         }
         say("    Completed!");
       });
  w.on("report",
       [](pgjq::job_context &ctx)
       {
         const pgjq::job &job = ctx.job();
         say("  Worker claimed job #" + std::to_string(job.id) + " (report)");
         say("    Generating report: " + ctx.payload().value("name", std::string("?")));
         const std::vector<std::pair<int, std::string>> stages = {
             {25, "querying sales"}, {50, "aggregating"}, {75, "rendering charts"}, {100, "uploading"}};
         for (const auto &[percent, stage] : stages)
         {
           std::this_thread::sleep_for(150ms);
           ctx.progress(percent, stage);
           say("    Progress: " + std::to_string(percent) + "% (" + stage + ")");
         }
         ctx.set_result({{"url", "https://reports.example.com/monthly-sales.pdf"}});
         say("    Completed! (result stored)");
       });
  w.on("mail_report",
       [](pgjq::job_context &ctx)
       {
         say("  Worker claimed job #" + std::to_string(ctx.job().id) + " (mail_report, its report is done)");
         say("    Mailing the report to: " + ctx.payload().value("to", std::string("?")));
         say("    Completed!");
       });
}

int run(const std::string &conninfo)
{
  pgjq::connection db(conninfo);
  create_queue_state(db);
  std::cout << "Schema created.\n\n=== Enqueueing Jobs ===\n" << std::endl;

  pgjq::enqueue_options in_demo;
  in_demo.queue = demo_queue;
  struct enqueued
  {
    std::int64_t id;
    std::string type;
  };
  std::vector<enqueued> jobs;
  for (const char *to : {"alice@example.com", "bob@example.com"})
    jobs.push_back({db.enqueue("email", {{"to", to}, {"subject", "Welcome!"}}, in_demo), "email"});
  jobs.push_back({db.enqueue("report", {{"name", "monthly-sales"}}, in_demo), "report"});
  // Waits (status waiting) until the report has completed: no worker can claim it before.
  pgjq::enqueue_options after_report = in_demo;
  after_report.depends_on = {jobs.back().id};
  jobs.push_back({db.enqueue("mail_report", {{"to", "carol@example.com"}}, after_report), "mail_report"});
  for (const enqueued &j : jobs)
    std::cout << "  Enqueued job #" << j.id << ": " << j.type
              << (j.type == "mail_report" ? " (waits for the report)" : "") << std::endl;

  std::cout << "\n=== Processing Jobs ===\n" << std::endl;
  pgjq::worker_options options;
  options.conninfo = conninfo;
  options.queue = demo_queue;
  options.worker_id = "demo-worker";
  options.idle_timeout = 100ms; // a retry's backoff ends without a NOTIFY: look again soon
  options.handle_signals = false;
  pgjq::worker worker(options);
  register_handlers(worker);
  std::thread worker_thread([&worker] { worker.run(); });

  std::vector<pgjq::job> finished;
  for (const enqueued &j : jobs)
  {
    std::optional<pgjq::job> done = db.wait_for_completion(j.id, 60s);
    if (!done)
    {
      worker.stop();
      worker_thread.join();
      std::cerr << "job #" << j.id << " did not finish within 60 s" << std::endl;
      return 1;
    }
    finished.push_back(*done);
  }
  worker.stop();
  worker_thread.join();

  std::cout << "\n=== Final Job Status ===\n" << std::endl;
  for (const pgjq::job &j : finished)
  {
    std::string line =
        "  Job #" + std::to_string(j.id) + ": " + j.type + " - " + std::string(pgjq::to_string(j.status));
    if (j.attempts > 1)
      line += " (after " + std::to_string(j.attempts) + " attempts)";
    if (j.result_text)
      line += " result: " + *j.result_text;
    std::cout << line << std::endl;
  }
  std::cout << "\nDone!" << std::endl;
  return 0;
}

} // namespace

int main(int argc, char **argv)
{
  if (argc != 2)
  {
    std::fprintf(stderr, "usage: %s \"<conninfo>\"\n", argv[0]);
    return 2;
  }
  try
  {
    return run(argv[1]);
  }
  catch (const pgjq::error &e)
  {
    std::fprintf(stderr, "pgjq-demo: %s%s%s\n", e.what(), e.sqlstate().empty() ? "" : " (SQLSTATE ",
                 e.sqlstate().empty() ? "" : (e.sqlstate() + ")").c_str());
    return 1;
  }
  catch (const std::exception &e)
  {
    std::fprintf(stderr, "pgjq-demo: %s\n", e.what());
    return 1;
  }
}
