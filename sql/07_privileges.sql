-- The privilege model: nothing for PUBLIC; producer, worker and admin capabilities granted by helpers.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 7000) AS id_base;
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_pgjq_producer;
DROP ROLE IF EXISTS regress_pgjq_worker;
DROP ROLE IF EXISTS regress_pgjq_admin;
DROP ROLE IF EXISTS regress_pgjq_nobody;
RESET client_min_messages;
CREATE ROLE regress_pgjq_producer;
CREATE ROLE regress_pgjq_worker;
CREATE ROLE regress_pgjq_admin;
CREATE ROLE regress_pgjq_nobody;
SELECT pgjq.grant_producer('regress_pgjq_producer');
SELECT pgjq.grant_worker('regress_pgjq_worker');
SELECT pgjq.grant_admin('regress_pgjq_admin');

-- nothing in the schema is available to PUBLIC
SELECT p.oid::regprocedure AS public_function FROM pg_proc p
 WHERE p.pronamespace = 'pgjq'::regnamespace
   AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0));
SELECT c.oid::regclass AS public_relation FROM pg_class c
 WHERE c.relnamespace = 'pgjq'::regnamespace AND c.relkind IN ('r', 'v', 'S')
   AND EXISTS (SELECT 1 FROM aclexplode(c.relacl) a WHERE a.grantee = 0);
-- functions that run with the owner's rights pin search_path
SELECT p.oid::regprocedure AS unpinned_definer FROM pg_proc p
 WHERE p.pronamespace = 'pgjq'::regnamespace AND p.prosecdef
   AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false);
-- no role is granted write access to the tables
SELECT c.oid::regclass AS writable, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'pgjq'::regnamespace AND a.grantee <> c.relowner
   AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE');

SELECT pgjq.create_queue('priv');

-- a role without a capability can do nothing
SET ROLE regress_pgjq_nobody;
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT count(*) FROM pgjq.jobs;
RESET ROLE;

-- producer: enqueue, read status and results, cancel
SET ROLE regress_pgjq_producer;
SELECT pgjq.enqueue('t', '{"by": "producer"}', 'priv') AS prod_job \gset
SELECT pgjq.try_enqueue('t', '{}', 'priv') IS NOT NULL AS try_ok;
SELECT array_length(pgjq.enqueue_batch('t', '[{}, {}]', 'priv'), 1) AS batch_ok;
SELECT status FROM pgjq.jobs WHERE id = :prod_job;
SELECT pending FROM pgjq.queue_stats WHERE queue_name = 'priv';
SELECT pgjq.claim_job_batch('p', NULL, 1, 'priv');
SELECT pgjq.create_queue('nope');
SELECT pgjq.retry(:prod_job);
SELECT pgjq.recover_stale();
SELECT pgjq.prune('1 day');
INSERT INTO pgjq.live_jobs (queue_name, job_type) VALUES ('priv', 't');
INSERT INTO pgjq.jobs (job_type, queue_name) VALUES ('t', 'priv');
UPDATE pgjq.live_jobs SET priority = 1;
DELETE FROM pgjq.finished_jobs;
SELECT count(*) FROM pgjq.live_jobs;
SELECT pgjq.grant_admin('regress_pgjq_producer');
RESET ROLE;

-- worker: claim, progress, heartbeat, complete, fail
SET ROLE regress_pgjq_worker;
SELECT array_agg(id ORDER BY id) AS worker_ids FROM pgjq.claim_job_batch('w', NULL, 4, 'priv') \gset
SELECT pgjq.progress((:'worker_ids'::bigint[])[1], 'w', 50);
SELECT pgjq.heartbeat((:'worker_ids'::bigint[])[1], 'w') > now() AS beat;
SELECT pgjq.complete((:'worker_ids'::bigint[])[1], 'w', '{"ok": true}');
SELECT pgjq.complete_batch((:'worker_ids'::bigint[])[2:3], 'w') AS completed;
SELECT pgjq.fail((:'worker_ids'::bigint[])[4], 'w', 'nope', '0');
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT pgjq.cancel((:'worker_ids'::bigint[])[4]);
SELECT pgjq.pause_queue('priv');
RESET ROLE;

-- producer reads the result and cancels
SET ROLE regress_pgjq_producer;
SELECT status, result FROM pgjq.jobs WHERE id = :prod_job;
SELECT pgjq.cancel((:'worker_ids'::bigint[])[4]) AS cancelled;
RESET ROLE;

-- admin: queues, retry, recovery, pruning
SET ROLE regress_pgjq_admin;
SELECT pgjq.create_queue('priv2', max_pending => 5);
SELECT pgjq.alter_queue('priv2', fifo => true);
SELECT pgjq.pause_queue('priv2');
SELECT pgjq.resume_queue('priv2');
SELECT pgjq.retry((:'worker_ids'::bigint[])[4]);
SELECT pgjq.recover_stale() >= 0 AS recovered;
SELECT pgjq.prune('1 year') >= 0 AS pruned;
SELECT pgjq.drop_queue('priv2');
SELECT max_pending FROM pgjq.queues WHERE queue_name = 'priv';
SELECT pgjq.enqueue('t', '{}', 'priv');
SELECT pgjq.claim_job_batch('a', NULL, 1, 'priv');
UPDATE pgjq.queues SET paused = true;
RESET ROLE;

-- revoking takes the capability away
SELECT pgjq.revoke_producer('regress_pgjq_producer');
SET ROLE regress_pgjq_producer;
SELECT pgjq.enqueue('t', '{}', 'priv');
RESET ROLE;

-- bad input to the helpers
SELECT pgjq.grant_producer(NULL);
SELECT pgjq.grant_worker('regress_pgjq_no_such_role');
SELECT pgjq.set_capability('regress_pgjq_worker', 'superuser', true);

DROP OWNED BY regress_pgjq_producer, regress_pgjq_worker, regress_pgjq_admin;
DROP ROLE regress_pgjq_producer, regress_pgjq_worker, regress_pgjq_admin, regress_pgjq_nobody;
