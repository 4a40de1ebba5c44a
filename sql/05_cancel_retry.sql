-- cancel, retry, recover_stale, prune.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 5000) AS id_base;
SELECT pgjq.create_queue('life', max_attempts => 2, lease => '1 minute');

-- cancel a pending job
SELECT pgjq.enqueue('t', '{"n": 1}', 'life') AS p1 \gset
SELECT pgjq.cancel(:p1) AS cancelled;
SELECT status, cancelled_at IS NOT NULL AS stamped FROM pgjq.jobs WHERE id = :p1;
-- cancelling a finished job says false and changes nothing
SELECT pgjq.cancel(:p1) AS cancelled_again;
-- cancel a running job: its worker learns at its next call (PJ003), the job stays cancelled
SELECT pgjq.enqueue('t', '{"n": 2}', 'life') AS r1 \gset
SELECT count(*) FROM pgjq.claim_job_batch('w1', NULL, 1, 'life');
SELECT pgjq.progress(:r1, 'w1', 30);
SELECT pgjq.cancel(:r1) AS cancelled;
\set VERBOSITY sqlstate
SELECT pgjq.heartbeat(:r1, 'w1');
SELECT pgjq.complete(:r1, 'w1');
\set VERBOSITY default
SELECT pgjq.progress(:r1, 'w1', 40);
SELECT pgjq.fail(:r1, 'w1', 'x');
SELECT status, worker_id, progress FROM pgjq.jobs WHERE id = :r1;
-- another worker asking about that job is not the holder (PJ002), not cancelled
\set VERBOSITY sqlstate
SELECT pgjq.complete(:r1, 'w2');
\set VERBOSITY default

-- retry re-drives a cancelled or failed job with fresh attempts, keeping its id
SELECT pgjq.retry(:r1);
SELECT status, attempts, worker_id IS NULL AS released, run_at <= now() AS due FROM pgjq.jobs WHERE id = :r1;
SELECT sum(unfinished) = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'life') AS depth_matches
  FROM pgjq.queue_depth WHERE queue_name = 'life';
SELECT count(*) FROM pgjq.claim_job_batch('w3', NULL, 1, 'life');
SELECT pgjq.fail(:r1, 'w3', 'first');
UPDATE pgjq.live_jobs SET run_at = now() WHERE id = :r1;
SELECT count(*) FROM pgjq.claim_job_batch('w3', NULL, 1, 'life');
SELECT pgjq.fail(:r1, 'w3', 'second');
SELECT status, attempts, last_error FROM pgjq.jobs WHERE id = :r1;
SELECT pgjq.retry(:r1);
SELECT status, attempts, last_error FROM pgjq.jobs WHERE id = :r1;
-- only failed or cancelled jobs can be retried
SELECT pgjq.retry(:r1);

-- recover_stale: expired leases go back to pending, or to failed when attempts are spent
SELECT pgjq.enqueue_batch('t', '[{"n": 10}, {"n": 11}]', 'life') IS NOT NULL AS enqueued;
SELECT count(*) FROM pgjq.claim_job_batch('w4', NULL, 10, 'life');
SELECT pgjq.recover_stale() AS nothing_expired;
UPDATE pgjq.live_jobs SET lease_expires_at = now() - interval '1 second' WHERE worker_id = 'w4';
UPDATE pgjq.live_jobs SET attempts = max_attempts WHERE worker_id = 'w4' AND payload->>'n' = '11';
SELECT pgjq.recover_stale() AS recovered;
SELECT payload->>'n' AS n, status, worker_id, last_error FROM pgjq.jobs
 WHERE queue_name = 'life' AND payload->>'n' IN ('10', '11') ORDER BY id;
SELECT pgjq.recover_stale() AS idempotent;

-- prune removes finished jobs older than the given age, never live ones
SELECT count(*) AS finished FROM pgjq.finished_jobs \gset
UPDATE pgjq.finished_jobs SET finished_at = now() - interval '2 days' WHERE id = :p1;
SELECT pgjq.prune('1 day') AS pruned;
SELECT count(*) AS p1_left FROM pgjq.jobs WHERE id = :p1;
SELECT count(*) = :finished - 1 AS others_kept FROM pgjq.finished_jobs;
SELECT pgjq.prune('0') = :finished - 1 AS pruned_all_finished;
SELECT count(*) > 0 AS live_jobs_kept FROM pgjq.live_jobs;

-- bad input
SELECT pgjq.cancel(NULL);
SELECT pgjq.cancel(999999);
SELECT pgjq.retry(NULL);
SELECT pgjq.retry(999999);
SELECT pgjq.prune(NULL);
SELECT pgjq.prune('-1 day');
