// statements.hpp (internal): the call catalogue. Each SQL function the client calls is one statement here:
// its prepared-statement name, its SQL and the types of its parameters, in one table, so that a call and
// its parameters cannot drift apart. connection.cpp binds the values; session.cpp prepares each statement
// once per session.
#pragma once

#include <libpq-fe.h>

#include "rows.hpp"

namespace pgjq::detail
{

// PostgreSQL's built-in type OIDs (fixed in its catalog, pg_type.dat), given to PQprepare so that a
// statement's types never depend on inference.
namespace type
{
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

struct statement
{
  const char *name; // starts with "pgjq_", so that a borrowed session can tell ours from the caller's
  const char *sql;
  int parameter_count;
  Oid parameter_types[16];
};

namespace calls
{
using namespace type;

// Producers
// Every argument of the producer functions: job_type, payload(s), queue_name, priority, run_at,
// max_attempts, unique_key(s), group_key(s), depends_on, timeout, unique_for.
inline constexpr statement enqueue{
    "pgjq_enqueue",
    "SELECT pgjq.enqueue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    11,
    {text, jsonb, text, int4, timestamptz, int4, text, text, int8_array, interval, interval}};
inline constexpr statement try_enqueue{
    "pgjq_try_enqueue",
    "SELECT pgjq.try_enqueue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    11,
    {text, jsonb, text, int4, timestamptz, int4, text, text, int8_array, interval, interval}};
inline constexpr statement enqueue_batch{
    "pgjq_enqueue_batch",
    "SELECT pgjq.enqueue_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    11,
    {text, jsonb, text, int4, timestamptz, int4, text_array, text_array, int8_array, interval, interval}};
inline constexpr statement cancel{"pgjq_cancel", "SELECT pgjq.cancel($1)", 1, {int8}};

// Workers
inline constexpr statement claim{"pgjq_claim",
                                 "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.claim_job_batch($1, $2, $3, $4)",
                                 4,
                                 {text, text_array, int4, text}};
inline constexpr statement complete_and_claim{"pgjq_complete_and_claim",
                                              "SELECT " PGJQ_JOB_COLUMNS
                                              " FROM pgjq.complete_and_claim($1, $2, $3, $4, $5)",
                                              5,
                                              {text, int8_array, text_array, int4, text}};
inline constexpr statement claim_in_transaction{"pgjq_claim_in_transaction",
                                                "SELECT " PGJQ_JOB_COLUMNS
                                                " FROM pgjq.claim_in_transaction($1, $2, $3, $4)",
                                                4,
                                                {text, text_array, int4, text}};
inline constexpr statement complete_in_transaction{
    "pgjq_complete_in_transaction", "SELECT pgjq.complete_in_transaction($1, $2)", 2, {int8_array, text}};
inline constexpr statement fail_in_transaction{
    "pgjq_fail_in_transaction", "SELECT pgjq.fail_in_transaction($1, $2, $3, $4)", 4, {int8, text, text, interval}};
inline constexpr statement progress{
    "pgjq_progress", "SELECT pgjq.progress($1, $2, $3, $4)", 4, {int8, text, int4, text}};
inline constexpr statement heartbeat{
    "pgjq_heartbeat", "SELECT extract(epoch from pgjq.heartbeat($1, $2))", 2, {int8, text}};
inline constexpr statement complete{"pgjq_complete", "SELECT pgjq.complete($1, $2, $3)", 3, {int8, text, jsonb}};
inline constexpr statement complete_batch{
    "pgjq_complete_batch", "SELECT pgjq.complete_batch($1, $2)", 2, {int8_array, text}};
inline constexpr statement fail{"pgjq_fail", "SELECT pgjq.fail($1, $2, $3, $4)", 4, {int8, text, text, interval}};

// Reading
inline constexpr statement get_job{
    "pgjq_get_job", "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.jobs WHERE id = $1", 1, {int8}};
inline constexpr statement list_jobs{
    "pgjq_list_jobs",
    "SELECT " PGJQ_JOB_COLUMNS " FROM pgjq.jobs WHERE ($1::text IS NULL OR queue_name = $1)"
    " AND ($2::text IS NULL OR status = $2::pgjq.job_status) AND ($3::text IS NULL OR job_type = $3)"
    " AND ($4::interval IS NULL OR created_at <= now() - $4) ORDER BY id DESC LIMIT $5 OFFSET $6",
    6,
    {text, text, text, interval, int4, int8}};
inline constexpr statement metrics{"pgjq_metrics", "SELECT pgjq.metrics()", 0, {}};
inline constexpr statement maintenance{
    "pgjq_maintenance",
    "SELECT d.datname, d.duty, coalesce(w.state, 'idle'), d.runs, d.done, d.errors, extract(epoch from d.last_run),"
    " extract(epoch from d.next_run), d.last_error FROM pgjq.maintenance_duties() d"
    " LEFT JOIN pgjq.worker_status() w ON w.worker_type = 'maintenance' AND w.datname = d.datname",
    0,
    {}};
inline constexpr statement latency{"pgjq_latency",
                                   "SELECT queue_name, measure, jobs, sum_seconds, p50_seconds, p90_seconds,"
                                   " p99_seconds FROM pgjq.queue_latency ORDER BY queue_name, measure",
                                   0,
                                   {}};
inline constexpr statement stats_all{
    "pgjq_stats_all", "SELECT " PGJQ_STATS_COLUMNS " FROM pgjq.queue_stats ORDER BY queue_name", 0, {}};
inline constexpr statement stats_one{
    "pgjq_stats_one", "SELECT " PGJQ_STATS_COLUMNS " FROM pgjq.queue_stats WHERE queue_name = $1", 1, {text}};

// Administration
inline constexpr statement create_queue{"pgjq_create_queue", "SELECT pgjq.create_queue($1)", 1, {text}};
// create_queue takes only some settings; creating and then altering in one statement keeps the pair atomic,
// and alter_queue's NULL (= keep) leaves the server's defaults for the unset ones. OFFSET 0 keeps the
// subquery (and so the create) from being merged into the outer query.
inline constexpr statement create_queue_with_settings{
    "pgjq_create_queue_with_settings",
    "SELECT pgjq.alter_queue(s.q, $2, $3, $4, $5, $6, $7, $8, false, $9, $10, $11, $12, $13, $14) "
    "FROM (SELECT $1 AS q, pgjq.create_queue($1) OFFSET 0) AS s",
    14,
    {text, int8, boolean, int4, interval, interval, interval, interval, boolean, int4, int4, int4, interval, interval}};
inline constexpr statement alter_queue{
    "pgjq_alter_queue",
    "SELECT pgjq.alter_queue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    15,
    {text, int8, boolean, int4, interval, interval, interval, interval, boolean, boolean, int4, int4, int4, interval,
     interval}};
inline constexpr statement drop_queue{"pgjq_drop_queue", "SELECT pgjq.drop_queue($1, $2)", 2, {text, boolean}};
inline constexpr statement pause_queue{"pgjq_pause_queue", "SELECT pgjq.pause_queue($1)", 1, {text}};
inline constexpr statement resume_queue{"pgjq_resume_queue", "SELECT pgjq.resume_queue($1)", 1, {text}};
inline constexpr statement retry{"pgjq_retry", "SELECT pgjq.retry($1)", 1, {int8}};
inline constexpr statement recover_stale{"pgjq_recover_stale", "SELECT pgjq.recover_stale()", 0, {}};
inline constexpr statement prune{"pgjq_prune", "SELECT pgjq.prune($1)", 1, {interval}};
// Bulk: queue_name, job_type, after, before, (status,) max_jobs
inline constexpr statement retry_failed{"pgjq_retry_failed",
                                        "SELECT pgjq.retry_failed($1, $2, $3, $4, $5)",
                                        5,
                                        {text, text, timestamptz, timestamptz, int4}};
inline constexpr statement cancel_jobs{"pgjq_cancel_jobs",
                                       "SELECT pgjq.cancel_jobs($1, $2, $3, $4, $5::pgjq.job_status, $6)",
                                       6,
                                       {text, text, timestamptz, timestamptz, text, int4}};
inline constexpr statement delete_jobs{"pgjq_delete_jobs",
                                       "SELECT pgjq.delete_jobs($1, $2, $3, $4, $5::pgjq.job_status, $6)",
                                       6,
                                       {text, text, timestamptz, timestamptz, text, int4}};

// Periodic jobs: schedule_name, cron, job_type, payload, queue_name, priority, max_attempts, time_zone,
// missed, paused
inline constexpr statement schedule{"pgjq_schedule",
                                    "SELECT extract(epoch from pgjq.schedule($1, $2, $3, $4, $5, $6, $7, $8, $9, $10))",
                                    10,
                                    {text, text, text, jsonb, text, int4, int4, text, text, boolean}};
inline constexpr statement unschedule{"pgjq_unschedule", "SELECT pgjq.unschedule($1)", 1, {text}};
inline constexpr statement pause_schedule{"pgjq_pause_schedule", "SELECT pgjq.pause_schedule($1)", 1, {text}};
inline constexpr statement resume_schedule{"pgjq_resume_schedule", "SELECT pgjq.resume_schedule($1)", 1, {text}};
inline constexpr statement schedules_all{
    "pgjq_schedules_all", "SELECT " PGJQ_SCHEDULE_COLUMNS " FROM pgjq.schedules ORDER BY schedule_name", 0, {}};
inline constexpr statement schedule_one{
    "pgjq_schedule_one", "SELECT " PGJQ_SCHEDULE_COLUMNS " FROM pgjq.schedules WHERE schedule_name = $1", 1, {text}};
inline constexpr statement next_firings{
    "pgjq_next_firings",
    "SELECT extract(epoch from f) FROM pgjq.next_firings($1, $2, coalesce($3, now()), $4) f",
    4,
    {text, text, timestamptz, int4}};
} // namespace calls

} // namespace pgjq::detail
