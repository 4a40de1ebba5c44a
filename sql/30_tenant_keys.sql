-- Tenants sharing a queue: group keys and unique keys belong to the role that enqueues. One tenant's jobs
-- never hold back, reveal or take the place of another's: each role has its own groups and its own keys, and
-- a role's own keys work as before (docs/privileges.md, "Tenants").
SET client_min_messages = warning;
CREATE ROLE regress_pgjq_tenant_a;
CREATE ROLE regress_pgjq_tenant_b;
SELECT pgjq.create_queue('shared', group_concurrency => 1);
SELECT pgjq.grant_producer('regress_pgjq_tenant_a', 'shared');
SELECT pgjq.grant_producer('regress_pgjq_tenant_b', 'shared');

-- Groups. Tenant a's job of group 'g' is due in 9999: its own next job of 'g' waits behind it, and tenant
-- b's job of 'g' does not.
SET ROLE regress_pgjq_tenant_a;
SELECT pgjq.enqueue('t', '{"n": 1}', 'shared', run_at => '9999-01-01', group_key => 'g') AS a_first \gset
SELECT pgjq.enqueue('t', '{"n": 2}', 'shared', group_key => 'g') AS a_second \gset
SELECT id = :a_first AS first, status FROM pgjq.jobs WHERE group_key = 'g' ORDER BY id;
RESET ROLE;
SET ROLE regress_pgjq_tenant_b;
SELECT pgjq.enqueue('t', '{"n": 3}', 'shared', group_key => 'g') AS b_first \gset
SELECT pgjq.enqueue('t', '{"n": 4}', 'shared', group_key => 'g') AS b_second \gset
-- b sees its own two jobs only; its first one runs now, its second waits behind it (its own group's order).
SELECT id = :b_first AS first, status FROM pgjq.jobs WHERE group_key = 'g' ORDER BY id;
SELECT pgjq.cancel(:b_second) AS b_cancels_its_own;
RESET ROLE;
-- In one batch too: each key of the batch is the enqueuing role's.
SET ROLE regress_pgjq_tenant_b;
SELECT cardinality(pgjq.enqueue_batch('t', '[{}, {}]', 'shared', group_keys => ARRAY['h', 'h'])) AS b_batch;
RESET ROLE;
SET ROLE regress_pgjq_tenant_a;
SELECT pgjq.enqueue('t', '{}', 'shared', group_key => 'h') AS a_h \gset
SELECT status FROM pgjq.jobs WHERE id = :a_h;
RESET ROLE;
SELECT enqueued_by, group_key, status, count(*) FROM pgjq.live_jobs WHERE queue_name = 'shared'
 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- Finishing a's job lets a's next job of 'g' start, and nothing of b's.
SELECT pgjq.cancel(:a_first) AS a_first_cancelled;
SELECT id = :a_second AS a_second, status FROM pgjq.live_jobs WHERE group_key = 'g' ORDER BY id;

-- Unique keys. A key one tenant holds does not refuse, or answer with the holder's id, another tenant's
-- enqueue: each gets a job of its own; each tenant's second enqueue of its key gets its own first job.
SET ROLE regress_pgjq_tenant_a;
SELECT pgjq.enqueue('u', '{}', 'shared', unique_key => 'k') AS a_unique \gset
SELECT pgjq.enqueue('u', '{}', 'shared', unique_key => 'k') = :a_unique AS a_gets_its_own;
RESET ROLE;
SET ROLE regress_pgjq_tenant_b;
SELECT pgjq.enqueue('u', '{}', 'shared', unique_key => 'k') AS b_unique \gset
SELECT :b_unique <> :a_unique AS b_gets_a_new_job;
SELECT pgjq.enqueue('u', '{}', 'shared', unique_key => 'k') = :b_unique AS b_gets_its_own;
SELECT pgjq.try_enqueue('u', '{}', 'shared', unique_key => 'k') = :b_unique AS try_enqueue_too;
SELECT cardinality(pgjq.enqueue_batch('u', '[{}, {}]', 'shared', unique_keys => ARRAY['k', 'k2'])) AS batch;
SELECT (pgjq.enqueue_batch('u', '[{}]', 'shared', unique_keys => ARRAY['k']))[1] = :b_unique AS batch_gets_its_own;
INSERT INTO pgjq.jobs (job_type, queue_name, unique_key) VALUES ('u', 'shared', 'k');
SELECT count(*) AS b_jobs_of_k FROM pgjq.jobs WHERE unique_key = 'k';
RESET ROLE;
SELECT enqueued_by, count(*) FROM pgjq.live_jobs WHERE unique_key = 'k' GROUP BY 1 ORDER BY 1;

-- unique_for: a window one tenant took (and keeps after cancelling its job) is not another tenant's.
SET ROLE regress_pgjq_tenant_a;
SELECT pgjq.enqueue('w', '{}', 'shared', unique_key => 'daily', unique_for => '1 year') AS a_window \gset
SELECT pgjq.cancel(:a_window) AS a_window_cancelled;
SELECT pgjq.enqueue('w', '{}', 'shared', unique_key => 'daily', unique_for => '1 year') = :a_window
    AS a_window_still_held;
RESET ROLE;
SET ROLE regress_pgjq_tenant_b;
SELECT pgjq.enqueue('w', '{}', 'shared', unique_key => 'daily', unique_for => '1 year') AS b_window \gset
SELECT :b_window <> :a_window AS b_gets_a_window_of_its_own;
SELECT pgjq.enqueue('w', '{}', 'shared', unique_key => 'daily', unique_for => '1 year') = :b_window
    AS b_window_held;
RESET ROLE;
SELECT enqueued_by, count(*) FROM pgjq.unique_windows WHERE queue_name = 'shared' AND unique_key = 'daily'
 GROUP BY 1 ORDER BY 1;

DELETE FROM pgjq.grants;
SELECT pgjq.drop_queue('shared', force => true);
DROP OWNED BY regress_pgjq_tenant_a, regress_pgjq_tenant_b;
DROP ROLE regress_pgjq_tenant_a, regress_pgjq_tenant_b;
