-- pgjq 0.2.0 -> 0.3.0: durable workflows (docs/workflows.md).
\echo Use "ALTER EXTENSION pgjq UPDATE TO '0.3.0'" to load this file. \quit

-- Workflows -------------------------------------------------------------------------------------------
-- (core/workflows.hpp, api/workflows.cpp)

-- A workflow: jobs (its steps) enqueued together, which pass their results along their dependencies. Its
-- counters move when a step finishes, at that transaction's commit, so reading a workflow's progress costs
-- one row whatever its size. status: running until every step finished; then completed, or failed when a
-- step failed for good (or was cancelled) under on_failure = 'fail'; cancelled by cancel_workflow.
-- workflow_key: at most one unfinished workflow of a role holds it. parent_job: the step that started this
-- workflow as its sub-workflow; it hears of the end as the event 'workflow/<id>'. retention: how long the
-- finished workflow stays (its steps' own rows follow their queues' retention).
CREATE SEQUENCE pgjq.workflow_id_seq AS bigint;
CREATE TABLE pgjq.workflow_runs (
    id             bigint      NOT NULL DEFAULT nextval('pgjq.workflow_id_seq') PRIMARY KEY,
    workflow_name  text        NOT NULL,
    workflow_key   text,
    started_by     regrole     NOT NULL,
    status         text        NOT NULL DEFAULT 'running',
    on_failure     text        NOT NULL DEFAULT 'fail',
    parent_job     bigint,
    steps_total    integer     NOT NULL DEFAULT 0,
    steps_finished integer     NOT NULL DEFAULT 0,
    steps_failed   integer     NOT NULL DEFAULT 0,
    retention      interval    NOT NULL DEFAULT '7 days',
    created_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz,
    CONSTRAINT workflow_status CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT workflow_on_failure CHECK (on_failure IN ('fail', 'continue', 'ignore')),
    CONSTRAINT workflow_retention CHECK (retention >= interval '0' AND retention <= interval '100 years')
);
ALTER SEQUENCE pgjq.workflow_id_seq OWNED BY pgjq.workflow_runs.id;
CREATE UNIQUE INDEX workflow_runs_key_idx ON pgjq.workflow_runs (started_by, workflow_key)
    WHERE workflow_key IS NOT NULL AND finished_at IS NULL;
CREATE INDEX workflow_runs_finished_idx ON pgjq.workflow_runs (finished_at) WHERE finished_at IS NOT NULL;
-- The running workflows, whose steps the maintenance worker's sweep looks at.
CREATE INDEX workflow_runs_running_idx ON pgjq.workflow_runs (id) WHERE finished_at IS NULL;

-- One row per step, keyed by its job. unmet: how many of the steps it depends on have not finished (the
-- join's counter: each parent that finishes subtracts itself once, under this row's lock, so a join over
-- N children costs O(1) per child and is started by exactly one of them); broken: one of them failed for
-- good or was cancelled. status, result, last_error, attempts, started_at, finished_at: the step's outcome, recorded
-- when it finished (the job's own row goes with its queue's retention; the workflow keeps this one).
CREATE TABLE pgjq.workflow_run_steps (
    job_id      bigint          NOT NULL PRIMARY KEY,
    workflow_id bigint          NOT NULL,
    step_name   text            NOT NULL,
    queue_name  text            NOT NULL,
    job_type    text            NOT NULL,
    enqueued_by regrole         NOT NULL,
    max_attempts integer        NOT NULL,
    unmet       integer         NOT NULL DEFAULT 0,
    broken      boolean         NOT NULL DEFAULT false,
    status      pgjq.job_status,
    result      jsonb,
    last_error  text,
    attempts    integer,
    created_at  timestamptz     NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz,
    CONSTRAINT workflow_step_name UNIQUE (workflow_id, step_name)
) WITH (fillfactor = 50);
-- A step's row is written twice after its insert, a commit apart: its counter (when the steps it depends on
-- finish) and its outcome. No index names a column either writes (unmet, broken, status, the outcome,
-- finished_at), and half of each page is left free so that the new version fits beside the old one even when
-- one commit counts down every row of a page (a fan-out): both stay heap-only updates, which write no index
-- entry. The maintenance worker's sweep finds unsettled steps through their running workflows
-- (workflow_runs_running_idx, core/workflows.hpp).
-- parent_job must finish before child_job starts.
CREATE TABLE pgjq.workflow_edges (
    parent_job bigint NOT NULL,
    child_job  bigint NOT NULL,
    PRIMARY KEY (parent_job, child_job)
);
CREATE INDEX workflow_edges_child_idx ON pgjq.workflow_edges (child_job);

-- What a job recorded of its own progress (checkpoint): one value per name, the first one recorded.
CREATE TABLE pgjq.checkpoints (
    job_id      bigint      NOT NULL,
    name        text        NOT NULL,
    value       jsonb       NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, name)
);

-- Signals (pgjq.signal), kept until expires_at so that a job that waits later still receives them. The
-- audience is the role whose jobs the event is for (a producer signals its own jobs), or NULL: every job of
-- the queue (an admin's signal). One event per name and audience: the first payload holds until it expires.
CREATE TABLE pgjq.events (
    queue_name   text        NOT NULL,
    event_name   text        NOT NULL,
    audience     regrole,
    payload      jsonb       NOT NULL,
    signalled_by regrole     NOT NULL,
    signalled_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX events_name_idx ON pgjq.events (queue_name, event_name, (coalesce(audience::oid, 0::oid)));
CREATE INDEX events_expires_idx ON pgjq.events (expires_at);

-- Jobs parked by wait_for_event: pending with run_at at the wait's deadline, woken at once by the event.
CREATE TABLE pgjq.event_waits (
    job_id     bigint      NOT NULL PRIMARY KEY,
    queue_name text        NOT NULL,
    event_name text        NOT NULL,
    waiter     regrole,
    deadline   timestamptz NOT NULL
);
CREATE INDEX event_waits_name_idx ON pgjq.event_waits (queue_name, event_name);

REVOKE ALL ON pgjq.workflow_runs, pgjq.workflow_run_steps, pgjq.workflow_edges, pgjq.checkpoints, pgjq.events,
              pgjq.event_waits FROM PUBLIC;
REVOKE ALL ON SEQUENCE pgjq.workflow_id_seq FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('pgjq.workflow_runs', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.workflow_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.workflow_run_steps', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.workflow_edges', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.checkpoints', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.events', '');
SELECT pg_catalog.pg_extension_config_dump('pgjq.event_waits', '');

-- What a role may read (the views below): a workflow it started (or one whose role it has the privileges
-- of), or one every step of which it may read; a step, and its result, as it may read the step's job
-- (pgjq.jobs' rule, docs/privileges.md).
CREATE VIEW pgjq.workflows WITH (security_barrier) AS
    SELECT w.id, w.workflow_name, w.workflow_key,
           CASE WHEN w.status = 'running' AND NOT EXISTS (
                    SELECT 1 FROM pgjq.workflow_run_steps s JOIN pgjq.live_jobs l ON l.id = s.job_id
                     WHERE s.workflow_id = w.id
                       AND (l.status > 'pending' OR (l.status = 'pending' AND l.run_at <= now())))
                THEN 'waiting' ELSE w.status END AS status,
           w.on_failure, w.steps_total, w.steps_finished, w.steps_failed, w.started_by, w.parent_job,
           w.created_at, w.finished_at
      FROM pgjq.workflow_runs w
     WHERE pg_catalog.pg_has_role(w.started_by::oid, 'USAGE')
        OR NOT EXISTS (SELECT 1 FROM pgjq.workflow_run_steps s
                        WHERE s.workflow_id = w.id AND NOT pgjq.may_read_job(s.queue_name, s.enqueued_by));
COMMENT ON VIEW pgjq.workflows IS 'workflows, running or finished (until their retention passes); status waiting: nothing of it can run before an event or a time';

-- A step's state: its job's while it is live, the recorded outcome once it finished. waiting_for: 'steps'
-- (steps it depends on), 'event <name>', 'sleep' (sleep_until), 'time' (a retry's delay or a later run_at).
CREATE VIEW pgjq.workflow_step_states WITH (security_barrier) AS
    SELECT s.workflow_id, s.step_name, s.job_id, s.queue_name, s.job_type,
           coalesce(l.status, s.status) AS status,
           ARRAY(SELECT p.step_name FROM pgjq.workflow_edges e JOIN pgjq.workflow_run_steps p ON p.job_id = e.parent_job
                  WHERE e.child_job = s.job_id ORDER BY p.step_name) AS depends_on,
           coalesce(l.attempts, s.attempts, 0) AS attempts, s.max_attempts,
           coalesce(l.last_error, s.last_error) AS last_error, s.result, l.run_at, s.created_at,
           coalesce(l.started_at, l.claimed_at, s.started_at) AS started_at,
           s.finished_at,
           CASE WHEN l.status < 'pending' THEN 'steps'  -- waiting (a literal of that value would need the
                                                         -- transaction that added it to have committed)
                WHEN l.status = 'pending' AND w.job_id IS NOT NULL THEN 'event ' || w.event_name
                WHEN l.status = 'pending' AND l.run_at > now() AND EXISTS (
                         SELECT 1 FROM pgjq.checkpoints c
                          WHERE c.job_id = s.job_id AND c.value ? 'sleep_until'
                            AND (c.value ->> 'sleep_until')::timestamptz = l.run_at) THEN 'sleep'
                WHEN l.status = 'pending' AND l.run_at > now() THEN 'time'
           END AS waiting_for,
           s.enqueued_by
      FROM pgjq.workflow_run_steps s
      LEFT JOIN pgjq.live_jobs l ON l.id = s.job_id
      LEFT JOIN pgjq.event_waits w ON w.job_id = s.job_id
     WHERE pgjq.may_read_job(s.queue_name, s.enqueued_by);

-- The results of the steps a step depends on: the parent's outcome, for its child_job. Under on_failure =
-- 'ignore' the parents that failed or were cancelled are left out.
CREATE VIEW pgjq.step_dependencies WITH (security_barrier) AS
    SELECT e.child_job, p.step_name, p.job_id, p.status, p.result, p.last_error
      FROM pgjq.workflow_edges e
      JOIN pgjq.workflow_run_steps p ON p.job_id = e.parent_job
      JOIN pgjq.workflow_runs w ON w.id = p.workflow_id
     WHERE (w.on_failure <> 'ignore' OR p.status = 'completed')
       AND pgjq.may_read_job(p.queue_name, p.enqueued_by);

CREATE VIEW pgjq.job_checkpoints WITH (security_barrier) AS
    SELECT c.job_id, c.name, c.value, c.recorded_at
      FROM pgjq.checkpoints c
      JOIN (SELECT id, queue_name, enqueued_by FROM pgjq.live_jobs
            UNION ALL SELECT id, queue_name, enqueued_by FROM pgjq.finished_jobs) j ON j.id = c.job_id
     WHERE pgjq.may_read_job(j.queue_name, j.enqueued_by);
GRANT SELECT ON pgjq.workflows, pgjq.workflow_step_states, pgjq.step_dependencies, pgjq.job_checkpoints TO PUBLIC;

CREATE FUNCTION pgjq.workflow_steps(workflow_id bigint)
    RETURNS TABLE (step_name text, job_id bigint, queue_name text, job_type text, status pgjq.job_status,
                   depends_on text[], attempts integer, max_attempts integer, last_error text, result jsonb,
                   run_at timestamptz, created_at timestamptz, started_at timestamptz, finished_at timestamptz,
                   waiting_for text)
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.step_name, s.job_id, s.queue_name, s.job_type, s.status, s.depends_on, s.attempts, s.max_attempts,
           s.last_error, s.result, s.run_at, s.created_at, s.started_at, s.finished_at, s.waiting_for
      FROM pgjq.workflow_step_states s WHERE s.workflow_id = $1 ORDER BY s.job_id
$$;
COMMENT ON FUNCTION pgjq.workflow_steps(bigint) IS 'the steps of a workflow, in enqueue order, with the names of the steps each depends on';

-- A page size of 1 to 10000 rows, or 22023.
CREATE FUNCTION pgjq.page_size(max_results integer) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF max_results IS NULL OR max_results < 1 OR max_results > 10000 THEN
        RAISE EXCEPTION 'max_results must be between 1 and 10000' USING ERRCODE = '22023',
              DETAIL = format('It was %s.', coalesce(max_results::text, 'NULL'));
    END IF;
    RETURN max_results;
END
$$;

-- The page after after_step, in step_name order.
CREATE FUNCTION pgjq.step_results(job_id bigint, after_step text DEFAULT NULL, max_results integer DEFAULT 1000)
    RETURNS TABLE (step_name text, job_id bigint, status pgjq.job_status, result jsonb, last_error text)
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT d.step_name, d.job_id, d.status, d.result, d.last_error
      FROM pgjq.step_dependencies d
     WHERE d.child_job = $1 AND ($2 IS NULL OR d.step_name > $2)
     ORDER BY d.step_name LIMIT pgjq.page_size($3)
$$;
COMMENT ON FUNCTION pgjq.step_results(bigint, text, integer) IS 'the outcome of each step the job depends on, by step name, a page at a time';

CREATE FUNCTION pgjq.checkpoints(job_id bigint) RETURNS jsonb
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(jsonb_object_agg(c.name, c.value), '{}') FROM pgjq.job_checkpoints c WHERE c.job_id = $1
$$;
COMMENT ON FUNCTION pgjq.checkpoints(bigint) IS 'what the job recorded with checkpoint, as an object of names and values';

-- The writing functions: C++ (api/workflows.cpp), each checking the caller's capability first.
CREATE FUNCTION pgjq.start_workflow(workflow_name text, steps jsonb, workflow_key text DEFAULT NULL,
                                    on_failure text DEFAULT 'fail', retention interval DEFAULT '7 days',
                                    parent_job bigint DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_start_workflow';
CREATE FUNCTION pgjq.add_steps(job_id bigint, worker_id text, steps jsonb)
    RETURNS bigint[] LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_add_steps';
CREATE FUNCTION pgjq.cancel_workflow(workflow_id bigint)
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_cancel_workflow';
CREATE FUNCTION pgjq.retry_workflow(workflow_id bigint)
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_retry_workflow';
CREATE FUNCTION pgjq.checkpoint(job_id bigint, worker_id text, name text, value jsonb)
    RETURNS jsonb LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_checkpoint';
CREATE FUNCTION pgjq.signal(event_name text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                            keep_for interval DEFAULT '7 days')
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_signal';
CREATE FUNCTION pgjq.wait_for_event(job_id bigint, worker_id text, event_name text, timeout interval DEFAULT '7 days')
    RETURNS jsonb LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_wait_for_event';
CREATE FUNCTION pgjq.sleep_until(job_id bigint, worker_id text, name text, wake_at timestamptz)
    RETURNS boolean LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_sleep_until';

-- Failed attempts -------------------------------------------------------------------------------------
-- (core/attempt_errors.hpp)

-- One row per failed attempt of a job: a worker's fail, a lease that expired, an execution timeout. failure
-- numbers a job's failed attempts from 1 and counts on across retries by hand (whose attempts count from 1
-- again); the newest 20 of a job are kept, the older dropped (pgjq.job_errors says how many). A row goes
-- once its job is gone (pruned, deleted, or completed in a queue that keeps no completed jobs) and its
-- queue's retention has passed since the attempt failed.
CREATE TABLE pgjq.attempt_errors (
    job_id      bigint      NOT NULL,
    failure     integer     NOT NULL,
    attempt     integer     NOT NULL,
    queue_name  text        NOT NULL,
    enqueued_by regrole,
    worker_id   text,
    started_at  timestamptz,
    failed_at   timestamptz NOT NULL DEFAULT now(),
    error       text        NOT NULL,
    PRIMARY KEY (job_id, failure)
);
CREATE INDEX attempt_errors_failed_at_idx ON pgjq.attempt_errors (failed_at);
REVOKE ALL ON pgjq.attempt_errors FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('pgjq.attempt_errors', '');

-- Each failed attempt of the jobs a role may read (pgjq.jobs' rule);
-- failures_not_kept: how many older failures of the job were dropped.
CREATE VIEW pgjq.job_errors WITH (security_barrier) AS
    SELECT e.job_id, e.failure, e.attempt, e.worker_id, e.started_at, e.failed_at, e.error,
           min(e.failure) OVER (PARTITION BY e.job_id) - 1 AS failures_not_kept
      FROM pgjq.attempt_errors e
     WHERE pgjq.may_read_job(e.queue_name, e.enqueued_by);
GRANT SELECT ON pgjq.job_errors TO PUBLIC;
COMMENT ON VIEW pgjq.job_errors IS 'the error of each failed attempt of a job (the newest 20 per job), with its worker and times';

-- The failed jobs of a queue, which retry_failed takes and `pgjq status` counts, found without reading the
-- whole history; completed and cancelled jobs, the bulk of it, write no entry.
CREATE INDEX finished_jobs_failed_idx ON pgjq.finished_jobs (queue_name, id) WHERE status = 'failed';

-- Whether the calling role holds a capability (producer, worker, admin, observer) for a queue: what a tool
-- asks before it offers an action, so that it offers only what the call would not refuse (pgjq web).
CREATE FUNCTION pgjq.holds_capability(capability text, queue_name text) RETURNS boolean
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'pgjq_holds_capability';
COMMENT ON FUNCTION pgjq.holds_capability(text, text) IS 'whether the calling role holds this capability for the queue';

-- Trace context ---------------------------------------------------------------------------------------
-- (core/trace_context.hpp)

-- headers: what the enqueuing service hands on to the worker, a W3C traceparent and tracestate above all
-- (a JSON object of at most 32 string members, 4 kB stored; a traceparent must be of the W3C form). Set at
-- enqueue, returned by every claim, kept in the history and carried back by a retry. NULL: none. Adding the
-- columns rewrites nothing: a column without a default is only recorded in the catalog.
ALTER TABLE pgjq.live_jobs ADD COLUMN headers jsonb;
ALTER TABLE pgjq.finished_jobs ADD COLUMN headers jsonb;

CREATE OR REPLACE VIEW pgjq.jobs WITH (security_barrier) AS
    SELECT id, queue_name, job_type, priority, status, payload, NULL::jsonb AS result, run_at, unique_key,
           progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at,
           created_at, started_at, NULL::timestamptz AS completed_at, NULL::timestamptz AS failed_at,
           NULL::timestamptz AS cancelled_at, attempts, max_attempts, last_error, enqueued_by, claimed_by,
           group_key, depends_on, timeout, timeout_at, headers
      FROM pgjq.live_jobs
     WHERE pgjq.may_read_job(queue_name, enqueued_by)
    UNION ALL
    SELECT id, queue_name, job_type, priority, status, payload, result, run_at, unique_key,
           progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at,
           created_at, started_at, completed_at, failed_at, cancelled_at, attempts, max_attempts, last_error,
           enqueued_by, claimed_by, group_key, depends_on, timeout, NULL::timestamptz, headers
      FROM pgjq.finished_jobs
     WHERE pgjq.may_read_job(queue_name, enqueued_by);

-- The producer functions with the headers argument. The old signatures go (a call by position or name with
-- the old arguments still resolves to the new ones, whose added argument defaults).
DROP FUNCTION pgjq.enqueue(text, jsonb, text, integer, timestamptz, integer, text, text, bigint[], interval, interval);
DROP FUNCTION pgjq.try_enqueue(text, jsonb, text, integer, timestamptz, integer, text, text, bigint[], interval, interval);
DROP FUNCTION pgjq.enqueue_batch(text, jsonb, text, integer, timestamptz, integer, text[], text[], bigint[], interval, interval);
CREATE FUNCTION pgjq.enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                             priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                             max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL,
                             group_key text DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                             timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL,
                             headers jsonb DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE
    AS 'MODULE_PATHNAME', 'pgjq_enqueue';
CREATE FUNCTION pgjq.try_enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                                 priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL,
                                 group_key text DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                                 timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL,
                                 headers jsonb DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE
    AS 'MODULE_PATHNAME', 'pgjq_try_enqueue';
-- headers: for every job of the batch.
CREATE FUNCTION pgjq.enqueue_batch(job_type text, payloads jsonb, queue_name text DEFAULT 'default',
                                   priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                   max_attempts integer DEFAULT NULL, unique_keys text[] DEFAULT NULL,
                                   group_keys text[] DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                                   timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL,
                                   headers jsonb DEFAULT NULL)
    RETURNS bigint[] LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_enqueue_batch';
GRANT EXECUTE ON FUNCTION
    pgjq.enqueue(text, jsonb, text, integer, timestamptz, integer, text, text, bigint[], interval, interval, jsonb),
    pgjq.try_enqueue(text, jsonb, text, integer, timestamptz, integer, text, text, bigint[], interval, interval, jsonb),
    pgjq.enqueue_batch(text, jsonb, text, integer, timestamptz, integer, text[], text[], bigint[], interval, interval, jsonb)
    TO PUBLIC;

-- Queue samples -----------------------------------------------------------------------------------------
-- (core/queue_samples.hpp, maintenance/queue_sampling.cpp)

-- Each queue's figures as the maintenance worker recorded them every pgjq.queue_sample_interval (1 minute),
-- kept a day: what the dashboard's charts draw, so that they survive a restart of `pgjq web`. unfinished,
-- completed, failed, cancelled, next_job_age: as pgjq.queue_metrics said; in_flight: its jobs claimed or
-- running; wait_* and run_*: the totals of its latency histograms (jobs and seconds since the server
-- started; NULL without preload). A dropped queue's samples go with the others, a day later.
CREATE TABLE pgjq.queue_samples (
    queue_name   text        NOT NULL,
    sampled_at   timestamptz NOT NULL,
    unfinished   bigint      NOT NULL,
    in_flight    bigint      NOT NULL,
    completed    bigint      NOT NULL,
    failed       bigint      NOT NULL,
    cancelled    bigint      NOT NULL,
    next_job_age interval,
    wait_jobs    bigint,
    wait_seconds double precision,
    run_jobs     bigint,
    run_seconds  double precision,
    PRIMARY KEY (queue_name, sampled_at)
);
CREATE INDEX queue_samples_sampled_at_idx ON pgjq.queue_samples (sampled_at);
REVOKE ALL ON pgjq.queue_samples FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('pgjq.queue_samples', '');

-- The samples of the queues a role may read (pgjq.queue_metrics' rule).
CREATE VIEW pgjq.queue_history WITH (security_barrier) AS
    SELECT queue_name, sampled_at, unfinished, in_flight, completed, failed, cancelled, next_job_age,
           wait_jobs, wait_seconds, run_jobs, run_seconds
      FROM pgjq.queue_samples
     WHERE pgjq.may_read_queue(queue_name);
GRANT SELECT ON pgjq.queue_history TO PUBLIC;
COMMENT ON VIEW pgjq.queue_history IS 'each queue''s figures every pgjq.queue_sample_interval over the last day, for charts';

-- Records a sample of every queue now (what the maintenance worker does on its own); returns how many.
CREATE FUNCTION pgjq.sample_queues() RETURNS bigint
    LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_sample_queues';
GRANT EXECUTE ON FUNCTION pgjq.sample_queues() TO PUBLIC;
