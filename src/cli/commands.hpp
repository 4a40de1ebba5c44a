// commands.hpp: what each command of the pgjq command line does, given a connection (main.cpp parses the
// arguments into these structs).
#pragma once

#include <pgjq/client.hpp>

#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace pgjq::cli
{

// Exit codes scripts branch on (main.cpp's help says them too).
constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;
constexpr int k_exit_not_found = 3;
constexpr int k_exit_denied = 4;

// Which failure an exception is, for the exit code (run_command) or the HTTP status (http_status_of).
enum class failure
{
  not_found,   // no such job, queue or workflow (or this role may not see it)
  denied,      // the role lacks the capability
  usage,       // a bad argument
  unavailable, // the session to the server is lost
  failed       // anything else
};
failure classify(const std::exception &e);

// The longest duration an option takes, in seconds (100 years of 365.25 days): beyond every server bound,
// which the server then names.
constexpr double k_max_duration_s = 100 * 365.25 * 86400;

struct options
{
  std::string conninfo;
  bool json = false;
};

// `jobs --state` takes the states `status` counts: a job status, and "scheduled" (pending, due later), so that
// "pending" means due now there as in `status`.
inline constexpr const char *k_scheduled_state = "scheduled";

struct job_query
{
  std::optional<std::string> queue, state, type, payload;
  std::optional<double> older_than_s;
  int limit = 50;
  std::int64_t offset = 0;
  std::optional<std::int64_t> before_id;
};

struct bulk_action
{
  std::optional<std::int64_t> id;
  std::optional<std::string> queue, type;
  bool yes = false;
};

// The statuses pgjq.workflows shows, which `workflow list --status` accepts: the server's own words, which it
// keeps as text (its CHECK constraint, and the view's 'waiting'); scripts/cli_tests.sh holds this copy to them.
inline constexpr const char *k_workflow_statuses[] = {"running", "waiting", "completed", "failed", "cancelled"};

// `pgjq delete`: finished jobs of a queue, by final state, type and how long ago they finished.
struct deletion
{
  std::string queue;
  std::optional<std::string> state, type;
  std::optional<double> older_than_s;
  bool yes = false;
};

struct workflow_query
{
  std::optional<std::string> status;
  int limit = 50;
};

struct workflow_action
{
  std::int64_t id = 0;
  bool yes = false;
};

struct queue_change
{
  std::string name;
  std::optional<std::int64_t> max_pending;
  std::optional<int> max_attempts, max_running, group_concurrency, rate_limit;
  std::optional<double> lease_s, job_timeout_s, retry_base_s, retry_cap_s, retention_s, rate_interval_s;
  std::optional<bool> keep_completed;
  bool fifo = false;
  bool force = false;
};

// `pgjq enqueue`: the payload is the argument, or stdin when it is "-" (or absent and stdin is no terminal).
struct enqueue_request
{
  std::string job_type;
  std::optional<std::string> payload;
  std::string queue = "default";
  int priority = 100;
  std::optional<double> delay_s;
  std::optional<std::string> unique_key;
  std::optional<int> max_attempts;
  std::vector<std::string> headers; // NAME=VALUE each
};

struct schedule_action
{
  std::string name;
};

struct top_view
{
  double interval_s = 2;
  int iterations = 0; // 0: until SIGINT or SIGTERM
};

struct metrics_serving
{
  std::string listen;     // host:port
  std::string token_file; // the access token's file (else $PGJQ_METRICS_TOKEN, else one made at start)
};

struct web_serving
{
  std::string listen = "127.0.0.1:9188";
  std::string token_file;        // the access token's file (else $PGJQ_WEB_TOKEN, else one made at start)
  double sample_interval_s = 10; // the charts' resolution; an hour of samples is kept
  double refresh_s = 2;          // how often the page reloads what it shows
  std::string trace_url;         // a job's trace id links here, {trace_id} replaced; empty: no link
};

// Connects, runs `command`, and turns what it throws into a message on stderr and an exit code.
int run_command(const options &o, const std::function<int(connection &)> &command);

// Each queue's jobs by state, its lifetime totals, and beside the failed total the failed jobs it keeps now.
int show_status(const options &o, connection &db);
// Exit 3 for a --queue that does not exist (or that this role may not see).
int list_jobs(const options &o, connection &db, const job_query &q);
int show_job(const options &o, connection &db, std::int64_t id);
int retry_jobs(const options &o, connection &db, const bulk_action &a);
int cancel_jobs(const options &o, connection &db, const bulk_action &a);
// By queue, the three count the matching jobs and ask with that count (unless --yes) before they act, and
// show their progress against it.
int delete_jobs(const options &o, connection &db, const deletion &d);
int list_workflows(const options &o, connection &db, const workflow_query &q);
// The workflow's figures, then its steps as a tree: each under the step it depends on (a step after several
// is drawn once, under the one deepest in the graph, naming the others).
int show_workflow(const options &o, connection &db, std::int64_t id);
// Both say how many steps they touch and ask for confirmation (unless a.yes) before they do.
int cancel_workflow(const options &o, connection &db, const workflow_action &a);
int retry_workflow(const options &o, connection &db, const workflow_action &a);
int create_queue(const options &o, connection &db, const queue_change &c);
int alter_queue(const options &o, connection &db, const queue_change &c);
int pause_queue(const options &o, connection &db, const queue_change &c, bool pause);
// Every setting of the queue (exit 3 when there is none of that name).
int show_queue(const options &o, connection &db, const queue_change &c);
int drop_queue(const options &o, connection &db, const queue_change &c);
int list_schedules(const options &o, connection &db);
// Pause, resume or remove one schedule; exit 3 when there is no such schedule (that this role may see).
int pause_schedule(const options &o, connection &db, const schedule_action &a, bool pause);
int remove_schedule(const options &o, connection &db, const schedule_action &a);
// Enqueues one job and prints its id (refusing a payload that is not a JSON object, exit 2).
int enqueue_job(const options &o, connection &db, const enqueue_request &r);
int show_maintenance(const options &o, connection &db);
// A live view, refreshed in place every interval: each queue's jobs by state and its completions and failures
// per second since the last refresh (--json: one JSON line per refresh).
int top(const options &o, connection &db, const top_view &t);
int print_metrics(const options &o, connection &db);
// Serves GET /metrics until SIGINT or SIGTERM; each scrape reads pgjq.metrics() anew.
int serve_metrics(connection &db, const metrics_serving &s);
// Serves the dashboard (web_server.cpp) until SIGINT or SIGTERM.
int serve_web(connection &db, const web_serving &w);

} // namespace pgjq::cli
