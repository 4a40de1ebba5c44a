-- 32_workflow_events: what a running job does about its own run. It records checkpoints that a later
-- attempt reads; waits for an event (parked without a lease or an attempt counted; a signal before the wait
-- is kept; the timeout is PJ006); sleeps until a time; starts a sub-workflow and hears of its end. And who
-- may do each, role by role, including what each must be refused.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 32000) AS id_base, setval('pgjq.workflow_id_seq', 3200) AS workflow_base;
SELECT pgjq.create_queue('ev', max_attempts => 2);
CREATE FUNCTION claim_one(job_type text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT id FROM pgjq.claim_job_batch('w', ARRAY[job_type], 1, 'ev') $$;
CREATE FUNCTION state(job bigint) RETURNS text LANGUAGE sql AS
  $$ SELECT status || ', attempts ' || attempts || CASE WHEN run_at > now() THEN ', due later' ELSE ', due' END
       FROM pgjq.jobs WHERE id = job $$;

-- checkpoints: the first value recorded under a name holds, and a retry sees them
SELECT pgjq.enqueue('steps', '{}', 'ev') AS j \gset
SELECT claim_one('steps') = :j AS claimed;
SELECT pgjq.checkpoint(:j, 'w', 'charged', '{"charge": "ch_1"}');
SELECT pgjq.checkpoint(:j, 'w', 'charged', '{"charge": "ch_2"}') AS kept_first;
SELECT pgjq.fail(:j, 'w', 'crashed after charging', retry_in => '0');
SELECT claim_one('steps') = :j AS claimed_again;
SELECT pgjq.checkpoints(:j);
SELECT pgjq.checkpoint(:j, 'other', 'x', '{}');
SELECT pgjq.checkpoint(:j, 'w', 'pgjq:event:x', '{}');
SELECT pgjq.checkpoint(:j, 'w', '', '{}');
SELECT pgjq.complete(:j, 'w');
SELECT pgjq.checkpoint(:j, 'w', 'late', '{}');

-- waiting for an event: parked (pending, due at the deadline, the attempt not counted, no worker)
SELECT pgjq.enqueue('waiter', '{}', 'ev') AS waiter \gset
SELECT claim_one('waiter') = :waiter AS claimed;
SELECT pgjq.wait_for_event(:waiter, 'w', 'payment:17', timeout => '1 hour') IS NULL AS parked;
SELECT state(:waiter) AS parked_state, (SELECT worker_id FROM pgjq.jobs WHERE id = :waiter) AS worker;
SELECT pgjq.complete(:waiter, 'w');
-- the signal makes it due now; the next claim gets the payload from the same call
SELECT pgjq.signal('payment:17', '{"amount": 5}', 'ev') AS woken;
SELECT state(:waiter) AS signalled_state;
SELECT claim_one('waiter') = :waiter AS claimed_again;
SELECT pgjq.wait_for_event(:waiter, 'w', 'payment:17', timeout => '1 hour') AS payload;
-- ... and again after a crash: the payload it received is recorded
SELECT pgjq.wait_for_event(:waiter, 'w', 'payment:17', timeout => '1 hour') AS payload_again;
SELECT pgjq.complete(:waiter, 'w');
SELECT attempts FROM pgjq.jobs WHERE id = :waiter;
-- a signal before the wait is kept, and a repeated signal keeps the first payload
SELECT pgjq.signal('shipped:9', '{"carrier": "a"}', 'ev') AS woken_none;
SELECT pgjq.signal('shipped:9', '{"carrier": "b"}', 'ev') AS repeated;
SELECT pgjq.enqueue('late_waiter', '{}', 'ev') AS late \gset
SELECT claim_one('late_waiter') = :late AS claimed;
SELECT pgjq.wait_for_event(:late, 'w', 'shipped:9') AS at_once;
SELECT pgjq.complete(:late, 'w');
-- a wait that times out: the next run's call raises PJ006, an ordinary failure for the worker to report
SELECT pgjq.enqueue('impatient', '{}', 'ev') AS imp \gset
SELECT claim_one('impatient') = :imp AS claimed;
SELECT pgjq.wait_for_event(:imp, 'w', 'never', timeout => '1 millisecond') IS NULL AS parked;
SELECT pg_sleep(0.01);
SELECT claim_one('impatient') = :imp AS claimed_at_deadline;
\set VERBOSITY sqlstate
SELECT pgjq.wait_for_event(:imp, 'w', 'never', timeout => '1 millisecond');
\set VERBOSITY default
SELECT pgjq.fail(:imp, 'w', 'no event');
SELECT pgjq.wait_for_event(:imp, 'w', 'never', timeout => '0');
SELECT pgjq.wait_for_event(:imp, 'w', 'never', timeout => '2 years');
SELECT pgjq.signal('x', '{}', 'no_such_queue');
SELECT pgjq.signal('x', '{}', 'ev', keep_for => '0');
SELECT pgjq.signal('', '{}', 'ev');

-- durable sleep: parked until the time, then true
SELECT pgjq.enqueue('sleeper', '{}', 'ev') AS sl \gset
SELECT claim_one('sleeper') = :sl AS claimed;
SELECT pgjq.sleep_until(:sl, 'w', 'overnight', now() + interval '1 hour') AS slept;
SELECT state(:sl) AS sleeping;
SELECT claim_one('sleeper') IS NULL AS not_before_time;
-- woken early (here by hand): the first call's time holds, and it sleeps again
UPDATE pgjq.live_jobs SET run_at = now() WHERE id = :sl;
SELECT claim_one('sleeper') = :sl AS claimed_early;
SELECT pgjq.sleep_until(:sl, 'w', 'overnight', now()) AS slept;
SELECT state(:sl) AS sleeping_again;
-- a sleep whose time has passed returns true on the next run
UPDATE pgjq.live_jobs SET run_at = now() WHERE id = :sl;
SELECT claim_one('sleeper') = :sl AS claimed;
SELECT pgjq.checkpoint(:sl, 'w', 'before-nap', '{}') IS NOT NULL AS recorded;
SELECT pgjq.sleep_until(:sl, 'w', 'nap', now() + interval '1 hour') AS slept;
-- an hour later (the clock moved by hand: the recorded time and the job's due time)
UPDATE pgjq.checkpoints SET value = jsonb_build_object('sleep_until', now() - interval '1 second')
 WHERE job_id = :sl AND name = 'pgjq:sleep:nap';
UPDATE pgjq.live_jobs SET run_at = now() - interval '1 second' WHERE id = :sl;
SELECT claim_one('sleeper') = :sl AS claimed_when_due;
SELECT pgjq.sleep_until(:sl, 'w', 'nap', now() + interval '1 day') AS slept;
SELECT pgjq.sleep_until(:sl, 'w', 'too-long', now() + interval '2 years');
SELECT pgjq.sleep_until(:sl, 'w', 'never', 'infinity');
SELECT pgjq.complete(:sl, 'w');
SELECT attempts FROM pgjq.jobs WHERE id = :sl;

-- a step waiting for an event shows it; the workflow waits
SELECT pgjq.start_workflow('approval', '[{"name": "ask", "job_type": "ask", "queue": "ev"},
                                         {"name": "act", "job_type": "act", "queue": "ev", "after": ["ask"]}]') AS a \gset
SELECT claim_one('ask') AS ask \gset
SELECT pgjq.wait_for_event(:ask, 'w', 'approved') IS NULL AS parked;
SELECT step_name, status, waiting_for FROM pgjq.workflow_steps(:a);
SELECT status FROM pgjq.workflows WHERE id = :a;
SELECT pgjq.signal('approved', '{"by": "ann"}', 'ev');
SELECT claim_one('ask') = :ask AS claimed;
SELECT pgjq.complete(:ask, 'w', pgjq.wait_for_event(:ask, 'w', 'approved'));
SELECT claim_one('act') AS act \gset
SELECT step_name, result FROM pgjq.step_results(:act);
SELECT pgjq.complete(:act, 'w');

-- a sub-workflow: the step that starts it waits for the event 'workflow/<id>'
SELECT pgjq.start_workflow('outer', '[{"name": "delegate", "job_type": "delegate", "queue": "ev"}]') AS o \gset
SELECT claim_one('delegate') AS parent \gset
SELECT pgjq.start_workflow('inner', '[{"name": "work", "job_type": "inner_work", "queue": "ev"}]',
                           parent_job => :parent) AS inner \gset
SELECT pgjq.wait_for_event(:parent, 'w', 'workflow/' || :inner) IS NULL AS parked;
SELECT parent_job = :parent AS has_parent FROM pgjq.workflows WHERE id = :inner;
SELECT pgjq.complete(claim_one('inner_work'), 'w');
SELECT claim_one('delegate') = :parent AS woken_by_end;
SELECT pgjq.wait_for_event(:parent, 'w', 'workflow/' || :inner) ->> 'status' AS inner_status;
SELECT pgjq.complete(:parent, 'w');
SELECT workflow_name, status FROM pgjq.workflows WHERE id IN (:o, :inner) ORDER BY id;
SELECT pgjq.start_workflow('orphan', '[{"name": "x", "job_type": "t", "queue": "ev"}]', parent_job => 1);

-- who may do what
CREATE ROLE regress_wf_tenant_a;
CREATE ROLE regress_wf_tenant_b;
CREATE ROLE regress_wf_worker;
CREATE ROLE regress_wf_observer;
CREATE ROLE regress_wf_admin;
CREATE ROLE regress_wf_nobody;
SELECT pgjq.create_queue('shared_wf');
SELECT pgjq.grant_producer('regress_wf_tenant_a', 'shared_wf'), pgjq.grant_producer('regress_wf_tenant_b', 'shared_wf'),
       pgjq.grant_worker('regress_wf_worker', 'shared_wf'), pgjq.grant_observer('regress_wf_observer', 'shared_wf'),
       pgjq.grant_admin('regress_wf_admin', 'shared_wf');
SET ROLE regress_wf_tenant_a;
SELECT pgjq.start_workflow('a-flow', '[{"name": "s", "job_type": "tenant", "queue": "shared_wf", "payload": {"secret": "a"}},
                                       {"name": "t", "job_type": "tenant", "queue": "shared_wf", "after": ["s"]}]') AS ta \gset
SELECT workflow_name FROM pgjq.workflows;
SELECT pgjq.start_workflow('elsewhere', '[{"name": "s", "job_type": "t", "queue": "ev"}]');
RESET ROLE;
SET ROLE regress_wf_tenant_b;
-- another tenant sees nothing of it, may not cancel it, and its signals do not reach it
SELECT count(*) AS visible FROM pgjq.workflows WHERE id = :ta;
SELECT count(*) AS steps_visible FROM pgjq.workflow_steps(:ta);
SELECT pgjq.cancel_workflow(:ta);
SELECT pgjq.retry_workflow(:ta);
RESET ROLE;
SET ROLE regress_wf_worker;
SELECT id AS ta_job FROM pgjq.claim_job_batch('wk', NULL, 1, 'shared_wf') \gset
SELECT pgjq.wait_for_event(:ta_job, 'wk', 'go') IS NULL AS parked;
SELECT pgjq.signal('go', '{}', 'shared_wf');
SELECT pgjq.start_workflow('w-flow', '[{"name": "s", "job_type": "t", "queue": "shared_wf"}]');
RESET ROLE;
SET ROLE regress_wf_tenant_b;
SELECT pgjq.signal('go', '{"forged": true}', 'shared_wf') AS woken_by_other_tenant;
RESET ROLE;
SET ROLE regress_wf_tenant_a;
SELECT pgjq.signal('go', '{"from": "a"}', 'shared_wf') AS woken_by_own_tenant;
RESET ROLE;
SET ROLE regress_wf_worker;
SELECT id = :ta_job AS claimed FROM pgjq.claim_job_batch('wk', NULL, 1, 'shared_wf');
SELECT pgjq.wait_for_event(:ta_job, 'wk', 'go') AS received;
-- the steps a worker adds are the workflow's: its starter's jobs, in queues where the starter may enqueue
SELECT cardinality(pgjq.add_steps(:ta_job, 'wk', '[{"name": "u", "job_type": "tenant", "queue": "shared_wf", "after": ["s"]}]')) AS added;
SELECT pgjq.add_steps(:ta_job, 'wk', '[{"name": "v", "job_type": "tenant", "queue": "ev"}]');
RESET ROLE;
SELECT pgjq.grant_worker('regress_wf_worker', 'ev');
SET ROLE regress_wf_worker;
SELECT pgjq.add_steps(:ta_job, 'wk', '[{"name": "v", "job_type": "tenant", "queue": "ev"}]');
SELECT pgjq.complete(:ta_job, 'wk', '{"r": 1}');
SELECT job_type, enqueued_by FROM pgjq.jobs WHERE id = (SELECT job_id FROM pgjq.workflow_steps(:ta) WHERE step_name = 'u');
RESET ROLE;
SET ROLE regress_wf_observer;
SELECT workflow_name, status FROM pgjq.workflows WHERE id = :ta;
SELECT step_name, status FROM pgjq.workflow_steps(:ta);
SELECT pgjq.cancel_workflow(:ta);
SELECT pgjq.signal('go', '{}', 'shared_wf');
RESET ROLE;
SET ROLE regress_wf_nobody;
SELECT count(*) AS visible FROM pgjq.workflows;
SELECT pgjq.start_workflow('n', '[{"name": "s", "job_type": "t", "queue": "shared_wf"}]');
SELECT pgjq.signal('go', '{}', 'shared_wf');
SELECT * FROM pgjq.workflow_runs;
RESET ROLE;
SET ROLE regress_wf_tenant_a;
SELECT pgjq.retry_workflow(:ta);
SELECT pgjq.cancel_workflow(:ta) AS cancelled_by_starter;
RESET ROLE;
SET ROLE regress_wf_admin;
SELECT status FROM pgjq.workflows WHERE id = :ta;
SELECT pgjq.retry_workflow(:ta) AS retried_by_admin;
SELECT pgjq.cancel_workflow(:ta) AS cancelled_by_admin;
RESET ROLE;
