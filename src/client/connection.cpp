// connection.cpp: the session's lifetime (open, borrow, reconnect, close) and one prepared statement per
// SQL API function, each run with bound text parameters. Notifications are in notification.cpp.
#include <pgjq/connection.hpp>

#include <utility>

#include "codec.hpp"
#include "result.hpp"
#include "rows.hpp"

namespace pgjq
{

namespace
{

using params = std::vector<std::optional<std::string>>;

// Indexes into the statement table below; connection::run takes them as int to keep them out of the header.
enum statement : int
{
  st_enqueue,
  st_try_enqueue,
  st_enqueue_batch,
  st_cancel,
  st_claim,
  st_progress,
  st_heartbeat,
  st_complete,
  st_complete_batch,
  st_fail,
  st_get_job,
  st_stats_all,
  st_stats_one,
  st_create_queue,
  st_create_queue_with_settings,
  st_alter_queue,
  st_drop_queue,
  st_pause_queue,
  st_resume_queue,
  st_retry,
  st_recover_stale,
  st_prune,
  st_complete_and_claim,
  st_claim_in_transaction,
  st_complete_in_transaction,
  st_fail_in_transaction,
  st_count
};

struct statement_text
{
  const char *name;
  const char *sql;
};

// Every parameter is cast explicitly so that the statement's types do not depend on inference.
// Names start with "pgjq_" so that a borrowed session can tell ours from the caller's.
const statement_text statements[st_count] = {
    {"pgjq_enqueue", "SELECT pgjq.enqueue($1::text, $2::jsonb, $3::text, $4::integer, $5::timestamptz, "
                     "$6::integer, $7::text)"},
    {"pgjq_try_enqueue", "SELECT pgjq.try_enqueue($1::text, $2::jsonb, $3::text, $4::integer, $5::timestamptz, "
                         "$6::integer, $7::text)"},
    {"pgjq_enqueue_batch", "SELECT pgjq.enqueue_batch($1::text, $2::jsonb, $3::text, $4::integer, "
                           "$5::timestamptz, $6::integer)"},
    {"pgjq_cancel", "SELECT pgjq.cancel($1::bigint)"},
    {"pgjq_claim", "SELECT " PGJQ_JOB_COLUMNS
                   " FROM pgjq.claim_job_batch($1::text, $2::text[], $3::integer, $4::text)"},
    {"pgjq_progress", "SELECT pgjq.progress($1::bigint, $2::text, $3::integer, $4::text)"},
    {"pgjq_heartbeat", "SELECT extract(epoch from pgjq.heartbeat($1::bigint, $2::text))"},
    {"pgjq_complete", "SELECT pgjq.complete($1::bigint, $2::text, $3::jsonb)"},
    {"pgjq_complete_batch", "SELECT pgjq.complete_batch($1::bigint[], $2::text)"},
    {"pgjq_fail", "SELECT pgjq.fail($1::bigint, $2::text, $3::text, $4::interval)"},
    {"pgjq_get_job", "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.jobs WHERE id = $1::bigint"},
    {"pgjq_stats_all", "SELECT " PGJQ_STATS_COLUMNS " FROM pgjq.queue_stats ORDER BY queue_name"},
    {"pgjq_stats_one", "SELECT " PGJQ_STATS_COLUMNS " FROM pgjq.queue_stats WHERE queue_name = $1::text"},
    {"pgjq_create_queue", "SELECT pgjq.create_queue($1::text)"},
    // create_queue takes only some settings; creating and then altering in one statement keeps the pair
    // atomic, and alter_queue's NULL (= keep) leaves the server's defaults for the unset ones. OFFSET 0
    // keeps the subquery (and so the create) from being merged into the outer query.
    {"pgjq_create_queue_with_settings",
     "SELECT pgjq.alter_queue(s.q, $2::bigint, $3::boolean, $4::integer, $5::interval, $6::interval, "
     "$7::interval, $8::interval, false, $9::boolean) "
     "FROM (SELECT $1::text AS q, pgjq.create_queue($1::text) OFFSET 0) AS s"},
    {"pgjq_alter_queue", "SELECT pgjq.alter_queue($1::text, $2::bigint, $3::boolean, $4::integer, $5::interval, "
                         "$6::interval, $7::interval, $8::interval, $9::boolean, $10::boolean)"},
    {"pgjq_drop_queue", "SELECT pgjq.drop_queue($1::text, $2::boolean)"},
    {"pgjq_pause_queue", "SELECT pgjq.pause_queue($1::text)"},
    {"pgjq_resume_queue", "SELECT pgjq.resume_queue($1::text)"},
    {"pgjq_retry", "SELECT pgjq.retry($1::bigint)"},
    {"pgjq_recover_stale", "SELECT pgjq.recover_stale()"},
    {"pgjq_prune", "SELECT pgjq.prune($1::interval)"},
    {"pgjq_complete_and_claim", "SELECT " PGJQ_JOB_COLUMNS
                                " FROM pgjq.complete_and_claim($1::text, $2::bigint[], $3::text[], $4::integer, $5::text)"},
    {"pgjq_claim_in_transaction", "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.claim_in_transaction($1::text, $2::text[], "
                                  "$3::integer, $4::text)"},
    {"pgjq_complete_in_transaction", "SELECT pgjq.complete_in_transaction($1::bigint[], $2::text)"},
    {"pgjq_fail_in_transaction", "SELECT pgjq.fail_in_transaction($1::bigint, $2::text, $3::text, $4::interval)"},
};

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

params enqueue_params(const std::string &job_type, const std::string &payload, const enqueue_options &o)
{
  return {job_type,
          payload,
          o.queue,
          text(static_cast<std::int64_t>(o.priority)),
          o.run_at ? std::optional<std::string>(detail::format_timestamp(*o.run_at)) : std::nullopt,
          o.max_attempts ? std::optional<std::string>(text(static_cast<std::int64_t>(*o.max_attempts)))
                         : std::nullopt,
          o.unique_key};
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

PGconn *open_session(const std::string &conninfo)
{
  // expand_dbname lets conninfo be a full connection string or URI; the keys after it override it:
  // payloads are JSON, which is UTF-8.
  const char *keys[] = {"dbname", "fallback_application_name", "client_encoding", nullptr};
  const char *values[] = {conninfo.c_str(), "pgjq", "UTF8", nullptr};
  PGconn *conn = PQconnectdbParams(keys, values, 1);
  if (conn == nullptr)
    throw connection_lost("out of memory opening a connection", std::string());
  if (PQstatus(conn) != CONNECTION_OK)
  {
    std::string message = PQerrorMessage(conn);
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    PQfinish(conn);
    throw connection_lost(message, std::string());
  }
  return conn;
}

} // namespace

connection::connection(const std::string &conninfo)
    : m_conn(open_session(conninfo)), m_owned(true), m_conninfo(conninfo), m_checked_prepared(true)
{
}

connection::connection(PGconn *borrowed) : m_conn(borrowed), m_owned(false)
{
  if (borrowed == nullptr)
    throw usage_error("pgjq::connection: null PGconn");
}

connection::connection(connection &&other) noexcept
    : m_conn(std::exchange(other.m_conn, nullptr)), m_owned(other.m_owned), m_conninfo(std::move(other.m_conninfo)),
      m_prepared(std::move(other.m_prepared)), m_checked_prepared(other.m_checked_prepared),
      m_listening(std::move(other.m_listening)), m_notifications(std::move(other.m_notifications))
{
}

connection &connection::operator=(connection &&other) noexcept
{
  if (this != &other)
  {
    close();
    m_conn = std::exchange(other.m_conn, nullptr);
    m_owned = other.m_owned;
    m_conninfo = std::move(other.m_conninfo);
    m_prepared = std::move(other.m_prepared);
    m_checked_prepared = other.m_checked_prepared;
    m_listening = std::move(other.m_listening);
    m_notifications = std::move(other.m_notifications);
  }
  return *this;
}

connection::~connection() { close(); }

void connection::close() noexcept
{
  if (m_conn != nullptr && m_owned)
    PQfinish(m_conn);
  m_conn = nullptr;
}

bool connection::is_open() const noexcept { return m_conn != nullptr && PQstatus(m_conn) == CONNECTION_OK; }

void connection::reconnect()
{
  if (!m_owned)
    throw usage_error("pgjq::connection::reconnect: the session is borrowed; its owner reopens it");
  PGconn *fresh = open_session(m_conninfo);
  close();
  m_conn = fresh;
  m_prepared.clear();
  m_notifications.clear();
  const std::set<std::string> channels = m_listening;
  m_listening.clear();
  for (const std::string &channel : channels)
    listen(channel);
}

void connection::prepare(int st)
{
  const statement_text &s = statements[st];
  if (m_prepared.count(s.name))
    return;
  if (!m_checked_prepared)
  {
    // A borrowed session may already hold our statements (an earlier wrapper of the same PGconn). Asking
    // is harmless inside the caller's transaction; a failed duplicate PREPARE would abort it.
    detail::result res = detail::check(
        PQexec(m_conn, "SELECT name FROM pg_catalog.pg_prepared_statements WHERE name LIKE 'pgjq\\_%'"), m_conn);
    for (int row = 0; row < res.rows(); ++row)
      m_prepared.insert(res.text(row, 0));
    m_checked_prepared = true;
    if (m_prepared.count(s.name))
      return;
  }
  detail::check(PQprepare(m_conn, s.name, s.sql, 0, nullptr), m_conn);
  m_prepared.insert(s.name);
}

std::vector<const char *> connection::bind(int st, const params &args)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  prepare(st);
  std::vector<const char *> values(args.size());
  for (std::size_t i = 0; i < args.size(); ++i)
    values[i] = args[i] ? args[i]->c_str() : nullptr;
  return values;
}

detail::result connection::run(int st, const params &args)
{
  const std::vector<const char *> values = bind(st, args);
  detail::result res = detail::check(PQexecPrepared(m_conn, statements[st].name, static_cast<int>(values.size()),
                                                    values.data(), nullptr, nullptr, 0),
                                     m_conn);
  collect_notifications();
  return res;
}

detail::result connection::run_pipeline(const std::vector<pipeline_step> &steps, std::size_t wanted_step)
{
  std::vector<std::vector<const char *>> values(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].command == nullptr)
      values[i] = bind(steps[i].statement, *steps[i].args);
  // One round trip: the commands are sent together and answered after the sync. After an error the server
  // skips the rest until the sync, so a step runs only if every step before it succeeded.
  if (PQenterPipelineMode(m_conn) != 1)
    throw error("libpq could not enter pipeline mode: " + std::string(PQerrorMessage(m_conn)), std::string());
  bool sent = true;
  int syncs = 0;
  for (std::size_t i = 0; i < steps.size() && sent; ++i)
  {
    sent = steps[i].command != nullptr
               ? PQsendQueryParams(m_conn, steps[i].command, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1
               : PQsendQueryPrepared(m_conn, statements[steps[i].statement].name,
                                     static_cast<int>(values[i].size()), values[i].data(), nullptr, nullptr, 0) == 1;
    if (sent && steps[i].sync_after && i + 1 < steps.size())
    {
      sent = PQpipelineSync(m_conn) == 1;
      ++syncs;
    }
  }
  sent = sent && PQpipelineSync(m_conn) == 1;
  ++syncs;
  detail::result wanted, failure;
  std::size_t step = 0;
  int synced = 0;
  while (sent)
  {
    PGresult *res = PQgetResult(m_conn);
    if (res == nullptr)
    {
      // the end of one command's results (a sync's result is not followed by one)
      if (++step > steps.size() || PQstatus(m_conn) == CONNECTION_BAD)
        break;
      continue;
    }
    const ExecStatusType status = PQresultStatus(res);
    if (status == PGRES_PIPELINE_SYNC)
    {
      PQclear(res);
      if (++synced == syncs)
        break;
      continue;
    }
    if ((status == PGRES_FATAL_ERROR || status == PGRES_NONFATAL_ERROR) && failure.get() == nullptr)
      failure = detail::result(res);
    else if (step == wanted_step && status == PGRES_TUPLES_OK && wanted.get() == nullptr)
      wanted = detail::result(res);
    else
      PQclear(res);
  }
  PQexitPipelineMode(m_conn);
  collect_notifications();
  if (!sent)
    throw connection_lost(PQerrorMessage(m_conn), std::string());
  if (failure.get() != nullptr)
  {
    // a transaction block that a step opened or that the error aborted is not left open
    if (PQtransactionStatus(m_conn) == PQTRANS_INERROR)
      PQclear(PQexec(m_conn, "ROLLBACK"));
    detail::check(failure.release(), m_conn);
  }
  return wanted;
}

void connection::execute(const std::string &sql)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  detail::check(PQexec(m_conn, sql.c_str()), m_conn);
  collect_notifications();
}

// Producers --------------------------------------------------------------------------------------------

std::int64_t connection::enqueue(const std::string &job_type, const nlohmann::json &payload,
                                 const enqueue_options &options)
{
  return enqueue_raw(job_type, payload.dump(), options);
}

std::int64_t connection::enqueue_raw(const std::string &job_type, const std::string &payload_json,
                                     const enqueue_options &options)
{
  const auto id = single_int(run(st_enqueue, enqueue_params(job_type, payload_json, options)));
  if (!id)
    throw error("pgjq.enqueue returned no job id", std::string());
  return *id;
}

std::optional<std::int64_t> connection::try_enqueue(const std::string &job_type, const nlohmann::json &payload,
                                                    const enqueue_options &options)
{
  return try_enqueue_raw(job_type, payload.dump(), options);
}

std::optional<std::int64_t> connection::try_enqueue_raw(const std::string &job_type, const std::string &payload_json,
                                                        const enqueue_options &options)
{
  return single_int(run(st_try_enqueue, enqueue_params(job_type, payload_json, options)));
}

std::vector<std::int64_t> connection::enqueue_batch(const std::string &job_type,
                                                    const std::vector<nlohmann::json> &payloads,
                                                    const enqueue_options &options)
{
  return enqueue_batch_raw(job_type, nlohmann::json(payloads).dump(), options);
}

std::vector<std::int64_t> connection::enqueue_batch_raw(const std::string &job_type, const std::string &payloads_json,
                                                        const enqueue_options &options)
{
  if (options.unique_key)
    throw usage_error("pgjq::connection::enqueue_batch: unique_key applies to single jobs only");
  params args = enqueue_params(job_type, payloads_json, options);
  args.pop_back(); // enqueue_batch has no unique_key
  detail::result res = run(st_enqueue_batch, args);
  if (res.rows() < 1 || res.is_null(0, 0))
    return {};
  return detail::decode_int64_array(res.view(0, 0));
}

bool connection::cancel(std::int64_t job_id)
{
  detail::result res = run(st_cancel, {text(job_id)});
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

std::vector<job> read_jobs(const detail::result &res)
{
  std::vector<job> jobs;
  jobs.reserve(static_cast<std::size_t>(res.rows()));
  for (int row = 0; row < res.rows(); ++row)
    jobs.push_back(detail::read_job(res, row));
  return jobs;
}

} // namespace

std::vector<job> connection::claim(const std::string &worker_id, const std::vector<std::string> &job_types,
                                   int batch_size, const std::string &queue)
{
  return read_jobs(run(st_claim, {worker_id, job_types_param(job_types),
                                  text(static_cast<std::int64_t>(batch_size)), queue}));
}

std::vector<job> connection::complete_and_claim(const std::string &worker_id,
                                                const std::vector<std::int64_t> &completed_ids,
                                                const std::vector<std::string> &job_types, int batch_size,
                                                const std::string &queue)
{
  return read_jobs(run(st_complete_and_claim, {worker_id, detail::encode_int64_array(completed_ids),
                                               job_types_param(job_types),
                                               text(static_cast<std::int64_t>(batch_size)), queue}));
}

std::vector<job> connection::claim_in_transaction(const std::string &worker_id,
                                                  const std::vector<std::string> &job_types, int batch_size,
                                                  const std::string &queue)
{
  return read_jobs(run(st_claim_in_transaction, {worker_id, job_types_param(job_types),
                                                 text(static_cast<std::int64_t>(batch_size)), queue}));
}

std::vector<job> connection::begin_and_claim(const std::string &worker_id, const std::vector<std::string> &job_types,
                                             int batch_size, const std::string &queue)
{
  require_transaction_status(PQTRANS_IDLE, "begin_and_claim", "a transaction is already open; use claim_in_transaction");
  const params claim_args = {worker_id, job_types_param(job_types), text(static_cast<std::int64_t>(batch_size)), queue};
  return claimed_or_rolled_back(run_pipeline({{"BEGIN"}, {nullptr, st_claim_in_transaction, &claim_args}}, 1));
}

void connection::require_transaction_status(int wanted, const char *method, const char *otherwise) const
{
  if (m_conn == nullptr || PQstatus(m_conn) == CONNECTION_BAD)
    throw connection_lost(std::string("pgjq::connection::") + method + ": the connection is closed", std::string());
  if (PQtransactionStatus(m_conn) != static_cast<PGTransactionStatusType>(wanted))
    throw usage_error(std::string("pgjq::connection::") + method + ": " + otherwise);
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
  return job_count(run(st_complete_in_transaction, {detail::encode_int64_array(job_ids), worker_id}));
}

int connection::complete_and_commit(const std::vector<std::int64_t> &job_ids, const std::string &worker_id)
{
  const params complete_args = {detail::encode_int64_array(job_ids), worker_id};
  return job_count(run_pipeline({{nullptr, st_complete_in_transaction, &complete_args}, {"COMMIT"}}, 0));
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
  return claimed_or_rolled_back(run_pipeline({{nullptr, st_complete_in_transaction, &complete_args},
                                              {"COMMIT", -1, nullptr, /*sync_after=*/true},
                                              {"BEGIN"},
                                              {nullptr, st_claim_in_transaction, &claim_args}},
                                             3));
}

job_status connection::fail_in_transaction(std::int64_t job_id, const std::string &worker_id,
                                           const std::string &error_message,
                                           std::optional<std::chrono::microseconds> retry_in)
{
  detail::result res = run(st_fail_in_transaction, {text(job_id), worker_id, error_message, opt(retry_in)});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.fail_in_transaction returned no status", std::string());
  return parse_job_status(res.view(0, 0));
}

void connection::complete(std::int64_t job_id, const std::string &worker_id)
{
  run(st_complete, {text(job_id), worker_id, std::nullopt});
}

void connection::complete(std::int64_t job_id, const std::string &worker_id, const nlohmann::json &result)
{
  complete_raw(job_id, worker_id, result.dump());
}

void connection::complete_raw(std::int64_t job_id, const std::string &worker_id, const std::string &result_json)
{
  run(st_complete, {text(job_id), worker_id, result_json});
}

int connection::complete_batch(const std::vector<std::int64_t> &job_ids, const std::string &worker_id)
{
  return job_count(run(st_complete_batch, {detail::encode_int64_array(job_ids), worker_id}));
}

job_status connection::fail(std::int64_t job_id, const std::string &worker_id, const std::string &error_message,
                            std::optional<std::chrono::microseconds> retry_in)
{
  detail::result res = run(st_fail, {text(job_id), worker_id, error_message, opt(retry_in)});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.fail returned no status", std::string());
  return parse_job_status(res.view(0, 0));
}

void connection::progress(std::int64_t job_id, const std::string &worker_id, int percent,
                          const std::optional<std::string> &current_stage)
{
  run(st_progress, {text(job_id), worker_id, text(static_cast<std::int64_t>(percent)), current_stage});
}

time_point connection::heartbeat(std::int64_t job_id, const std::string &worker_id)
{
  detail::result res = run(st_heartbeat, {text(job_id), worker_id});
  if (res.rows() < 1 || res.is_null(0, 0))
    throw error("pgjq.heartbeat returned no lease expiry", std::string());
  return detail::parse_epoch(res.view(0, 0));
}

// Reading ----------------------------------------------------------------------------------------------

std::optional<job> connection::get_job(std::int64_t job_id)
{
  detail::result res = run(st_get_job, {text(job_id)});
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_job(res, 0);
}

std::vector<queue_stats> connection::stats()
{
  detail::result res = run(st_stats_all, {});
  std::vector<queue_stats> out;
  for (int row = 0; row < res.rows(); ++row)
    out.push_back(detail::read_stats(res, row));
  return out;
}

std::optional<queue_stats> connection::stats(const std::string &queue)
{
  detail::result res = run(st_stats_one, {queue});
  if (res.rows() == 0)
    return std::nullopt;
  return detail::read_stats(res, 0);
}

// Administration ---------------------------------------------------------------------------------------

void connection::create_queue(const std::string &queue, const queue_options &o)
{
  if (!o.max_pending && !o.fifo && !o.max_attempts && !o.lease && !o.retry_base && !o.retry_cap && !o.retention &&
      !o.keep_completed)
  {
    run(st_create_queue, {queue});
    return;
  }
  run(st_create_queue_with_settings,
      {queue, opt(o.max_pending), opt(o.fifo),
       o.max_attempts ? std::optional<std::string>(text(static_cast<std::int64_t>(*o.max_attempts))) : std::nullopt,
       opt(o.lease), opt(o.retry_base), opt(o.retry_cap), opt(o.retention), opt(o.keep_completed)});
}

void connection::alter_queue(const std::string &queue, const queue_options &o)
{
  run(st_alter_queue,
      {queue, opt(o.max_pending), opt(o.fifo),
       o.max_attempts ? std::optional<std::string>(text(static_cast<std::int64_t>(*o.max_attempts))) : std::nullopt,
       opt(o.lease), opt(o.retry_base), opt(o.retry_cap), opt(o.retention), text(o.clear_max_pending),
       opt(o.keep_completed)});
}

void connection::drop_queue(const std::string &queue, bool force) { run(st_drop_queue, {queue, text(force)}); }

void connection::pause_queue(const std::string &queue) { run(st_pause_queue, {queue}); }

void connection::resume_queue(const std::string &queue) { run(st_resume_queue, {queue}); }

void connection::retry(std::int64_t job_id) { run(st_retry, {text(job_id)}); }

int connection::recover_stale()
{
  const auto count = single_int(run(st_recover_stale, {}));
  return count ? static_cast<int>(*count) : 0;
}

std::int64_t connection::prune(std::chrono::microseconds older_than)
{
  const auto count = single_int(run(st_prune, {detail::format_interval(older_than)}));
  return count ? *count : 0;
}

// transaction ------------------------------------------------------------------------------------------

transaction::transaction(connection &conn) : m_conn(conn) { m_conn.execute("BEGIN"); }

transaction::~transaction()
{
  if (!m_open)
    return;
  try
  {
    m_conn.execute("ROLLBACK");
  }
  catch (...)
  {
    // A destructor must not throw; a lost session has rolled back by itself.
  }
}

void transaction::commit()
{
  if (!m_open)
    throw usage_error("pgjq::transaction::commit: the transaction is already closed");
  m_open = false;
  PGconn *conn = m_conn.native_handle();
  if (conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  detail::result res = detail::check(PQexec(conn, "COMMIT"), conn);
  // COMMIT of a transaction that an earlier error aborted succeeds but rolls back: say so, or the caller
  // would believe its jobs exist.
  if (std::string(PQcmdStatus(res.get())) == "ROLLBACK")
    throw error("the transaction was rolled back because an earlier statement failed", "25P02");
}

void transaction::rollback()
{
  if (!m_open)
    throw usage_error("pgjq::transaction::rollback: the transaction is already closed");
  m_open = false;
  m_conn.execute("ROLLBACK");
}

} // namespace pgjq
