// statements.hpp (internal): the call catalogue. Each SQL function the client calls is one statement here:
// its prepared-statement name, its SQL and the name and type of each parameter, in one table, so that a
// call and its parameters cannot drift apart. connection.cpp gives the values; session.cpp checks and binds
// them and prepares each statement once per session.
#pragma once

#include <initializer_list>

#include <libpq-fe.h>

#include "rows.hpp"

namespace pgjq::detail
{

// PostgreSQL's built-in type OIDs (fixed in its catalog, pg_type.dat), given to PQprepare so that a
// statement's types never depend on inference.
namespace type
{
inline constexpr Oid unknown = 0; // typed by the server from where the statement uses it
inline constexpr Oid boolean = 16;
inline constexpr Oid int8 = 20;
inline constexpr Oid int4 = 23;
inline constexpr Oid text = 25;
inline constexpr Oid jsonb = 3802;
inline constexpr Oid timestamptz = 1184;
inline constexpr Oid interval = 1186;
inline constexpr Oid text_array = 1009;
inline constexpr Oid int8_array = 1016;
} // namespace type

// One parameter of a statement: the name of the SQL function's argument it fills, which a refusal of its
// value names (connection::bind), and its type.
struct parameter
{
  const char *name;
  Oid type;
};

struct statement
{
  constexpr statement(const char *statement_name, const char *statement_sql,
                      std::initializer_list<parameter> parameters)
      : name(statement_name), sql(statement_sql)
  {
    for (const parameter &p : parameters)
    {
      parameter_names[parameter_count] = p.name;
      parameter_types[parameter_count] = p.type;
      ++parameter_count;
    }
  }

  // Another call with the same arguments (try_enqueue takes enqueue's).
  constexpr statement(const char *statement_name, const char *statement_sql, const statement &same_parameters)
      : statement(same_parameters)
  {
    name = statement_name;
    sql = statement_sql;
  }

  const char *name; // starts with "pgjq_", so that a borrowed session can tell ours from the caller's
  const char *sql;
  // Planned with its values at each call instead of prepared once: for a search whose best plan depends on
  // which filters are given (a prepared statement's generic plan cannot use an index on a filter that may
  // be NULL, and reads a long history row by row where a partial index finds the few).
  bool planned_per_call = false;
  int parameter_count = 0;
  Oid parameter_types[16] = {}; // one array, as PQprepare and PQexecParams take them
  const char *parameter_names[16] = {};
};

// The statement `s` with one parameter more, under another name and SQL.
constexpr statement with_parameter(statement s, const char *name, const char *sql, parameter added)
{
  s.name = name;
  s.sql = sql;
  s.parameter_names[s.parameter_count] = added.name;
  s.parameter_types[s.parameter_count] = added.type;
  ++s.parameter_count;
  return s;
}

constexpr statement planned_for_each_call(statement s)
{
  s.planned_per_call = true;
  return s;
}

namespace calls
{
using namespace type;

// Producers
inline constexpr statement enqueue{"pgjq_enqueue",
                                   "SELECT pgjq.enqueue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                                   {{"job_type", text},
                                    {"payload", jsonb},
                                    {"queue_name", text},
                                    {"priority", int4},
                                    {"run_at", timestamptz},
                                    {"max_attempts", int4},
                                    {"unique_key", text},
                                    {"group_key", text},
                                    {"depends_on", int8_array},
                                    {"timeout", interval},
                                    {"unique_for", interval}}};
inline constexpr statement try_enqueue{
    "pgjq_try_enqueue", "SELECT pgjq.try_enqueue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", enqueue};
inline constexpr statement enqueue_batch{"pgjq_enqueue_batch",
                                         "SELECT pgjq.enqueue_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                                         {{"job_type", text},
                                          {"payloads", jsonb},
                                          {"queue_name", text},
                                          {"priority", int4},
                                          {"run_at", timestamptz},
                                          {"max_attempts", int4},
                                          {"unique_keys", text_array},
                                          {"group_keys", text_array},
                                          {"depends_on", int8_array},
                                          {"timeout", interval},
                                          {"unique_for", interval}}};
// From 0.3.0, for jobs given headers.
inline constexpr statement enqueue_with_headers =
    with_parameter(enqueue, "pgjq_enqueue_with_headers",
                   "SELECT pgjq.enqueue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)", {"headers", jsonb});
inline constexpr statement try_enqueue_with_headers =
    with_parameter(enqueue, "pgjq_try_enqueue_with_headers",
                   "SELECT pgjq.try_enqueue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)", {"headers", jsonb});
inline constexpr statement enqueue_batch_with_headers =
    with_parameter(enqueue_batch, "pgjq_enqueue_batch_with_headers",
                   "SELECT pgjq.enqueue_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)", {"headers", jsonb});
inline constexpr statement cancel{"pgjq_cancel", "SELECT pgjq.cancel($1)", {{"job_id", int8}}};

// Workers
inline constexpr statement claim{
    "pgjq_claim",
    "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.claim_job_batch($1, $2, $3, $4)",
    {{"worker_id", text}, {"job_types", text_array}, {"batch_size", int4}, {"queue_name", text}}};
inline constexpr statement complete_and_claim{"pgjq_complete_and_claim",
                                              "SELECT " PGJQ_JOB_COLUMNS
                                              " FROM pgjq.complete_and_claim($1, $2, $3, $4, $5)",
                                              {{"worker_id", text},
                                               {"completed_ids", int8_array},
                                               {"job_types", text_array},
                                               {"batch_size", int4},
                                               {"queue_name", text}}};
inline constexpr statement claim_in_transaction{
    "pgjq_claim_in_transaction",
    "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.claim_in_transaction($1, $2, $3, $4)",
    {{"worker_id", text}, {"job_types", text_array}, {"batch_size", int4}, {"queue_name", text}}};
// The claims as a database from 0.3.0 returns them, with each job's headers (rows.hpp).
inline constexpr statement claim_with_headers{
    "pgjq_claim_with_headers", "SELECT " PGJQ_JOB_COLUMNS_WITH_HEADERS " FROM pgjq.claim_job_batch($1, $2, $3, $4)",
    claim};
inline constexpr statement complete_and_claim_with_headers{
    "pgjq_complete_and_claim_with_headers",
    "SELECT " PGJQ_JOB_COLUMNS_WITH_HEADERS " FROM pgjq.complete_and_claim($1, $2, $3, $4, $5)", complete_and_claim};
inline constexpr statement claim_in_transaction_with_headers{
    "pgjq_claim_in_transaction_with_headers",
    "SELECT " PGJQ_JOB_COLUMNS_WITH_HEADERS " FROM pgjq.claim_in_transaction($1, $2, $3, $4)", claim_in_transaction};
inline constexpr statement complete_in_transaction{"pgjq_complete_in_transaction",
                                                   "SELECT pgjq.complete_in_transaction($1, $2)",
                                                   {{"job_ids", int8_array}, {"worker_id", text}}};
inline constexpr statement fail_in_transaction{
    "pgjq_fail_in_transaction",
    "SELECT pgjq.fail_in_transaction($1, $2, $3, $4)",
    {{"job_id", int8}, {"worker_id", text}, {"error_message", text}, {"retry_in", interval}}};
inline constexpr statement progress{
    "pgjq_progress",
    "SELECT pgjq.progress($1, $2, $3, $4)",
    {{"job_id", int8}, {"worker_id", text}, {"progress", int4}, {"current_stage", text}}};
inline constexpr statement heartbeat{
    "pgjq_heartbeat", "SELECT extract(epoch from pgjq.heartbeat($1, $2))", {{"job_id", int8}, {"worker_id", text}}};
inline constexpr statement complete{
    "pgjq_complete", "SELECT pgjq.complete($1, $2, $3)", {{"job_id", int8}, {"worker_id", text}, {"result", jsonb}}};
inline constexpr statement complete_batch{
    "pgjq_complete_batch", "SELECT pgjq.complete_batch($1, $2)", {{"job_ids", int8_array}, {"worker_id", text}}};
inline constexpr statement fail{
    "pgjq_fail",
    "SELECT pgjq.fail($1, $2, $3, $4)",
    {{"job_id", int8}, {"worker_id", text}, {"error_message", text}, {"retry_in", interval}}};

// Reading
inline constexpr statement get_job{
    "pgjq_get_job", "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.jobs WHERE id = $1", {{"job_id", int8}}};
inline constexpr statement get_job_with_headers{
    "pgjq_get_job_with_headers", "SELECT " PGJQ_JOB_COLUMNS_WITH_HEADERS " FROM pgjq.jobs WHERE id = $1", get_job};
// What jobs() and count_jobs() select: $1 queue, $2 status, $3 job_type, $4 older_than, $5 due_now,
// $6 before_id, $7 finished_before, $8 payload_contains (each NULL: any). The status is left for the server
// to type from `status = $2` (pgjq.job_status, whose OID is the database's): a text cast to it would stay a
// run-time conversion, which no index predicate is proven by, and finished_jobs_failed_idx would not serve.
// clang-format off
#define PGJQ_JOB_LISTING_MATCHES                                                                            \
  "($1::text IS NULL OR queue_name = $1) AND (status = $2 OR $2 IS NULL)"                                \
  " AND ($3::text IS NULL OR job_type = $3) AND ($4::interval IS NULL OR created_at <= now() - $4)"       \
  " AND ($5::boolean IS NULL OR (run_at <= now()) = $5) AND ($6::bigint IS NULL OR id < $6)"              \
  " AND ($7::timestamptz IS NULL OR coalesce(completed_at, failed_at, cancelled_at) < $7)"                \
  " AND ($8::jsonb IS NULL OR payload @> $8)"
#define PGJQ_JOB_LISTING_PARAMETERS                                                                         \
  {"queue_name", text}, {"status", unknown}, {"job_type", text}, {"older_than", interval},                   \
  {"due_now", boolean}, {"before_id", int8}, {"finished_before", timestamptz}, {"payload_contains", jsonb}
// clang-format on
inline constexpr statement list_jobs =
    planned_for_each_call({"pgjq_list_jobs",
                           "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.jobs WHERE " PGJQ_JOB_LISTING_MATCHES
                           " ORDER BY id DESC LIMIT $9 OFFSET $10",
                           {PGJQ_JOB_LISTING_PARAMETERS, {"limit", int4}, {"offset", int8}}});
inline constexpr statement list_jobs_with_headers{"pgjq_list_jobs_with_headers",
                                                  "SELECT " PGJQ_JOB_COLUMNS_WITH_HEADERS
                                                  " FROM pgjq.jobs WHERE " PGJQ_JOB_LISTING_MATCHES
                                                  " ORDER BY id DESC LIMIT $9 OFFSET $10",
                                                  list_jobs};
inline constexpr statement count_jobs = planned_for_each_call(
    {"pgjq_count_jobs",
     "SELECT count(*) FROM (SELECT FROM pgjq.jobs WHERE " PGJQ_JOB_LISTING_MATCHES " LIMIT $9) matching",
     {PGJQ_JOB_LISTING_PARAMETERS, {"at_most", int8}}});
inline constexpr statement metrics{"pgjq_metrics", "SELECT pgjq.metrics()", {}};
inline constexpr statement maintenance{
    "pgjq_maintenance",
    "SELECT d.datname, d.duty, coalesce(w.state, 'idle'), d.runs, d.done, d.errors, extract(epoch from d.last_run),"
    " extract(epoch from d.next_run), d.last_error FROM pgjq.maintenance_duties() d"
    " LEFT JOIN pgjq.worker_status() w ON w.worker_type = 'maintenance' AND w.datname = d.datname",
    {}};
inline constexpr statement maintenance_served{
    "pgjq_maintenance_served",
    "SELECT EXISTS (SELECT FROM pgjq.worker_status() WHERE worker_type = 'launcher'"
    " OR (datname = current_database() AND pid IS NOT NULL))",
    {}};
inline constexpr statement latency{"pgjq_latency",
                                   "SELECT queue_name, measure, jobs, sum_seconds, p50_seconds, p90_seconds,"
                                   " p99_seconds FROM pgjq.queue_latency ORDER BY queue_name, measure",
                                   {}};
inline constexpr statement queue_history{
    "pgjq_queue_history",
    "SELECT queue_name, extract(epoch from sampled_at), unfinished, in_flight, completed, failed, cancelled,"
    " (extract(epoch from next_job_age) * 1000000)::bigint, wait_jobs, wait_seconds, run_jobs, run_seconds"
    " FROM pgjq.queue_history WHERE sampled_at >= $1 AND sampled_at < $2 ORDER BY sampled_at, queue_name"
    " LIMIT 100000",
    {{"since", timestamptz}, {"until", timestamptz}}};
inline constexpr statement stats_all{
    "pgjq_stats_all", "SELECT " PGJQ_STATS_COLUMNS " FROM pgjq.queue_stats ORDER BY queue_name", {}};
inline constexpr statement stats_one{"pgjq_stats_one",
                                     "SELECT " PGJQ_STATS_COLUMNS " FROM pgjq.queue_stats WHERE queue_name = $1",
                                     {{"queue_name", text}}};

// Administration
inline constexpr statement create_queue{"pgjq_create_queue", "SELECT pgjq.create_queue($1)", {{"queue_name", text}}};
// create_queue takes only some settings; creating and then altering in one statement keeps the pair atomic,
// and alter_queue's NULL (= keep) leaves the server's defaults for the unset ones. OFFSET 0 keeps the
// subquery (and so the create) from being merged into the outer query.
inline constexpr statement create_queue_with_settings{
    "pgjq_create_queue_with_settings",
    "SELECT pgjq.alter_queue(s.q, $2, $3, $4, $5, $6, $7, $8, false, $9, $10, $11, $12, $13, $14) "
    "FROM (SELECT $1 AS q, pgjq.create_queue($1) OFFSET 0) AS s",
    {{"queue_name", text},
     {"max_pending", int8},
     {"fifo", boolean},
     {"max_attempts", int4},
     {"lease", interval},
     {"retry_base", interval},
     {"retry_cap", interval},
     {"retention", interval},
     {"keep_completed", boolean},
     {"group_concurrency", int4},
     {"max_running", int4},
     {"rate_limit", int4},
     {"rate_interval", interval},
     {"job_timeout", interval}}};
inline constexpr statement alter_queue{
    "pgjq_alter_queue",
    "SELECT pgjq.alter_queue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    {{"queue_name", text},
     {"max_pending", int8},
     {"fifo", boolean},
     {"max_attempts", int4},
     {"lease", interval},
     {"retry_base", interval},
     {"retry_cap", interval},
     {"retention", interval},
     {"clear_max_pending", boolean},
     {"keep_completed", boolean},
     {"group_concurrency", int4},
     {"max_running", int4},
     {"rate_limit", int4},
     {"rate_interval", interval},
     {"job_timeout", interval}}};
inline constexpr statement drop_queue{
    "pgjq_drop_queue", "SELECT pgjq.drop_queue($1, $2)", {{"queue_name", text}, {"force", boolean}}};
inline constexpr statement pause_queue{"pgjq_pause_queue", "SELECT pgjq.pause_queue($1)", {{"queue_name", text}}};
inline constexpr statement resume_queue{"pgjq_resume_queue", "SELECT pgjq.resume_queue($1)", {{"queue_name", text}}};
inline constexpr statement retry{"pgjq_retry", "SELECT pgjq.retry($1)", {{"job_id", int8}}};
inline constexpr statement recover_stale{"pgjq_recover_stale", "SELECT pgjq.recover_stale()", {}};
inline constexpr statement prune{"pgjq_prune", "SELECT pgjq.prune($1)", {{"older_than", interval}}};
// Bulk operations: each names its time range after what it looks at (failed_, created_, finished_).
inline constexpr statement retry_failed{"pgjq_retry_failed",
                                        "SELECT pgjq.retry_failed($1, $2, $3, $4, $5)",
                                        {{"queue_name", text},
                                         {"job_type", text},
                                         {"failed_after", timestamptz},
                                         {"failed_before", timestamptz},
                                         {"max_jobs", int4}}};
inline constexpr statement cancel_jobs{"pgjq_cancel_jobs",
                                       "SELECT pgjq.cancel_jobs($1, $2, $3, $4, $5::pgjq.job_status, $6)",
                                       {{"queue_name", text},
                                        {"job_type", text},
                                        {"created_after", timestamptz},
                                        {"created_before", timestamptz},
                                        {"status", text},
                                        {"max_jobs", int4}}};
inline constexpr statement delete_jobs{"pgjq_delete_jobs",
                                       "SELECT pgjq.delete_jobs($1, $2, $3, $4, $5::pgjq.job_status, $6)",
                                       {{"queue_name", text},
                                        {"job_type", text},
                                        {"finished_after", timestamptz},
                                        {"finished_before", timestamptz},
                                        {"status", text},
                                        {"max_jobs", int4}}};

// Periodic jobs
inline constexpr statement schedule{"pgjq_schedule",
                                    "SELECT extract(epoch from pgjq.schedule($1, $2, $3, $4, $5, $6, $7, $8, $9, $10))",
                                    {{"schedule_name", text},
                                     {"cron", text},
                                     {"job_type", text},
                                     {"payload", jsonb},
                                     {"queue_name", text},
                                     {"priority", int4},
                                     {"max_attempts", int4},
                                     {"time_zone", text},
                                     {"missed", text},
                                     {"paused", boolean}}};
inline constexpr statement unschedule{"pgjq_unschedule", "SELECT pgjq.unschedule($1)", {{"schedule_name", text}}};
inline constexpr statement pause_schedule{
    "pgjq_pause_schedule", "SELECT pgjq.pause_schedule($1)", {{"schedule_name", text}}};
inline constexpr statement resume_schedule{
    "pgjq_resume_schedule", "SELECT pgjq.resume_schedule($1)", {{"schedule_name", text}}};
inline constexpr statement schedules_all{
    "pgjq_schedules_all", "SELECT " PGJQ_SCHEDULE_COLUMNS " FROM pgjq.schedules ORDER BY schedule_name", {}};
inline constexpr statement schedule_one{"pgjq_schedule_one",
                                        "SELECT " PGJQ_SCHEDULE_COLUMNS " FROM pgjq.schedules WHERE schedule_name = $1",
                                        {{"schedule_name", text}}};
inline constexpr statement next_firings{
    "pgjq_next_firings",
    "SELECT extract(epoch from f) FROM pgjq.next_firings($1, $2, coalesce($3, now()), $4) f",
    {{"cron", text}, {"time_zone", text}, {"after", timestamptz}, {"count", int4}}};

// Workflows (0.3.0)
inline constexpr statement workflows{"pgjq_workflows",
                                     "SELECT " PGJQ_WORKFLOW_COLUMNS " FROM pgjq.workflows"
                                     " WHERE ($1::text IS NULL OR status = $1) ORDER BY id DESC LIMIT $2",
                                     {{"status", text}, {"limit", int4}}};
inline constexpr statement workflow_one{
    "pgjq_workflow_one", "SELECT " PGJQ_WORKFLOW_COLUMNS " FROM pgjq.workflows WHERE id = $1", {{"workflow_id", int8}}};
inline constexpr statement workflow_steps{"pgjq_workflow_steps",
                                          "SELECT " PGJQ_WORKFLOW_STEP_COLUMNS
                                          " FROM pgjq.workflow_steps($1) ORDER BY job_id",
                                          {{"workflow_id", int8}}};
inline constexpr statement cancel_workflow{
    "pgjq_cancel_workflow", "SELECT pgjq.cancel_workflow($1)", {{"workflow_id", int8}}};
inline constexpr statement retry_workflow{
    "pgjq_retry_workflow", "SELECT pgjq.retry_workflow($1)", {{"workflow_id", int8}}};
inline constexpr statement start_workflow{"pgjq_start_workflow",
                                          "SELECT pgjq.start_workflow($1, $2, $3, $4, $5, $6)",
                                          {{"workflow_name", text},
                                           {"steps", jsonb},
                                           {"workflow_key", text},
                                           {"on_failure", text},
                                           {"retention", interval},
                                           {"parent_job", int8}}};
inline constexpr statement signal{
    "pgjq_signal",
    "SELECT pgjq.signal($1, $2, $3, $4)",
    {{"event_name", text}, {"payload", jsonb}, {"queue_name", text}, {"keep_for", interval}}};
inline constexpr statement step_results{"pgjq_step_results",
                                        "SELECT step_name, job_id, status, result, last_error"
                                        " FROM pgjq.step_results($1, $2, $3)",
                                        {{"job_id", int8}, {"after_step", text}, {"max_results", int4}}};
inline constexpr statement checkpoint{"pgjq_checkpoint",
                                      "SELECT pgjq.checkpoint($1, $2, $3, $4)",
                                      {{"job_id", int8}, {"worker_id", text}, {"name", text}, {"value", jsonb}}};
inline constexpr statement checkpoints{"pgjq_checkpoints", "SELECT pgjq.checkpoints($1)", {{"job_id", int8}}};
inline constexpr statement get_queue{
    "pgjq_get_queue",
    "SELECT queue_name, max_pending, fifo, max_attempts, extract(epoch from lease), extract(epoch from retry_base),"
    " extract(epoch from retry_cap), extract(epoch from retention), keep_completed, paused, group_concurrency,"
    " max_running, rate_limit, extract(epoch from rate_interval), extract(epoch from job_timeout),"
    " extract(epoch from created_at) FROM pgjq.queues WHERE queue_name = $1",
    {{"queue_name", text}}};
inline constexpr statement queue_workers{
    "pgjq_queue_workers",
    "SELECT worker_id, claimed_by::text, count(*), extract(epoch from min(claimed_at)),"
    " extract(epoch from min(lease_expires_at)) FROM pgjq.jobs"
    " WHERE queue_name = $1 AND status IN ('claimed', 'running') AND worker_id IS NOT NULL"
    " GROUP BY worker_id, claimed_by ORDER BY count(*) DESC, worker_id",
    {{"queue_name", text}}};
// What the database's pgjq has beyond 0.2.0 (connection::server_features).
inline constexpr statement server_features{
    "pgjq_server_features",
    "SELECT EXISTS (SELECT FROM pg_catalog.pg_attribute WHERE attrelid = pg_catalog.to_regclass('pgjq.jobs')"
    "               AND attname = 'headers' AND NOT attisdropped),"
    " pg_catalog.to_regclass('pgjq.job_errors') IS NOT NULL,"
    " pg_catalog.to_regprocedure('pgjq.holds_capability(text, text)') IS NOT NULL,"
    " pg_catalog.to_regclass('pgjq.queue_history') IS NOT NULL",
    {}};
inline constexpr statement holds_capability{
    "pgjq_holds_capability", "SELECT pgjq.holds_capability($1, $2)", {{"capability", text}, {"queue_name", text}}};
inline constexpr statement job_errors{"pgjq_job_errors",
                                      "SELECT job_id, failure, attempt, worker_id, extract(epoch from started_at),"
                                      " extract(epoch from failed_at), error, failures_not_kept"
                                      " FROM pgjq.job_errors WHERE job_id = $1 ORDER BY failure",
                                      {{"job_id", int8}}};
inline constexpr statement wait_for_event{
    "pgjq_wait_for_event",
    "SELECT pgjq.wait_for_event($1, $2, $3, $4)",
    {{"job_id", int8}, {"worker_id", text}, {"event_name", text}, {"timeout", interval}}};
inline constexpr statement sleep_until{
    "pgjq_sleep_until",
    "SELECT pgjq.sleep_until($1, $2, $3, $4)",
    {{"job_id", int8}, {"worker_id", text}, {"name", text}, {"wake_at", timestamptz}}};
inline constexpr statement add_steps{
    "pgjq_add_steps", "SELECT pgjq.add_steps($1, $2, $3)", {{"job_id", int8}, {"worker_id", text}, {"steps", jsonb}}};
} // namespace calls

} // namespace pgjq::detail
