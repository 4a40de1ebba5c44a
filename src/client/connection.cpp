// connection.cpp: the calls of the SQL API, each one statement of the catalogue (statements.hpp) run with
// its parameters bound as text. The session itself is in session.cpp, the pipeline in pipeline.cpp.
#include <pgjq/connection.hpp>

#include <algorithm>
#include <iterator>

#include "codec.hpp"
#include "result.hpp"
#include "rows.hpp"
#include "statements.hpp"

namespace pgjq
{

namespace
{

namespace calls = detail::calls;
using params = std::vector<std::optional<std::string>>;

std::string text(std::int64_t value) { return std::to_string(value); }
std::string text(bool value) { return value ? "true" : "false"; }

template <typename T> std::optional<std::string> opt(const std::optional<T> &value)
{
  if (!value)
    return std::nullopt;
  return text(*value);
}

std::optional<std::string> opt(const std::optional<std::chrono::microseconds> &value)
{
  if (!value)
    return std::nullopt;
  return detail::format_interval(*value);
}

std::optional<std::string> opt(const std::optional<int> &value)
{
  if (!value)
    return std::nullopt;
  return text(static_cast<std::int64_t>(*value));
}

std::optional<std::string> timestamp_param(const std::optional<time_point> &value)
{
  if (!value)
    return std::nullopt;
  return detail::format_timestamp(*value);
}

// A batch's keys: NULL for none given.
std::optional<std::string> keys(const std::vector<std::optional<std::string>> &values)
{
  if (values.empty())
    return std::nullopt;
  return detail::encode_text_array(values);
}

// The arguments of enqueue and try_enqueue, or (batch) of enqueue_batch, which takes one unique and group
// key per payload instead of one for the job.
params enqueue_params(const std::string &job_type, const std::string &payload, const enqueue_options &o, bool batch)
{
  params p = {job_type,
              payload,
              o.queue,
              text(static_cast<std::int64_t>(o.priority)),
              o.run_at ? std::optional<std::string>(detail::format_timestamp(*o.run_at)) : std::nullopt,
              opt(o.max_attempts),
              batch ? keys(o.unique_keys) : o.unique_key,
              batch ? keys(o.group_keys) : o.group_key,
              o.depends_on.empty() ? std::nullopt
                                   : std::optional<std::string>(detail::encode_int64_array(o.depends_on)),
              opt(o.timeout),
              opt(o.unique_for)};
  if (!o.headers.empty())
    p.push_back(detail::encode_headers(o.headers, "headers"));
  return p;
}

params enqueue_params(const std::string &job_type, const std::string &payload, const enqueue_options &o)
{
  if (!o.unique_keys.empty() || !o.group_keys.empty())
    throw usage_error("pgjq::connection::enqueue: unique_keys and group_keys apply to batches only");
  return enqueue_params(job_type, payload, o, false);
}

std::optional<std::int64_t> single_int(const detail::result &res)
{
  if (res.rows() < 1 || res.is_null(0, 0))
    return std::nullopt;
  return detail::parse_int64(res.view(0, 0));
}

// A completion's count of jobs.
int job_count(const detail::result &res)
{
  const auto count = single_int(res);
  return count ? static_cast<int>(*count) : 0;
}

} // namespace

// Producers --------------------------------------------------------------------------------------------

std::int64_t connection::enqueue(const std::string &job_type, const nlohmann::json &payload,
                                 const enqueue_options &options)
{
  return enqueue_raw(job_type, detail::encode_json(payload, "payload"), options);
}

// The statement of an enqueue call (`plain`) or its form with headers (`with_headers`), for the options given.
const detail::statement &connection::enqueue_statement(const detail::statement &plain,
                                                       const detail::statement &with_headers,
                                                       const enqueue_options &options, const params &args)
{
  if (options.headers.empty())
    return plain;
  bind(with_headers, args); // a refused argument is refused before anything is sent
  if (!features().job_headers)
    throw usage_error("pgjq::enqueue_options::headers: the database's pgjq is older than 0.3.0, whose jobs "
                      "carry headers (ALTER EXTENSION pgjq UPDATE)");
  return with_headers;
}

std::int64_t connection::enqueue_raw(const std::string &job_type, const std::string &payload_json,
                                     const enqueue_options &options)
{
  const params args = enqueue_params(job_type, payload_json, options);
  const auto id = single_int(run(enqueue_statement(calls::enqueue, calls::enqueue_with_headers, options, args), args));
  if (!id)
    throw error("pgjq.enqueue returned no job id", std::string());
  return *id;
}

std::optional<std::int64_t> connection::try_enqueue(const std::string &job_type, const nlohmann::json &payload,
                                                    const enqueue_options &options)
{
  return try_enqueue_raw(job_type, detail::encode_json(payload, "payload"), options);
}

std::optional<std::int64_t> connection::try_enqueue_raw(const std::string &job_type, const std::string &payload_json,
                                                        const enqueue_options &options)
{
  const params args = enqueue_params(job_type, payload_json, options);
  return single_int(run(enqueue_statement(calls::try_enqueue, calls::try_enqueue_with_headers, options, args), args));
}

std::vector<std::int64_t> connection::enqueue_batch(const std::string &job_type,
                                                    const std::vector<nlohmann::json> &payloads,
                                                    const enqueue_options &options)
{
  return enqueue_batch_raw(job_type, detail::encode_json(nlohmann::json(payloads), "payloads"), options);
}

std::vector<std::int64_t> connection::enqueue_batch_raw(const std::string &job_type, const std::string &payloads_json,
                                                        const enqueue_options &options)
{
  if (options.unique_key || options.group_key)
    throw usage_error("pgjq::connection::enqueue_batch: unique_key and group_key apply to single jobs only "
                      "(a batch takes unique_keys and group_keys, one per payload)");
  const params args = enqueue_params(job_type, payloads_json, options, true);
  detail::result res =
      run(enqueue_statement(calls::enqueue_batch, calls::enqueue_batch_with_headers, options, args), args);
  if (res.rows() < 1 || res.is_null(0, 0))
    return {};
  return detail::decode_int64_array(res.view(0, 0));
}

bool connection::cancel(std::int64_t job_id)
{
  detail::result res = run(calls::cancel, {text(job_id)});
  return res.rows() > 0 && !res.is_null(0, 0) && detail::parse_bool(res.view(0, 0));
}

// Workers ----------------------------------------------------------------------------------------------

namespace
{

// NULL (any type) for an empty list, else the text[] literal.
std::optional<std::string> job_types_param(const std::vector<std::string> &job_types)
{
  if (job_types.empty())
    return std::nullopt;
  return detail::encode_text_array(job_types);
}

// Every row of a result, decoded by `read` (one of rows.hpp's readers).
template <typename Row> std::vector<Row> read_all(const detail::result &res, Row (*read)(const detail::result &, int))
{
  std::vector<Row> out;
  out.reserve(static_cast<std::size_t>(res.rows()));
  for (int row = 0; row < res.rows(); ++row)
    out.push_back(read(res, row));
  return out;
}

std::vector<job> read_jobs(const detail::result &res) { return read_all(res, detail::read_job); }

} // namespace

const connection::server_features &connection::features()
{
  if (!m_features)
  {
    detail::result res = run(calls::server_features, {});
    m_features =
        server_features{res.text(0, 0) == "t", res.text(0, 1) == "t", res.text(0, 2) == "t", res.text(0, 3) == "t"};
  }
  return *m_features;
}

const detail::statement &connection::job_rows(const detail::statement &plain, const detail::statement &with_headers,
                                              const params &args)
{
  bind(plain, args); // a refused argument is refused before anything is sent, the question below included
  return features().job_headers ? with_headers : plain;
}

std::vector<job> connection::claim(const std::string &worker_id, const std::vector<std::string> &job_types,
                                   int batch_size, const std::string &queue)
{
  const params args = {worker_id, job_types_param(job_types), text(static_cast<std::int64_t>(batch_size)), queue};
  return read_jobs(run(job_rows(calls::claim, calls::claim_with_headers, args), args));
}

std::vector<job> connection::complete_and_claim(const std::string &worker_id,
                                                const std::vector<std::int64_t> &completed_ids,
                                                const std::vector<std::string> &job_types, int batch_size,
                                                const std::string &queue)
{
  const params args = {worker_id, detail::encode_int64_array(completed_ids), job_types_param(job_types),
                       text(static_cast<std::int64_t>(batch_size)), queue};
  return read_jobs(run(job_rows(calls::complete_and_claim, calls::complete_and_claim_with_headers, args), args));
}

std::vector<job> connection::claim_in_transaction(const std::string &worker_id,
                                                  const std::vector<std::string> &job_types, int batch_size,
                                                  const std::string &queue)
{
  const params args = {worker_id, job_types_param(job_types), text(static_cast<std::int64_t>(batch_size)), queue};
  return read_jobs(run(job_rows(calls::claim_in_transaction, calls::claim_in_transaction_with_headers, args), args));
}

std::vector<job> connection::begin_and_claim(const std::string &worker_id, const std::vector<std::string> &job_types,
                                             int batch_size, const std::string &queue)
{
  require_transaction_status(PQTRANS_IDLE, "begin_and_claim",
                             "a transaction is already open; use claim_in_transaction");
  const params claim_args = {worker_id, job_types_param(job_types), text(static_cast<std::int64_t>(batch_size)), queue};
  return claimed_or_rolled_back(run_pipeline(
      {{"BEGIN"},
       {nullptr, &job_rows(calls::claim_in_transaction, calls::claim_in_transaction_with_headers, claim_args),
        &claim_args}},
      1));
}

std::vector<job> connection::claimed_or_rolled_back(detail::result claimed)
{
  std::vector<job> jobs;
  try
  {
    jobs = read_jobs(claimed);
  }
  catch (...)
  {
    PQclear(PQexec(m_conn, "ROLLBACK")); // the claim's transaction must not stay open holding its rows
    throw;
  }
  if (jobs.empty())
    execute("ROLLBACK"); // nothing held: end the transaction, so the caller can wait for a notification
  return jobs;
}

int connection::complete_in_transaction(const std::vector<std::int64_t> &job_ids, const std::string &worker_id)
{
  return job_count(run(calls::complete_in_transaction, {detail::encode_int64_array(job_ids), worker_id}));
}

int connection::complete_and_commit(const std::vector<std::int64_t> &job_ids, const std::string &worker_id)
{
  const params complete_args = {detail::encode_int64_array(job_ids), worker_id};
  return job_count(run_pipeline({{nullptr, &calls::complete_in_transaction, &complete_args}, {"COMMIT"}}, 0));
}

std::vector<job> connection::complete_commit_and_claim(const std::vector<std::int64_t> &completed_ids,
                                                       const std::string &worker_id,
                                                       const std::vector<std::string> &job_types, int batch_size,
                                                       const std::string &queue)
{
  require_transaction_status(PQTRANS_INTRANS, "complete_commit_and_claim",
                             "needs the open, unaborted transaction of a begin_and_claim");
  const params complete_args = {detail::encode_int64_array(completed_ids), worker_id};
  const params claim_args = {worker_id, job_types_param(job_types), text(static_cast<std::int64_t>(batch_size)), queue};
  // The sync after COMMIT lets the server deliver this session's pending notifications between the two
  // transactions: a LISTENing session that is never idle outside a transaction holds back the
  // server-wide notification queue, which a long backlog would then fill.
  return claimed_or_rolled_back(run_pipeline(
      {{nullptr, &calls::complete_in_transaction, &complete_args},
       {"COMMIT", nullptr, nullptr, /*sync_after=*/true},
       {"BEGIN"},
       {nullptr, &job_rows(calls::claim_in_transaction, calls::claim_in_transaction_with_headers, claim_args),
        &claim_args}},
      3));
}

job_status connection::fail_in_transaction(std::int64_t job_id, const std::string &worker_id,
                                           const std::string &error_message,
                                           std::optional<std::chrono::microseconds> retry_in)
{
  detail::result res = run(calls::fail_in_transaction, {text(job_id), worker_id, error_message, opt(retry_in)});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.fail_in_transaction returned no status", std::string());
  return parse_job_status(res.view(0, 0));
}

void connection::complete(std::int64_t job_id, const std::string &worker_id)
{
  run(calls::complete, {text(job_id), worker_id, std::nullopt});
}

void connection::complete(std::int64_t job_id, const std::string &worker_id, const nlohmann::json &result)
{
  complete_raw(job_id, worker_id, detail::encode_json(result, "result"));
}

void connection::complete_raw(std::int64_t job_id, const std::string &worker_id, const std::string &result_json)
{
  run(calls::complete, {text(job_id), worker_id, result_json});
}

int connection::complete_batch(const std::vector<std::int64_t> &job_ids, const std::string &worker_id)
{
  return job_count(run(calls::complete_batch, {detail::encode_int64_array(job_ids), worker_id}));
}

job_status connection::fail(std::int64_t job_id, const std::string &worker_id, const std::string &error_message,
                            std::optional<std::chrono::microseconds> retry_in)
{
  detail::result res = run(calls::fail, {text(job_id), worker_id, error_message, opt(retry_in)});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.fail returned no status", std::string());
  return parse_job_status(res.view(0, 0));
}

void connection::progress(std::int64_t job_id, const std::string &worker_id, int percent,
                          const std::optional<std::string> &current_stage)
{
  run(calls::progress, {text(job_id), worker_id, text(static_cast<std::int64_t>(percent)), current_stage});
}

time_point connection::heartbeat(std::int64_t job_id, const std::string &worker_id)
{
  detail::result res = run(calls::heartbeat, {text(job_id), worker_id});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.heartbeat returned no lease expiry", std::string());
  return detail::parse_epoch(res.view(0, 0));
}

// Reading ----------------------------------------------------------------------------------------------

std::optional<job> connection::get_job(std::int64_t job_id)
{
  const params args = {text(job_id)};
  detail::result res = run(job_rows(calls::get_job, calls::get_job_with_headers, args), args);
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_job(res, 0);
}

namespace
{

// The parameters PGJQ_JOB_LISTING_MATCHES takes, from a listing.
params listing_params(const job_listing &l)
{
  const std::optional<std::string> status =
      l.status ? std::optional<std::string>(std::string(to_string(*l.status))) : std::nullopt;
  const std::optional<std::string> due_now =
      l.due_now ? std::optional<std::string>(*l.due_now ? "true" : "false") : std::nullopt;
  const std::optional<std::string> payload =
      l.payload_contains ? std::optional<std::string>(l.payload_contains->dump()) : std::nullopt;
  return {l.queue, status, l.job_type, opt(l.older_than), due_now, opt(l.before_id), timestamp_param(l.finished_before),
          payload};
}

} // namespace

std::vector<job> connection::jobs(const job_listing &l)
{
  if (l.limit < 1 || l.limit > 10000)
    throw bad_argument("pgjq::connection::jobs: limit " + std::to_string(l.limit) + " is not between 1 and 10000",
                       "22023");
  if (l.offset < 0)
    throw bad_argument("pgjq::connection::jobs: offset " + std::to_string(l.offset) + " is negative", "22023");
  params p = listing_params(l);
  p.push_back(text(static_cast<std::int64_t>(l.limit)));
  p.push_back(text(l.offset));
  return read_jobs(run(job_rows(calls::list_jobs, calls::list_jobs_with_headers, p), p));
}

std::int64_t connection::count_jobs(const job_listing &l, std::int64_t at_most)
{
  if (at_most < 1 || at_most > 10000000)
    throw bad_argument(
        "pgjq::connection::count_jobs: at_most " + std::to_string(at_most) + " is not between 1 and 10000000", "22023");
  params p = listing_params(l);
  p.push_back(text(at_most));
  const auto count = single_int(run(calls::count_jobs, p));
  return count ? *count : 0;
}

std::string connection::metrics()
{
  detail::result res = run(calls::metrics, {});
  return res.rows() == 0 || res.is_null(0, 0) ? std::string() : res.text(0, 0);
}

std::optional<queue_info> connection::get_queue(const std::string &queue)
{
  detail::result res = run(calls::get_queue, {queue});
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_queue_info(res, 0);
}

std::vector<queue_worker> connection::queue_workers(const std::string &queue)
{
  return read_all(run(calls::queue_workers, {queue}), detail::read_queue_worker);
}

std::optional<bool> connection::holds_capability(const std::string &capability, const std::string &queue)
{
  const params args = {capability, queue};
  bind(calls::holds_capability, args); // refused before anything is sent
  if (!features().holds_capability)
    return std::nullopt;
  detail::result res = run(calls::holds_capability, args);
  if (res.rows() == 0 || res.is_null(0, 0))
    return std::nullopt;
  return detail::parse_bool(res.view(0, 0));
}

std::vector<job_error> connection::job_errors(std::int64_t job_id)
{
  // A database not yet updated to 0.3.0 keeps no failed attempts: none, rather than a failed statement.
  if (!features().job_errors)
    return {};
  detail::result res = run(calls::job_errors, {text(job_id)});
  return read_all(res, detail::read_job_error);
}

std::vector<maintenance_duty> connection::maintenance()
{
  detail::result res = run(calls::maintenance, {});
  return read_all(res, detail::read_maintenance_duty);
}

std::optional<bool> connection::maintenance_served()
{
  try
  {
    detail::result res = run(calls::maintenance_served, {});
    return res.text(0, 0) == "t";
  }
  catch (const permission_denied &)
  {
    return std::nullopt;
  }
}

std::vector<queue_latency> connection::latency()
{
  detail::result res = run(calls::latency, {});
  return read_all(res, detail::read_latency);
}

std::vector<queue_sample> connection::queue_history(time_point since, time_point until)
{
  if (!features().queue_history)
    return {};
  detail::result res = run(calls::queue_history, {detail::format_timestamp(since), detail::format_timestamp(until)});
  return read_all(res, detail::read_queue_sample);
}

std::vector<queue_stats> connection::stats()
{
  detail::result res = run(calls::stats_all, {});
  return read_all(res, detail::read_stats);
}

std::optional<queue_stats> connection::stats(const std::string &queue)
{
  detail::result res = run(calls::stats_one, {queue});
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_stats(res, 0);
}

// Administration ---------------------------------------------------------------------------------------

void connection::create_queue(const std::string &queue, const queue_options &o)
{
  if (!o.max_pending && !o.fifo && !o.max_attempts && !o.lease && !o.retry_base && !o.retry_cap && !o.retention &&
      !o.keep_completed && !o.group_concurrency && !o.max_running && !o.rate_limit && !o.rate_interval &&
      !o.job_timeout)
  {
    run(calls::create_queue, {queue});
    return;
  }
  run(calls::create_queue_with_settings,
      {queue, opt(o.max_pending), opt(o.fifo), opt(o.max_attempts), opt(o.lease), opt(o.retry_base), opt(o.retry_cap),
       opt(o.retention), opt(o.keep_completed), opt(o.group_concurrency), opt(o.max_running), opt(o.rate_limit),
       opt(o.rate_interval), opt(o.job_timeout)});
}

void connection::alter_queue(const std::string &queue, const queue_options &o)
{
  run(calls::alter_queue,
      {queue, opt(o.max_pending), opt(o.fifo), opt(o.max_attempts), opt(o.lease), opt(o.retry_base), opt(o.retry_cap),
       opt(o.retention), text(o.clear_max_pending), opt(o.keep_completed), opt(o.group_concurrency), opt(o.max_running),
       opt(o.rate_limit), opt(o.rate_interval), opt(o.job_timeout)});
}

void connection::drop_queue(const std::string &queue, bool force) { run(calls::drop_queue, {queue, text(force)}); }

void connection::pause_queue(const std::string &queue) { run(calls::pause_queue, {queue}); }

void connection::resume_queue(const std::string &queue) { run(calls::resume_queue, {queue}); }

void connection::retry(std::int64_t job_id) { run(calls::retry, {text(job_id)}); }

int connection::recover_stale()
{
  const auto count = single_int(run(calls::recover_stale, {}));
  return count ? static_cast<int>(*count) : 0;
}

std::int64_t connection::prune(std::chrono::microseconds older_than)
{
  const auto count = single_int(run(calls::prune, {detail::format_interval(older_than)}));
  return count ? *count : 0;
}

// Periodic jobs ----------------------------------------------------------------------------------------

namespace
{

bool single_bool(const detail::result &res)
{
  return res.rows() > 0 && !res.is_null(0, 0) && detail::parse_bool(res.view(0, 0));
}

// A bulk operation's arguments: queue_name, job_type, after, before, (status,) max_jobs.
params bulk_params(const std::string &queue, const job_filter &f, bool with_status)
{
  params p = {queue, f.job_type, timestamp_param(f.after), timestamp_param(f.before)};
  if (with_status)
    p.push_back(f.status ? std::optional<std::string>(std::string(to_string(*f.status))) : std::nullopt);
  p.push_back(text(static_cast<std::int64_t>(f.max_jobs)));
  return p;
}

} // namespace

std::optional<time_point> connection::schedule(const std::string &name, const std::string &cron,
                                               const std::string &job_type, const nlohmann::json &payload,
                                               const schedule_options &o)
{
  detail::result res =
      run(calls::schedule, {name, cron, job_type, detail::encode_json(payload, "payload"), o.queue,
                            text(static_cast<std::int64_t>(o.priority)), opt(o.max_attempts), o.time_zone,
                            std::string(o.missed == missed_firings::run_once ? "run_once" : "skip"), text(o.paused)});
  if (res.rows() < 1 || res.is_null(0, 0))
    return std::nullopt;
  return detail::parse_epoch(res.view(0, 0));
}

bool connection::unschedule(const std::string &name) { return single_bool(run(calls::unschedule, {name})); }

bool connection::pause_schedule(const std::string &name) { return single_bool(run(calls::pause_schedule, {name})); }

bool connection::resume_schedule(const std::string &name) { return single_bool(run(calls::resume_schedule, {name})); }

std::vector<schedule_info> connection::schedules()
{
  detail::result res = run(calls::schedules_all, {});
  return read_all(res, detail::read_schedule);
}

std::optional<schedule_info> connection::get_schedule(const std::string &name)
{
  detail::result res = run(calls::schedule_one, {name});
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_schedule(res, 0);
}

std::vector<time_point> connection::next_firings(const std::string &cron, const std::string &time_zone,
                                                 std::optional<time_point> after, int count)
{
  detail::result res =
      run(calls::next_firings, {cron, time_zone, timestamp_param(after), text(static_cast<std::int64_t>(count))});
  std::vector<time_point> out;
  for (int row = 0; row < res.rows(); ++row)
    out.push_back(detail::parse_epoch(res.view(row, 0)));
  return out;
}

// Bulk operations --------------------------------------------------------------------------------------

std::int64_t connection::retry_failed(const std::string &queue, const job_filter &filter)
{
  if (filter.status)
    throw usage_error("pgjq::connection::retry_failed: it retries failed jobs; filter.status must be unset");
  const auto count = single_int(run(calls::retry_failed, bulk_params(queue, filter, false)));
  return count ? *count : 0;
}

std::int64_t connection::cancel_jobs(const std::string &queue, const job_filter &filter)
{
  const auto count = single_int(run(calls::cancel_jobs, bulk_params(queue, filter, true)));
  return count ? *count : 0;
}

std::int64_t connection::delete_jobs(const std::string &queue, const job_filter &filter)
{
  const auto count = single_int(run(calls::delete_jobs, bulk_params(queue, filter, true)));
  return count ? *count : 0;
}

// Workflows --------------------------------------------------------------------------------------------

std::vector<workflow_info> connection::workflows(const std::optional<std::string> &status, int limit)
{
  if (limit < 1 || limit > 10000)
    throw bad_argument("pgjq::connection::workflows: limit " + std::to_string(limit) + " is not between 1 and 10000",
                       "22023");
  detail::result res = run(calls::workflows, {status, text(static_cast<std::int64_t>(limit))});
  return read_all(res, detail::read_workflow);
}

std::optional<workflow_info> connection::get_workflow(std::int64_t workflow_id)
{
  detail::result res = run(calls::workflow_one, {text(workflow_id)});
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_workflow(res, 0);
}

std::vector<workflow_step> connection::workflow_steps(std::int64_t workflow_id)
{
  detail::result res = run(calls::workflow_steps, {text(workflow_id)});
  return read_all(res, detail::read_workflow_step);
}

std::int64_t connection::cancel_workflow(std::int64_t workflow_id)
{
  const auto count = single_int(run(calls::cancel_workflow, {text(workflow_id)}));
  return count ? *count : 0;
}

std::int64_t connection::retry_workflow(std::int64_t workflow_id)
{
  const auto count = single_int(run(calls::retry_workflow, {text(workflow_id)}));
  return count ? *count : 0;
}

namespace
{

// The jsonb a call returned; it returns NULL only where its caller says so.
nlohmann::json single_json(const detail::result &res, const char *call)
{
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error(std::string(call) + " returned NULL", std::string());
  return nlohmann::json::parse(res.view(0, 0));
}

} // namespace

std::int64_t connection::start_workflow(const workflow_builder &w)
{
  const auto id = single_int(
      run(calls::start_workflow, {w.name(), w.to_json(), w.workflow_key(), std::string(to_string(w.failure())),
                                  detail::format_interval(w.kept_for()), opt(w.parent())}));
  if (!id)
    throw error("pgjq.start_workflow returned no workflow id", std::string());
  return *id;
}

std::int64_t connection::signal(const std::string &event_name, const nlohmann::json &payload, const std::string &queue,
                                std::chrono::microseconds keep_for)
{
  const auto woken = single_int(run(
      calls::signal, {event_name, detail::encode_json(payload, "payload"), queue, detail::format_interval(keep_for)}));
  return woken ? *woken : 0;
}

std::vector<step_result> connection::step_results(std::int64_t job_id, const std::optional<std::string> &after_step,
                                                  int max_results)
{
  return read_all(run(calls::step_results, {text(job_id), after_step, text(static_cast<std::int64_t>(max_results))}),
                  detail::read_step_result);
}

std::vector<step_result> connection::all_step_results(std::int64_t job_id, int page_size)
{
  std::vector<step_result> all;
  std::optional<std::string> after;
  for (;;)
  {
    std::vector<step_result> page = step_results(job_id, after, page_size);
    // A page shorter than asked is the last (the server refuses a page_size out of its bounds).
    const bool last = page.size() < static_cast<std::size_t>(std::max(page_size, 1));
    if (!page.empty() && after && page.back().step_name == *after)
      throw error("pgjq.step_results did not advance past step \"" + *after + "\"", std::string());
    if (!page.empty())
      after = page.back().step_name;
    all.insert(all.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
    if (last || page.empty())
      return all;
  }
}

nlohmann::json connection::checkpoint(std::int64_t job_id, const std::string &worker_id, const std::string &name,
                                      const nlohmann::json &value)
{
  return single_json(run(calls::checkpoint, {text(job_id), worker_id, name, detail::encode_json(value, "value")}),
                     "pgjq.checkpoint");
}

nlohmann::json connection::checkpoints(std::int64_t job_id)
{
  return single_json(run(calls::checkpoints, {text(job_id)}), "pgjq.checkpoints");
}

std::optional<nlohmann::json> connection::wait_for_event(std::int64_t job_id, const std::string &worker_id,
                                                         const std::string &event_name,
                                                         std::chrono::microseconds timeout)
{
  detail::result res =
      run(calls::wait_for_event, {text(job_id), worker_id, event_name, detail::format_interval(timeout)});
  if (res.rows() < 1 || res.is_null(0, 0))
    return std::nullopt; // parked
  return nlohmann::json::parse(res.view(0, 0));
}

bool connection::sleep_until(std::int64_t job_id, const std::string &worker_id, const std::string &name,
                             time_point wake_at)
{
  detail::result res = run(calls::sleep_until, {text(job_id), worker_id, name, detail::format_timestamp(wake_at)});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.sleep_until returned NULL", std::string());
  return detail::parse_bool(res.view(0, 0));
}

std::vector<std::int64_t> connection::add_steps(std::int64_t job_id, const std::string &worker_id,
                                                const step_list &steps)
{
  detail::result res = run(calls::add_steps, {text(job_id), worker_id, steps.to_json()});
  if (res.rows() < 1 || res.is_null(0, 0))
    return {};
  return detail::decode_int64_array(res.view(0, 0));
}

} // namespace pgjq
