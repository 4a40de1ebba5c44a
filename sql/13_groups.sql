-- 13_groups: group keys. Jobs of one group_key in a queue run at most the queue's group_concurrency at a
-- time (1 unless set), in enqueue order; the others wait (status 'waiting', outside the claim index) and
-- start when a job of their group finishes. Different keys run in parallel; a failing key blocks only
-- itself. The transaction that makes a change starts the jobs it lets start, as it commits.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 13000) AS id_base;
SELECT pgjq.create_queue('grp');
CREATE FUNCTION live(q text) RETURNS TABLE (id bigint, group_key text, status pgjq.job_status) LANGUAGE sql AS
  $$ SELECT id, group_key, status FROM pgjq.jobs WHERE queue_name = q AND status < 'completed' ORDER BY id $$;
CREATE FUNCTION depth_matches(q text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = q)
          = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = q) $$;

-- one job per key is live, the rest wait; jobs without a key are untouched
SELECT pgjq.enqueue('t', '{"n": 1}', 'grp', group_key => 'a') AS a1,
       pgjq.enqueue('t', '{"n": 2}', 'grp', group_key => 'a') AS a2 \gset
SELECT pgjq.enqueue('t', '{"n": 3}', 'grp', group_key => 'a') AS a3,
       pgjq.enqueue('t', '{"n": 4}', 'grp', group_key => 'b') AS b1 \gset
SELECT pgjq.enqueue('t', '{"n": 5}', 'grp', group_key => 'b') AS b2,
       pgjq.enqueue('t', '{"n": 6}', 'grp') AS c1 \gset
SELECT * FROM live('grp');
SELECT waiting, pending FROM pgjq.queue_stats WHERE queue_name = 'grp';
SELECT depth_matches('grp');

-- a claim takes the head of each key, never a waiting job, whatever the batch size
SELECT id, group_key FROM pgjq.claim_job_batch('w', NULL, 10, 'grp') ORDER BY id;
SELECT pgjq.claim_job_batch('w', NULL, 10, 'grp');

-- completing the head of 'a' starts the next job of 'a', in enqueue order
SELECT pgjq.complete(:a1, 'w');
SELECT * FROM live('grp');
-- a failing key blocks only itself: b1 goes back to pending with a backoff, b2 keeps waiting behind it
SELECT pgjq.fail(:b1, 'w', 'boom', retry_in => '0');
SELECT * FROM live('grp');
SELECT id, group_key FROM pgjq.claim_job_batch('w', NULL, 10, 'grp') ORDER BY id;
-- once b1 fails for good (its last attempt), b2 starts
SELECT pgjq.alter_queue('grp', max_attempts => 2);
UPDATE pgjq.live_jobs SET max_attempts = 2 WHERE id = :b1;
SELECT pgjq.fail(:b1, 'w', 'boom again');
SELECT * FROM live('grp');
-- cancelling a live job of a key starts the next one; cancelling a waiting one starts nothing
SELECT pgjq.cancel(:a2);
SELECT * FROM live('grp');
SELECT pgjq.enqueue('t', '{}', 'grp', group_key => 'a') AS a4 \gset
SELECT pgjq.cancel(:a4);
SELECT * FROM live('grp');
SELECT depth_matches('grp');

-- within a key, enqueue order wins over priority
SELECT pgjq.enqueue('t', '{}', 'grp', priority => 1, group_key => 'p') AS p1 \gset
SELECT pgjq.enqueue('t', '{}', 'grp', priority => 999, group_key => 'p') AS p2 \gset
SELECT id = :p1 AS first_enqueued_first FROM pgjq.jobs WHERE group_key = 'p' AND status = 'pending';

-- in one transaction: the jobs wait until the commit decides which may start
BEGIN;
SELECT pgjq.enqueue('t', '{}', 'grp', group_key => 'd') AS d1 \gset
SELECT pgjq.enqueue('t', '{}', 'grp', group_key => 'd') AS d2 \gset
SELECT status FROM pgjq.jobs WHERE id IN (:d1, :d2) ORDER BY id;
COMMIT;
SELECT status FROM pgjq.jobs WHERE id IN (:d1, :d2) ORDER BY id;
-- a rolled-back enqueue leaves nothing waiting and starts nothing
BEGIN;
SELECT pgjq.enqueue('t', '{}', 'grp', group_key => 'e') IS NOT NULL AS enqueued;
ROLLBACK;
SELECT count(*) AS e_jobs FROM pgjq.jobs WHERE group_key = 'e';

-- group_concurrency: at most N of a key at once; raising it starts waiting jobs at once
SELECT pgjq.create_queue('grp2', group_concurrency => 2);
SELECT count(pgjq.enqueue('t', jsonb_build_object('n', g), 'grp2', group_key => 'k')) FROM generate_series(1, 5) g;
SELECT status, count(*) FROM pgjq.jobs WHERE queue_name = 'grp2' GROUP BY status ORDER BY status;
SELECT pgjq.alter_queue('grp2', group_concurrency => 4);
SELECT status, count(*) FROM pgjq.jobs WHERE queue_name = 'grp2' GROUP BY status ORDER BY status;
-- keys belong to their queue
SELECT pgjq.enqueue('t', '{}', 'default', group_key => 'k') IS NOT NULL AS other_queue;
SELECT status FROM pgjq.jobs WHERE queue_name = 'default' AND group_key = 'k';

-- INSERT INTO pgjq.jobs and enqueue_batch take keys too (group_keys: one per payload, NULL for none)
INSERT INTO pgjq.jobs (job_type, queue_name, group_key) VALUES ('v', 'grp', 'p') RETURNING status;
SELECT pgjq.enqueue_batch('t', '[{}, {}, {}]', 'grp', group_keys => '{q, q, NULL}') AS batch \gset
SELECT j.group_key, j.status FROM unnest(:'batch'::bigint[]) WITH ORDINALITY b(id, n) JOIN pgjq.jobs j USING (id)
 ORDER BY b.n;

-- retry of a failed job of a key: it waits for its turn again
SELECT pgjq.retry(:b1);
SELECT status FROM pgjq.jobs WHERE id = :b1;
SELECT depth_matches('grp'), depth_matches('grp2');

-- bad input
SELECT pgjq.enqueue('t', '{}', 'grp', group_key => '');
SELECT pgjq.enqueue('t', '{}', 'grp', group_key => repeat('k', 201));
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'grp', group_keys => '{a}');
SELECT pgjq.enqueue_batch('t', '[{}]', 'grp', group_keys => '{{a}}');
SELECT pgjq.create_queue('grp3', group_concurrency => 0);
SELECT pgjq.alter_queue('grp', group_concurrency => 10001);
DROP FUNCTION live(text), depth_matches(text);
