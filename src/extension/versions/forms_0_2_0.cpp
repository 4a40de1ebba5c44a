// forms_0_2_0.cpp: the statements a database still at 0.2.0 runs where its schema needs a form other than the
// current one: 0.2.0 has no trace context on jobs (the headers column), which the current inserts write, the
// current claims return and the current archive and revival carry between live_jobs and finished_jobs. Spelled out in full and frozen,
// as pgjq--0.1.0--0.2.0.sql is (see forms_0_1_0.cpp); each parameter means what it means in the current form
// of the statement of the same name. A statement without a form here runs its current form at 0.2.0.
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

struct form_0_2_0 {
    const char* name;
    plan_text text;
};

// clang-format off
const form_0_2_0 k_forms[] = {
    {"enqueue.insert",
     {
      "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
      "   timeout) VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $8, $9) RETURNING id",
      9,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID, INTERVALOID}}},
    {"enqueue.insert_unique",
     {
      "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
      "   enqueued_by, timeout) VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7, $8, $9) ON CONFLICT (queu"
      "e_name, enqueued_by, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
      9,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID, INTERVALOID}}},
    {"enqueue.insert_waiting",
     {
      "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
      "   enqueued_by, timeout, group_key, depends_on, status) VALUES ($1, $2, $3, $4, coalesce($5, now()), $6"
      ", $7, $8, $9, $10, $11, 'waiting') ON CONFLICT (queue_name, enqueued_by, unique_key) WHERE unique_key"
      " IS NOT NULL DO NOTHING RETURNING id",
      11,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID, INTERVALOID, TEXTOID,
       INT8ARRAYOID}}},
    {"enqueue.insert_batch",
     {
      "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_"
      "by,   timeout) SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8, $9   FROM ROWS FROM (pg"
      "_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
      9,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID, REGROLEOID, INTERVALOID}}},
    {"enqueue.insert_batch_waiting",
     {
      "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_"
      "by,   timeout, depends_on, status) SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8, $9,"
      " $10, 'waiting'   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payl"
      "oad, id)",
      10,
      {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID, REGROLEOID, INTERVALOID,
       INT8ARRAYOID}}},
    {"claim.claim_any",
     {
      "WITH picked AS MATERIALIZED (  SELECT id FROM pgjq.live_jobs   WHERE queue_name = $1 AND status = 'p"
      "ending' AND run_at <= $8   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED), claimed AS ("
      "UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, claimed_at = now(), heartbeat_at = n"
      "ow(), lease_expires_at = least(now() + $4, now() + coalesce(j.timeout, $7)), attempts = j.attempts +"
      " 1, claimed_by = $6, timeout_at = now() + coalesce(j.timeout, $7) WHERE j.id = ANY (ARRAY(SELECT id "
      "FROM picked)) RETURNING j.*) SELECT c.id, c.queue_name, c.job_type, c.priority, c.status, c.payload,"
      " NULL::jsonb, c.run_at, c.unique_key, c.progress, c.current_stage, c.events_count, c.worker_id, c.cl"
      "aimed_at, c.heartbeat_at, c.lease_expires_at, c.created_at, c.started_at, NULL::timestamptz, NULL::t"
      "imestamptz, NULL::timestamptz, c.attempts, c.max_attempts, c.last_error, c.enqueued_by, c.claimed_by"
      ", c.group_key, c.depends_on, c.timeout, c.timeout_at FROM claimed c ORDER BY c.priority DESC, c.id",
      8,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID}}},
    {"claim.claim_types",
     {
      "WITH picked AS MATERIALIZED (  SELECT id FROM pgjq.live_jobs   WHERE queue_name = $1 AND status = 'p"
      "ending' AND run_at <= $8 AND job_type = ANY ($5)   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SK"
      "IP LOCKED), claimed AS (UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, claimed_at ="
      " now(), heartbeat_at = now(), lease_expires_at = least(now() + $4, now() + coalesce(j.timeout, $7)),"
      " attempts = j.attempts + 1, claimed_by = $6, timeout_at = now() + coalesce(j.timeout, $7) WHERE j.id"
      " = ANY (ARRAY(SELECT id FROM picked)) RETURNING j.*) SELECT c.id, c.queue_name, c.job_type, c.priori"
      "ty, c.status, c.payload, NULL::jsonb, c.run_at, c.unique_key, c.progress, c.current_stage, c.events_"
      "count, c.worker_id, c.claimed_at, c.heartbeat_at, c.lease_expires_at, c.created_at, c.started_at, NU"
      "LL::timestamptz, NULL::timestamptz, NULL::timestamptz, c.attempts, c.max_attempts, c.last_error, c.e"
      "nqueued_by, c.claimed_by, c.group_key, c.depends_on, c.timeout, c.timeout_at FROM claimed c ORDER BY"
      " c.priority DESC, c.id",
      8,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID}}},
    {"claim.claim_any_from_floor",
     {
      "WITH picked AS MATERIALIZED (  SELECT id FROM pgjq.live_jobs   WHERE queue_name = $1 AND status = 'p"
      "ending' AND run_at <= $8 AND priority = $9 AND id >= $10   ORDER BY priority DESC, id LIMIT $2 FOR U"
      "PDATE SKIP LOCKED), claimed AS (UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, clai"
      "med_at = now(), heartbeat_at = now(), lease_expires_at = least(now() + $4, now() + coalesce(j.timeou"
      "t, $7)), attempts = j.attempts + 1, claimed_by = $6, timeout_at = now() + coalesce(j.timeout, $7) WH"
      "ERE j.id = ANY (ARRAY(SELECT id FROM picked)) RETURNING j.*) SELECT c.id, c.queue_name, c.job_type, "
      "c.priority, c.status, c.payload, NULL::jsonb, c.run_at, c.unique_key, c.progress, c.current_stage, c"
      ".events_count, c.worker_id, c.claimed_at, c.heartbeat_at, c.lease_expires_at, c.created_at, c.starte"
      "d_at, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, c.attempts, c.max_attempts, c.last_er"
      "ror, c.enqueued_by, c.claimed_by, c.group_key, c.depends_on, c.timeout, c.timeout_at FROM claimed c "
      "ORDER BY c.priority DESC, c.id",
      10,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID, INT4OID, INT8OID}}},
    {"claim.claim_types_from_floor",
     {
      "WITH picked AS MATERIALIZED (  SELECT id FROM pgjq.live_jobs   WHERE queue_name = $1 AND status = 'p"
      "ending' AND run_at <= $8 AND job_type = ANY ($5) AND priority = $9 AND id >= $10   ORDER BY priority"
      " DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED), claimed AS (UPDATE pgjq.live_jobs j SET status = 'claime"
      "d', worker_id = $3, claimed_at = now(), heartbeat_at = now(), lease_expires_at = least(now() + $4, n"
      "ow() + coalesce(j.timeout, $7)), attempts = j.attempts + 1, claimed_by = $6, timeout_at = now() + co"
      "alesce(j.timeout, $7) WHERE j.id = ANY (ARRAY(SELECT id FROM picked)) RETURNING j.*) SELECT c.id, c."
      "queue_name, c.job_type, c.priority, c.status, c.payload, NULL::jsonb, c.run_at, c.unique_key, c.prog"
      "ress, c.current_stage, c.events_count, c.worker_id, c.claimed_at, c.heartbeat_at, c.lease_expires_at"
      ", c.created_at, c.started_at, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, c.attempts, c"
      ".max_attempts, c.last_error, c.enqueued_by, c.claimed_by, c.group_key, c.depends_on, c.timeout, c.ti"
      "meout_at FROM claimed c ORDER BY c.priority DESC, c.id",
      10,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID, INT4OID, INT8OID}}},
    {"claim.fifo_claim",
     {
      "WITH oldest AS MATERIALIZED (  SELECT id, job_type FROM pgjq.live_jobs   WHERE queue_name = $1 AND s"
      "tatus = 'pending' AND run_at <= now()   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE), picked AS ("
      "SELECT id FROM oldest WHERE $5::text[] IS NULL OR job_type = ANY ($5)), claimed AS (UPDATE pgjq.live"
      "_jobs j SET status = 'claimed', worker_id = $3, claimed_at = now(), heartbeat_at = now(), lease_expi"
      "res_at = least(now() + $4, now() + coalesce(j.timeout, $7)), attempts = j.attempts + 1, claimed_by ="
      " $6, timeout_at = now() + coalesce(j.timeout, $7) WHERE j.id = ANY (ARRAY(SELECT id FROM picked)) RE"
      "TURNING j.*) SELECT c.id, c.queue_name, c.job_type, c.priority, c.status, c.payload, NULL::jsonb, c."
      "run_at, c.unique_key, c.progress, c.current_stage, c.events_count, c.worker_id, c.claimed_at, c.hear"
      "tbeat_at, c.lease_expires_at, c.created_at, c.started_at, NULL::timestamptz, NULL::timestamptz, NULL"
      "::timestamptz, c.attempts, c.max_attempts, c.last_error, c.enqueued_by, c.claimed_by, c.group_key, c"
      ".depends_on, c.timeout, c.timeout_at FROM claimed c ORDER BY c.priority DESC, c.id",
      7,
      {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID}}},
    {"claim.lock_any",
     {
      "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, NULL::json"
      "b, j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), NULL::timestamptz"
      ", NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, j"
      ".attempts + 1, j.max_attempts, j.last_error, j.enqueued_by, $6, j.group_key, j.depends_on, j.timeout"
      ", NULL::timestamptz FROM pgjq.live_jobs j WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run"
      "_at <= now() AND j.id <> ALL ($4) ORDER BY j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED",
      6,
      {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID, REGROLEOID, INTERVALOID}}},
    {"claim.lock_types",
     {
      "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, NULL::json"
      "b, j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), NULL::timestamptz"
      ", NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, j"
      ".attempts + 1, j.max_attempts, j.last_error, j.enqueued_by, $6, j.group_key, j.depends_on, j.timeout"
      ", NULL::timestamptz FROM pgjq.live_jobs j WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run"
      "_at <= now() AND j.id <> ALL ($4)   AND j.job_type = ANY ($5) ORDER BY j.priority DESC, j.id LIMIT $"
      "2 FOR UPDATE SKIP LOCKED",
      6,
      {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID, REGROLEOID, INTERVALOID}}},
    {"claim.fifo_lock_oldest",
     {
      "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, NULL::json"
      "b, j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), NULL::timestamptz"
      ", NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, j"
      ".attempts + 1, j.max_attempts, j.last_error, j.enqueued_by, $6, j.group_key, j.depends_on, j.timeout"
      ", NULL::timestamptz, $5::text[] IS NULL OR j.job_type = ANY ($5) FROM pgjq.live_jobs j WHERE j.queue"
      "_name = $1 AND j.status = 'pending' AND j.run_at <= now() ORDER BY j.priority DESC, j.id LIMIT 1 FOR"
      " UPDATE",
      6,
      {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID, REGROLEOID, INTERVALOID}}},
    {"lifecycle.archive",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id"
      " = $2 AND status <> 'pending' AND (claimed_by IS NULL OR claimed_by = $8 OR pg_catalog.pg_has_role($"
      "8::oid, claimed_by::oid, 'USAGE')) AND (timeout_at IS NULL OR timeout_at > now())))  RETURNING *), a"
      "rchived AS (  INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, r"
      "esult, run_at,    unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbea"
      "t_at,    lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, finished_a"
      "t,    attempts, max_attempts, last_error, enqueued_by, claimed_by, group_key, depends_on, timeout)  "
      "SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payload, $4, run_at,    unique_key, "
      "CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage, events_count,    coalesce($6, "
      "worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,    CASE WHEN $6 IS NULL THEN heartb"
      "eat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,    created_at, CASE WHEN $6 IS NULL THEN"
      " started_at ELSE now() END,    CASE WHEN $3 = 'completed' THEN statement_timestamp() END,    CASE WH"
      "EN $3 = 'failed' THEN statement_timestamp() END,    CASE WHEN $3 = 'cancelled' THEN statement_timest"
      "amp() END, statement_timestamp(),    attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 END, max_attempts"
      ", coalesce($5, last_error), enqueued_by, CASE WHEN $6 IS NULL THEN claimed_by ELSE $8 END, group_key"
      ", depends_on, timeout  FROM done) SELECT count(*), coalesce(array_agg(id), '{}'), min(queue_name),  "
      "      CASE WHEN min(queue_name) <> max(queue_name) THEN array_agg(queue_name) END, array_agg(queue_n"
      "ame) FILTER (WHERE group_key IS NOT NULL),  array_agg(group_key) FILTER (WHERE group_key IS NOT NULL"
      "),  array_agg(pg_catalog.date_part('epoch', CASE WHEN $6 IS NOT NULL THEN now() WHEN status IN ('cla"
      "imed', 'running') THEN claimed_at END - run_at)),  array_agg(pg_catalog.date_part('epoch', statement"
      "_timestamp() - CASE WHEN $6 IS NOT NULL THEN now() WHEN status IN ('claimed', 'running') THEN claime"
      "d_at END)), array_agg(enqueued_by::oid) FILTER (WHERE group_key IS NOT NULL) AS group_roles FROM don"
      "e",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"lifecycle.archive_writing_depth",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id"
      " = $2 AND status <> 'pending' AND (claimed_by IS NULL OR claimed_by = $8 OR pg_catalog.pg_has_role($"
      "8::oid, claimed_by::oid, 'USAGE')) AND (timeout_at IS NULL OR timeout_at > now())))  RETURNING *), a"
      "rchived AS (  INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, r"
      "esult, run_at,    unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbea"
      "t_at,    lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, finished_a"
      "t,    attempts, max_attempts, last_error, enqueued_by, claimed_by, group_key, depends_on, timeout)  "
      "SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payload, $4, run_at,    unique_key, "
      "CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage, events_count,    coalesce($6, "
      "worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,    CASE WHEN $6 IS NULL THEN heartb"
      "eat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,    created_at, CASE WHEN $6 IS NULL THEN"
      " started_at ELSE now() END,    CASE WHEN $3 = 'completed' THEN statement_timestamp() END,    CASE WH"
      "EN $3 = 'failed' THEN statement_timestamp() END,    CASE WHEN $3 = 'cancelled' THEN statement_timest"
      "amp() END, statement_timestamp(),    attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 END, max_attempts"
      ", coalesce($5, last_error), enqueued_by, CASE WHEN $6 IS NULL THEN claimed_by ELSE $8 END, group_key"
      ", depends_on, timeout  FROM done), counted AS (UPDATE pgjq.queue_depth d SET unfinished = d.unfinish"
      "ed - g.n,   completed = d.completed + CASE WHEN $3 = 'completed' THEN g.n ELSE 0 END,   failed = d.f"
      "ailed + CASE WHEN $3 = 'failed' THEN g.n ELSE 0 END,   cancelled = d.cancelled + CASE WHEN $3 = 'can"
      "celled' THEN g.n ELSE 0 END  FROM (SELECT queue_name, count(*) AS n FROM done GROUP BY queue_name) g"
      " WHERE d.queue_name = g.queue_name AND d.slot = $9) SELECT count(*), coalesce(array_agg(id), '{}'), "
      "min(queue_name),        CASE WHEN min(queue_name) <> max(queue_name) THEN array_agg(queue_name) END,"
      " array_agg(queue_name) FILTER (WHERE group_key IS NOT NULL),  array_agg(group_key) FILTER (WHERE gro"
      "up_key IS NOT NULL),  array_agg(pg_catalog.date_part('epoch', CASE WHEN $6 IS NOT NULL THEN now() WH"
      "EN status IN ('claimed', 'running') THEN claimed_at END - run_at)),  array_agg(pg_catalog.date_part("
      "'epoch', statement_timestamp() - CASE WHEN $6 IS NOT NULL THEN now() WHEN status IN ('claimed', 'run"
      "ning') THEN claimed_at END)), array_agg(enqueued_by::oid) FILTER (WHERE group_key IS NOT NULL) AS gr"
      "oup_roles FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"lifecycle.archive_some_discarded",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id"
      " = $2 AND status <> 'pending' AND (claimed_by IS NULL OR claimed_by = $8 OR pg_catalog.pg_has_role($"
      "8::oid, claimed_by::oid, 'USAGE')) AND (timeout_at IS NULL OR timeout_at > now())))  RETURNING *, qu"
      "eue_name <> ALL ($7) AS kept), archived AS (  INSERT INTO pgjq.finished_jobs (id, queue_name, job_ty"
      "pe, priority, status, payload, result, run_at,    unique_key, progress, current_stage, events_count,"
      " worker_id, claimed_at, heartbeat_at,    lease_expires_at, created_at, started_at, completed_at, fai"
      "led_at, cancelled_at, finished_at,    attempts, max_attempts, last_error, enqueued_by, claimed_by, g"
      "roup_key, depends_on, timeout)  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payl"
      "oad, $4, run_at,    unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage"
      ", events_count,    coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,    "
      "CASE WHEN $6 IS NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,    creat"
      "ed_at, CASE WHEN $6 IS NULL THEN started_at ELSE now() END,    CASE WHEN $3 = 'completed' THEN state"
      "ment_timestamp() END,    CASE WHEN $3 = 'failed' THEN statement_timestamp() END,    CASE WHEN $3 = '"
      "cancelled' THEN statement_timestamp() END, statement_timestamp(),    attempts + CASE WHEN $6 IS NULL"
      " THEN 0 ELSE 1 END, max_attempts, coalesce($5, last_error), enqueued_by, CASE WHEN $6 IS NULL THEN c"
      "laimed_by ELSE $8 END, group_key, depends_on, timeout  FROM done WHERE kept) SELECT count(*), coales"
      "ce(array_agg(id), '{}'), min(queue_name),        CASE WHEN min(queue_name) <> max(queue_name) THEN a"
      "rray_agg(queue_name) END, array_agg(queue_name) FILTER (WHERE group_key IS NOT NULL),  array_agg(gro"
      "up_key) FILTER (WHERE group_key IS NOT NULL),  array_agg(pg_catalog.date_part('epoch', CASE WHEN $6 "
      "IS NOT NULL THEN now() WHEN status IN ('claimed', 'running') THEN claimed_at END - run_at)),  array_"
      "agg(pg_catalog.date_part('epoch', statement_timestamp() - CASE WHEN $6 IS NOT NULL THEN now() WHEN s"
      "tatus IN ('claimed', 'running') THEN claimed_at END)), array_agg(id) FILTER (WHERE NOT kept), array_"
      "agg(queue_name) FILTER (WHERE NOT kept), array_agg(enqueued_by::oid) FILTER (WHERE group_key IS NOT "
      "NULL) AS group_roles FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"lifecycle.archive_some_discarded_writing_depth",
     {
      "WITH done AS (  DELETE FROM pgjq.live_jobs   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id"
      " = $2 AND status <> 'pending' AND (claimed_by IS NULL OR claimed_by = $8 OR pg_catalog.pg_has_role($"
      "8::oid, claimed_by::oid, 'USAGE')) AND (timeout_at IS NULL OR timeout_at > now())))  RETURNING *, qu"
      "eue_name <> ALL ($7) AS kept), archived AS (  INSERT INTO pgjq.finished_jobs (id, queue_name, job_ty"
      "pe, priority, status, payload, result, run_at,    unique_key, progress, current_stage, events_count,"
      " worker_id, claimed_at, heartbeat_at,    lease_expires_at, created_at, started_at, completed_at, fai"
      "led_at, cancelled_at, finished_at,    attempts, max_attempts, last_error, enqueued_by, claimed_by, g"
      "roup_key, depends_on, timeout)  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payl"
      "oad, $4, run_at,    unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage"
      ", events_count,    coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,    "
      "CASE WHEN $6 IS NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,    creat"
      "ed_at, CASE WHEN $6 IS NULL THEN started_at ELSE now() END,    CASE WHEN $3 = 'completed' THEN state"
      "ment_timestamp() END,    CASE WHEN $3 = 'failed' THEN statement_timestamp() END,    CASE WHEN $3 = '"
      "cancelled' THEN statement_timestamp() END, statement_timestamp(),    attempts + CASE WHEN $6 IS NULL"
      " THEN 0 ELSE 1 END, max_attempts, coalesce($5, last_error), enqueued_by, CASE WHEN $6 IS NULL THEN c"
      "laimed_by ELSE $8 END, group_key, depends_on, timeout  FROM done WHERE kept), counted AS (UPDATE pgj"
      "q.queue_depth d SET unfinished = d.unfinished - g.n,   completed = d.completed + CASE WHEN $3 = 'com"
      "pleted' THEN g.n ELSE 0 END,   failed = d.failed + CASE WHEN $3 = 'failed' THEN g.n ELSE 0 END,   ca"
      "ncelled = d.cancelled + CASE WHEN $3 = 'cancelled' THEN g.n ELSE 0 END  FROM (SELECT queue_name, cou"
      "nt(*) AS n FROM done GROUP BY queue_name) g WHERE d.queue_name = g.queue_name AND d.slot = $9) SELEC"
      "T count(*), coalesce(array_agg(id), '{}'), min(queue_name),        CASE WHEN min(queue_name) <> max("
      "queue_name) THEN array_agg(queue_name) END, array_agg(queue_name) FILTER (WHERE group_key IS NOT NUL"
      "L),  array_agg(group_key) FILTER (WHERE group_key IS NOT NULL),  array_agg(pg_catalog.date_part('epo"
      "ch', CASE WHEN $6 IS NOT NULL THEN now() WHEN status IN ('claimed', 'running') THEN claimed_at END -"
      " run_at)),  array_agg(pg_catalog.date_part('epoch', statement_timestamp() - CASE WHEN $6 IS NOT NULL"
      " THEN now() WHEN status IN ('claimed', 'running') THEN claimed_at END)), array_agg(id) FILTER (WHERE"
      " NOT kept), array_agg(queue_name) FILTER (WHERE NOT kept), array_agg(enqueued_by::oid) FILTER (WHERE"
      " group_key IS NOT NULL) AS group_roles FROM done",
      9,
      {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}}},
    {"revive.revive",
     {
      "WITH candidates AS (  SELECT * FROM pgjq.finished_jobs WHERE id = ANY ($1) AND status IN ('failed', "
      "'cancelled')   ORDER BY id FOR UPDATE), revived AS (  INSERT INTO pgjq.live_jobs (id, queue_name, jo"
      "b_type, priority, payload, run_at, unique_key,    created_at, max_attempts, last_error, enqueued_by,"
      " claimed_by, group_key, depends_on, timeout, status)  SELECT id, queue_name, job_type, priority, pay"
      "load, now(), unique_key, created_at, max_attempts,    last_error, enqueued_by, claimed_by, group_key"
      ", depends_on, timeout, CASE WHEN group_key IS NULL THEN 'pending' ELSE 'waiting' END::pgjq.job_statu"
      "s FROM candidates ORDER BY id  ON CONFLICT (queue_name, enqueued_by, unique_key) WHERE unique_key IS"
      " NOT NULL DO NOTHING  RETURNING queue_name, group_key AS group_key, enqueued_by, id), removed AS (DE"
      "LETE FROM pgjq.finished_jobs f USING revived r WHERE f.id = r.id) SELECT queue_name, group_key, enqu"
      "eued_by::oid FROM revived ORDER BY queue_name",
      1,
      {INT8ARRAYOID}}},
};
// clang-format on

}  // namespace

namespace pgjq {

const plan_text* form_0_2_0_of(const char* name)
{
    for (const form_0_2_0& form : k_forms)
        if (strcmp(form.name, name) == 0)
            return &form.text;
    return nullptr;
}

}  // namespace pgjq
