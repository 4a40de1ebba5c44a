-- The operator's view: pgjq.queue_stats and pgjq.jobs.
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 6000) AS id_base;
SELECT pgjq.create_queue('stats', max_pending => 50);
SELECT pgjq.enqueue_batch('t', '[{}, {}, {}, {}]', 'stats') IS NOT NULL AS enqueued;
SELECT pgjq.enqueue('t', '{}', 'stats', run_at => now() + interval '1 day') IS NOT NULL AS scheduled;
SELECT array_agg(id ORDER BY id) AS ids FROM pgjq.claim_job_batch('ws', NULL, 3, 'stats') \gset
SELECT pgjq.progress((:'ids'::bigint[])[1], 'ws', 50);
SELECT pgjq.complete((:'ids'::bigint[])[2], 'ws');
SELECT pgjq.fail((:'ids'::bigint[])[3], 'ws', 'boom', '0');
SELECT count(*) FROM pgjq.claim_job_batch('ws', NULL, 1, 'stats');
SELECT pgjq.alter_queue('stats', max_attempts => 1);
UPDATE pgjq.live_jobs SET max_attempts = 1 WHERE queue_name = 'stats' AND status = 'claimed';
SELECT pgjq.fail(id, 'ws', 'dead') FROM pgjq.jobs WHERE queue_name = 'stats' AND status = 'claimed';
SELECT pgjq.cancel(id) FROM pgjq.jobs WHERE queue_name = 'stats' AND status = 'pending' AND run_at <= now();
SELECT pgjq.enqueue('t', '{}', 'stats') IS NOT NULL AS one_more;
SELECT queue_name, pending, scheduled, claimed, running, completed, failed, cancelled,
       oldest_runnable_age >= interval '0' AS has_age, max_pending, fifo, paused
  FROM pgjq.queue_stats WHERE queue_name = 'stats';
SELECT oldest_runnable_age IS NULL AS no_age_when_empty FROM pgjq.queue_stats WHERE queue_name = 'default'
   AND pending = 0;
-- every status stamps its time
SELECT status, claimed_at IS NOT NULL AS claimed, started_at IS NOT NULL AS started,
       completed_at IS NOT NULL AS completed, failed_at IS NOT NULL AS failed,
       cancelled_at IS NOT NULL AS cancelled
  FROM pgjq.jobs WHERE queue_name = 'stats' ORDER BY id;
