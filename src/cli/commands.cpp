// commands.cpp: the commands of the pgjq command line (see commands.hpp). Every queue decision stays in the
// server: each command is one or a few calls of the C++ client.
#include "commands.hpp"

#include "output.hpp"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <iterator>
#include <sstream>

#include <csignal>
#include <iostream>
#include <map>
#include <thread>
#include <unistd.h>

#include <libpq-fe.h>

namespace pgjq::cli
{

namespace
{

// main.cpp holds every duration to k_max_duration_s, so the product fits.
std::chrono::microseconds seconds(double value)
{
  return std::chrono::microseconds(static_cast<std::int64_t>(value * 1e6));
}

std::string or_dash(const std::optional<std::string> &value) { return value ? *value : "-"; }

// A question on the terminal; scripts say --yes instead (without a terminal the answer is no).
bool confirmed(const std::string &question)
{
  if (!isatty(STDIN_FILENO))
    return false;
  std::cerr << question << " [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "y" || answer == "yes";
}

// The most jobs a confirmation counts: a figure past it reads "more than", so the question never scans
// a whole history.
constexpr std::int64_t k_max_counted_jobs = 1000000;

std::string jobs_text(std::int64_t n, const std::string &what)
{
  const std::string figure =
      n >= k_max_counted_jobs ? "more than " + std::to_string(k_max_counted_jobs) : std::to_string(n);
  return figure + ' ' + what + (n == 1 ? " job" : " jobs");
}

// The queue's settings, or (empty) after saying on stderr that there is no such queue.
std::optional<queue_info> queue_or_complain(connection &db, const std::string &name)
{
  std::optional<queue_info> q = db.get_queue(name);
  if (!q)
    std::cerr << "pgjq: queue " << printable(name) << " does not exist (or this role may not see it)\n";
  return q;
}

// What a bulk command does to the jobs of a queue: how it is asked and told, which jobs it counts first,
// and one batch of it.
struct bulk_operation
{
  const char *ask;  // "Retry"
  const char *verb; // "retried"
  std::string what; // "failed", "unfinished": the jobs it takes
  std::vector<job_status> statuses;
  std::optional<time_point> finished_before;
  std::function<std::int64_t(const job_filter &)> batch;
};

// Counts the jobs first, asks (unless --yes) with that count, then calls the batch (1000 jobs per call,
// each its own transaction, so no lock is held long) until it handles none, showing the progress on stderr
// against the count. The count is what the listing shows; the server may skip a few it finds held.
int bulk(const options &o, connection &db, const bulk_action &a, const bulk_operation &op)
{
  if (!a.queue)
  {
    std::cerr << "pgjq: give a job's id, or --queue for every matching job of a queue\n";
    return k_exit_usage;
  }
  if (!queue_or_complain(db, *a.queue))
    return k_exit_not_found;
  job_listing listing;
  listing.queue = a.queue;
  listing.job_type = a.type;
  listing.finished_before = op.finished_before;
  std::int64_t expected = 0;
  for (job_status status : op.statuses)
  {
    listing.status = status;
    expected = std::min(k_max_counted_jobs, expected + db.count_jobs(listing, k_max_counted_jobs));
  }
  const std::string which = jobs_text(expected, op.what) + (a.type ? " of type " + printable(*a.type) : "") +
                            " of queue " + printable(*a.queue);
  if (expected == 0)
  {
    if (o.json)
      std::cout << nlohmann::json{{"queue", *a.queue}, {"jobs", 0}}.dump() << '\n';
    else
      std::cout << "no " << op.what << " jobs" << (a.type ? " of type " + printable(*a.type) : "") << " of queue "
                << printable(*a.queue) << '\n';
    return k_exit_ok;
  }
  if (!a.yes && !confirmed(std::string(op.ask) + ' ' + which + '?'))
  {
    std::cerr << "pgjq: not confirmed (pass --yes when no terminal can answer)\n";
    return k_exit_usage;
  }
  job_filter filter;
  filter.job_type = a.type;
  filter.before = op.finished_before;
  filter.max_jobs = 1000;
  const bool progress = !o.json && isatty(STDERR_FILENO);
  std::int64_t total = 0;
  for (std::int64_t n; (n = op.batch(filter)) > 0;)
  {
    total += n;
    if (progress)
      std::cerr << '\r' << op.verb << ' ' << total << " of " << expected << " jobs..." << std::flush;
  }
  if (progress)
    std::cerr << '\r' << std::string(std::strlen(op.verb) + 48, ' ') << '\r';
  if (o.json)
    std::cout << nlohmann::json{{"queue", *a.queue}, {"jobs", total}}.dump() << '\n';
  else
    std::cout << op.verb << ' ' << total << " jobs of queue " << printable(*a.queue) << '\n';
  return k_exit_ok;
}

// Whether the database has the extension (false too when that cannot be read).
bool extension_installed(connection &db)
{
  PGresult *res = PQexec(db.native_handle(), "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pgjq'");
  const bool installed = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
  PQclear(res);
  return installed;
}

int no_such_schedule(const std::string &name)
{
  std::cerr << "pgjq: schedule " << printable(name) << " does not exist (or this role may not see it)\n";
  return k_exit_not_found;
}

int done(const options &o, const std::string &what)
{
  if (o.json)
    std::cout << nlohmann::json{{"done", what}}.dump() << '\n';
  else
    std::cout << what << '\n';
  return k_exit_ok;
}

queue_options settings_of(const queue_change &c)
{
  queue_options q;
  q.max_pending = c.max_pending;
  q.max_attempts = c.max_attempts;
  q.max_running = c.max_running;
  const auto duration = [](const std::optional<double> &s)
  { return s ? std::optional<std::chrono::microseconds>(seconds(*s)) : std::nullopt; };
  q.lease = duration(c.lease_s);
  q.job_timeout = duration(c.job_timeout_s);
  q.retry_base = duration(c.retry_base_s);
  q.retry_cap = duration(c.retry_cap_s);
  q.retention = duration(c.retention_s);
  q.rate_interval = duration(c.rate_interval_s);
  q.keep_completed = c.keep_completed;
  q.group_concurrency = c.group_concurrency;
  q.rate_limit = c.rate_limit;
  return q;
}

// A listing: JSON (an array of to_json) for scripts, else a table of row_of(item) under header.
template <typename Item, typename RowOf>
int print_list(const options &o, const std::vector<Item> &items, const std::vector<std::string> &header, RowOf row_of)
{
  if (o.json)
  {
    std::cout << json_array(items).dump() << '\n';
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  for (const Item &item : items)
    rows.push_back(row_of(item));
  print_table(std::cout, header, rows);
  return k_exit_ok;
}

} // namespace

failure classify(const std::exception &e)
{
  if (dynamic_cast<const job_not_found *>(&e) || dynamic_cast<const unknown_queue *>(&e))
    return failure::not_found;
  if (dynamic_cast<const permission_denied *>(&e))
    return failure::denied;
  if (dynamic_cast<const bad_argument *>(&e))
    return failure::usage;
  if (dynamic_cast<const connection_lost *>(&e))
    return failure::unavailable;
  return failure::failed;
}

int run_command(const options &o, const std::function<int(connection &)> &command)
{
  std::optional<connection> db;
  try
  {
    db.emplace(o.conninfo);
    return command(*db);
  }
  catch (const std::exception &e)
  {
    // The first statement of a database without the extension finds no schema pgjq, or no table or function
    // of it; so does a statement this version has and the database's older version lacks: asked which.
    const auto *server_error = dynamic_cast<const pgjq::error *>(&e);
    if (server_error && db && db->is_open() &&
        (server_error->sqlstate() == "3F000" || server_error->sqlstate() == "42P01" ||
         server_error->sqlstate() == "42883") &&
        std::string(e.what()).find("pgjq") != std::string::npos && !extension_installed(*db))
    {
      std::cerr << "pgjq: pgjq is not installed in database " << printable(PQdb(db->native_handle()))
                << " (CREATE EXTENSION pgjq)\n";
      return k_exit_failed;
    }
    std::cerr << "pgjq: " << printable(e.what(), true) << '\n';
    switch (classify(e))
    {
    case failure::not_found:
      return k_exit_not_found;
    case failure::denied:
      return k_exit_denied;
    case failure::usage:
      return k_exit_usage;
    case failure::unavailable:
    case failure::failed:
      break;
    }
    return k_exit_failed;
  }
}

int show_status(const options &o, connection &db)
{
  if (db.maintenance_served() == false)
    std::cerr
        << "pgjq: WARNING: no maintenance worker serves this database: schedules do not fire and job timeouts are "
           "not enforced. Add pgjq to shared_preload_libraries and restart the server, or run SELECT "
           "pgjq.start_worker() in this database.\n";
  std::vector<queue_status> rows;
  for (queue_stats &s : db.stats())
  {
    job_listing failed;
    failed.queue = s.queue;
    failed.status = job_status::failed;
    const std::int64_t now = db.count_jobs(failed, k_max_counted_jobs);
    rows.push_back({std::move(s), now});
  }
  return print_list(o, rows,
                    {"QUEUE", "PENDING", "SCHEDULED", "WAITING", "CLAIMED", "RUNNING", "COMPLETED", "FAILED (NOW)",
                     "CANCELLED", "OLDEST", ""},
                    [](const queue_status &row) -> std::vector<std::string>
                    {
                      const queue_stats &s = row.stats;
                      const std::string now = row.failed_now >= k_max_counted_jobs
                                                  ? ">" + std::to_string(k_max_counted_jobs)
                                                  : std::to_string(row.failed_now);
                      return {s.queue,
                              std::to_string(s.pending),
                              std::to_string(s.scheduled),
                              std::to_string(s.waiting),
                              std::to_string(s.claimed),
                              std::to_string(s.running),
                              std::to_string(s.completed),
                              std::to_string(s.failed) + " (" + now + ")",
                              std::to_string(s.cancelled),
                              s.oldest_runnable_age ? format_age(*s.oldest_runnable_age) : "-",
                              s.paused ? "paused" : ""};
                    });
}

int list_jobs(const options &o, connection &db, const job_query &q)
{
  job_listing l;
  l.queue = q.queue;
  l.job_type = q.type;
  if (q.state)
  {
    const bool scheduled = *q.state == k_scheduled_state;
    l.status = scheduled ? job_status::pending : parse_job_status(*q.state);
    if (l.status == job_status::pending)
      l.due_now = !scheduled;
  }
  if (q.older_than_s)
    l.older_than = seconds(*q.older_than_s);
  l.limit = q.limit;
  l.offset = q.offset;
  l.before_id = q.before_id;
  if (q.payload)
  {
    try
    {
      l.payload_contains = nlohmann::json::parse(*q.payload);
    }
    catch (const nlohmann::json::parse_error &)
    {
      std::cerr << "pgjq: --payload must be JSON that the payloads are to contain, such as '{\"order\": 17}'\n";
      return k_exit_usage;
    }
  }
  if (q.queue && !queue_or_complain(db, *q.queue))
    return k_exit_not_found;
  return print_list(o, db.jobs(l), {"ID", "QUEUE", "TYPE", "STATUS", "ATTEMPTS", "CREATED", "LAST ERROR"},
                    [](const job &j) -> std::vector<std::string>
                    {
                      std::string error = j.last_error ? *j.last_error : "";
                      if (error.size() > 60)
                        error = error.substr(0, 57) + "...";
                      return {std::to_string(j.id),
                              j.queue,
                              j.type,
                              std::string(to_string(j.status)),
                              std::to_string(j.attempts) + "/" + std::to_string(j.max_attempts),
                              format_time(j.created_at),
                              error};
                    });
}

int show_job(const options &o, connection &db, std::int64_t id)
{
  const std::optional<job> j = db.get_job(id);
  if (!j)
  {
    std::cerr << "pgjq: job " << id << " does not exist (or this role may not read it)\n";
    return k_exit_not_found;
  }
  const std::vector<job_error> errors = db.job_errors(id);
  if (o.json)
  {
    std::cout << to_json(*j, errors).dump() << '\n';
    return k_exit_ok;
  }
  // Every text a producer or worker chose goes through printable(): none may drive the terminal.
  const auto text = [](const std::string &value) { return printable(value); };
  std::cout << "job " << j->id << "  " << to_string(j->status) << "  queue " << text(j->queue) << "  type "
            << text(j->type) << "  priority " << j->priority << '\n'
            << "attempts    " << j->attempts << " of " << j->max_attempts << '\n'
            << "created     " << format_time(j->created_at) << '\n'
            << "due         " << format_time(j->run_at) << '\n';
  if (j->lease_expires_at)
    std::cout << "leased to   " << text(or_dash(j->worker_id)) << " until " << format_time(*j->lease_expires_at)
              << '\n';
  if (j->progress)
    std::cout << "progress    " << *j->progress << "% " << text(or_dash(j->current_stage)) << '\n';
  if (j->finished_at)
    std::cout << "finished    " << format_time(*j->finished_at) << " by " << text(or_dash(j->worker_id)) << '\n';
  if (j->unique_key)
    std::cout << "unique key  " << text(*j->unique_key) << '\n';
  if (j->group_key)
    std::cout << "group key   " << text(*j->group_key) << '\n';
  if (j->last_error)
    std::cout << "last error  " << text(*j->last_error) << '\n';
  for (const auto &[name, value] : j->headers)
    std::cout << "header      " << text(name) << ": " << text(value) << '\n';
  if (!errors.empty())
  {
    std::cout << "failed attempts";
    if (errors.front().failures_not_kept > 0)
      std::cout << " (" << errors.front().failures_not_kept << " older not kept)";
    std::cout << '\n';
    for (const job_error &e : errors)
    {
      std::cout << "  #" << e.failure << " attempt " << e.attempt << "  " << format_time(e.failed_at) << "  "
                << text(or_dash(e.worker_id));
      if (e.started_at)
        std::cout << "  ran "
                  << format_age(std::chrono::duration_cast<std::chrono::microseconds>(e.failed_at - *e.started_at));
      std::cout << "\n    " << text(e.error) << '\n';
    }
  }
  std::cout << "payload\n" << printable(j->payload().dump(2), true) << '\n';
  if (j->result())
    std::cout << "result\n" << printable(j->result()->dump(2), true) << '\n';
  return k_exit_ok;
}

int retry_jobs(const options &o, connection &db, const bulk_action &a)
{
  if (a.id)
  {
    db.retry(*a.id);
    return done(o, "job " + std::to_string(*a.id) + " is pending again");
  }
  return bulk(o, db, a, {"Retry", "retried", "failed", {job_status::failed}, std::nullopt, [&](const job_filter &f) {
                           return db.retry_failed(*a.queue, f);
                         }});
}

int cancel_jobs(const options &o, connection &db, const bulk_action &a)
{
  if (a.id)
  {
    if (!db.cancel(*a.id))
    {
      std::cerr << "pgjq: job " << *a.id << " had already finished\n";
      return k_exit_failed;
    }
    return done(o, "job " + std::to_string(*a.id) + " is cancelled");
  }
  return bulk(o, db, a,
              {"Cancel",
               "cancelled",
               "unfinished",
               {job_status::waiting, job_status::pending, job_status::claimed, job_status::running},
               std::nullopt,
               [&](const job_filter &f) { return db.cancel_jobs(*a.queue, f); }});
}

int delete_jobs(const options &o, connection &db, const deletion &d)
{
  bulk_action a;
  a.queue = d.queue;
  a.type = d.type;
  a.yes = d.yes;
  bulk_operation op{"Delete", "deleted", d.state ? *d.state : "finished", {}, std::nullopt, {}};
  if (d.state)
    op.statuses = {parse_job_status(*d.state)};
  else
    op.statuses = {job_status::completed, job_status::failed, job_status::cancelled};
  if (d.older_than_s)
    op.finished_before = clock::now() - std::chrono::duration_cast<clock::duration>(seconds(*d.older_than_s));
  const std::optional<job_status> status = d.state ? std::optional<job_status>(op.statuses.front()) : std::nullopt;
  op.batch = [&db, &d, status](job_filter f)
  {
    f.status = status;
    return db.delete_jobs(d.queue, f);
  };
  return bulk(o, db, a, op);
}

int list_workflows(const options &o, connection &db, const workflow_query &q)
{
  return print_list(o, db.workflows(q.status, q.limit),
                    {"ID", "NAME", "KEY", "STATUS", "STEPS", "FAILED", "CREATED", "FINISHED"},
                    [](const workflow_info &w) -> std::vector<std::string>
                    {
                      return {std::to_string(w.id),
                              w.name,
                              or_dash(w.key),
                              w.status,
                              std::to_string(w.steps_finished) + "/" + std::to_string(w.steps_total),
                              std::to_string(w.steps_failed),
                              format_time(w.created_at),
                              w.finished_at ? format_time(*w.finished_at) : "-"};
                    });
}

namespace
{

// The workflow, or (empty) after saying on stderr that there is none by that id.
std::optional<workflow_info> workflow_or_complain(connection &db, std::int64_t id)
{
  std::optional<workflow_info> w = db.get_workflow(id);
  if (!w)
    std::cerr << "pgjq: workflow " << id << " does not exist (or this role may not read it)\n";
  return w;
}

std::int64_t steps_where(const std::vector<workflow_step> &steps, const std::function<bool(job_status)> &test)
{
  return std::count_if(steps.begin(), steps.end(), [&](const workflow_step &s) { return test(s.status); });
}

std::string steps_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " step" : " steps"); }

// What cancel_workflow and retry_workflow share: the question (unless --yes), the call, and its count.
int change_workflow(const options &o, const workflow_action &a, const workflow_info &w, const std::string &question,
                    const char *verb, const std::function<std::int64_t()> &call)
{
  if (!a.yes && !confirmed(question))
  {
    std::cerr << "pgjq: not confirmed (pass --yes when no terminal can answer)\n";
    return k_exit_usage;
  }
  const std::int64_t n = call();
  if (o.json)
    std::cout << nlohmann::json{{"workflow", w.id}, {"steps", n}}.dump() << '\n';
  else
    std::cout << "workflow " << w.id << ": " << steps_text(n) << ' ' << verb << '\n';
  return k_exit_ok;
}

} // namespace

int show_workflow(const options &o, connection &db, std::int64_t id)
{
  const std::optional<workflow_info> w = workflow_or_complain(db, id);
  if (!w)
    return k_exit_not_found;
  const std::vector<workflow_step> steps = db.workflow_steps(id);
  if (o.json)
  {
    std::cout << nlohmann::json{{"workflow", to_json(*w)}, {"steps", json_array(steps)}}.dump() << '\n';
    return k_exit_ok;
  }
  // Names, keys, roles, errors and events were chosen by producers and workers: printable() each.
  std::cout << "workflow " << w->id << "  " << printable(w->status) << "  name " << printable(w->name)
            << "  on failure " << printable(w->on_failure) << '\n';
  if (w->key)
    std::cout << "key         " << printable(*w->key) << '\n';
  std::cout << "steps       " << w->steps_total << ": " << w->steps_finished << " finished, " << w->steps_failed
            << " failed or cancelled\n"
            << "started by  " << printable(w->started_by) << '\n';
  if (w->parent_job)
    std::cout << "parent job  " << *w->parent_job << '\n';
  std::cout << "created     " << format_time(w->created_at) << '\n';
  if (w->finished_at)
    std::cout << "finished    " << format_time(*w->finished_at) << '\n';
  std::cout << '\n';
  print_step_tree(std::cout, steps);
  return k_exit_ok;
}

int cancel_workflow(const options &o, connection &db, const workflow_action &a)
{
  const std::optional<workflow_info> w = workflow_or_complain(db, a.id);
  if (!w)
    return k_exit_not_found;
  const std::vector<workflow_step> steps = db.workflow_steps(a.id);
  const std::int64_t unfinished = steps_where(steps, [](job_status s) { return !is_final(s); });
  if (unfinished == 0)
  {
    std::cerr << "pgjq: workflow " << a.id << " had already finished (" << printable(w->status) << ")\n";
    return k_exit_failed;
  }
  return change_workflow(o, a, *w,
                         "Cancel workflow " + std::to_string(a.id) + " \"" + printable(w->name) + "\", its " +
                             std::to_string(unfinished) + " unfinished of " +
                             steps_text(static_cast<std::int64_t>(steps.size())) + "?",
                         "cancelled", [&] { return db.cancel_workflow(a.id); });
}

int retry_workflow(const options &o, connection &db, const workflow_action &a)
{
  const std::optional<workflow_info> w = workflow_or_complain(db, a.id);
  if (!w)
    return k_exit_not_found;
  const std::vector<workflow_step> steps = db.workflow_steps(a.id);
  const std::int64_t failed = steps_where(steps, [](job_status s) { return s == job_status::failed; });
  const std::int64_t cancelled = steps_where(steps, [](job_status s) { return s == job_status::cancelled; });
  if (failed + cancelled == 0)
  {
    std::cerr << "pgjq: workflow " << a.id << " has no failed or cancelled step (" << printable(w->status) << ")\n";
    return k_exit_failed;
  }
  return change_workflow(o, a, *w,
                         "Retry workflow " + std::to_string(a.id) + " \"" + printable(w->name) + "\", its " +
                             std::to_string(failed) + " failed and " + std::to_string(cancelled) + " cancelled of " +
                             steps_text(static_cast<std::int64_t>(steps.size())) +
                             " (the steps after them wait again)?",
                         "retried", [&] { return db.retry_workflow(a.id); });
}

int create_queue(const options &o, connection &db, const queue_change &c)
{
  queue_options q = settings_of(c);
  if (c.fifo)
    q.fifo = true;
  db.create_queue(c.name, q);
  return done(o, "queue " + c.name + " created");
}

int alter_queue(const options &o, connection &db, const queue_change &c)
{
  db.alter_queue(c.name, settings_of(c));
  return done(o, "queue " + c.name + " changed");
}

int show_queue(const options &o, connection &db, const queue_change &c)
{
  const std::optional<queue_info> q = db.get_queue(c.name);
  if (!q)
  {
    std::cerr << "pgjq: queue " << printable(c.name) << " does not exist\n";
    return k_exit_not_found;
  }
  if (o.json)
  {
    std::cout << to_json(*q).dump() << '\n';
    return k_exit_ok;
  }
  const auto yes_no = [](bool value) { return value ? "yes" : "no"; };
  const auto number_or = [](const auto &value, const char *none)
  { return value ? std::to_string(*value) : std::string(none); };
  std::cout << "queue              " << q->queue << (q->paused ? "  (paused)" : "") << '\n'
            << "max pending        " << number_or(q->max_pending, "no limit") << '\n'
            << "fifo               " << yes_no(q->fifo) << '\n'
            << "max attempts       " << q->max_attempts << '\n'
            << "lease              " << format_age(q->lease) << '\n'
            << "retry base, cap    " << format_age(q->retry_base) << ", " << format_age(q->retry_cap) << '\n'
            << "retention          " << format_age(q->retention) << '\n'
            << "keep completed     " << yes_no(q->keep_completed) << '\n'
            << "group concurrency  " << q->group_concurrency << '\n'
            << "max running        " << number_or(q->max_running, "no cap") << '\n'
            << "rate limit         "
            << (q->rate_limit ? std::to_string(*q->rate_limit) + " per " + format_age(q->rate_interval) : "none")
            << '\n'
            << "job timeout        " << (q->job_timeout ? format_age(*q->job_timeout) : "none") << '\n'
            << "created            " << format_time(q->created_at) << '\n';
  return k_exit_ok;
}

int pause_queue(const options &o, connection &db, const queue_change &c, bool pause)
{
  if (pause)
    db.pause_queue(c.name);
  else
    db.resume_queue(c.name);
  return done(o, "queue " + c.name + (pause ? " paused" : " resumed"));
}

int drop_queue(const options &o, connection &db, const queue_change &c)
{
  db.drop_queue(c.name, c.force);
  return done(o, "queue " + c.name + " dropped");
}

int list_schedules(const options &o, connection &db)
{
  return print_list(o, db.schedules(),
                    {"NAME", "CRON", "TIME ZONE", "QUEUE", "JOB TYPE", "NEXT RUN", "LAST RUN", "JOBS", "LAST ERROR"},
                    [](const schedule_info &s) -> std::vector<std::string>
                    {
                      return {s.name,
                              s.cron,
                              s.time_zone,
                              s.queue,
                              s.job_type,
                              s.next_run ? format_time(*s.next_run) : (s.paused ? "paused" : "-"),
                              s.last_run ? format_time(*s.last_run) : "-",
                              std::to_string(s.jobs_enqueued),
                              or_dash(s.last_error)};
                    });
}

int pause_schedule(const options &o, connection &db, const schedule_action &a, bool pause)
{
  if (!(pause ? db.pause_schedule(a.name) : db.resume_schedule(a.name)))
    return no_such_schedule(a.name);
  return done(o, "schedule " + a.name + (pause ? " paused" : " resumed"));
}

int remove_schedule(const options &o, connection &db, const schedule_action &a)
{
  if (!db.unschedule(a.name))
    return no_such_schedule(a.name);
  return done(o, "schedule " + a.name + " removed");
}

int enqueue_job(const options &o, connection &db, const enqueue_request &r)
{
  std::string text = "{}";
  if (r.payload && *r.payload != "-")
    text = *r.payload;
  else if (r.payload || !isatty(STDIN_FILENO))
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  nlohmann::json payload = nlohmann::json::parse(text, nullptr, false);
  if (payload.is_discarded() || !payload.is_object())
  {
    std::cerr << "pgjq: the payload must be a JSON object, not: " << printable(text.substr(0, 200)) << '\n';
    return k_exit_usage;
  }
  enqueue_options e;
  e.queue = r.queue;
  e.priority = r.priority;
  e.max_attempts = r.max_attempts;
  e.unique_key = r.unique_key;
  for (const std::string &header : r.headers)
  {
    const std::size_t equals = header.find('=');
    if (equals == 0 || equals == std::string::npos)
    {
      std::cerr << "pgjq: --header must be NAME=VALUE, not: " << printable(header.substr(0, 200)) << '\n';
      return k_exit_usage;
    }
    if (!e.headers.emplace(header.substr(0, equals), header.substr(equals + 1)).second)
    {
      std::cerr << "pgjq: --header " << printable(header.substr(0, equals)) << " is given twice\n";
      return k_exit_usage;
    }
  }
  if (r.delay_s)
    e.run_at = std::chrono::time_point_cast<time_point::duration>(time_point::clock::now() + seconds(*r.delay_s));
  const std::int64_t id = db.enqueue(r.job_type, payload, e);
  if (o.json)
    std::cout << nlohmann::json{{"id", id}}.dump() << '\n';
  else
    std::cout << id << '\n';
  return k_exit_ok;
}

int show_maintenance(const options &o, connection &db)
{
  return print_list(o, db.maintenance(),
                    {"DATABASE", "WORKER", "DUTY", "RUNS", "DONE", "ERRORS", "LAST RUN", "NEXT RUN", "LAST ERROR"},
                    [](const maintenance_duty &d) -> std::vector<std::string>
                    {
                      return {d.database,
                              d.state,
                              d.duty,
                              std::to_string(d.runs),
                              std::to_string(d.done),
                              std::to_string(d.errors),
                              d.last_run ? format_time(*d.last_run) : "-",
                              d.next_run ? format_time(*d.next_run) : "-",
                              or_dash(d.last_error)};
                    });
}

namespace
{
volatile std::sig_atomic_t s_top_stopped = 0;
}

int top(const options &o, connection &db, const top_view &t)
{
  std::signal(SIGINT, [](int) { s_top_stopped = 1; });
  std::signal(SIGTERM, [](int) { s_top_stopped = 1; });
  const bool terminal = isatty(STDOUT_FILENO) && !o.json;
  std::map<std::string, queue_stats> before;
  auto then = std::chrono::steady_clock::now();
  for (int frame = 0; !s_top_stopped && (t.iterations == 0 || frame < t.iterations); ++frame)
  {
    if (frame > 0)
    {
      // Sleep in short steps, so that Ctrl-C ends the view at once.
      const auto until = then + seconds(t.interval_s);
      while (!s_top_stopped && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (s_top_stopped)
        break;
    }
    const std::vector<queue_stats> now_stats = db.stats();
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - then).count();
    auto rate = [&](const queue_stats &s, std::int64_t queue_stats::*total) -> std::optional<double>
    {
      const auto was = before.find(s.queue);
      if (was == before.end() || elapsed <= 0)
        return std::nullopt;
      return static_cast<double>(s.*total - was->second.*total) / elapsed;
    };
    auto rate_text = [](std::optional<double> r)
    {
      if (!r)
        return std::string("-");
      std::ostringstream out;
      out << std::fixed << std::setprecision(1) << *r;
      return out.str();
    };
    if (o.json)
    {
      nlohmann::json queues = nlohmann::json::array();
      for (const queue_stats &s : now_stats)
      {
        nlohmann::json q = to_json(s);
        const auto completed = rate(s, &queue_stats::completed), failed = rate(s, &queue_stats::failed);
        q["completed_per_second"] = completed ? nlohmann::json(*completed) : nlohmann::json(nullptr);
        q["failed_per_second"] = failed ? nlohmann::json(*failed) : nlohmann::json(nullptr);
        queues.push_back(q);
      }
      std::cout << nlohmann::json{{"at", format_time(clock::now())}, {"queues", queues}}.dump() << std::endl;
    }
    else
    {
      if (terminal)
        std::cout << "\033[H\033[2J"; // home and clear: refreshed in place
      std::cout << "pgjq top  " << format_time(clock::now()) << "  every " << t.interval_s << " s (Ctrl-C quits)\n\n";
      std::vector<std::vector<std::string>> rows;
      for (const queue_stats &s : now_stats)
        rows.push_back({s.queue, std::to_string(s.pending), std::to_string(s.scheduled + s.waiting),
                        std::to_string(s.claimed + s.running), rate_text(rate(s, &queue_stats::completed)),
                        rate_text(rate(s, &queue_stats::failed)), std::to_string(s.completed), std::to_string(s.failed),
                        s.oldest_runnable_age ? format_age(*s.oldest_runnable_age) : "-", s.paused ? "paused" : ""});
      print_table(std::cout,
                  {"QUEUE", "PENDING", "LATER", "IN FLIGHT", "DONE/S", "FAILED/S", "COMPLETED", "FAILED", "OLDEST", ""},
                  rows);
      std::cout << std::flush;
    }
    before.clear();
    for (const queue_stats &s : now_stats)
      before.emplace(s.queue, s);
    then = now;
  }
  return k_exit_ok;
}

int print_metrics(const options &, connection &db)
{
  std::cout << db.metrics();
  return k_exit_ok;
}

} // namespace pgjq::cli
