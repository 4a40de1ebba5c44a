-- Workers: progress, heartbeat, complete, complete_batch, fail (retry, backoff, dead letter).
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 4000) AS id_base;
SELECT pgjq.create_queue('work', max_attempts => 2);
SELECT pgjq.alter_queue('work', retry_base => '10 seconds', retry_cap => '15 seconds');

SELECT pgjq.enqueue_batch('t', '[{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}]', 'work') IS NOT NULL AS enqueued;
SELECT array_agg(id ORDER BY id) AS ids FROM pgjq.claim_job_batch('w1', NULL, 5, 'work') \gset
SELECT (:'ids'::bigint[])[1] AS a, (:'ids'::bigint[])[2] AS b, (:'ids'::bigint[])[3] AS c,
       (:'ids'::bigint[])[4] AS d, (:'ids'::bigint[])[5] AS e \gset

-- progress marks the job running, counts an event, extends the lease
UPDATE pgjq.live_jobs SET lease_expires_at = now() WHERE id = :a;
SELECT pgjq.progress(:a, 'w1', 10);
SELECT pgjq.progress(:a, 'w1', 40, 'rendering');
SELECT pgjq.progress(:a, 'w1', 60);
SELECT status, progress, current_stage, events_count, started_at IS NOT NULL AS started,
       lease_expires_at > now() AS lease_extended
  FROM pgjq.jobs WHERE id = :a;
-- heartbeat extends the lease and keeps the status
UPDATE pgjq.live_jobs SET lease_expires_at = now() WHERE id = :b;
SELECT pgjq.heartbeat(:b, 'w1') > now() AS lease_extended;
SELECT status, heartbeat_at IS NOT NULL AS beat FROM pgjq.jobs WHERE id = :b;

-- complete stores the result and stamps the time
SELECT pgjq.complete(:a, 'w1', '{"pages": 3}');
SELECT status, result, progress, completed_at IS NOT NULL AS stamped, worker_id FROM pgjq.jobs WHERE id = :a;
-- complete without a result
SELECT pgjq.complete(:b, 'w1');
SELECT status, result FROM pgjq.jobs WHERE id = :b;

-- fail with attempts left: back to pending after a jittered backoff within [base/2, base]
SELECT pgjq.fail(:c, 'w1', 'smtp timeout');
SELECT status, last_error, attempts, worker_id IS NULL AS released,
       run_at BETWEEN now() + interval '5 seconds' AND now() + interval '10 seconds' AS backoff_in_range
  FROM pgjq.jobs WHERE id = :c;
-- retry_in overrides the backoff
SELECT pgjq.fail(:d, 'w1', 'try again soon', '0 seconds');
SELECT status, run_at <= now() AS due_now FROM pgjq.jobs WHERE id = :d;
-- second attempt fails: attempts are spent, so the job is dead-lettered with its error kept
SELECT id AS d_again FROM pgjq.claim_job_batch('w2', NULL, 1, 'work') \gset
SELECT :d_again = :d AS same_job;
SELECT pgjq.fail(:d, 'w2', 'still broken');
SELECT status, last_error, attempts, failed_at IS NOT NULL AS stamped FROM pgjq.jobs WHERE id = :d;
-- backoff doubles per attempt up to retry_cap
SELECT pgjq.alter_queue('work', max_attempts => 5);
UPDATE pgjq.live_jobs SET run_at = now(), max_attempts = 5 WHERE id = :c;
SELECT count(*) FROM pgjq.claim_job_batch('w3', NULL, 1, 'work');
SELECT pgjq.fail(:c, 'w3', 'second failure');
SELECT attempts, run_at BETWEEN now() + interval '7.5 seconds' AND now() + interval '15 seconds' AS capped_backoff
  FROM pgjq.jobs WHERE id = :c;

-- complete_batch: all or nothing
SELECT pgjq.enqueue_batch('t', '[{}, {}, {}]', 'work') IS NOT NULL AS enqueued;
SELECT array_agg(id ORDER BY id) AS batch FROM pgjq.claim_job_batch('w4', ARRAY['t'], 3, 'work')
  WHERE payload = '{}' \gset
SELECT pgjq.complete_batch(:'batch'::bigint[] || :e, 'w4');
SELECT count(*) AS still_claimed FROM pgjq.jobs WHERE id = ANY (:'batch') AND status = 'claimed';
SELECT pgjq.complete_batch(:'batch'::bigint[] || (:'batch'::bigint[])[1], 'w4') AS completed;
SELECT count(*) AS completed FROM pgjq.jobs WHERE id = ANY (:'batch') AND status = 'completed';
SELECT pgjq.complete_batch('{}', 'w4') AS empty_batch;

-- only the holder may report: another worker gets PJ002 and the job is untouched
\set VERBOSITY sqlstate
SELECT pgjq.complete(:e, 'intruder');
SELECT pgjq.fail(:e, 'intruder', 'x');
SELECT pgjq.heartbeat(:e, 'intruder');
SELECT pgjq.progress(:e, 'intruder', 5);
\set VERBOSITY default
SELECT pgjq.complete(:e, 'intruder');
SELECT status, worker_id FROM pgjq.jobs WHERE id = :e;
-- a lease that expired and was handed to another worker: the old worker gets PJ002
UPDATE pgjq.live_jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :e;
SELECT pgjq.recover_stale() AS recovered;
SELECT id = :e AS same_job FROM pgjq.claim_job_batch('w5', NULL, 1, 'work');
SELECT pgjq.complete(:e, 'w1');
SELECT pgjq.complete(:e, 'w5');
-- a finished job cannot be reported on
SELECT pgjq.complete(:e, 'w5');
SELECT pgjq.fail(:a, 'w1', 'late');

-- bad input
SELECT pgjq.complete(NULL, 'w1');
SELECT pgjq.complete(:e, NULL);
SELECT pgjq.complete(:e, '');
SELECT pgjq.complete(-1, 'w1');
SELECT pgjq.complete_batch(NULL, 'w1');
SELECT pgjq.complete_batch(ARRAY[1, NULL]::bigint[], 'w1');
SELECT pgjq.complete_batch(ARRAY[[1], [2]]::bigint[], 'w1');
SELECT pgjq.complete_batch(ARRAY[1]::bigint[], NULL);
SELECT pgjq.complete_batch(ARRAY[999999]::bigint[], 'w1');
SELECT pgjq.complete_batch((SELECT array_agg(g::bigint) FROM generate_series(1, 10001) g), 'w1');
SELECT pgjq.fail(NULL, 'w1', 'x');
SELECT pgjq.fail(:c, NULL, 'x');
SELECT pgjq.fail(:c, 'w1', NULL);
SELECT pgjq.fail(:c, 'w1', 'x', '-1 second');
SELECT pgjq.fail(999999, 'w1', 'x');
SELECT pgjq.progress(NULL, 'w1', 5);
SELECT pgjq.progress(:c, NULL, 5);
SELECT pgjq.progress(:c, 'w1', NULL);
SELECT pgjq.progress(:c, 'w1', -1);
SELECT pgjq.progress(:c, 'w1', 101);
SELECT pgjq.progress(:c, 'w1', 5, '');
SELECT pgjq.progress(999999, 'w1', 5);
SELECT pgjq.heartbeat(NULL, 'w1');
SELECT pgjq.heartbeat(:c, NULL);
SELECT pgjq.heartbeat(999999, 'w1');
SELECT pgjq.complete(:e, 'w5', '{"big": "result"}'::jsonb);
SELECT pgjq.enqueue('t', '{}', 'work') IS NOT NULL AS enqueued;
SET pgjq.max_payload_bytes = 16;
SELECT id AS f FROM pgjq.claim_job_batch('w6', NULL, 1, 'work') \gset
SELECT pgjq.complete(:f, 'w6', jsonb_build_object('blob', repeat('x', 100)));
RESET pgjq.max_payload_bytes;
SELECT status FROM pgjq.jobs WHERE id = :f;

-- keep_completed => false: completed jobs are deleted, not kept in the history; the depth still drops,
-- and failed (dead letter) and cancelled jobs are still kept
SELECT pgjq.create_queue('ephemeral', max_attempts => 1);
SELECT pgjq.alter_queue('ephemeral', keep_completed => false);
SELECT array_agg(id ORDER BY id) AS eph FROM unnest(pgjq.enqueue_batch('t', '[1, 2, 3, 4, 5, 6]', 'ephemeral')) AS id \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('we', NULL, 4, 'ephemeral');
SELECT pgjq.complete((:'eph'::bigint[])[1], 'we', '{"dropped": true}');
SELECT pgjq.complete_batch((:'eph'::bigint[])[2:3], 'we') AS completed;
SELECT count(*) AS claimed FROM pgjq.complete_and_claim('we', (:'eph'::bigint[])[4:4], NULL, 2, 'ephemeral');
SELECT pgjq.fail((:'eph'::bigint[])[5], 'we', 'boom');
SELECT pgjq.cancel((:'eph'::bigint[])[6]);
SELECT array_position(:'eph'::bigint[], id) AS job, status FROM pgjq.jobs WHERE queue_name = 'ephemeral' ORDER BY id;
SELECT sum(unfinished) AS depth FROM pgjq.queue_depth WHERE queue_name = 'ephemeral';
-- a deleted job is unknown from then on (P0002), not "already finished"
SELECT pgjq.cancel((:'eph'::bigint[])[1]);
SELECT pgjq.complete((:'eph'::bigint[])[1], 'we');
-- the setting does not reach other queues' jobs completed in the same batch
SELECT pgjq.create_queue('kept');
SELECT pgjq.enqueue('t', '{}', 'ephemeral') AS g, pgjq.enqueue('t', '{}', 'kept') AS h \gset
SELECT count(*) FROM pgjq.claim_job_batch('wm', NULL, 1, 'ephemeral');
SELECT count(*) FROM pgjq.claim_job_batch('wm', NULL, 1, 'kept');
SELECT pgjq.complete_batch(ARRAY[:g, :h]::bigint[], 'wm') AS completed;
SELECT id = :h AS is_h, status FROM pgjq.jobs WHERE id IN (:g, :h);
-- back to keeping them
SELECT pgjq.alter_queue('ephemeral', keep_completed => true);
SELECT pgjq.enqueue('t', '{}', 'ephemeral') AS k \gset
SELECT count(*) FROM pgjq.claim_job_batch('wk', NULL, 1, 'ephemeral');
SELECT pgjq.complete(:k, 'wk');
SELECT status FROM pgjq.jobs WHERE id = :k;
