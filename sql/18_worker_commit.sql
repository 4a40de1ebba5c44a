-- 18_worker_commit: a worker call that is a transaction by itself commits without waiting for its WAL flush
-- (synchronous_commit = off for that transaction alone), unless pgjq.synchronous_worker_commit is on. A
-- transaction block, and an enqueue, commit as the session says.
SELECT pgjq.create_queue('commits');
SELECT pgjq.enqueue('t', '{}', 'commits') AS job \gset
SELECT count(*) AS claimed, current_setting('synchronous_commit') AS during_claim
  FROM pgjq.claim_job_batch('w', NULL, 1, 'commits');
SELECT current_setting('synchronous_commit') AS after_it;
SELECT pgjq.heartbeat(:job, 'w') IS NOT NULL AS beat, current_setting('synchronous_commit') AS during_heartbeat;
SELECT pgjq.progress(:job, 'w', 10), current_setting('synchronous_commit') AS during_progress;
-- in a transaction block the caller's own writes may be in it: untouched
BEGIN;
SELECT pgjq.heartbeat(:job, 'w') IS NOT NULL AS beat, current_setting('synchronous_commit') AS in_a_block;
COMMIT;
-- an enqueue stays durable
SELECT pgjq.enqueue('t', '{}', 'commits') IS NOT NULL AS enqueued, current_setting('synchronous_commit') AS during_enqueue;
-- pgjq.synchronous_worker_commit = on keeps every worker commit waiting for its flush
SET pgjq.synchronous_worker_commit = on;
SELECT pgjq.heartbeat(:job, 'w') IS NOT NULL AS beat, current_setting('synchronous_commit') AS when_asked_to_wait;
RESET pgjq.synchronous_worker_commit;
SELECT pgjq.complete(:job, 'w'), current_setting('synchronous_commit') AS during_complete;
SELECT pgjq.drop_queue('commits', force => true);
