-- pgjq 0.1.0: the job queue's schema, its SQL API (implemented in C++, see src/extension/) and its privileges.
\echo Use "CREATE EXTENSION pgjq" to load this file. \quit

CREATE SCHEMA pgjq;
COMMENT ON SCHEMA pgjq IS 'pgjq job queue: use the functions; the tables are not written directly';

CREATE TYPE pgjq.job_status AS ENUM ('pending', 'claimed', 'running', 'completed', 'failed', 'cancelled');

-- One row per queue. Argument checks live in the C++ functions (with clear errors); these constraints
-- are the last line of defence for direct writes by the owner.
CREATE TABLE pgjq.queues (
    queue_name   text        PRIMARY KEY,
    max_pending  bigint,
    fifo         boolean     NOT NULL DEFAULT false,
    max_attempts integer     NOT NULL DEFAULT 3,
    lease        interval    NOT NULL DEFAULT '5 minutes',
    retry_base   interval    NOT NULL DEFAULT '1 second',
    retry_cap    interval    NOT NULL DEFAULT '1 hour',
    retention    interval    NOT NULL DEFAULT '7 days',
    keep_completed boolean   NOT NULL DEFAULT true,
    paused       boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT queue_name_format   CHECK (queue_name ~ '^[a-z0-9_.-]{1,48}$'),
    CONSTRAINT max_pending_range   CHECK (max_pending IS NULL OR max_pending > 0),
    CONSTRAINT max_attempts_range  CHECK (max_attempts BETWEEN 1 AND 1000),
    CONSTRAINT lease_positive      CHECK (lease > interval '0'),
    CONSTRAINT retry_positive      CHECK (retry_base >= interval '0' AND retry_cap >= interval '0'),
    CONSTRAINT retention_positive  CHECK (retention >= interval '0')
);

-- Backpressure without counting rows: each queue's number of unfinished jobs (pending, claimed, running)
-- is kept in 16 slot rows. A transaction adds to the slot chosen by its backend, so concurrent producers
-- rarely wait on the same row, and reading the depth sums 16 rows whatever the queue's length.
CREATE TABLE pgjq.queue_depth (
    queue_name text     NOT NULL,
    slot       smallint NOT NULL,
    unfinished bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (queue_name, slot)
) WITH (fillfactor = 20);

CREATE SEQUENCE pgjq.job_id_seq AS bigint;

-- Live jobs only (pending, claimed, running): finished jobs move to pgjq.finished_jobs, so the claim
-- index and the heap that workers touch stay as small as the backlog, whatever the history holds.
CREATE TABLE pgjq.live_jobs (
    id               bigint          NOT NULL DEFAULT nextval('pgjq.job_id_seq') PRIMARY KEY,
    queue_name       text            NOT NULL,
    job_type         text            NOT NULL,
    priority         integer         NOT NULL DEFAULT 100,
    status           pgjq.job_status NOT NULL DEFAULT 'pending',
    payload          jsonb           NOT NULL DEFAULT '{}',
    run_at           timestamptz     NOT NULL DEFAULT now(),
    unique_key       text,
    progress         integer,
    current_stage    text,
    events_count     integer         NOT NULL DEFAULT 0,
    worker_id        text,
    claimed_at       timestamptz,
    heartbeat_at     timestamptz,
    lease_expires_at timestamptz,
    created_at       timestamptz     NOT NULL DEFAULT now(),
    started_at       timestamptz,
    attempts         integer         NOT NULL DEFAULT 0,
    max_attempts     integer         NOT NULL DEFAULT 3,
    last_error       text,
    CONSTRAINT live_status CHECK (status IN ('pending', 'claimed', 'running'))
) WITH (fillfactor = 90,
        autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01,
        autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0,
        vacuum_truncate = false);
-- vacuum_truncate = false: truncating the table's empty tail needs an ACCESS EXCLUSIVE lock, which a
-- vacuum keeps trying to take for up to 5 s while it holds its own lock; meanwhile the maintenance
-- worker's frequent vacuum is locked out and the table grows (measured: 3.5 -> 32 MB in those 5 s of
-- a steady run). Nothing is lost: the tail's pages are reused by later jobs.
ALTER SEQUENCE pgjq.job_id_seq OWNED BY pgjq.live_jobs.id;

-- The claim walks this index in exactly its ORDER BY (priority DESC, id) and stops after batch_size rows.
CREATE INDEX live_jobs_claim_idx ON pgjq.live_jobs (queue_name, priority DESC, id) WHERE status = 'pending';
-- In-flight jobs: the FIFO "is anything running" test and stale-lease recovery. Leases are not indexed so
-- that heartbeats can be HOT updates. The id makes every key unique: keyed on queue_name alone, each claim
-- inserted into one long run of duplicates (posting-list splits, deletion passes), which cost 17 % of the
-- server's CPU per job in a batch-100 drain (24.1 -> 20.1 us per job, measured).
CREATE INDEX live_jobs_in_flight_idx ON pgjq.live_jobs (queue_name, id) WHERE status <> 'pending';
-- A unique_key is held while its job is unfinished.
CREATE UNIQUE INDEX live_jobs_unique_key_idx ON pgjq.live_jobs (queue_name, unique_key) WHERE unique_key IS NOT NULL;

-- Finished jobs (completed, failed = dead letter, cancelled), append-mostly; pruned by age.
CREATE TABLE pgjq.finished_jobs (
    id               bigint          NOT NULL PRIMARY KEY,
    queue_name       text            NOT NULL,
    job_type         text            NOT NULL,
    priority         integer         NOT NULL,
    status           pgjq.job_status NOT NULL,
    payload          jsonb           NOT NULL,
    result           jsonb,
    run_at           timestamptz     NOT NULL,
    unique_key       text,
    progress         integer,
    current_stage    text,
    events_count     integer         NOT NULL,
    worker_id        text,
    claimed_at       timestamptz,
    heartbeat_at     timestamptz,
    lease_expires_at timestamptz,
    created_at       timestamptz     NOT NULL,
    started_at       timestamptz,
    completed_at     timestamptz,
    failed_at        timestamptz,
    cancelled_at     timestamptz,
    finished_at      timestamptz     NOT NULL,
    attempts         integer         NOT NULL,
    max_attempts     integer         NOT NULL,
    last_error       text,
    CONSTRAINT finished_status CHECK (status IN ('completed', 'failed', 'cancelled'))
) WITH (autovacuum_vacuum_insert_scale_factor = 0.05);
-- finished_at grows with insertion order, so a BRIN index serves pruning at almost no write cost.
CREATE INDEX finished_jobs_finished_at_idx ON pgjq.finished_jobs USING brin (finished_at);

-- Every job, live or finished until pruned (completed jobs of a queue with keep_completed = false are
-- deleted, not kept).
CREATE VIEW pgjq.jobs AS
    SELECT id, queue_name, job_type, priority, status, payload, NULL::jsonb AS result, run_at, unique_key,
           progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at,
           created_at, started_at, NULL::timestamptz AS completed_at, NULL::timestamptz AS failed_at,
           NULL::timestamptz AS cancelled_at, attempts, max_attempts, last_error
      FROM pgjq.live_jobs
    UNION ALL
    SELECT id, queue_name, job_type, priority, status, payload, result, run_at, unique_key,
           progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at,
           created_at, started_at, completed_at, failed_at, cancelled_at, attempts, max_attempts, last_error
      FROM pgjq.finished_jobs;
COMMENT ON VIEW pgjq.jobs IS 'every job, live or finished (until pruned; completed jobs only where the queue keeps them); INSERT goes through pgjq.enqueue semantics';

CREATE VIEW pgjq.queue_stats AS
    SELECT q.queue_name,
           coalesce(l.pending, 0)   AS pending,
           coalesce(l.scheduled, 0) AS scheduled,
           coalesce(l.claimed, 0)   AS claimed,
           coalesce(l.running, 0)   AS running,
           coalesce(f.completed, 0) AS completed,
           coalesce(f.failed, 0)    AS failed,
           coalesce(f.cancelled, 0) AS cancelled,
           l.oldest_runnable_age,
           q.max_pending,
           q.fifo,
           q.paused
      FROM pgjq.queues q
      LEFT JOIN (SELECT queue_name,
                        count(*) FILTER (WHERE status = 'pending' AND run_at <= now()) AS pending,
                        count(*) FILTER (WHERE status = 'pending' AND run_at > now())  AS scheduled,
                        count(*) FILTER (WHERE status = 'claimed')                     AS claimed,
                        count(*) FILTER (WHERE status = 'running')                     AS running,
                        now() - min(run_at) FILTER (WHERE status = 'pending' AND run_at <= now())
                            AS oldest_runnable_age
                   FROM pgjq.live_jobs GROUP BY queue_name) l USING (queue_name)
      LEFT JOIN (SELECT queue_name,
                        count(*) FILTER (WHERE status = 'completed') AS completed,
                        count(*) FILTER (WHERE status = 'failed')    AS failed,
                        count(*) FILTER (WHERE status = 'cancelled') AS cancelled
                   FROM pgjq.finished_jobs GROUP BY queue_name) f USING (queue_name);

INSERT INTO pgjq.queues (queue_name) VALUES ('default');
INSERT INTO pgjq.queue_depth (queue_name, slot) SELECT 'default', s FROM generate_series(0, 15) AS s;

SELECT pg_catalog.pg_extension_config_dump('pgjq.queues', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.queue_depth', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.live_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.finished_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.job_id_seq', '');

-- Queue administration -------------------------------------------------------------------------------
-- Every function runs with the owner's rights (the tables are not granted to anyone) and pins
-- search_path; who may call what is granted by pgjq.grant_producer/worker/admin below.
-- jit = off: on a large queue a plan's cost estimate can cross jit_above_cost, and a JIT compile
-- (50-250 ms) per call would dwarf the statement.
-- enable_seqscan = off: the functions' statements are planned once per backend (generic plans, see
-- spi_plans.cpp), possibly while a table is still empty; the plan must still use its index when the
-- table holds a million rows. The claims also forbid bitmap scans: they must walk their partial index
-- in order even when the statistics still describe an empty table (a bitmap scan plus a sort of every
-- pending row is what the planner picks then).

CREATE FUNCTION pgjq.create_queue(queue_name text, max_pending bigint DEFAULT NULL, fifo boolean DEFAULT false,
                                  max_attempts integer DEFAULT 3, lease interval DEFAULT '5 minutes')
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_create_queue';

CREATE FUNCTION pgjq.alter_queue(queue_name text, max_pending bigint DEFAULT NULL, fifo boolean DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, lease interval DEFAULT NULL,
                                 retry_base interval DEFAULT NULL, retry_cap interval DEFAULT NULL,
                                 retention interval DEFAULT NULL, clear_max_pending boolean DEFAULT false,
                                 keep_completed boolean DEFAULT NULL)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_alter_queue';

CREATE FUNCTION pgjq.drop_queue(queue_name text, force boolean DEFAULT false)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_drop_queue';

CREATE FUNCTION pgjq.pause_queue(queue_name text)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_pause_queue';

CREATE FUNCTION pgjq.resume_queue(queue_name text)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_resume_queue';

-- Producers ------------------------------------------------------------------------------------------

CREATE FUNCTION pgjq.enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                             priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                             max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_enqueue';

CREATE FUNCTION pgjq.try_enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                                 priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_try_enqueue';

-- payloads is a JSON array; element i becomes job i; the ids come back in the same order.
CREATE FUNCTION pgjq.enqueue_batch(job_type text, payloads jsonb, queue_name text DEFAULT 'default',
                                   priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                   max_attempts integer DEFAULT NULL)
    RETURNS bigint[] LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_enqueue_batch';

CREATE FUNCTION pgjq.cancel(job_id bigint)
    RETURNS boolean LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_cancel';

-- Workers --------------------------------------------------------------------------------------------

CREATE FUNCTION pgjq.claim_job_batch(worker_id text, job_types text[] DEFAULT NULL, batch_size integer DEFAULT 10,
                                     queue_name text DEFAULT 'default')
    RETURNS SETOF pgjq.jobs LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_seqscan = off SET enable_bitmapscan = off ROWS 10
    AS 'MODULE_PATHNAME', 'pgjq_claim_job_batch';

-- A worker's loop in one call and one commit: completes the batch it finished (all or nothing, as
-- complete_batch; NULL or '{}' completes nothing) and claims the next, as claim_job_batch.
CREATE FUNCTION pgjq.complete_and_claim(worker_id text, completed_ids bigint[], job_types text[] DEFAULT NULL,
                                        batch_size integer DEFAULT 10, queue_name text DEFAULT 'default')
    RETURNS SETOF pgjq.jobs LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_seqscan = off SET enable_bitmapscan = off ROWS 10
    AS 'MODULE_PATHNAME', 'pgjq_complete_and_claim';

-- Claims inside the caller's transaction (which must be a transaction block): the jobs are only locked,
-- nothing is written, and they stay claimed until the transaction ends. Report each with
-- complete_in_transaction or fail_in_transaction before COMMIT; if the transaction rolls back or its
-- session dies, the jobs are runnable again at once, with the attempt not counted. No lease, heartbeat or
-- progress: other sessions see the jobs pending until the commit. For short jobs, and for handlers whose
-- own writes must commit together with the job's completion.
CREATE FUNCTION pgjq.claim_in_transaction(worker_id text, job_types text[] DEFAULT NULL, batch_size integer DEFAULT 10,
                                          queue_name text DEFAULT 'default')
    RETURNS SETOF pgjq.jobs LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_seqscan = off SET enable_bitmapscan = off ROWS 10
    AS 'MODULE_PATHNAME', 'pgjq_claim_in_transaction';

CREATE FUNCTION pgjq.complete_in_transaction(job_ids bigint[], worker_id text)
    RETURNS integer LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_complete_in_transaction';

CREATE FUNCTION pgjq.fail_in_transaction(job_id bigint, worker_id text, error_message text, retry_in interval DEFAULT NULL)
    RETURNS pgjq.job_status LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_fail_in_transaction';

CREATE FUNCTION pgjq.progress(job_id bigint, worker_id text, progress integer, current_stage text DEFAULT NULL)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_progress';

CREATE FUNCTION pgjq.heartbeat(job_id bigint, worker_id text)
    RETURNS timestamptz LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_heartbeat';

CREATE FUNCTION pgjq.complete(job_id bigint, worker_id text, result jsonb DEFAULT NULL)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_complete';

CREATE FUNCTION pgjq.complete_batch(job_ids bigint[], worker_id text)
    RETURNS integer LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_complete_batch';

CREATE FUNCTION pgjq.fail(job_id bigint, worker_id text, error_message text, retry_in interval DEFAULT NULL)
    RETURNS pgjq.job_status LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_fail';

-- Administration of jobs -----------------------------------------------------------------------------

CREATE FUNCTION pgjq.retry(job_id bigint)
    RETURNS void LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_retry';

CREATE FUNCTION pgjq.recover_stale()
    RETURNS integer LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_recover_stale';

CREATE FUNCTION pgjq.prune(older_than interval)
    RETURNS bigint LANGUAGE c VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_prune';

-- Notification triggers ------------------------------------------------------------------------------
-- pgjq_new_job (payload: queue name) once per queue per transaction when runnable jobs appear;
-- pgjq_job_finished (payload: {"id":N,"queue":"q","status":"completed"}) when a job finishes.

CREATE FUNCTION pgjq.notify_new_job() RETURNS trigger LANGUAGE c AS 'MODULE_PATHNAME', 'pgjq_notify_new_job';
CREATE FUNCTION pgjq.notify_job_finished() RETURNS trigger LANGUAGE c AS 'MODULE_PATHNAME', 'pgjq_notify_job_finished';
CREATE FUNCTION pgjq.insert_into_jobs_view() RETURNS trigger LANGUAGE c
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off AS 'MODULE_PATHNAME', 'pgjq_insert_into_jobs_view';

-- Enqueue and retry announce their jobs themselves (announce_enqueued in enqueue.cpp, retry in cancel.cpp):
-- row triggers on INSERT, with their WHEN clauses, cost a single-job enqueue about 9 % of its server CPU.
-- Writing pgjq.live_jobs directly therefore wakes nobody; use the functions or INSERT INTO pgjq.jobs.

-- A job back to pending (fail with retry, lease recovery). AFTER, not BEFORE: a BEFORE UPDATE row trigger makes every UPDATE (each claim) fetch and lock the old
-- row a second time, even when its WHEN clause is false.
CREATE TRIGGER notify_new_job_on_requeue AFTER UPDATE OF status ON pgjq.live_jobs
    FOR EACH ROW WHEN (NEW.status = 'pending' AND OLD.status <> 'pending' AND NEW.run_at <= now())
    EXECUTE FUNCTION pgjq.notify_new_job();
CREATE TRIGGER notify_job_finished BEFORE INSERT ON pgjq.finished_jobs
    FOR EACH ROW EXECUTE FUNCTION pgjq.notify_job_finished();
CREATE TRIGGER insert_into_jobs_view INSTEAD OF INSERT ON pgjq.jobs
    FOR EACH ROW EXECUTE FUNCTION pgjq.insert_into_jobs_view();

-- Each backend caches which queues keep no completed jobs (keep_completed_cache.cpp): any change to
-- pgjq.queues, by the functions or by hand, makes every backend read them again after it commits.
CREATE FUNCTION pgjq.queues_changed() RETURNS trigger LANGUAGE c AS 'MODULE_PATHNAME', 'pgjq_queues_changed';
CREATE TRIGGER queues_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pgjq.queues
    FOR EACH STATEMENT EXECUTE FUNCTION pgjq.queues_changed();

-- Privileges -----------------------------------------------------------------------------------------
-- Nothing is callable by PUBLIC. Three capabilities are granted to roles by the helpers below.

REVOKE ALL ON ALL TABLES IN SCHEMA pgjq FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgjq FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgjq FROM PUBLIC;
REVOKE ALL ON SCHEMA pgjq FROM PUBLIC;

CREATE TABLE pgjq.capabilities (
    capability text NOT NULL CHECK (capability IN ('producer', 'worker', 'admin')),
    object     text NOT NULL,   -- a regprocedure, or a relation for SELECT
    is_function boolean NOT NULL,
    PRIMARY KEY (capability, object)
);
REVOKE ALL ON pgjq.capabilities FROM PUBLIC;
INSERT INTO pgjq.capabilities (capability, object, is_function) VALUES
    ('producer', 'pgjq.enqueue(text,jsonb,text,integer,timestamptz,integer,text)', true),
    ('producer', 'pgjq.try_enqueue(text,jsonb,text,integer,timestamptz,integer,text)', true),
    ('producer', 'pgjq.enqueue_batch(text,jsonb,text,integer,timestamptz,integer)', true),
    ('producer', 'pgjq.cancel(bigint)', true),
    ('producer', 'pgjq.jobs', false),
    ('producer', 'pgjq.queue_stats', false),
    ('worker',   'pgjq.claim_job_batch(text,text[],integer,text)', true),
    ('worker',   'pgjq.progress(bigint,text,integer,text)', true),
    ('worker',   'pgjq.heartbeat(bigint,text)', true),
    ('worker',   'pgjq.complete(bigint,text,jsonb)', true),
    ('worker',   'pgjq.complete_batch(bigint[],text)', true),
    ('worker',   'pgjq.complete_and_claim(text,bigint[],text[],integer,text)', true),
    ('worker',   'pgjq.fail(bigint,text,text,interval)', true),
    ('worker',   'pgjq.claim_in_transaction(text,text[],integer,text)', true),
    ('worker',   'pgjq.complete_in_transaction(bigint[],text)', true),
    ('worker',   'pgjq.fail_in_transaction(bigint,text,text,interval)', true),
    ('worker',   'pgjq.jobs', false),
    ('worker',   'pgjq.queue_stats', false),
    ('admin',    'pgjq.create_queue(text,bigint,boolean,integer,interval)', true),
    ('admin',    'pgjq.alter_queue(text,bigint,boolean,integer,interval,interval,interval,interval,boolean,boolean)', true),
    ('admin',    'pgjq.drop_queue(text,boolean)', true),
    ('admin',    'pgjq.pause_queue(text)', true),
    ('admin',    'pgjq.resume_queue(text)', true),
    ('admin',    'pgjq.retry(bigint)', true),
    ('admin',    'pgjq.recover_stale()', true),
    ('admin',    'pgjq.prune(interval)', true),
    ('admin',    'pgjq.jobs', false),
    ('admin',    'pgjq.queue_stats', false),
    ('admin',    'pgjq.queues', false);

-- Identifiers go through %I / regprocedure output, never string concatenation of the caller's input.
CREATE FUNCTION pgjq.set_capability(role_name name, capability text, grant_it boolean)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record;
    verb text := CASE WHEN grant_it THEN 'GRANT' ELSE 'REVOKE' END;
    dir  text := CASE WHEN grant_it THEN 'TO' ELSE 'FROM' END;
BEGIN
    IF role_name IS NULL THEN
        RAISE EXCEPTION 'role_name must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role_name) THEN
        RAISE EXCEPTION 'role "%" does not exist', role_name USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgjq.capabilities cap WHERE cap.capability = set_capability.capability) THEN
        RAISE EXCEPTION 'unknown capability "%"', capability USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The capabilities are producer, worker and admin.';
    END IF;
    EXECUTE format('%s USAGE ON SCHEMA pgjq %s %I', verb, dir, role_name);
    FOR c IN SELECT object, is_function FROM pgjq.capabilities cap
              WHERE cap.capability = set_capability.capability LOOP
        IF c.is_function THEN
            EXECUTE format('%s EXECUTE ON FUNCTION %s %s %I', verb, c.object::regprocedure, dir, role_name);
        ELSE
            EXECUTE format('%s SELECT ON %s %s %I', verb, c.object::regclass, dir, role_name);
        END IF;
    END LOOP;
END;
$$;
REVOKE ALL ON FUNCTION pgjq.set_capability(name, text, boolean) FROM PUBLIC;

CREATE FUNCTION pgjq.grant_producer(role_name name) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'producer', true); END;
CREATE FUNCTION pgjq.grant_worker(role_name name) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'worker', true); END;
CREATE FUNCTION pgjq.grant_admin(role_name name) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'admin', true); END;
CREATE FUNCTION pgjq.revoke_producer(role_name name) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'producer', false); END;
CREATE FUNCTION pgjq.revoke_worker(role_name name) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'worker', false); END;
CREATE FUNCTION pgjq.revoke_admin(role_name name) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'admin', false); END;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgjq FROM PUBLIC;

-- ====================================================================================================
-- Background worker (maintenance_worker.cpp, launcher.cpp, worker_*.cpp; docs/background-worker.md).
-- Keep this section last.
-- ====================================================================================================

-- Delayed jobs only (enqueued with a future run_at, or waiting out a retry backoff): what the worker
-- reads to notify a queue when its jobs fall due. Jobs enqueued for "now" have run_at = created_at and
-- stay out of it; heartbeats touch none of its columns, so they remain HOT updates.
CREATE INDEX live_jobs_scheduled_idx ON pgjq.live_jobs (run_at) WHERE status = 'pending' AND run_at > created_at;

-- Wakes the database's worker at commit when a rescheduled job (fail with backoff, lease recovery)
-- becomes due before the worker's next planned pass; a delayed enqueue does the same from enqueue.cpp.
-- A claim or a heartbeat never fires it.
CREATE FUNCTION pgjq.wake_maintenance() RETURNS trigger LANGUAGE c AS 'MODULE_PATHNAME', 'pgjq_wake_maintenance';
-- AFTER for the reason given at notify_new_job_on_requeue.
CREATE TRIGGER wake_maintenance_on_reschedule AFTER UPDATE OF status, run_at ON pgjq.live_jobs
    FOR EACH ROW WHEN (NEW.status = 'pending' AND NEW.run_at > now()) EXECUTE FUNCTION pgjq.wake_maintenance();

-- One row for the launcher (when preloaded) and one per database served now or since the server started.
CREATE FUNCTION pgjq.worker_status()
    RETURNS TABLE (worker_type text, pid integer, datname name, started_at timestamptz, last_run timestamptz,
                   next_wake timestamptz, jobs_recovered bigint, jobs_notified bigint, jobs_pruned bigint,
                   errors bigint, last_error text, last_error_at timestamptz, stopped boolean)
    LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'pgjq_worker_status';
-- Starts the maintenance worker of the current database (returns its pid; the running one's if any).
CREATE FUNCTION pgjq.start_worker() RETURNS integer LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'pgjq_start_worker';
-- Stops it until pgjq.start_worker() or a server restart; false if none was running.
CREATE FUNCTION pgjq.stop_worker() RETURNS boolean LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'pgjq_stop_worker';

REVOKE ALL ON FUNCTION pgjq.wake_maintenance(), pgjq.worker_status(), pgjq.start_worker(), pgjq.stop_worker()
    FROM PUBLIC;
INSERT INTO pgjq.capabilities (capability, object, is_function) VALUES
    ('admin', 'pgjq.worker_status()', true),
    ('admin', 'pgjq.start_worker()', true),
    ('admin', 'pgjq.stop_worker()', true);
