// forms_0_1_0.cpp: the statements a database still at 0.1.0 runs, where its schema needs a form other than the
// current one (0.1.0 has no roles on jobs, no timeouts, caps, rate limits, groups or dependencies, and no
// finished counts in its counter rows). Spelled out in full and frozen, as pgjq--0.1.0.sql is: they change
// only if a bug in serving 0.1.0 databases is found, and go when 0.1.0 is no longer served. Each parameter
// means what it means in the current form of the statement of the same name, whose values the caller passes.
// A statement on a table that 0.1.0 does not have (grants, rate limits, unique windows, dependencies) finds
// nothing there.
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

struct form_0_1_0 {
    const char* name;
    plan_text text;
};

// clang-format off
const form_0_1_0 k_forms[] = {
    {"fail.held",
     {
      "SELECT j.attempts, j.max_attempts, q.retry_base, q.retry_cap  FROM pgjq.live_jobs j JOIN pgjq.queues "
      "q ON q.queue_name = j.queue_name WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending' FOR "
      "UPDATE OF j",
      2,
      {INT8OID, TEXTOID}}},
    {"fail.requeue",
     {
      "UPDATE pgjq.live_jobs SET status = 'pending', run_at = now() + $3, worker_id = NULL, "
      "lease_expires_at = NULL, last_error = $2 WHERE id = $1",
      3,
      {INT8OID, TEXTOID, INTERVALOID}}},
    {"claim.queue",
     {
      "SELECT paused, fifo, lease, 0, 0, NULL::interval, NULL::interval FROM pgjq.queues WHERE queue_name = "
      "$1",
      1,
      {TEXTOID}}},
    {"claim.fifo_busy",
     {
      "SELECT EXISTS (SELECT 1 FROM pgjq.live_jobs WHERE queue_name = $1 AND status <> 'pending')",
      1,
      {TEXTOID}}},
    {"claim.in_flight",
     {
      "SELECT 0::bigint",
      2,
      {TEXTOID, INT8ARRAYOID}}},
    {"claim.claim_any",
     {
      "WITH picked AS MATERIALIZED (  SELECT id FROM pgjq.live_jobs   WHERE queue_name = $1 AND status = "
      "'pending' AND run_at <= now()   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED), claimed "
      "AS (UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, claimed_at = now(), heartbeat_at "
      "= now(), lease_expires_at = now() + $4, attempts = j.attempts + 1 WHERE j.id = ANY (ARRAY(SELECT id "
      "FROM picked)) RETURNING j.*) SELECT c.id, c.queue_name, c.job_type, c.priority, c.status, c.payload, "
      "NULL::jsonb, c.run_at, c.unique_key, c.progress, c.current_stage, c.events_count, c.worker_id, "
      "c.claimed_at, c.heartbeat_at, c.lease_expires_at, c.created_at, c.started_at, NULL::timestamptz, "
      "NULL::timestamptz, NULL::timestamptz, c.attempts, c.max_attempts, c.last_error FROM claimed c ORDER "
      "BY c.priority DESC, c.id",
      4,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID}}},
    {"claim.claim_types",
     {
      "WITH picked AS MATERIALIZED (  SELECT id FROM pgjq.live_jobs   WHERE queue_name = $1 AND status = "
      "'pending' AND run_at <= now() AND job_type = ANY ($5)   ORDER BY priority DESC, id LIMIT $2 FOR "
      "UPDATE SKIP LOCKED), claimed AS (UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, "
      "claimed_at = now(), heartbeat_at = now(), lease_expires_at = now() + $4, attempts = j.attempts + 1 "
      "WHERE j.id = ANY (ARRAY(SELECT id FROM picked)) RETURNING j.*) SELECT c.id, c.queue_name, "
      "c.job_type, c.priority, c.status, c.payload, NULL::jsonb, c.run_at, c.unique_key, c.progress, "
      "c.current_stage, c.events_count, c.worker_id, c.claimed_at, c.heartbeat_at, c.lease_expires_at, "
      "c.created_at, c.started_at, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, c.attempts, "
      "c.max_attempts, c.last_error FROM claimed c ORDER BY c.priority DESC, c.id",
      5,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID}}},
    {"claim.fifo_claim",
     {
      "WITH oldest AS MATERIALIZED (  SELECT id, job_type FROM pgjq.live_jobs   WHERE queue_name = $1 AND "
      "status = 'pending' AND run_at <= now()   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE), picked AS "
      "(SELECT id FROM oldest WHERE $5::text[] IS NULL OR job_type = ANY ($5)), claimed AS (UPDATE "
      "pgjq.live_jobs j SET status = 'claimed', worker_id = $3, claimed_at = now(), heartbeat_at = now(), "
      "lease_expires_at = now() + $4, attempts = j.attempts + 1 WHERE j.id = ANY (ARRAY(SELECT id FROM "
      "picked)) RETURNING j.*) SELECT c.id, c.queue_name, c.job_type, c.priority, c.status, c.payload, "
      "NULL::jsonb, c.run_at, c.unique_key, c.progress, c.current_stage, c.events_count, c.worker_id, "
      "c.claimed_at, c.heartbeat_at, c.lease_expires_at, c.created_at, c.started_at, NULL::timestamptz, "
      "NULL::timestamptz, NULL::timestamptz, c.attempts, c.max_attempts, c.last_error FROM claimed c ORDER "
      "BY c.priority DESC, c.id",
      5,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID}}},
    {"claim.lock_any",
     {
      "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, "
      "NULL::jsonb, j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), "
      "NULL::timestamptz, NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, "
      "NULL::timestamptz, j.attempts + 1, j.max_attempts, j.last_error FROM pgjq.live_jobs j WHERE "
      "j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now() AND j.id <> ALL ($4) ORDER BY "
      "j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED",
      4,
      {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID}}},
    {"claim.lock_types",
     {
      "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, "
      "NULL::jsonb, j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), "
      "NULL::timestamptz, NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, "
      "NULL::timestamptz, j.attempts + 1, j.max_attempts, j.last_error FROM pgjq.live_jobs j WHERE "
      "j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now() AND j.id <> ALL ($4)   AND "
      "j.job_type = ANY ($5) ORDER BY j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED",
      5,
      {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID}}},
    {"claim.fifo_lock_oldest",
     {
      "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, "
      "NULL::jsonb, j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), "
      "NULL::timestamptz, NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, "
      "NULL::timestamptz, j.attempts + 1, j.max_attempts, j.last_error, $5::text[] IS NULL OR j.job_type = "
      "ANY ($5) FROM pgjq.live_jobs j WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= "
      "now() ORDER BY j.priority DESC, j.id LIMIT 1 FOR UPDATE",
      5,
      {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID}}},
    {"heartbeat.heartbeat",
     {
      "UPDATE pgjq.live_jobs j SET heartbeat_at = now(), lease_expires_at = now() + q.lease  FROM "
      "pgjq.queues q WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending' AND q.queue_name = "
      "j.queue_name RETURNING j.lease_expires_at",
      2,
      {INT8OID, TEXTOID}}},
    {"heartbeat.progress",
     {
      "UPDATE pgjq.live_jobs j SET status = 'running', progress = $3, current_stage = coalesce($4, "
      "j.current_stage), events_count = j.events_count + 1, started_at = CASE WHEN j.status = 'claimed' "
      "THEN now() ELSE j.started_at END, heartbeat_at = now(), lease_expires_at = now() + q.lease  FROM "
      "pgjq.queues q WHERE j.id = $1 AND j.worker_id = $2 AND j.status <> 'pending' AND q.queue_name = "
      "j.queue_name",
      4,
      {INT8OID, TEXTOID, INT4OID, TEXTOID}}},
    {"revive.revive",
     {
      "WITH candidates AS (  SELECT * FROM pgjq.finished_jobs WHERE id = ANY ($1) AND status IN ('failed', "
      "'cancelled')   ORDER BY id FOR UPDATE), revived AS (  INSERT INTO pgjq.live_jobs (id, queue_name, "
      "job_type, priority, payload, run_at, unique_key,    created_at, max_attempts, last_error)  SELECT "
      "id, queue_name, job_type, priority, payload, now(), unique_key, created_at, max_attempts,    "
      "last_error FROM candidates ORDER BY id  ON CONFLICT (queue_name, unique_key) WHERE unique_key IS NOT "
      "NULL DO NOTHING  RETURNING queue_name, NULL::text AS group_key, id), removed AS (DELETE FROM "
      "pgjq.finished_jobs f USING revived r WHERE f.id = r.id) SELECT queue_name, group_key FROM revived "
      "ORDER BY queue_name",
      1,
      {INT8ARRAYOID}}},
    {"queue_cache.read",
     {
      "SELECT queue_name, max_attempts, fifo, max_pending IS NOT NULL, keep_completed, false  FROM "
      "pgjq.queues ORDER BY queue_name COLLATE \"C\"",
      0,
      {}}},
    {"refusals.job_state",
     {
      "SELECT status::text, worker_id, NULL::oid, queue_name, NULL::oid, false, NULL::text FROM pgjq.jobs "
      "WHERE id = $1",
      1,
      {INT8OID}}},
    {"leases.requeue_expired",
     {
      "WITH expired AS MATERIALIZED (SELECT id FROM pgjq.live_jobs WHERE status <> 'pending' AND "
      "lease_expires_at < now() AND attempts < max_attempts FOR UPDATE SKIP LOCKED) UPDATE pgjq.live_jobs j "
      "SET status = 'pending', run_at = now(), worker_id = NULL,   lease_expires_at = NULL, last_error = "
      "pg_catalog.format('lease expired: worker %s stopped reporting', j.worker_id)  WHERE j.id = ANY "
      "(ARRAY(SELECT id FROM expired))",
      0,
      {}}},
    {"leases.spent_expired",
     {
      "SELECT coalesce(array_agg(id), '{}'), '{}'::bigint[]  FROM (SELECT id FROM pgjq.live_jobs WHERE "
      "status <> 'pending' AND lease_expires_at < now() AND attempts >= max_attempts FOR UPDATE SKIP "
      "LOCKED) AS spent",
      0,
      {}}},
    {"leases.next_expiry",
     {
      "SELECT min(lease_expires_at) FILTER (WHERE lease_expires_at > now()),       "
      "coalesce(bool_or(lease_expires_at <= now()), false)  FROM pgjq.live_jobs WHERE status <> 'pending'",
      0,
      {}}},
    {"lifecycle.archive",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id "
      "= $2 AND status <> 'pending'))  RETURNING *), archived AS (  INSERT INTO pgjq.finished_jobs (id, "
      "queue_name, job_type, priority, status, payload, result, run_at,    unique_key, progress, "
      "current_stage, events_count, worker_id, claimed_at, heartbeat_at,    lease_expires_at, created_at, "
      "started_at, completed_at, failed_at, cancelled_at, finished_at,    attempts, max_attempts, "
      "last_error)  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payload, $4, run_at,    "
      "unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage, events_count,    "
      "coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,    CASE WHEN $6 IS "
      "NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,    created_at, CASE WHEN "
      "$6 IS NULL THEN started_at ELSE now() END,    CASE WHEN $3 = 'completed' THEN statement_timestamp() "
      "END,    CASE WHEN $3 = 'failed' THEN statement_timestamp() END,    CASE WHEN $3 = 'cancelled' THEN "
      "statement_timestamp() END, statement_timestamp(),    attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 "
      "END, max_attempts, coalesce($5, last_error)  FROM done) SELECT count(*), coalesce(array_agg(id), "
      "'{}'), min(queue_name),        CASE WHEN min(queue_name) <> max(queue_name) THEN "
      "array_agg(queue_name) END, NULL::text[], NULL::text[], NULL::float8[], NULL::float8[] FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"lifecycle.archive_writing_depth",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id "
      "= $2 AND status <> 'pending'))  RETURNING *), archived AS (  INSERT INTO pgjq.finished_jobs (id, "
      "queue_name, job_type, priority, status, payload, result, run_at,    unique_key, progress, "
      "current_stage, events_count, worker_id, claimed_at, heartbeat_at,    lease_expires_at, created_at, "
      "started_at, completed_at, failed_at, cancelled_at, finished_at,    attempts, max_attempts, "
      "last_error)  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payload, $4, run_at,    "
      "unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage, events_count,    "
      "coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,    CASE WHEN $6 IS "
      "NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,    created_at, CASE WHEN "
      "$6 IS NULL THEN started_at ELSE now() END,    CASE WHEN $3 = 'completed' THEN statement_timestamp() "
      "END,    CASE WHEN $3 = 'failed' THEN statement_timestamp() END,    CASE WHEN $3 = 'cancelled' THEN "
      "statement_timestamp() END, statement_timestamp(),    attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 "
      "END, max_attempts, coalesce($5, last_error)  FROM done), counted AS (UPDATE pgjq.queue_depth d SET "
      "unfinished = d.unfinished - g.n FROM (SELECT queue_name, count(*) AS n FROM done GROUP BY "
      "queue_name) g WHERE d.queue_name = g.queue_name AND d.slot = $9) SELECT count(*), "
      "coalesce(array_agg(id), '{}'), min(queue_name),        CASE WHEN min(queue_name) <> max(queue_name) "
      "THEN array_agg(queue_name) END, NULL::text[], NULL::text[], NULL::float8[], NULL::float8[] FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"lifecycle.archive_some_discarded",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id "
      "= $2 AND status <> 'pending'))  RETURNING *, queue_name <> ALL ($7) AS kept), archived AS (  INSERT "
      "INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, result, run_at,    "
      "unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at,    "
      "lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, finished_at,    "
      "attempts, max_attempts, last_error)  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, "
      "payload, $4, run_at,    unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, "
      "current_stage, events_count,    coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE "
      "now() END,    CASE WHEN $6 IS NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at "
      "END,    created_at, CASE WHEN $6 IS NULL THEN started_at ELSE now() END,    CASE WHEN $3 = "
      "'completed' THEN statement_timestamp() END,    CASE WHEN $3 = 'failed' THEN statement_timestamp() "
      "END,    CASE WHEN $3 = 'cancelled' THEN statement_timestamp() END, statement_timestamp(),    "
      "attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 END, max_attempts, coalesce($5, last_error)  FROM done "
      "WHERE kept) SELECT count(*), coalesce(array_agg(id), '{}'), min(queue_name),        CASE WHEN "
      "min(queue_name) <> max(queue_name) THEN array_agg(queue_name) END, NULL::text[], NULL::text[], "
      "NULL::float8[], NULL::float8[], array_agg(id) FILTER (WHERE NOT kept), array_agg(queue_name) FILTER "
      "(WHERE NOT kept) FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"lifecycle.archive_some_discarded_writing_depth",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id "
      "= $2 AND status <> 'pending'))  RETURNING *, queue_name <> ALL ($7) AS kept), archived AS (  INSERT "
      "INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, result, run_at,    "
      "unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at,    "
      "lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, finished_at,    "
      "attempts, max_attempts, last_error)  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, "
      "payload, $4, run_at,    unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, "
      "current_stage, events_count,    coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE "
      "now() END,    CASE WHEN $6 IS NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at "
      "END,    created_at, CASE WHEN $6 IS NULL THEN started_at ELSE now() END,    CASE WHEN $3 = "
      "'completed' THEN statement_timestamp() END,    CASE WHEN $3 = 'failed' THEN statement_timestamp() "
      "END,    CASE WHEN $3 = 'cancelled' THEN statement_timestamp() END, statement_timestamp(),    "
      "attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 END, max_attempts, coalesce($5, last_error)  FROM done "
      "WHERE kept), counted AS (UPDATE pgjq.queue_depth d SET unfinished = d.unfinished - g.n FROM (SELECT "
      "queue_name, count(*) AS n FROM done GROUP BY queue_name) g WHERE d.queue_name = g.queue_name AND "
      "d.slot = $9) SELECT count(*), coalesce(array_agg(id), '{}'), min(queue_name),        CASE WHEN "
      "min(queue_name) <> max(queue_name) THEN array_agg(queue_name) END, NULL::text[], NULL::text[], "
      "NULL::float8[], NULL::float8[], array_agg(id) FILTER (WHERE NOT kept), array_agg(queue_name) FILTER "
      "(WHERE NOT kept) FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"enqueue.insert",
     {
      "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts) VALUES "
      "($1, $2, $3, $4, coalesce($5, now()), $6) RETURNING id",
      6,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID}}},
    {"enqueue.insert_unique",
     {
      "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, "
      "unique_key) VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7) ON CONFLICT (queue_name, "
      "unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
      7,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID}}},
    {"enqueue.insert_batch",
     {
      "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts) "
      "SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6   FROM ROWS FROM "
      "(pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
      7,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID}}},
    {"queues.insert_queue",
     {
      "INSERT INTO pgjq.queues (queue_name, max_pending, fifo, max_attempts, lease) VALUES ($1, $2, $3, $4, "
      "$5) ON CONFLICT (queue_name) DO NOTHING RETURNING 1",
      5,
      {TEXTOID, INT8OID, BOOLOID, INT4OID, INTERVALOID}}},
    {"queues.alter_queue",
     {
      "UPDATE pgjq.queues SET max_pending  = CASE WHEN $9 THEN NULL ELSE coalesce($2, max_pending) END, "
      "fifo         = coalesce($3, fifo), max_attempts = coalesce($4, max_attempts), lease        = "
      "coalesce($5, lease), retry_base   = coalesce($6, retry_base), retry_cap    = coalesce($7, "
      "retry_cap), retention    = coalesce($8, retention), keep_completed = coalesce($10, keep_completed) "
      "WHERE queue_name = $1 RETURNING retry_base::text, retry_cap::text, retry_cap >= retry_base",
      10,
      {TEXTOID, INT8OID, BOOLOID, INT4OID, INTERVALOID, INTERVALOID, INTERVALOID, INTERVALOID, BOOLOID, BOOLOID}}},
    {"unique_keys.find_unique",
     {"SELECT id FROM pgjq.live_jobs WHERE queue_name = $1 AND unique_key = $2", 2, {TEXTOID, TEXTOID}}},
    {"retry.key_holder",
     {
      "SELECT f.unique_key, l.id, l.status::text FROM pgjq.finished_jobs f  JOIN pgjq.live_jobs l ON "
      "l.queue_name = f.queue_name AND l.unique_key = f.unique_key WHERE f.id = $1",
      1,
      {INT8OID}}},
    {"queues.delete_grants", {"SELECT WHERE false", 1, {TEXTOID}}},
    {"queues.delete_queue_state", {"SELECT WHERE false", 1, {TEXTOID}}},
    {"queues.orphaned_dependents", {"SELECT NULL::bigint, NULL::bigint WHERE false", 1, {TEXTOID}}},
    {"queues.delete_dependencies", {"SELECT WHERE false", 1, {TEXTOID}}},
};
// clang-format on

}  // namespace

namespace pgjq {

const plan_text* form_0_1_0_of(const char* name)
{
    for (const form_0_1_0& form : k_forms)
        if (strcmp(form.name, name) == 0)
            return &form.text;
    return nullptr;
}

}  // namespace pgjq
