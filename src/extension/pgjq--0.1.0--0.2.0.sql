-- pgjq 0.1.0 -> 0.2.0. A fresh CREATE EXTENSION pgjq runs pgjq--0.1.0.sql and then this script (see the
-- "Upgrading" in docs/operations.md), so everything 0.2.0 changes is written here, once.
\echo Use "ALTER EXTENSION pgjq UPDATE TO '0.2.0'" to load this file. \quit

-- Dump and restore -----------------------------------------------------------------------------------
-- pg_restore runs CREATE EXTENSION pgjq, whose script creates the queue 'default' and its 16 counter
-- rows, and only then loads the dumped rows of pgjq.queues and pgjq.queue_depth (both registered with
-- pg_extension_config_dump). In 0.1.0 the dumped 'default' rows collided with the script's, each COPY
-- failed as a whole, and the restored database lost every queue and every counter. A dumped row now
-- merges into the row the script made.

-- The queue the install script made is 'default', with the table's default settings. A dumped queue
-- 'default' takes its place while it is still unchanged; any other duplicate is refused as before (23505).
CREATE FUNCTION pgjq.merge_restored_queue() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE pgjq.queues q
       SET max_pending = NEW.max_pending, fifo = NEW.fifo, max_attempts = NEW.max_attempts, lease = NEW.lease,
           retry_base = NEW.retry_base, retry_cap = NEW.retry_cap, retention = NEW.retention,
           keep_completed = NEW.keep_completed, paused = NEW.paused, created_at = NEW.created_at,
           group_concurrency = NEW.group_concurrency, max_running = NEW.max_running, rate_limit = NEW.rate_limit,
           rate_interval = NEW.rate_interval, job_timeout = NEW.job_timeout,
           uses_dependencies = NEW.uses_dependencies
     WHERE q.queue_name = NEW.queue_name
       AND q.max_pending IS NULL AND NOT q.fifo AND q.max_attempts = 3 AND q.lease = interval '5 minutes'
       AND q.retry_base = interval '1 second' AND q.retry_cap = interval '1 hour'
       AND q.retention = interval '7 days' AND q.keep_completed AND NOT q.paused
       AND q.group_concurrency = 1 AND q.max_running IS NULL AND q.rate_limit IS NULL
       AND q.rate_interval = interval '1 second' AND q.job_timeout IS NULL AND NOT q.uses_dependencies;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER merge_restored_queue BEFORE INSERT ON pgjq.queues
    FOR EACH ROW WHEN (NEW.queue_name = 'default') EXECUTE FUNCTION pgjq.merge_restored_queue();

-- The script's counter rows (of 'default', each 0) meet the dumped ones: the counts add up (all of them: the
-- totals are added below, "Statistics from counters"). Counter rows
-- are created once per queue, so no other insert ever meets an existing row.
CREATE FUNCTION pgjq.merge_restored_depth() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE pgjq.queue_depth d
       SET unfinished = d.unfinished + NEW.unfinished, completed = d.completed + NEW.completed,
           failed = d.failed + NEW.failed, cancelled = d.cancelled + NEW.cancelled
     WHERE d.queue_name = NEW.queue_name AND d.slot = NEW.slot;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER merge_restored_depth BEFORE INSERT ON pgjq.queue_depth
    FOR EACH ROW WHEN (NEW.queue_name = 'default') EXECUTE FUNCTION pgjq.merge_restored_depth();

REVOKE ALL ON FUNCTION pgjq.merge_restored_queue(), pgjq.merge_restored_depth() FROM PUBLIC;

-- Tenants and capabilities --------------------------------------------------------------------------
-- 0.1.0 granted EXECUTE on the functions of a capability to each role, with no per-queue scope, no way to
-- revoke one capability without the others (they shared USAGE on the schema), and no notion of whose job
-- is whose: any worker could complete another's job by passing its worker_id, any producer cancel and
-- read any job. From 0.2.0 a capability is a row of pgjq.grants, checked by the functions themselves
-- (src/extension/core/privileges.hpp); jobs record the role that enqueued and the role that claimed them.
-- Being data, capabilities survive dump and restore, and the functions a later version adds serve their
-- holders without any GRANT (a GRANT made by an upgrade script would count as the extension's own initial
-- privilege, which pg_dump leaves out).

CREATE TABLE pgjq.grants (
    grantee    regrole     NOT NULL,
    capability text        NOT NULL,
    queue_name text,                        -- NULL: every queue
    granted_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT grants_capability CHECK (capability IN ('producer', 'worker', 'admin', 'observer')),
    CONSTRAINT grants_unique UNIQUE NULLS NOT DISTINCT (grantee, capability, queue_name)
);
COMMENT ON TABLE pgjq.grants IS 'who holds which pgjq capability, for which queue (NULL: every queue); change it with pgjq.grant_* and pgjq.revoke_*';
SELECT pg_catalog.pg_extension_config_dump('pgjq.grants', '');

-- Each backend keeps a copy of the grants (core/privileges.cpp): a change makes every backend read them
-- again after it commits.
CREATE FUNCTION pgjq.relation_changed() RETURNS trigger LANGUAGE c AS 'MODULE_PATHNAME', 'pgjq_relation_changed';
CREATE TRIGGER grants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pgjq.grants
    FOR EACH STATEMENT EXECUTE FUNCTION pgjq.relation_changed();

-- The roles 0.1.0 granted capabilities to (by GRANT EXECUTE on the capability's functions) keep them, for
-- every queue, as rows; the per-role grants on pgjq's objects go, since the functions' own checks replace
-- them. Run by this upgrade, and by hand after restoring a dump of a 0.1.0 database into a later version
-- (the dump brings the old GRANTs back, which later versions do not read). Returns the rows added. Each
-- capability is recognized by a function only it had and whose arguments 0.2.0 kept, so that the GRANT on
-- it survives such a restore.
CREATE FUNCTION pgjq.adopt_legacy_grants() RETURNS integer LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    o record;
    adopted integer;
BEGIN
    INSERT INTO pgjq.grants (grantee, capability)
    SELECT DISTINCT a.grantee::regrole, c.capability
      FROM (VALUES ('producer', 'pgjq.cancel'), ('worker', 'pgjq.claim_job_batch'),
                   ('admin', 'pgjq.drop_queue')) AS c(capability, fn)
      JOIN pg_catalog.pg_proc p ON p.oid = c.fn::regproc
     CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) AS a
     WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> 0 AND a.grantee <> p.proowner
    ON CONFLICT ON CONSTRAINT grants_unique DO NOTHING;
    GET DIAGNOSTICS adopted = ROW_COUNT;
    FOR o IN SELECT DISTINCT p.oid::regprocedure::text AS object, a.grantee::regrole::text AS grantee
               FROM pg_catalog.pg_proc p CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) AS a
              WHERE p.pronamespace = 'pgjq'::regnamespace AND a.grantee <> 0 AND a.grantee <> p.proowner LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM %s', o.object, o.grantee);
    END LOOP;
    FOR o IN SELECT DISTINCT c.oid::regclass::text AS object, a.grantee::regrole::text AS grantee
               FROM pg_catalog.pg_class c CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) AS a
              WHERE c.relnamespace = 'pgjq'::regnamespace AND a.grantee <> 0 AND a.grantee <> c.relowner LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM %s', o.object, o.grantee);
    END LOOP;
    FOR o IN SELECT DISTINCT a.grantee::regrole::text AS grantee
               FROM pg_catalog.pg_namespace n CROSS JOIN LATERAL pg_catalog.aclexplode(n.nspacl) AS a
              WHERE n.oid = 'pgjq'::regnamespace AND a.grantee <> 0 AND a.grantee <> n.nspowner LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA pgjq FROM %s', o.grantee);
    END LOOP;
    RETURN adopted;
END;
$$;
SELECT pgjq.adopt_legacy_grants();

-- The capability helpers, now with a queue (NULL: every queue) and the observer capability. Only the
-- extension's owner (or a superuser) calls them.
DROP FUNCTION pgjq.grant_producer(name), pgjq.grant_worker(name), pgjq.grant_admin(name),
    pgjq.revoke_producer(name), pgjq.revoke_worker(name), pgjq.revoke_admin(name),
    pgjq.set_capability(name, text, boolean);
DROP TABLE pgjq.capabilities;

-- The refusal of an unknown queue, worded once (pg/limits.hpp), for the SQL-language functions below.
CREATE FUNCTION pgjq.raise_unknown_queue(queue_name text) RETURNS void
    LANGUAGE c STRICT AS 'MODULE_PATHNAME', 'pgjq_raise_unknown_queue';
REVOKE ALL ON FUNCTION pgjq.raise_unknown_queue(text) FROM PUBLIC;

CREATE FUNCTION pgjq.set_capability(role_name name, capability text, queue_name text, grant_it boolean)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    role_oid oid;
BEGIN
    IF role_name IS NULL OR capability IS NULL OR grant_it IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN role_name IS NULL THEN 'role_name' WHEN capability IS NULL THEN 'capability' ELSE 'grant_it' END
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT r.oid INTO role_oid FROM pg_roles r WHERE r.rolname = role_name;
    IF role_oid IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role_name USING ERRCODE = 'undefined_object';
    END IF;
    IF capability NOT IN ('producer', 'worker', 'admin', 'observer') THEN
        RAISE EXCEPTION 'unknown capability "%"', capability USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The capabilities are producer, worker, admin and observer.';
    END IF;
    IF queue_name IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pgjq.queues q WHERE q.queue_name = set_capability.queue_name) THEN
        PERFORM pgjq.raise_unknown_queue(queue_name);
    END IF;
    IF grant_it THEN
        INSERT INTO pgjq.grants (grantee, capability, queue_name)
        VALUES (role_oid::regrole, set_capability.capability, set_capability.queue_name)
        ON CONFLICT ON CONSTRAINT grants_unique DO NOTHING;
    ELSE
        -- Without a queue: every grant of the capability; with one: that queue's grant (a grant for
        -- every queue still covers it, which is said).
        DELETE FROM pgjq.grants g
         WHERE g.grantee = role_oid AND g.capability = set_capability.capability
           AND (set_capability.queue_name IS NULL OR g.queue_name = set_capability.queue_name);
        IF set_capability.queue_name IS NOT NULL AND EXISTS (
               SELECT 1 FROM pgjq.grants g
                WHERE g.grantee = role_oid AND g.capability = set_capability.capability AND g.queue_name IS NULL) THEN
            RAISE NOTICE 'role "%" is still a % of every queue, queue "%" included', role_name, capability, queue_name
                USING HINT = pg_catalog.format('Revoke that with pgjq.revoke_%s(%L).', capability, role_name);
        END IF;
    END IF;
END;
$$;

CREATE FUNCTION pgjq.grant_producer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'producer', queue_name, true); END;
CREATE FUNCTION pgjq.grant_worker(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'worker', queue_name, true); END;
CREATE FUNCTION pgjq.grant_admin(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'admin', queue_name, true); END;
CREATE FUNCTION pgjq.grant_observer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'observer', queue_name, true); END;
CREATE FUNCTION pgjq.revoke_producer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'producer', queue_name, false); END;
CREATE FUNCTION pgjq.revoke_worker(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'worker', queue_name, false); END;
CREATE FUNCTION pgjq.revoke_admin(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'admin', queue_name, false); END;
CREATE FUNCTION pgjq.revoke_observer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC SELECT pgjq.set_capability(role_name, 'observer', queue_name, false); END;

-- Whose job is whose (NULL on jobs of 0.1.0, which recorded neither).
ALTER TABLE pgjq.live_jobs ADD COLUMN enqueued_by regrole, ADD COLUMN claimed_by regrole;
ALTER TABLE pgjq.finished_jobs ADD COLUMN enqueued_by regrole, ADD COLUMN claimed_by regrole;
-- A unique_key belongs to the role that enqueues (docs/privileges.md, "Tenants"): one tenant's key never
-- refuses, answers or outlives another tenant's enqueue. The jobs of 0.1.0, which recorded no role, share
-- their keys among themselves as before.
DROP INDEX pgjq.live_jobs_unique_key_idx;
CREATE UNIQUE INDEX live_jobs_unique_key_idx ON pgjq.live_jobs (queue_name, enqueued_by, unique_key) NULLS NOT DISTINCT
    WHERE unique_key IS NOT NULL;

-- What each role may read (core/privileges.hpp): the views show a role only the rows it may see, and
-- security_barrier keeps a caller's own conditions from seeing rows before that filter does.
CREATE FUNCTION pgjq.may_read_queue(queue_name text) RETURNS boolean
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'pgjq_may_read_queue';
CREATE FUNCTION pgjq.may_read_job(queue_name text, enqueued_by regrole) RETURNS boolean
    LANGUAGE c STABLE PARALLEL SAFE AS 'MODULE_PATHNAME', 'pgjq_may_read_job';

-- The views pgjq.jobs and pgjq.queue_stats are redefined once, below ("Scheduling"), with this filter and
-- the columns 0.2.0 adds.

-- A queue's settings, to those who may read the queue.
ALTER TABLE pgjq.queues ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable ON pgjq.queues FOR SELECT USING (pgjq.may_read_queue(queue_name));

-- The API functions check the caller's capability themselves and then act as the extension's owner:
-- they run as the caller (SECURITY INVOKER), so that they know who calls.
ALTER FUNCTION pgjq.create_queue(text, bigint, boolean, integer, interval) SECURITY INVOKER;
ALTER FUNCTION pgjq.alter_queue(text, bigint, boolean, integer, interval, interval, interval, interval, boolean, boolean) SECURITY INVOKER;
ALTER FUNCTION pgjq.drop_queue(text, boolean) SECURITY INVOKER;
ALTER FUNCTION pgjq.pause_queue(text) SECURITY INVOKER;
ALTER FUNCTION pgjq.resume_queue(text) SECURITY INVOKER;
ALTER FUNCTION pgjq.enqueue(text, jsonb, text, integer, timestamptz, integer, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.try_enqueue(text, jsonb, text, integer, timestamptz, integer, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.enqueue_batch(text, jsonb, text, integer, timestamptz, integer) SECURITY INVOKER;
ALTER FUNCTION pgjq.cancel(bigint) SECURITY INVOKER;
ALTER FUNCTION pgjq.claim_job_batch(text, text[], integer, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.complete_and_claim(text, bigint[], text[], integer, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.claim_in_transaction(text, text[], integer, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.complete_in_transaction(bigint[], text) SECURITY INVOKER;
ALTER FUNCTION pgjq.fail_in_transaction(bigint, text, text, interval) SECURITY INVOKER;
ALTER FUNCTION pgjq.progress(bigint, text, integer, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.heartbeat(bigint, text) SECURITY INVOKER;
ALTER FUNCTION pgjq.complete(bigint, text, jsonb) SECURITY INVOKER;
ALTER FUNCTION pgjq.complete_batch(bigint[], text) SECURITY INVOKER;
ALTER FUNCTION pgjq.fail(bigint, text, text, interval) SECURITY INVOKER;
ALTER FUNCTION pgjq.retry(bigint) SECURITY INVOKER;
ALTER FUNCTION pgjq.recover_stale() SECURITY INVOKER;
ALTER FUNCTION pgjq.prune(interval) SECURITY INVOKER;
-- A row of INSERT INTO pgjq.jobs is a single-job enqueue: as enqueue and try_enqueue, its trigger pins the
-- search path in C (pg/name_resolution.hpp), which costs a fraction of what SET clauses cost.
ALTER FUNCTION pgjq.insert_into_jobs_view() SECURITY INVOKER RESET ALL;

-- Serving many databases in turn (maintenance/launcher.cpp): each database's row also says whether it is
-- served, waits for a free worker or is idle, and what its next_wake is for (a duty's name, or a request).
-- For a database nobody serves, next_wake is when the launcher plans to start a worker there.
DROP FUNCTION pgjq.worker_status();
CREATE FUNCTION pgjq.worker_status()
    RETURNS TABLE (worker_type text, pid integer, datname name, started_at timestamptz, last_run timestamptz,
                   next_wake timestamptz, jobs_recovered bigint, jobs_notified bigint, jobs_pruned bigint,
                   errors bigint, last_error text, last_error_at timestamptz, stopped boolean,
                   state text, waiting_since timestamptz, wake_reason text)
    LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'pgjq_worker_status';

GRANT USAGE ON SCHEMA pgjq TO PUBLIC;
GRANT EXECUTE ON FUNCTION
    pgjq.create_queue(text, bigint, boolean, integer, interval),
    pgjq.alter_queue(text, bigint, boolean, integer, interval, interval, interval, interval, boolean, boolean),
    pgjq.drop_queue(text, boolean), pgjq.pause_queue(text), pgjq.resume_queue(text),
    pgjq.enqueue(text, jsonb, text, integer, timestamptz, integer, text),
    pgjq.try_enqueue(text, jsonb, text, integer, timestamptz, integer, text),
    pgjq.enqueue_batch(text, jsonb, text, integer, timestamptz, integer), pgjq.cancel(bigint),
    pgjq.claim_job_batch(text, text[], integer, text), pgjq.complete_and_claim(text, bigint[], text[], integer, text),
    pgjq.claim_in_transaction(text, text[], integer, text), pgjq.complete_in_transaction(bigint[], text),
    pgjq.fail_in_transaction(bigint, text, text, interval), pgjq.progress(bigint, text, integer, text),
    pgjq.heartbeat(bigint, text), pgjq.complete(bigint, text, jsonb), pgjq.complete_batch(bigint[], text),
    pgjq.fail(bigint, text, text, interval), pgjq.retry(bigint), pgjq.recover_stale(), pgjq.prune(interval),
    pgjq.worker_status(), pgjq.start_worker(), pgjq.stop_worker(),
    pgjq.may_read_queue(text), pgjq.may_read_job(text, regrole)
    TO PUBLIC;
GRANT SELECT, INSERT ON pgjq.jobs TO PUBLIC;
GRANT SELECT ON pgjq.queue_stats, pgjq.queues TO PUBLIC;
REVOKE ALL ON FUNCTION pgjq.relation_changed(), pgjq.adopt_legacy_grants(), pgjq.set_capability(name, text, text, boolean),
    pgjq.grant_producer(name, text), pgjq.grant_worker(name, text), pgjq.grant_admin(name, text),
    pgjq.grant_observer(name, text), pgjq.revoke_producer(name, text), pgjq.revoke_worker(name, text),
    pgjq.revoke_admin(name, text), pgjq.revoke_observer(name, text) FROM PUBLIC;
REVOKE ALL ON pgjq.grants FROM PUBLIC;

-- Bounded settings ----------------------------------------------------------------------------------
-- Each interval has a maximum (pg/limits.hpp), so that now() + lease, the retry backoff and
-- now() - retention can never overflow: 0.1.0 took '178000000 years' as a lease, after which every claim
-- of the queue failed, and '200000 years' as a retention, after which every prune did. A queue of 0.1.0
-- with a longer setting keeps the longest one allowed; the table refuses longer ones from now on.
UPDATE pgjq.queues SET lease = least(lease, interval '1 year'), retry_base = least(retry_base, interval '1 year'),
       retry_cap = least(retry_cap, interval '1 year'), retention = least(retention, interval '100 years')
 WHERE lease > interval '1 year' OR retry_base > interval '1 year' OR retry_cap > interval '1 year'
    OR retention > interval '100 years';
ALTER TABLE pgjq.queues
    ADD CONSTRAINT lease_bounded CHECK (lease <= interval '1 year'),
    ADD CONSTRAINT retry_bounded CHECK (retry_base <= interval '1 year' AND retry_cap <= interval '1 year'),
    ADD CONSTRAINT retention_bounded CHECK (retention <= interval '100 years');

-- Scheduling: group keys, dependencies, concurrency caps, rate limits, timeouts, uniqueness windows -----
-- (core/waiting_jobs.hpp, core/queue_limits.hpp, api/enqueue.cpp, api/claim.cpp)

-- A job that may not run yet stays in pgjq.live_jobs with the status 'waiting': it waits for its turn in
-- its group (group_key: at most the queue's group_concurrency of a group's jobs are live at once, taken in
-- enqueue order), for the jobs it depends on to complete, or both. It is unfinished (it counts against
-- max_pending and holds its unique_key) but outside the claim index, whose predicate is status = 'pending',
-- so a claim never walks past it however many jobs wait. 'waiting' sorts before 'pending': the in-flight
-- index and the table's CHECK below compare with 'pending' and need no literal of the new value, which the
-- transaction that adds it may not use.
ALTER TYPE pgjq.job_status ADD VALUE 'waiting' BEFORE 'pending';
ALTER TABLE pgjq.live_jobs
    ADD COLUMN group_key text,
    ADD COLUMN depends_on bigint[],
    ADD COLUMN timeout interval,
    ADD COLUMN timeout_at timestamptz,
    DROP CONSTRAINT live_status,
    ADD CONSTRAINT live_status CHECK (status <= 'running');
ALTER TABLE pgjq.finished_jobs
    ADD COLUMN group_key text,
    ADD COLUMN depends_on bigint[],
    ADD COLUMN timeout interval;
-- In flight: claimed or running (not pending, not waiting).
DROP INDEX pgjq.live_jobs_in_flight_idx;
CREATE INDEX live_jobs_in_flight_idx ON pgjq.live_jobs (queue_name, id) WHERE status > 'pending';
-- A group's jobs in enqueue order: how many are live, and which wait next. A group is a queue's, a key's and
-- the enqueuing role's (tenants sharing a queue never wait for each other's groups), but the role is left out
-- of this index: every column of an index is one more that each claim's update must compare.
CREATE INDEX live_jobs_group_idx ON pgjq.live_jobs (queue_name, group_key, id) WHERE group_key IS NOT NULL;

-- Dependencies not yet met: job_id waits for depends_on to complete. A row goes when its job_id starts
-- waiting for nothing, is cancelled, or when depends_on finishes.
CREATE TABLE pgjq.job_dependencies (
    depends_on bigint NOT NULL,
    job_id     bigint NOT NULL,
    PRIMARY KEY (depends_on, job_id)
);
CREATE INDEX job_dependencies_job_idx ON pgjq.job_dependencies (job_id);
SELECT pg_catalog.pg_extension_config_dump('pgjq.job_dependencies', '');

-- Per queue: how many jobs of one group run at once; a cap on the queue's jobs claimed or running; at most
-- rate_limit claims per rate_interval; an execution timeout for its jobs. NULL: no cap, limit or timeout.
-- uses_dependencies: a job of the queue was ever enqueued with depends_on; until one is, finishing a job
-- looks for no dependents (core/queue_features.hpp).
ALTER TABLE pgjq.queues
    ADD COLUMN group_concurrency integer NOT NULL DEFAULT 1,
    ADD COLUMN max_running integer,
    ADD COLUMN rate_limit integer,
    ADD COLUMN rate_interval interval NOT NULL DEFAULT '1 second',
    ADD COLUMN job_timeout interval,
    ADD COLUMN uses_dependencies boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT group_concurrency_range CHECK (group_concurrency BETWEEN 1 AND 10000),
    ADD CONSTRAINT max_running_range CHECK (max_running IS NULL OR max_running BETWEEN 1 AND 1000000),
    ADD CONSTRAINT rate_limit_range CHECK (rate_limit IS NULL OR rate_limit BETWEEN 1 AND 1000000),
    ADD CONSTRAINT rate_interval_range CHECK (rate_interval >= interval '1 millisecond' AND rate_interval <= interval '1 day'),
    ADD CONSTRAINT job_timeout_range CHECK (job_timeout IS NULL OR (job_timeout > interval '0' AND job_timeout <= interval '1 year'));

-- A rate-limited queue's token bucket: its claimers lock the row, so the limit holds across workers.
CREATE TABLE pgjq.rate_limits (
    queue_name  text             PRIMARY KEY,
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('pgjq.rate_limits', '');

-- Uniqueness over a period (enqueue's unique_for): a key taken at enqueue stays taken until expires_at,
-- whether its job finished or not. The primary key makes concurrent producers of one key wait for each
-- other's outcome, as the live unique index does. The maintenance worker deletes expired rows. A window is
-- the role's that enqueued, as its key is.
CREATE TABLE pgjq.unique_windows (
    queue_name  text        NOT NULL,
    enqueued_by regrole     NOT NULL,
    unique_key  text        NOT NULL,
    job_id      bigint      NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (queue_name, enqueued_by, unique_key)
);
CREATE INDEX unique_windows_expires_idx ON pgjq.unique_windows (expires_at);
SELECT pg_catalog.pg_extension_config_dump('pgjq.unique_windows', '');

REVOKE ALL ON pgjq.job_dependencies, pgjq.rate_limits, pgjq.unique_windows FROM PUBLIC;

-- Statistics from counters ---------------------------------------------------------------------------
-- (core/depth.hpp, core/lifecycle.cpp)
-- Counting the history to show a queue's totals costs as much as the history is long. The counter rows
-- of pgjq.queue_depth count what finished instead, by final status since the queue was created, written by
-- the statement that moves the jobs in the same row write as the unfinished count (or at commit with the
-- rest of the transaction's counter changes), so reading them costs 16 rows per queue whatever the
-- history holds.
ALTER TABLE pgjq.queue_depth
    ADD COLUMN completed bigint NOT NULL DEFAULT 0,
    ADD COLUMN failed bigint NOT NULL DEFAULT 0,
    ADD COLUMN cancelled bigint NOT NULL DEFAULT 0;
-- A queue of 0.1.0 starts from what its history holds.
UPDATE pgjq.queue_depth d
   SET completed = f.completed, failed = f.failed, cancelled = f.cancelled
  FROM (SELECT queue_name, count(*) FILTER (WHERE status = 'completed') AS completed,
               count(*) FILTER (WHERE status = 'failed') AS failed,
               count(*) FILTER (WHERE status = 'cancelled') AS cancelled
          FROM pgjq.finished_jobs GROUP BY queue_name) f
 WHERE d.queue_name = f.queue_name AND d.slot = 0;

CREATE OR REPLACE VIEW pgjq.jobs WITH (security_barrier) AS
    SELECT id, queue_name, job_type, priority, status, payload, NULL::jsonb AS result, run_at, unique_key,
           progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at,
           created_at, started_at, NULL::timestamptz AS completed_at, NULL::timestamptz AS failed_at,
           NULL::timestamptz AS cancelled_at, attempts, max_attempts, last_error, enqueued_by, claimed_by,
           group_key, depends_on, timeout, timeout_at
      FROM pgjq.live_jobs
     WHERE pgjq.may_read_job(queue_name, enqueued_by)
    UNION ALL
    SELECT id, queue_name, job_type, priority, status, payload, result, run_at, unique_key,
           progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at,
           created_at, started_at, completed_at, failed_at, cancelled_at, attempts, max_attempts, last_error,
           enqueued_by, claimed_by, group_key, depends_on, timeout, NULL::timestamptz
      FROM pgjq.finished_jobs
     WHERE pgjq.may_read_job(queue_name, enqueued_by);

-- completed, failed, cancelled: since the queue was created, from its counters (0.1.0 counted the history).
CREATE OR REPLACE VIEW pgjq.queue_stats WITH (security_barrier) AS
    SELECT q.queue_name,
           coalesce(l.pending, 0)   AS pending,
           coalesce(l.scheduled, 0) AS scheduled,
           coalesce(l.claimed, 0)   AS claimed,
           coalesce(l.running, 0)   AS running,
           f.completed,
           f.failed,
           f.cancelled,
           l.oldest_runnable_age,
           q.max_pending,
           q.fifo,
           q.paused,
           coalesce(l.waiting, 0)   AS waiting
      FROM pgjq.queues q
      LEFT JOIN (SELECT queue_name,
                        count(*) FILTER (WHERE status = 'pending' AND run_at <= now()) AS pending,
                        count(*) FILTER (WHERE status = 'pending' AND run_at > now())  AS scheduled,
                        count(*) FILTER (WHERE status = 'claimed')                     AS claimed,
                        count(*) FILTER (WHERE status = 'running')                     AS running,
                        count(*) FILTER (WHERE status < 'pending')                     AS waiting,
                        now() - min(run_at) FILTER (WHERE status = 'pending' AND run_at <= now())
                            AS oldest_runnable_age
                   FROM pgjq.live_jobs GROUP BY queue_name) l USING (queue_name)
      CROSS JOIN LATERAL (SELECT coalesce(sum(d.completed), 0)::bigint AS completed,
                                 coalesce(sum(d.failed), 0)::bigint AS failed,
                                 coalesce(sum(d.cancelled), 0)::bigint AS cancelled
                            FROM pgjq.queue_depth d WHERE d.queue_name = q.queue_name) f
     WHERE pgjq.may_read_queue(q.queue_name);

-- Statistics whose cost grows with neither the history nor the backlog (the live counts of queue_stats read
-- the live jobs): the totals of what finished, the unfinished jobs (the backpressure counter), and from
-- indexes the workers holding jobs now and how long the next job a claim would take has been due.
-- Enqueues into a queue without max_pending count in shared memory until the maintenance worker folds them
-- into the rows (src/extension/core/enqueue_counts.hpp): unfinished adds them (on a standby, which has no
-- such counts, the rows lag by what the primary had not folded).
CREATE FUNCTION pgjq.unfolded_enqueues(queue_name text) RETURNS bigint
    LANGUAGE c VOLATILE STRICT SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_unfolded_enqueues';
COMMENT ON FUNCTION pgjq.unfolded_enqueues(text) IS 'jobs enqueued into the queue that its counter rows do not count yet (counted in shared memory); NULL for a queue the caller may not read';

CREATE VIEW pgjq.queue_metrics WITH (security_barrier) AS
    SELECT q.queue_name, c.unfinished + pgjq.unfolded_enqueues(q.queue_name) AS unfinished, c.completed, c.failed, c.cancelled,
           (SELECT count(DISTINCT l.worker_id) FROM pgjq.live_jobs l
             WHERE l.queue_name = q.queue_name AND l.status > 'pending') AS workers,
           (SELECT now() - l.run_at FROM pgjq.live_jobs l
             WHERE l.queue_name = q.queue_name AND l.status = 'pending' AND l.run_at <= now()
             ORDER BY l.priority DESC, l.id LIMIT 1) AS next_job_age,
           q.paused
      FROM pgjq.queues q
     CROSS JOIN LATERAL (
           SELECT coalesce(sum(d.unfinished), 0)::bigint AS unfinished, coalesce(sum(d.completed), 0)::bigint AS completed,
                  coalesce(sum(d.failed), 0)::bigint AS failed, coalesce(sum(d.cancelled), 0)::bigint AS cancelled
             FROM pgjq.queue_depth d WHERE d.queue_name = q.queue_name) c
     WHERE pgjq.may_read_queue(q.queue_name);
COMMENT ON VIEW pgjq.queue_metrics IS 'per queue: totals of finished jobs since creation, unfinished jobs, workers holding jobs, how long the next job has been due; costs the same at any history size';
GRANT SELECT ON pgjq.queue_metrics TO PUBLIC;

-- Each queue's wait times (from when a finished job's last attempt was due to its claim) and run times
-- (from that claim to the finish) as histograms, kept in shared memory since the server started: no row is
-- written for them, and a restart starts them again from zero (needs shared_preload_libraries; else no
-- rows). Only the queues the caller may read. `le` holds the buckets' upper bounds in seconds (the last
-- Infinity), `buckets` their cumulative counts, as Prometheus's histograms do.
CREATE FUNCTION pgjq.latency_histograms(OUT queue_name text, OUT measure text, OUT le double precision[],
                                        OUT buckets bigint[], OUT jobs bigint, OUT sum_seconds double precision)
    RETURNS SETOF record LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pgjq_latency_histograms';
GRANT EXECUTE ON FUNCTION pgjq.latency_histograms() TO PUBLIC;

-- The q-quantile (0 to 1) of a histogram given as upper bounds `le` (the last Infinity) and cumulative
-- counts `buckets`, interpolated linearly within its bucket as Prometheus's histogram_quantile does: an
-- estimate whose error is at most the width of that bucket. NULL for an empty histogram; in the last
-- (unbounded) bucket, the largest finite bound.
CREATE FUNCTION pgjq.histogram_quantile(q double precision, le double precision[], buckets bigint[])
    RETURNS double precision LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n integer := cardinality(le);
    total bigint;
    rank double precision;
    below bigint := 0;
    lower double precision := 0;
BEGIN
    IF q IS NULL OR q < 0 OR q > 1 OR q <> q THEN
        RAISE EXCEPTION 'q must be between 0 and 1, not %', q USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF n IS NULL OR n < 1 OR n <> cardinality(buckets) THEN
        RAISE EXCEPTION 'le and buckets must be non-empty arrays of the same length'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    total := buckets[n];
    IF total IS NULL OR total <= 0 THEN
        RETURN NULL;
    END IF;
    rank := q * total;
    FOR i IN 1 .. n LOOP
        IF buckets[i] >= rank THEN
            IF le[i] = 'Infinity' THEN
                RETURN CASE WHEN i > 1 THEN le[i - 1] END;
            END IF;
            IF buckets[i] = below THEN
                RETURN lower;
            END IF;
            RETURN lower + (le[i] - lower) * (rank - below) / (buckets[i] - below);
        END IF;
        below := buckets[i];
        lower := le[i];
    END LOOP;
    RETURN lower;
END;
$$;
GRANT EXECUTE ON FUNCTION pgjq.histogram_quantile(double precision, double precision[], bigint[]) TO PUBLIC;

CREATE VIEW pgjq.queue_latency WITH (security_barrier) AS
    SELECT q.queue_name, h.measure, h.jobs, h.sum_seconds / nullif(h.jobs, 0) AS mean_seconds,
           pgjq.histogram_quantile(0.5, h.le, h.buckets) AS p50_seconds,
           pgjq.histogram_quantile(0.9, h.le, h.buckets) AS p90_seconds,
           pgjq.histogram_quantile(0.99, h.le, h.buckets) AS p99_seconds,
           h.sum_seconds, h.le, h.buckets
      FROM pgjq.queues q
      JOIN pgjq.latency_histograms() h ON h.queue_name = q.queue_name
     WHERE pgjq.may_read_queue(q.queue_name);
COMMENT ON VIEW pgjq.queue_latency IS 'per queue and measure (wait: due to claimed; run: claimed to finished), of the jobs finished since the server started: count, mean and percentiles in seconds (estimated from the histogram buckets le/buckets, cumulative); kept in shared memory, no row read';
GRANT SELECT ON pgjq.queue_latency TO PUBLIC;

-- The same figures in the Prometheus text exposition format (for a scrape endpoint, e.g. `pgjq metrics
-- --listen`): per queue the caller may read, job counts by state, totals by final status, workers and the
-- next job's age; with admin or observer on every queue, the maintenance
-- duties' counters too. Label values are escaped as the format requires.
CREATE FUNCTION pgjq.metrics() RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    queues text;
    latencies text;
    duties text;
BEGIN
    -- A role that may read no queue has no pgjq capability: refused, as every function refuses it.
    IF NOT EXISTS (SELECT FROM pgjq.queues) THEN
        RAISE EXCEPTION 'permission denied: role "%" holds no pgjq capability', current_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The extension''s owner grants one, as in pgjq.grant_observer(''monitoring'').';
    END IF;
    -- Every sample as (family, its HELP and TYPE, labels, value); each family is written as its HELP and
    -- TYPE lines followed by its samples. Queue names need no escaping in a label: pgjq.queues allows
    -- [a-z0-9_.-] only.
    WITH s AS (SELECT * FROM pgjq.queue_stats), m AS (SELECT * FROM pgjq.queue_metrics),
    samples (place, family, help, kind, labels, value) AS (
        SELECT 1, 'pgjq_jobs', 'Jobs not finished, by state (reads the live jobs).', 'gauge',
               format('queue="%s",state="%s"', s.queue_name, st.state), st.n::text
          FROM s, LATERAL (VALUES ('pending', s.pending), ('scheduled', s.scheduled), ('waiting', s.waiting),
                                  ('claimed', s.claimed), ('running', s.running)) st(state, n)
        UNION ALL
        SELECT 2, 'pgjq_jobs_unfinished', 'Jobs not finished (the backpressure counter).', 'gauge',
               format('queue="%s"', m.queue_name), m.unfinished::text FROM m
        UNION ALL
        SELECT 3, 'pgjq_jobs_finished_total', 'Jobs finished since the queue was created, by final status.',
               'counter', format('queue="%s",status="%s"', m.queue_name, f.status), f.n::text
          FROM m, LATERAL (VALUES ('completed', m.completed), ('failed', m.failed), ('cancelled', m.cancelled)) f(status, n)
        UNION ALL
        SELECT 4, 'pgjq_workers', 'Distinct worker ids holding jobs of the queue now.', 'gauge',
               format('queue="%s"', m.queue_name), m.workers::text FROM m
        UNION ALL
        SELECT 5, 'pgjq_next_job_age_seconds', 'How long the job a claim would take next has been due (0: none).',
               'gauge', format('queue="%s"', m.queue_name), coalesce(extract(epoch FROM m.next_job_age), 0)::text FROM m
        UNION ALL
        SELECT 6, 'pgjq_queue_paused', 'Whether the queue is paused (1) or not (0).', 'gauge',
               format('queue="%s"', m.queue_name), m.paused::int::text FROM m)
    SELECT string_agg(block, '' ORDER BY place) INTO queues
      FROM (SELECT place, format(E'# HELP %s %s\n# TYPE %s %s\n', family, help, family, kind)
                          || string_agg(format(E'%s{%s} %s\n', family, labels, value), '' ORDER BY labels) AS block
              FROM samples GROUP BY place, family, help, kind) b;
    -- The wait and run time histograms (since the server started), one block per measure.
    SELECT string_agg(format(E'# HELP pgjq_job_%s_seconds %s\n# TYPE pgjq_job_%s_seconds histogram\n', measure,
                             CASE measure WHEN 'wait' THEN 'Seconds from when a finished job''s last attempt was due to its claim (jobs finished since the server started).'
                                          ELSE 'Seconds from a finished job''s claim to its finish (jobs finished since the server started).' END,
                             measure) || lines, '' ORDER BY measure) INTO latencies
      FROM (SELECT l.measure,
                   string_agg((SELECT string_agg(format(E'pgjq_job_%s_seconds_bucket{queue="%s",le="%s"} %s\n', l.measure,
                                                        l.queue_name, CASE WHEN b.le = 'Infinity' THEN '+Inf' ELSE b.le::text END,
                                                        b.n), '' ORDER BY b.i)
                                 FROM unnest(l.le, l.buckets) WITH ORDINALITY b(le, n, i))
                              || format(E'pgjq_job_%s_seconds_sum{queue="%s"} %s\npgjq_job_%s_seconds_count{queue="%s"} %s\n',
                                        l.measure, l.queue_name, l.sum_seconds, l.measure, l.queue_name, l.jobs),
                              '' ORDER BY l.queue_name) AS lines
              FROM pgjq.queue_latency l GROUP BY l.measure) m;
    -- The maintenance duties, for those who may see them (admin or observer on every queue). A database's
    -- name may hold any character: escaped as the format requires.
    BEGIN
        WITH d AS (SELECT duty, runs, errors,
                          replace(replace(replace(datname::text, E'\\', E'\\\\'), '"', E'\\"'), E'\n', E'\\n') AS database
                     FROM pgjq.maintenance_duties()),
        samples (place, family, help, labels, value) AS (
            SELECT 1, 'pgjq_maintenance_duty_runs_total', 'Successful runs of each maintenance duty since the server started.',
                   format('database="%s",duty="%s"', d.database, d.duty), d.runs FROM d
            UNION ALL
            SELECT 2, 'pgjq_maintenance_duty_errors_total', 'Failed runs of each maintenance duty since the server started.',
                   format('database="%s",duty="%s"', d.database, d.duty), d.errors FROM d)
        SELECT string_agg(block, '' ORDER BY place) INTO duties
          FROM (SELECT place, format(E'# HELP %s %s\n# TYPE %s counter\n', family, help, family)
                              || string_agg(format(E'%s{%s} %s\n', family, labels, value), '' ORDER BY labels) AS block
                  FROM samples GROUP BY place, family, help) b;
    EXCEPTION WHEN insufficient_privilege THEN
        duties := NULL;  -- not for this role: the queues' figures are all it gets
    END;
    RETURN coalesce(queues, '') || coalesce(latencies, '') || coalesce(duties, '');
END;
$$;
GRANT EXECUTE ON FUNCTION pgjq.metrics() TO PUBLIC;

-- The producer, worker and queue functions with their new arguments. The old signatures go (a call by
-- position or name with the old arguments still resolves to the new ones, whose added arguments default).
DROP FUNCTION pgjq.enqueue(text, jsonb, text, integer, timestamptz, integer, text);
DROP FUNCTION pgjq.try_enqueue(text, jsonb, text, integer, timestamptz, integer, text);
DROP FUNCTION pgjq.enqueue_batch(text, jsonb, text, integer, timestamptz, integer);
DROP FUNCTION pgjq.create_queue(text, bigint, boolean, integer, interval);
DROP FUNCTION pgjq.alter_queue(text, bigint, boolean, integer, interval, interval, interval, interval, boolean, boolean);

-- group_key: jobs of one key run at most group_concurrency at a time (1: one at a time), in enqueue order;
-- depends_on: the job waits until every one of those jobs has completed, and is cancelled if one fails for
-- good or is cancelled; timeout: this job's execution timeout (default: the queue's job_timeout);
-- unique_for: unique_key stays taken for this long after the enqueue, even once the job has finished.
CREATE FUNCTION pgjq.enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                             priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                             max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL,
                             group_key text DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                             timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE
    AS 'MODULE_PATHNAME', 'pgjq_enqueue';
CREATE FUNCTION pgjq.try_enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                                 priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL,
                                 group_key text DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                                 timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL)
    RETURNS bigint LANGUAGE c VOLATILE
    AS 'MODULE_PATHNAME', 'pgjq_try_enqueue';
-- unique_keys and group_keys: one per payload (NULL elements: none for that job); depends_on: for every job
-- of the batch.
CREATE FUNCTION pgjq.enqueue_batch(job_type text, payloads jsonb, queue_name text DEFAULT 'default',
                                   priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                   max_attempts integer DEFAULT NULL, unique_keys text[] DEFAULT NULL,
                                   group_keys text[] DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                                   timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL)
    RETURNS bigint[] LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_enqueue_batch';
CREATE FUNCTION pgjq.create_queue(queue_name text, max_pending bigint DEFAULT NULL, fifo boolean DEFAULT false,
                                  max_attempts integer DEFAULT 3, lease interval DEFAULT '5 minutes',
                                  group_concurrency integer DEFAULT 1, max_running integer DEFAULT NULL,
                                  rate_limit integer DEFAULT NULL, rate_interval interval DEFAULT '1 second',
                                  job_timeout interval DEFAULT NULL)
    RETURNS void LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_create_queue';
-- max_running, rate_limit: 0 removes the cap or limit; job_timeout: interval '0' removes the timeout.
CREATE FUNCTION pgjq.alter_queue(queue_name text, max_pending bigint DEFAULT NULL, fifo boolean DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, lease interval DEFAULT NULL,
                                 retry_base interval DEFAULT NULL, retry_cap interval DEFAULT NULL,
                                 retention interval DEFAULT NULL, clear_max_pending boolean DEFAULT false,
                                 keep_completed boolean DEFAULT NULL, group_concurrency integer DEFAULT NULL,
                                 max_running integer DEFAULT NULL, rate_limit integer DEFAULT NULL,
                                 rate_interval interval DEFAULT NULL, job_timeout interval DEFAULT NULL)
    RETURNS void LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_alter_queue';
GRANT EXECUTE ON FUNCTION
    pgjq.enqueue(text, jsonb, text, integer, timestamptz, integer, text, text, bigint[], interval, interval),
    pgjq.try_enqueue(text, jsonb, text, integer, timestamptz, integer, text, text, bigint[], interval, interval),
    pgjq.enqueue_batch(text, jsonb, text, integer, timestamptz, integer, text[], text[], bigint[], interval, interval),
    pgjq.create_queue(text, bigint, boolean, integer, interval, integer, integer, integer, interval, interval),
    pgjq.alter_queue(text, bigint, boolean, integer, interval, interval, interval, interval, boolean, boolean,
                     integer, integer, integer, interval, interval)
    TO PUBLIC;

-- Periodic jobs and bulk operations -------------------------------------------------------------------
-- (core/cron.hpp, core/schedule_clock.hpp, api/schedules.cpp, maintenance/schedules.cpp, core/revive.hpp,
-- api/bulk.cpp; docs/periodic-jobs.md)

-- A schedule enqueues a job at each firing of its cron expression in its time zone, as the role that set it
-- (scheduled_by). next_run is its next firing (NULL while paused); every firing before it has been handled.
-- retry_at: the firing at next_run was refused (last_error says why) and is tried again then. Dropping the
-- queue drops its schedules.
CREATE TABLE pgjq.schedules (
    schedule_name  text        PRIMARY KEY,
    cron           text        NOT NULL,
    time_zone      text        NOT NULL,
    job_type       text        NOT NULL,
    payload        jsonb       NOT NULL,
    queue_name     text        NOT NULL REFERENCES pgjq.queues (queue_name) ON DELETE CASCADE,
    priority       integer     NOT NULL,
    max_attempts   integer,
    missed         text        NOT NULL,
    paused         boolean     NOT NULL,
    scheduled_by   regrole     NOT NULL,
    next_run       timestamptz,
    retry_at       timestamptz,
    failures       integer     NOT NULL DEFAULT 0,
    last_run       timestamptz,
    last_job_id    bigint,
    last_error     text,
    last_error_at  timestamptz,
    jobs_enqueued  bigint      NOT NULL DEFAULT 0,
    firings_missed bigint      NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schedule_name_length CHECK (octet_length(schedule_name) BETWEEN 1 AND 200),
    CONSTRAINT schedule_missed CHECK (missed IN ('skip', 'run_once')),
    CONSTRAINT schedule_priority_range CHECK (priority BETWEEN 0 AND 32767),
    CONSTRAINT schedule_max_attempts_range CHECK (max_attempts IS NULL OR max_attempts BETWEEN 1 AND 1000)
);
COMMENT ON TABLE pgjq.schedules IS 'periodic jobs; change them with pgjq.schedule, pgjq.unschedule, pgjq.pause_schedule and pgjq.resume_schedule';
-- What the maintenance worker fires next.
CREATE INDEX schedules_due_idx ON pgjq.schedules ((coalesce(retry_at, next_run))) WHERE NOT paused;
CREATE INDEX schedules_queue_idx ON pgjq.schedules (queue_name);
SELECT pg_catalog.pg_extension_config_dump('pgjq.schedules', '');
-- A schedule is read as its jobs are: by its queue's workers, admins and observers, and by the producer whose
-- role set it.
ALTER TABLE pgjq.schedules ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable ON pgjq.schedules FOR SELECT USING (pgjq.may_read_job(queue_name, scheduled_by));

-- Creates the schedule or replaces the one of that name (keeping its history); returns its first firing.
-- missed: 'skip' drops firings missed by more than a minute (the server was down), 'run_once' enqueues one
-- job for all of them.
CREATE FUNCTION pgjq.schedule(schedule_name text, cron text, job_type text, payload jsonb DEFAULT '{}',
                              queue_name text DEFAULT 'default', priority integer DEFAULT 100,
                              max_attempts integer DEFAULT NULL, time_zone text DEFAULT 'UTC',
                              missed text DEFAULT 'skip', paused boolean DEFAULT false)
    RETURNS timestamptz LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_schedule';
CREATE FUNCTION pgjq.unschedule(schedule_name text)
    RETURNS boolean LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_unschedule';
CREATE FUNCTION pgjq.pause_schedule(schedule_name text)
    RETURNS boolean LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_pause_schedule';
CREATE FUNCTION pgjq.resume_schedule(schedule_name text)
    RETURNS boolean LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_resume_schedule';
-- The firings an expression would have after a time, in a time zone (at most 1000).
CREATE FUNCTION pgjq.next_firings(cron text, time_zone text DEFAULT 'UTC', after timestamptz DEFAULT now(),
                                  count integer DEFAULT 10)
    RETURNS SETOF timestamptz LANGUAGE c STABLE SET search_path = pg_catalog, pg_temp ROWS 10
    AS 'MODULE_PATHNAME', 'pgjq_next_firings';
-- What the maintenance worker does when schedules are due, by hand: returns the jobs enqueued.
CREATE FUNCTION pgjq.fire_schedules()
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_fire_schedules';

-- Bulk operations on one queue's jobs, for its admins. Each call handles at most max_jobs jobs (1-10000) in
-- the caller's transaction, skipping rows other transactions hold, and returns how many it handled: call it
-- again until it returns 0. NULL filters match everything; time ranges are [after, before).
CREATE FUNCTION pgjq.retry_failed(queue_name text, job_type text DEFAULT NULL, failed_after timestamptz DEFAULT NULL,
                                  failed_before timestamptz DEFAULT NULL, max_jobs integer DEFAULT 1000)
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_retry_failed';
CREATE FUNCTION pgjq.cancel_jobs(queue_name text, job_type text DEFAULT NULL, created_after timestamptz DEFAULT NULL,
                                 created_before timestamptz DEFAULT NULL, status pgjq.job_status DEFAULT NULL,
                                 max_jobs integer DEFAULT 1000)
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_cancel_jobs';
CREATE FUNCTION pgjq.delete_jobs(queue_name text, job_type text DEFAULT NULL, finished_after timestamptz DEFAULT NULL,
                                 finished_before timestamptz DEFAULT NULL, status pgjq.job_status DEFAULT NULL,
                                 max_jobs integer DEFAULT 1000)
    RETURNS bigint LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off SET enable_seqscan = off
    AS 'MODULE_PATHNAME', 'pgjq_delete_jobs';

GRANT EXECUTE ON FUNCTION
    pgjq.schedule(text, text, text, jsonb, text, integer, integer, text, text, boolean), pgjq.unschedule(text),
    pgjq.pause_schedule(text), pgjq.resume_schedule(text), pgjq.next_firings(text, text, timestamptz, integer),
    pgjq.fire_schedules(),
    pgjq.retry_failed(text, text, timestamptz, timestamptz, integer),
    pgjq.cancel_jobs(text, text, timestamptz, timestamptz, pgjq.job_status, integer),
    pgjq.delete_jobs(text, text, timestamptz, timestamptz, pgjq.job_status, integer)
    TO PUBLIC;
REVOKE ALL ON pgjq.schedules FROM PUBLIC;
GRANT SELECT ON pgjq.schedules TO PUBLIC;

-- Each maintenance duty's own counters, one row per database and duty (maintenance/duties.cpp holds the
-- table of duties, so a duty added later shows here with no change to this function), for the holders of
-- admin or observer on every queue (checked by the function).
CREATE FUNCTION pgjq.maintenance_duties()
    RETURNS TABLE (datname name, duty text, runs bigint, done bigint, errors bigint, failures_in_row integer,
                   last_run timestamptz, next_run timestamptz, retry_at timestamptz, last_error text,
                   last_error_at timestamptz)
    LANGUAGE c VOLATILE SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'pgjq_maintenance_duties';
GRANT EXECUTE ON FUNCTION pgjq.maintenance_duties() TO PUBLIC;

-- Membership of a pgjq cluster (docs/scale-out.md) ----------------------------------------------------
-- A node draws job ids congruent to its node number modulo 1024, so that the router database finds a
-- job's node from its id alone, and ids stay unique across the cluster. The node number lives in the
-- sequence itself (increment 1024, start = the first id drawn as a node), so that a physical replica
-- promoted in the node's place is the same node.
CREATE FUNCTION pgjq.cluster_node() RETURNS integer LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN s.seqincrement = 1024 THEN (s.seqstart % 1024)::integer END
      FROM pg_catalog.pg_sequence s WHERE s.seqrelid = 'pgjq.job_id_seq'::pg_catalog.regclass
$$;
GRANT EXECUTE ON FUNCTION pgjq.cluster_node() TO PUBLIC;

-- Refused while an unfinished job, or a failed or cancelled one that retry could revive with its id, has an
-- id naming another node; refused for a database that already is another node. Joining again as the same
-- node, or after a restore from a logical dump (which keeps the sequence's value, not its increment),
-- only sets the sequence again. For the extension's owner only.
CREATE FUNCTION pgjq.join_cluster(node integer) RETURNS integer LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    highest bigint;
    first_id bigint;
BEGIN
    IF node IS NULL OR node < 0 OR node > 1023 THEN
        RAISE EXCEPTION 'pgjq: node number % is out of range', coalesce(node::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'A node number is between 0 and 1023.';
    END IF;
    -- No job may be enqueued, and no other join_cluster run, between the checks and the sequence's restart.
    LOCK TABLE pgjq.live_jobs IN SHARE ROW EXCLUSIVE MODE;
    IF pgjq.cluster_node() IS NOT NULL AND pgjq.cluster_node() <> node THEN
        RAISE EXCEPTION 'pgjq: this database is node % of a cluster already', pgjq.cluster_node()
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'A node keeps its number: the router addresses its jobs by it.';
    END IF;
    IF pgjq.cluster_node() IS NOT DISTINCT FROM node THEN
        RETURN node;
    END IF;
    IF EXISTS (SELECT FROM pgjq.live_jobs j WHERE j.id % 1024 <> node) THEN
        RAISE EXCEPTION 'pgjq: cannot join the cluster as node % while this database holds unfinished jobs whose ids name another node', node
            USING ERRCODE = 'object_in_use', HINT = 'Let them finish (or cancel them) first.';
    END IF;
    IF EXISTS (SELECT FROM pgjq.finished_jobs j WHERE j.status IN ('failed', 'cancelled') AND j.id % 1024 <> node) THEN
        RAISE EXCEPTION 'pgjq: cannot join the cluster as node % while failed or cancelled jobs could be retried with ids that name another node', node
            USING ERRCODE = 'object_in_use', HINT = 'Delete them first (pgjq.delete_jobs).';
    END IF;
    SELECT greatest(s.last_value, (SELECT max(id) FROM pgjq.finished_jobs), (SELECT max(id) FROM pgjq.live_jobs), 0)
      INTO highest FROM pgjq.job_id_seq s;
    first_id := (highest / 1024 + 1) * 1024 + node;
    EXECUTE format('ALTER SEQUENCE pgjq.job_id_seq INCREMENT BY 1024 START WITH %s RESTART WITH %s',
                   first_id, first_id);
    RETURN node;
END
$$;
REVOKE ALL ON FUNCTION pgjq.join_cluster(integer) FROM PUBLIC;

-- Room on each page for the claims of its jobs --------------------------------------------------------

-- A claim cannot be a heap-only update (status is in the indexes' predicates), but its new version still
-- goes on the page of the pending one when that page has room. Then the claim locks and logs one heap page,
-- not two (a version moved to another page goes whole into the WAL), and workers claiming at once do not
-- queue for the one page they would all extend the table onto. At 90 about one claim in ten found room; at
-- 50 nine in ten do, since a claimed version is only its lease longer than the pending one, and the room of
-- versions claimed earlier is pruned once their transaction is over. Drain at claim batch 100: 95-96k ->
-- 101-120k jobs/s (measured when it was introduced, commit 657ecf7). A backlog takes about 1.8 times the
-- pages. The setting applies to pages written from now on: an upgraded backlog keeps its pages as they are.
ALTER TABLE pgjq.live_jobs SET (fillfactor = 50);
