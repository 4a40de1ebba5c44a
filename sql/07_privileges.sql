-- The privilege model, role by role: capabilities (producer, worker, admin, observer) are rows of
-- pgjq.grants, for one queue or every queue; the functions check them and record who enqueued and who
-- claimed each job. What each role may do, and what it must be refused.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 7000) AS id_base;
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_pgjq_producer, regress_pgjq_producer2, regress_pgjq_worker, regress_pgjq_worker2,
    regress_pgjq_admin, regress_pgjq_queue_admin, regress_pgjq_observer, regress_pgjq_nobody,
    regress_pgjq_team, regress_pgjq_member, regress_pgjq_both;
RESET client_min_messages;
CREATE ROLE regress_pgjq_producer;
CREATE ROLE regress_pgjq_producer2;
CREATE ROLE regress_pgjq_worker;
CREATE ROLE regress_pgjq_worker2;
CREATE ROLE regress_pgjq_admin;
CREATE ROLE regress_pgjq_queue_admin;
CREATE ROLE regress_pgjq_observer;
CREATE ROLE regress_pgjq_nobody;
CREATE ROLE regress_pgjq_team NOLOGIN;
CREATE ROLE regress_pgjq_member IN ROLE regress_pgjq_team;
CREATE ROLE regress_pgjq_both;
SELECT pgjq.create_queue('priv');
SELECT pgjq.create_queue('other');
SELECT pgjq.grant_producer('regress_pgjq_producer', 'priv');
SELECT pgjq.grant_producer('regress_pgjq_producer2', 'priv');
SELECT pgjq.grant_worker('regress_pgjq_worker', 'priv');
SELECT pgjq.grant_worker('regress_pgjq_worker2');
SELECT pgjq.grant_admin('regress_pgjq_admin');
SELECT pgjq.grant_admin('regress_pgjq_queue_admin', 'other');
SELECT pgjq.grant_observer('regress_pgjq_observer');
SELECT pgjq.grant_producer('regress_pgjq_team');
SELECT pgjq.grant_producer('regress_pgjq_both');
SELECT pgjq.grant_worker('regress_pgjq_both');
SELECT grantee, capability, queue_name FROM pgjq.grants ORDER BY grantee::text, capability, queue_name;

-- The schema's surface: the API functions are executable by every role and check capabilities
-- themselves; the helpers that change capabilities, the tables and the sequence are the owner's alone.
SELECT p.oid::regprocedure AS not_public_function FROM pg_proc p
 WHERE p.pronamespace = 'pgjq'::regnamespace AND p.prorettype <> 'trigger'::regtype
   AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
 ORDER BY p.oid::regprocedure::text;
SELECT c.oid::regclass AS relation, has_table_privilege('public', c.oid, 'SELECT') AS public_select,
       has_table_privilege('public', c.oid, 'INSERT') AS public_insert
  FROM pg_class c WHERE c.relnamespace = 'pgjq'::regnamespace AND c.relkind IN ('r', 'v', 'S') ORDER BY c.oid::regclass::text;
-- no role is granted write access to the tables
SELECT c.oid::regclass AS writable, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'pgjq'::regnamespace AND c.relkind = 'r' AND a.grantee <> c.relowner
   AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE');
-- functions that run with the owner's rights pin search_path, and the API's run as their caller
SELECT p.oid::regprocedure AS unpinned_definer FROM pg_proc p
 WHERE p.pronamespace = 'pgjq'::regnamespace AND p.prosecdef
   AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false);
SELECT p.oid::regprocedure AS definer FROM pg_proc p
 WHERE p.pronamespace = 'pgjq'::regnamespace AND p.prosecdef ORDER BY p.oid::regprocedure::text;

-- Every function refuses a role without a capability, before it looks at its arguments (all NULL here).
SET ROLE regress_pgjq_nobody;
DO $$
DECLARE
    f regprocedure;
    outcome text;
BEGIN
    FOR f IN SELECT p.oid FROM pg_proc p
              WHERE p.pronamespace = 'pgjq'::regnamespace AND p.prorettype <> 'trigger'::regtype
                AND p.proname NOT IN ('may_read_queue', 'may_read_job', 'histogram_quantile', 'cluster_node',
                                      'unfolded_enqueues', 'page_size',
                                      'workflow_steps', 'step_results', 'checkpoints', 'holds_capability')
                -- row filters, arithmetic, the node's number, a view's count, an argument's check, readers
                -- of row-filtered views (a role without a capability reads nothing through them: 32_workflow_events),
                -- and a role's question about itself (false here: 34_holds_capability)
                AND has_function_privilege(p.oid, 'EXECUTE') ORDER BY p.oid::regprocedure::text LOOP
        BEGIN
            EXECUTE format('SELECT * FROM %s(%s)', f::oid::regproc,
                           (SELECT string_agg('NULL', ', ') FROM pg_proc p, unnest(p.proargtypes) WHERE p.oid = f));
            outcome := 'allowed';
        EXCEPTION WHEN OTHERS THEN
            outcome := SQLSTATE;
        END;
        IF outcome <> '42501' THEN
            RAISE NOTICE '% was not refused: %', f, outcome;
        END IF;
    END LOOP;
END $$;
SELECT count(*) AS sees_jobs FROM pgjq.jobs;
SELECT count(*) AS sees_queues FROM pgjq.queue_stats;
SELECT count(*) AS sees_settings FROM pgjq.queues;
SELECT pgjq.unfolded_enqueues('priv') AS unfolded_count_of_unreadable_queue;
SELECT pgjq.enqueue('t', '{}', 'priv');
INSERT INTO pgjq.jobs (job_type, queue_name) VALUES ('t', 'priv');
SELECT * FROM pgjq.grants;
SELECT pgjq.grant_producer('regress_pgjq_nobody');
SET pgjq.depth_slot = 3;
RESET ROLE;

-- Producer: enqueues into its queue (also through INSERT INTO pgjq.jobs), reads and cancels its own jobs.
SET ROLE regress_pgjq_producer;
SELECT pgjq.enqueue('t', '{"by": "producer"}', 'priv') AS prod_job \gset
SELECT pgjq.try_enqueue('t', '{}', 'priv') IS NOT NULL AS try_ok;
SELECT array_length(pgjq.enqueue_batch('t', '[{}, {}]', 'priv'), 1) AS batch_ok;
INSERT INTO pgjq.jobs (job_type, payload, queue_name) VALUES ('t', '{"via": "view"}', 'priv') RETURNING status;
SELECT status, enqueued_by FROM pgjq.jobs WHERE id = :prod_job;
SELECT count(*) AS own_jobs FROM pgjq.jobs;
SELECT queue_name, pending FROM pgjq.queue_stats;
SELECT queue_name FROM pgjq.queues;
-- ... and nothing else: another queue, a claim, an admin's call, the tables
SELECT pgjq.enqueue('t', '{}', 'other');
SELECT pgjq.claim_job_batch('p', NULL, 1, 'priv');
SELECT pgjq.create_queue('nope');
SELECT pgjq.pause_queue('priv');
SELECT pgjq.retry(:prod_job);
SELECT pgjq.recover_stale();
SELECT pgjq.prune('1 day');
SELECT pgjq.worker_status();
SELECT pgjq.maintenance_duties();
INSERT INTO pgjq.live_jobs (queue_name, job_type) VALUES ('priv', 't');
UPDATE pgjq.live_jobs SET priority = 1;
DELETE FROM pgjq.finished_jobs;
SELECT count(*) FROM pgjq.live_jobs;
RESET ROLE;

-- Another producer of the same queue neither sees nor cancels the first one's jobs.
SET ROLE regress_pgjq_producer2;
SELECT pgjq.enqueue('t', '{"by": "producer2"}', 'priv') AS prod2_job \gset
SELECT count(*) AS visible, count(*) FILTER (WHERE id = :prod_job) AS the_others FROM pgjq.jobs;
SELECT pgjq.cancel(:prod_job);
RESET ROLE;
SELECT status FROM pgjq.jobs WHERE id = :prod_job;

-- Worker: claims from its queue only; the jobs it claims record its role.
SET ROLE regress_pgjq_worker;
SELECT pgjq.claim_job_batch('w', NULL, 1, 'other');
SELECT array_agg(id ORDER BY id) AS worker_ids FROM pgjq.claim_job_batch('w', NULL, 5, 'priv') \gset
SELECT DISTINCT claimed_by, worker_id, status FROM pgjq.jobs WHERE id = ANY (:'worker_ids');
SELECT count(*) AS sees_the_queue FROM pgjq.jobs WHERE queue_name = 'priv';
SELECT pgjq.progress((:'worker_ids'::bigint[])[1], 'w', 50);
SELECT pgjq.heartbeat((:'worker_ids'::bigint[])[1], 'w') > now() AS beat;
SELECT pgjq.complete((:'worker_ids'::bigint[])[1], 'w', '{"ok": true}');
SELECT pgjq.complete_batch((:'worker_ids'::bigint[])[2:3], 'w') AS completed;
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT pgjq.cancel((:'worker_ids'::bigint[])[4]);
RESET ROLE;

-- Another worker role cannot report on those jobs, even under the same worker_id: PJ002, job untouched.
SET ROLE regress_pgjq_worker2;
SELECT pgjq.complete((:'worker_ids'::bigint[])[4], 'w', '{"forged": true}');
SELECT pgjq.complete_batch(ARRAY[(:'worker_ids'::bigint[])[4]], 'w');
SELECT pgjq.fail((:'worker_ids'::bigint[])[4], 'w', 'forged');
SELECT pgjq.heartbeat((:'worker_ids'::bigint[])[4], 'w');
SELECT pgjq.progress((:'worker_ids'::bigint[])[4], 'w', 99);
SELECT pgjq.complete_and_claim('w', ARRAY[(:'worker_ids'::bigint[])[4]], NULL, 1, 'priv');
RESET ROLE;
SELECT status, worker_id, progress, result FROM pgjq.jobs WHERE id = (:'worker_ids'::bigint[])[4];

-- The same for a job claimed in a transaction: a role switched to inside it cannot report on the job.
SELECT pgjq.enqueue('held-in-tx', '{}', 'priv') AS tx_job \gset
BEGIN;
SET LOCAL ROLE regress_pgjq_worker;
SELECT id = :tx_job AS held FROM pgjq.claim_in_transaction('wt', ARRAY['held-in-tx'], 1, 'priv');
SET LOCAL ROLE regress_pgjq_worker2;
SELECT pgjq.complete_in_transaction(ARRAY[:tx_job], 'wt');
ROLLBACK;
BEGIN;
SET LOCAL ROLE regress_pgjq_worker;
SELECT id = :tx_job AS held FROM pgjq.claim_in_transaction('wt', ARRAY['held-in-tx'], 1, 'priv');
SET LOCAL ROLE regress_pgjq_worker2;
SELECT pgjq.fail_in_transaction(:tx_job, 'wt', 'forged');
ROLLBACK;
SELECT status, attempts, last_error FROM pgjq.jobs WHERE id = :tx_job;
SELECT pgjq.cancel(:tx_job);

-- The producer reads the results of its own jobs and cancels one a worker holds.
SET ROLE regress_pgjq_producer;
SELECT status, result FROM pgjq.jobs WHERE id = (:'worker_ids'::bigint[])[1];
SELECT pgjq.cancel((:'worker_ids'::bigint[])[4]) AS cancelled;
RESET ROLE;

-- Observer: reads every job and statistic, changes nothing.
SELECT count(*) AS all_queues FROM pgjq.queues \gset
SET ROLE regress_pgjq_observer;
SELECT count(*) > 0 AS sees_all FROM pgjq.jobs WHERE queue_name = 'priv';
SELECT count(*) = :all_queues AS sees_every_queue FROM pgjq.queue_stats;
SELECT count(*) >= 0 AS may_look FROM pgjq.worker_status();
SELECT count(*) >= 0 AS may_look FROM pgjq.maintenance_duties();
SELECT pgjq.cancel(:prod2_job);
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT pgjq.pause_queue('priv');
RESET ROLE;

-- A queue's admin administers that queue only, and sees only its jobs.
SET ROLE regress_pgjq_queue_admin;
SELECT pgjq.pause_queue('other');
SELECT pgjq.resume_queue('other');
SELECT pgjq.alter_queue('other', max_pending => 5);
SELECT pgjq.pause_queue('priv');
SELECT pgjq.retry((:'worker_ids'::bigint[])[4]);
SELECT pgjq.cancel(:prod2_job);
SELECT pgjq.create_queue('mine');
SELECT pgjq.recover_stale();
SELECT count(*) AS sees_priv FROM pgjq.jobs WHERE queue_name = 'priv';
RESET ROLE;

-- Admin of every queue: queues, retry, recovery, pruning, the maintenance worker; cancels anyone's job.
SET ROLE regress_pgjq_admin;
SELECT pgjq.create_queue('priv2', max_pending => 5);
SELECT pgjq.alter_queue('priv2', fifo => true);
SELECT pgjq.pause_queue('priv2');
SELECT pgjq.resume_queue('priv2');
SELECT pgjq.retry((:'worker_ids'::bigint[])[4]);
SELECT pgjq.recover_stale() >= 0 AS recovered;
SELECT pgjq.prune('1 year') >= 0 AS pruned;
SELECT pgjq.drop_queue('priv2');
SELECT pgjq.cancel(:prod2_job) AS cancelled;
SELECT max_pending FROM pgjq.queues WHERE queue_name = 'other';
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT pgjq.claim_job_batch('a', NULL, 1, 'priv');
UPDATE pgjq.queues SET paused = true;
RESET ROLE;

-- A member of a role holds its capabilities; jobs record the role that called.
SET ROLE regress_pgjq_member;
SELECT pgjq.enqueue('t', '{}', 'other') AS member_job \gset
RESET ROLE;
SELECT enqueued_by FROM pgjq.jobs WHERE id = :member_job;

-- Revoking one capability leaves the others.
SELECT pgjq.revoke_producer('regress_pgjq_both');
SET ROLE regress_pgjq_both;
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT count(*) >= 0 AS still_claims FROM pgjq.claim_job_batch('b', NULL, 1, 'other');
RESET ROLE;
-- A queue's grant is revoked alone; a grant for every queue still covers the queue, and says so.
SELECT pgjq.grant_worker('regress_pgjq_both', 'priv');
SELECT pgjq.revoke_worker('regress_pgjq_both', 'priv');
SELECT grantee, capability, queue_name FROM pgjq.grants WHERE grantee = 'regress_pgjq_both'::regrole;
-- Dropping a queue drops its grants.
SELECT pgjq.create_queue('short_lived');
SELECT pgjq.grant_producer('regress_pgjq_nobody', 'short_lived');
SELECT pgjq.drop_queue('short_lived');
SELECT count(*) AS grants_left FROM pgjq.grants WHERE queue_name = 'short_lived';

-- Bad input to the helpers
SELECT pgjq.grant_producer(NULL);
SELECT pgjq.grant_worker('regress_pgjq_no_such_role');
SELECT pgjq.grant_worker('regress_pgjq_worker', 'no_such_queue');
SELECT pgjq.set_capability('regress_pgjq_worker', 'superuser', NULL, true);
SELECT pgjq.set_capability('regress_pgjq_worker', 'producer', NULL, NULL);
SELECT pgjq.set_capability('regress_pgjq_worker', NULL, NULL, true);

DELETE FROM pgjq.grants;
DROP OWNED BY regress_pgjq_producer, regress_pgjq_producer2, regress_pgjq_worker, regress_pgjq_worker2,
    regress_pgjq_admin, regress_pgjq_queue_admin, regress_pgjq_observer, regress_pgjq_team, regress_pgjq_both;
DROP ROLE regress_pgjq_producer, regress_pgjq_producer2, regress_pgjq_worker, regress_pgjq_worker2,
    regress_pgjq_admin, regress_pgjq_queue_admin, regress_pgjq_observer, regress_pgjq_nobody,
    regress_pgjq_member, regress_pgjq_team, regress_pgjq_both;
