// main.cpp: the `pgjq` command line: its commands and options (CLI11), and the exit codes scripts branch on.
// It connects as every PostgreSQL tool does (libpq's environment, or -d with a conninfo or URI), so the
// role it connects as decides what it sees and may do, as for any pgjq call.
#include "commands.hpp"
#include "help_formats.hpp"
#include <algorithm>

#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

namespace
{

// Durations on the command line: "30s", "5min", "2h", "1d" (a bare number is seconds).
CLI::AsNumberWithUnit duration_units()
{
  return CLI::AsNumberWithUnit(
      std::map<std::string, double>{{"ms", 0.001}, {"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}},
      static_cast<CLI::AsNumberWithUnit::Options>(CLI::AsNumberWithUnit::CASE_SENSITIVE |
                                                  CLI::AsNumberWithUnit::UNIT_OPTIONAL));
}

// A duration option: a unit is read (duration_units) and the value held to 0 .. k_max_duration_s, NaN refused.
CLI::Option *add_duration(CLI::App *cmd, const std::string &name, std::optional<double> &into, const std::string &what)
{
  return cmd->add_option(name, into, what)
      ->transform(duration_units())
      ->check(CLI::Validator(
          [](std::string &text) -> std::string
          {
            const double value = std::stod(text);
            if (std::isfinite(value) && value >= 0 && value <= pgjq::cli::k_max_duration_s)
              return {};
            return "a duration from 0 to 100 years, not " + text + " s";
          },
          "DURATION"))
      ->type_name("DURATION");
}

// A boolean option's value: true or false (and yes/no, on/off, 1/0), anything else refused.
CLI::Validator boolean_word() { return CLI::IsMember({"true", "false", "yes", "no", "on", "off", "1", "0"}); }

} // namespace

int main(int argc, char **argv)
{
  using namespace pgjq::cli;
  options o;
  CLI::App app{"pgjq: look at and operate the job queues of a PostgreSQL database that has the pgjq extension.\n"
               "It connects as psql does (libpq's environment, or -d); the role it connects as decides what it "
               "sees and may do.\n"
               "Exit codes: 0 done, 1 failed, 2 bad usage, 3 no such job, queue or workflow, 4 permission denied."};
  app.set_version_flag("--version", PGJQ_VERSION);
  app.add_option("-d,--dbname", o.conninfo, "conninfo or URI (default: libpq's environment, PGHOST, PGDATABASE ...)");
  app.add_flag("--json", o.json, "print JSON for scripts instead of tables");
  app.require_subcommand(1);
  // Global options anywhere, as psql, git and kubectl users type them (`pgjq status -d app`): inherited by
  // every subcommand added below.
  app.fallthrough();

  auto *status = app.add_subcommand("status", "every queue at a glance: jobs by state and totals");

  job_query jq;
  auto *jobs = app.add_subcommand("jobs", "list jobs, newest first");
  jobs->add_option("-q,--queue", jq.queue, "only this queue");
  jobs->add_option("-s,--state", jq.state,
                   "only this state (as status counts them: pending is due now, scheduled later)")
      ->check(CLI::Validator(
          [](std::string &state) -> std::string
          {
            if (state == k_scheduled_state)
              return {};
            try
            {
              pgjq::parse_job_status(state); // the client's list of statuses is the one the command line knows
              return {};
            }
            catch (const pgjq::error &e)
            {
              return e.what();
            }
          },
          "STATE"));
  jobs->add_option("-t,--type", jq.type, "only this job type");
  jobs->add_option("-p,--payload", jq.payload, "only jobs whose payload contains this JSON ('{\"order\": 17}')");
  add_duration(jobs, "--older-than", jq.older_than_s, "only jobs enqueued at least this long ago (30s, 5min, 2h, 1d)");
  jobs->add_option("--limit", jq.limit, "at most this many (1-10000)")->check(CLI::Range(1, 10000));
  auto *before = jobs->add_option("--before", jq.before_id,
                                  "only jobs older than this job id: the last id of the previous page (keyset paging)");
  jobs->add_option("--offset", jq.offset, "skip this many first (slower than --before over a long history)")
      ->check(CLI::NonNegativeNumber)
      ->excludes(before);

  std::int64_t id = 0;
  auto *show = app.add_subcommand("show", "one job: payload, result, timeline, errors");
  show->add_option("id", id, "the job's id")->required();

  bulk_action bulk;
  auto *retry = app.add_subcommand("retry", "retry a failed job, or every failed job of a queue");
  auto *cancel = app.add_subcommand("cancel", "cancel an unfinished job, or the unfinished jobs of a queue");
  for (auto *cmd : {retry, cancel})
  {
    auto *one = cmd->add_option("id", bulk.id, "the job's id");
    auto *queue = cmd->add_option("-q,--queue", bulk.queue, "every matching job of this queue, in batches");
    one->excludes(queue);
    cmd->add_option("-t,--type", bulk.type, "with --queue: only this job type")->needs(queue);
    cmd->add_flag("-y,--yes", bulk.yes, "with --queue: do not ask for confirmation");
  }

  deletion del;
  auto *delete_cmd = app.add_subcommand("delete", "delete finished jobs of a queue from the history");
  delete_cmd->add_option("-q,--queue", del.queue, "the queue")->required();
  delete_cmd->add_option("-s,--state", del.state, "only this final state")
      ->check(CLI::IsMember({"completed", "failed", "cancelled"}));
  delete_cmd->add_option("-t,--type", del.type, "only this job type");
  add_duration(delete_cmd, "--older-than", del.older_than_s, "only jobs finished at least this long ago (1d, 2h)");
  delete_cmd->add_flag("-y,--yes", del.yes, "do not ask for confirmation");

  workflow_query wq;
  workflow_action wa;
  auto *workflow = app.add_subcommand("workflow", "list, show, cancel or retry workflows");
  workflow->require_subcommand(1);
  auto *workflow_list = workflow->add_subcommand("list", "list workflows, newest first");
  workflow_list->add_option("-s,--status", wq.status, "only this status")
      ->check(CLI::Validator(
          [](std::string &status) -> std::string
          {
            std::string known;
            for (const char *s : k_workflow_statuses)
            {
              if (status == s)
                return {};
              known += (known.empty() ? "" : ", ") + std::string(s);
            }
            return "unknown workflow status \"" + status + "\" (one of " + known + ")";
          },
          "STATUS"));
  workflow_list->add_option("--limit", wq.limit, "at most this many (1-10000)")->check(CLI::Range(1, 10000));
  auto *workflow_show = workflow->add_subcommand("show", "one workflow: its figures and its steps as a tree");
  auto *workflow_cancel = workflow->add_subcommand("cancel", "cancel a workflow's unfinished steps");
  auto *workflow_retry = workflow->add_subcommand("retry", "send a workflow's failed and cancelled steps back");
  for (auto *cmd : {workflow_show, workflow_cancel, workflow_retry})
    cmd->add_option("id", wa.id, "the workflow's id")->required();
  for (auto *cmd : {workflow_cancel, workflow_retry})
    cmd->add_flag("-y,--yes", wa.yes, "do not ask for confirmation");

  queue_change qc;
  auto *queue = app.add_subcommand("queue", "create, show, change, pause, resume or drop a queue");
  queue->require_subcommand(1);
  auto *create = queue->add_subcommand("create", "create a queue");
  auto *alter = queue->add_subcommand("alter", "change a queue's settings");
  for (auto *cmd : {create, alter})
  {
    cmd->add_option("name", qc.name, "the queue's name")->required();
    cmd->add_option("--max-pending", qc.max_pending, "unfinished jobs allowed before enqueues are refused");
    cmd->add_option("--max-attempts", qc.max_attempts, "attempts before a job is dead-lettered (1-1000)");
    add_duration(cmd, "--lease", qc.lease_s, "how long a claim holds a job without heartbeat");
    cmd->add_option("--max-running", qc.max_running,
                    "jobs claimed or running at once, across workers (alter: 0 removes)");
    add_duration(cmd, "--job-timeout", qc.job_timeout_s, "execution timeout of its jobs (alter: 0 removes it)");
    add_duration(cmd, "--retry-base", qc.retry_base_s, "delay before the first retry; doubles per attempt");
    add_duration(cmd, "--retry-cap", qc.retry_cap_s, "longest delay between retries");
    add_duration(cmd, "--retention", qc.retention_s, "how long finished jobs are kept");
    cmd->add_option("--keep-completed", qc.keep_completed, "false: a completed job is deleted at once (true, false)")
        ->check(boolean_word());
    cmd->add_option("--group-concurrency", qc.group_concurrency, "jobs of one group key live at once (1-10000)");
    cmd->add_option("--rate-limit", qc.rate_limit, "claims per --rate-interval, across workers (alter: 0 removes)");
    add_duration(cmd, "--rate-interval", qc.rate_interval_s, "the rate limit's interval (1ms to 1d; default 1s)");
  }
  create->add_flag("--fifo", qc.fifo, "one job in flight at a time, in order");
  auto *queue_show = queue->add_subcommand("show", "every setting of a queue");
  auto *pause = queue->add_subcommand("pause", "stop claims of a queue's jobs");
  auto *resume = queue->add_subcommand("resume", "let a paused queue's jobs be claimed again");
  auto *drop = queue->add_subcommand("drop", "drop a queue");
  for (auto *cmd : {queue_show, pause, resume, drop})
    cmd->add_option("name", qc.name, "the queue's name")->required();
  drop->add_flag("--force", qc.force, "also when it still has unfinished jobs (they are cancelled)");

  auto *schedules = app.add_subcommand("schedules", "periodic jobs: their cron, next and last run");
  schedule_action sa;
  auto *schedule = app.add_subcommand("schedule", "pause, resume or remove a periodic job");
  schedule->require_subcommand(1);
  auto *schedule_pause = schedule->add_subcommand("pause", "stop a schedule's firings until it is resumed");
  auto *schedule_resume = schedule->add_subcommand("resume", "let a paused schedule fire again, from now on");
  auto *schedule_remove = schedule->add_subcommand("remove", "remove a schedule (its jobs stay)");
  for (auto *cmd : {schedule_pause, schedule_resume, schedule_remove})
    cmd->add_option("name", sa.name, "the schedule's name")->required();

  enqueue_request er;
  auto *enqueue = app.add_subcommand("enqueue", "enqueue a job and print its id");
  enqueue->add_option("type", er.job_type, "the job's type")->required();
  enqueue->add_option("payload", er.payload, "a JSON object; - or none: read from stdin (none on a terminal: {})");
  enqueue->add_option("-q,--queue", er.queue, "the queue (default: default)");
  enqueue->add_option("--priority", er.priority, "higher runs first (0-32767, default 100)");
  add_duration(enqueue, "--delay", er.delay_s, "not before this long from now (30s, 5min, 2h, 1d)");
  enqueue->add_option("--unique-key", er.unique_key, "at most one unfinished job of the queue holds this key");
  enqueue->add_option("--max-attempts", er.max_attempts, "attempts before it is dead-lettered (default: the queue's)");
  enqueue->add_option("--header", er.headers,
                      "NAME=VALUE handed to the worker with the job, such as traceparent=00-...-01 (repeatable)");
  auto *maintenance = app.add_subcommand("maintenance", "the maintenance worker of each database and its duties");

  top_view tv;
  auto *top_cmd = app.add_subcommand("top", "a live view of the queues, refreshed in place (rates per second)");
  top_cmd->add_option("-i,--interval", tv.interval_s, "seconds between refreshes")->check(CLI::Range(0.1, 3600.0));
  top_cmd->add_option("-n,--iterations", tv.iterations, "refreshes before it exits (0: until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);

  metrics_serving ms;
  auto *metrics = app.add_subcommand("metrics", "the queues' figures in the Prometheus text format");
  metrics->add_option("--listen", ms.listen, "serve them over HTTP at /metrics instead (e.g. 127.0.0.1:9187)");
  metrics
      ->add_option("--token-file", ms.token_file,
                   "with --listen: file whose first line is the token scrapes must send (default: "
                   "$PGJQ_METRICS_TOKEN; none: one is made and printed)")
      ->check(CLI::ExistingFile);

  web_serving ws;
  auto *web = app.add_subcommand("web", "serve a live dashboard to a browser, on 127.0.0.1:9188 by default");
  web->add_option("--listen", ws.listen, "HOST:PORT to listen on");
  web->add_option("--token-file", ws.token_file,
                  "file whose first line is the access token (default: $PGJQ_WEB_TOKEN; none: one is made and printed)")
      ->check(CLI::ExistingFile);
  web->add_option("--sample-interval", ws.sample_interval_s, "seconds between the charts' samples (an hour is kept)")
      ->check(CLI::Range(0.2, 300.0));
  web->add_option("--refresh", ws.refresh_s, "seconds between the page's refreshes")->check(CLI::Range(0.2, 300.0));
  web->add_option("--trace-url", ws.trace_url,
                  "link each job's trace id (from its traceparent header) to this address, {trace_id} replaced "
                  "(https://jaeger.example/trace/{trace_id})")
      ->check(CLI::Validator(
          [](const std::string &url) -> std::string
          {
            const bool web_address = url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0;
            const bool plain = std::all_of(url.begin(), url.end(), [](unsigned char c) { return c > ' ' && c < 127; });
            if (!web_address || !plain || url.find("{trace_id}") == std::string::npos)
              return "must be an http:// or https:// address without spaces that contains {trace_id}";
            return {};
          },
          "URL"));

  std::string shell;
  auto *completion = app.add_subcommand("completion", "print a completion script: source <(pgjq completion bash)");
  completion->add_option("shell", shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  auto *manpage = app.add_subcommand("manpage", "print this manual as a man page, in roff (man -l <(pgjq manpage))");

  try
  {
    app.parse(argc, argv);
  }
  catch (const CLI::ParseError &e)
  {
    const int code = app.exit(e);
    return code == 0 ? 0 : k_exit_usage;
  }

  // Both write what the command tree says, with no database.
  if (*completion)
  {
    std::cout << completion_script(app, shell);
    return k_exit_ok;
  }
  if (*manpage)
  {
    std::cout << manual_page(app);
    return k_exit_ok;
  }

  return run_command(o,
                     [&](pgjq::connection &db) -> int
                     {
                       if (*status)
                         return show_status(o, db);
                       if (*jobs)
                         return list_jobs(o, db, jq);
                       if (*show)
                         return show_job(o, db, id);
                       if (*retry)
                         return retry_jobs(o, db, bulk);
                       if (*cancel)
                         return cancel_jobs(o, db, bulk);
                       if (*delete_cmd)
                         return delete_jobs(o, db, del);
                       if (*workflow_list)
                         return list_workflows(o, db, wq);
                       if (*workflow_show)
                         return show_workflow(o, db, wa.id);
                       if (*workflow_cancel)
                         return cancel_workflow(o, db, wa);
                       if (*workflow_retry)
                         return retry_workflow(o, db, wa);
                       if (*create)
                         return create_queue(o, db, qc);
                       if (*alter)
                         return alter_queue(o, db, qc);
                       if (*queue_show)
                         return show_queue(o, db, qc);
                       if (*pause || *resume)
                         return pause_queue(o, db, qc, pause->parsed());
                       if (*drop)
                         return drop_queue(o, db, qc);
                       if (*schedules)
                         return list_schedules(o, db);
                       if (*schedule_pause || *schedule_resume)
                         return pause_schedule(o, db, sa, schedule_pause->parsed());
                       if (*schedule_remove)
                         return remove_schedule(o, db, sa);
                       if (*enqueue)
                         return enqueue_job(o, db, er);
                       if (*maintenance)
                         return show_maintenance(o, db);
                       if (*top_cmd)
                         return top(o, db, tv);
                       if (*web)
                         return serve_web(db, ws);
                       if (*metrics)
                         return ms.listen.empty() ? print_metrics(o, db) : serve_metrics(db, ms);
                       return k_exit_usage;
                     });
}
