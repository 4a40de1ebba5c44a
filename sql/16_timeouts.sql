-- 16_timeouts: an execution timeout per queue (job_timeout) or per job (enqueue's timeout). A claimed job's
-- lease can be extended by heartbeats only up to its timeout; past it every report of the worker is
-- refused with PJ005 (the worker should stop), and lease recovery fails that attempt ("timed out"), which
-- counts like any failure: the job runs again while attempts remain, else it goes to the dead letters.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 16000) AS id_base;
SELECT pgjq.create_queue('slow', lease => '1 hour', job_timeout => '10 minutes', max_attempts => 2);
SELECT pgjq.enqueue('t', '{}', 'slow') AS j1 \gset
SELECT pgjq.enqueue('t', '{}', 'slow', timeout => '1 minute') AS j2 \gset
SELECT id, timeout, lease_expires_at = timeout_at AS lease_ends_at_timeout,
       timeout_at - claimed_at AS allowed
  FROM pgjq.claim_job_batch('w', NULL, 10, 'slow') ORDER BY id;
-- a heartbeat cannot extend the lease past the timeout
SELECT pgjq.heartbeat(:j2, 'w') = timeout_at AS capped_at_timeout FROM pgjq.jobs WHERE id = :j2;
SELECT pgjq.progress(:j2, 'w', 50);

-- the timeout passes (moved into the past here rather than waited for)
UPDATE pgjq.live_jobs SET timeout_at = now() - interval '1 second', lease_expires_at = now() - interval '1 second'
 WHERE id = :j2;
SELECT pgjq.heartbeat(:j2, 'w');
SELECT pgjq.progress(:j2, 'w', 60);
SELECT pgjq.complete(:j2, 'w');
SELECT pgjq.fail(:j2, 'w', 'too late');
SELECT status, attempts FROM pgjq.jobs WHERE id = :j2;
-- recovery fails the attempt with the reason; the job runs again
SELECT pgjq.recover_stale();
SELECT status, attempts, last_error, timeout_at IS NULL AS no_timeout_while_pending FROM pgjq.jobs WHERE id = :j2;
-- a real wait, on a job with a short timeout and its last attempt
SELECT id = :j2 AS again, timeout_at - claimed_at AS allowed FROM pgjq.claim_job_batch('w', NULL, 1, 'slow');
UPDATE pgjq.live_jobs SET timeout = interval '200 milliseconds', timeout_at = claimed_at + interval '200 milliseconds',
       lease_expires_at = claimed_at + interval '200 milliseconds' WHERE id = :j2;
SELECT pg_sleep(0.3);
SELECT pgjq.heartbeat(:j2, 'w');
SELECT pgjq.recover_stale();
SELECT status, attempts, last_error FROM pgjq.jobs WHERE id = :j2;
-- the other job is unaffected
SELECT pgjq.complete(:j1, 'w');
SELECT status FROM pgjq.jobs WHERE id = :j1;
-- a queue without a timeout: none, unless the job has its own
SELECT pgjq.enqueue('t', '{}', 'default') AS plain \gset
SELECT timeout_at IS NULL AS no_timeout FROM pgjq.claim_job_batch('w', NULL, 10, 'default') WHERE id = :plain;
SELECT pgjq.alter_queue('slow', job_timeout => '0');
SELECT job_timeout FROM pgjq.queues WHERE queue_name = 'slow';

-- bad input
SELECT pgjq.enqueue('t', '{}', 'slow', timeout => '0');
SELECT pgjq.enqueue('t', '{}', 'slow', timeout => '-1 second');
SELECT pgjq.enqueue('t', '{}', 'slow', timeout => '2 years');
SELECT pgjq.create_queue('bad', job_timeout => '0');
SELECT pgjq.alter_queue('slow', job_timeout => '400 days');
