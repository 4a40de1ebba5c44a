-- Workers: claim_in_transaction, complete_in_transaction, fail_in_transaction (jobs held by the
-- claiming transaction's row locks), savepoints, and bad input.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 9000) AS id_base;
SELECT pgjq.create_queue('tx', max_attempts => 2);
SELECT pgjq.alter_queue('tx', retry_base => '10 seconds', retry_cap => '15 seconds');
SELECT pgjq.enqueue_batch('t', '[{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}]', 'tx') IS NOT NULL AS enqueued;
SELECT sum(unfinished) AS depth_before FROM pgjq.queue_depth WHERE queue_name = 'tx';

-- outside a transaction block the locks would be gone at once: refused
\set VERBOSITY sqlstate
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 2, 'tx');
\set VERBOSITY default
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 2, 'tx');

-- a claim returns the jobs as this transaction runs them; the table still says pending
BEGIN;
SELECT payload->>'n' AS n, status, attempts, worker_id, claimed_at = now() AS claimed_now,
       started_at = now() AS started_now, lease_expires_at IS NULL AS no_lease
  FROM pgjq.claim_in_transaction('w1', NULL, 2, 'tx');
SELECT payload->>'n' AS n, status, attempts FROM pgjq.jobs WHERE queue_name = 'tx' ORDER BY id;
-- a second claim in the same transaction does not hand out the jobs it already holds
SELECT payload->>'n' AS n FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
SELECT pgjq.complete_in_transaction(ARRAY[9001, 9002, 9003, 9002]::bigint[], 'w1') AS completed;
COMMIT;
SELECT id, status, attempts, worker_id, claimed_at IS NOT NULL AS claimed, completed_at >= claimed_at AS ordered,
       heartbeat_at IS NULL AS no_heartbeat
  FROM pgjq.jobs WHERE id BETWEEN 9001 AND 9003 ORDER BY id;
SELECT sum(unfinished) AS depth_after_3 FROM pgjq.queue_depth WHERE queue_name = 'tx';

-- a rollback leaves the jobs runnable, their attempt not counted
BEGIN;
SELECT count(*) AS claimed FROM pgjq.claim_in_transaction('w1', NULL, 5, 'tx');
ROLLBACK;
SELECT id, status, attempts FROM pgjq.jobs WHERE id IN (9004, 9005) ORDER BY id;

-- fail: retried after the backoff while attempts remain (the attempt counts), dead-lettered after
BEGIN;
SELECT id FROM pgjq.claim_in_transaction('w1', ARRAY['t'], 1, 'tx');
SELECT pgjq.fail_in_transaction(9004, 'w1', 'smtp timeout') AS outcome;
COMMIT;
SELECT status, attempts, last_error, worker_id IS NULL AS unheld,
       run_at BETWEEN now() + interval '5 seconds' AND now() + interval '10 seconds' AS backoff_in_range
  FROM pgjq.jobs WHERE id = 9004;
UPDATE pgjq.live_jobs SET run_at = now() WHERE id = 9004;
BEGIN;
SELECT id, attempts FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
SELECT pgjq.fail_in_transaction(9004, 'w1', 'smtp down') AS outcome;
COMMIT;
SELECT status, attempts, last_error, worker_id, failed_at IS NOT NULL AS stamped FROM pgjq.jobs WHERE id = 9004;
-- retry_in overrides the backoff; 0 makes the job runnable again as soon as the transaction ends
BEGIN;
SELECT id FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
SELECT pgjq.fail_in_transaction(9005, 'w1', 'try again', '0 seconds') AS outcome;
COMMIT;
SELECT status, attempts, run_at <= now() AS due_now FROM pgjq.jobs WHERE id = 9005;

-- savepoints: a claim rolled back to a savepoint is released, a report rolled back can be made again
BEGIN;
SAVEPOINT s1;
SELECT id FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
ROLLBACK TO SAVEPOINT s1;
\set VERBOSITY sqlstate
SELECT pgjq.complete_in_transaction('{9005}', 'w1');
\set VERBOSITY default
ROLLBACK;
BEGIN;
SELECT id FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
SAVEPOINT s2;
SELECT pgjq.complete_in_transaction('{9005}', 'w1') AS completed;
ROLLBACK TO SAVEPOINT s2;
SELECT status FROM pgjq.jobs WHERE id = 9005;
SELECT pgjq.complete_in_transaction('{9005}', 'w1') AS completed_again;
COMMIT;
SELECT status, attempts FROM pgjq.jobs WHERE id = 9005;
SELECT sum(unfinished) AS depth_empty FROM pgjq.queue_depth WHERE queue_name = 'tx';

-- only jobs this transaction claimed, for this worker, and not yet reported
SELECT pgjq.enqueue_batch('t', '[{"n": 6}, {"n": 7}, {"n": 8}]', 'tx') IS NOT NULL AS enqueued;
SELECT array_agg(id) AS leased FROM pgjq.claim_job_batch('lease-worker', NULL, 1, 'tx') \gset
BEGIN;
SELECT id FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
\set VERBOSITY sqlstate
SAVEPOINT s;
SELECT pgjq.complete_in_transaction(:'leased', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{9008}', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{424242}', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{9007}', 'intruder');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.fail_in_transaction(9008, 'w1', 'x');
ROLLBACK TO SAVEPOINT s;
\set VERBOSITY default
SELECT pgjq.complete_in_transaction('{9008}', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{9007}', 'intruder');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction(:'leased', 'w1');
ROLLBACK TO SAVEPOINT s;
-- reported once only
SELECT pgjq.complete_in_transaction('{9007}', 'w1') AS completed;
SAVEPOINT after_complete;
SELECT pgjq.complete_in_transaction('{9007}', 'w1');
ROLLBACK TO SAVEPOINT after_complete;
SELECT pgjq.fail_in_transaction(9007, 'w1', 'x');
ROLLBACK TO SAVEPOINT s;
-- a job the transaction cancelled itself
SELECT pgjq.cancel(9007) AS cancelled;
SELECT pgjq.complete_in_transaction('{9007}', 'w1');
ROLLBACK;
-- the lease-mode calls do not report in-transaction claims
BEGIN;
SELECT id FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx');
SELECT pgjq.complete(9007, 'w1');
ROLLBACK;
SELECT status FROM pgjq.jobs WHERE id = 9007;

-- paused queues hand out nothing
SELECT pgjq.pause_queue('tx');
BEGIN;
SELECT count(*) AS from_paused FROM pgjq.claim_in_transaction('w1', NULL, 10, 'tx');
COMMIT;
SELECT pgjq.resume_queue('tx');

-- FIFO: the oldest job only, and nothing more while this transaction holds it
SELECT pgjq.create_queue('tx_fifo', fifo => true);
SELECT pgjq.enqueue_batch('step', '[{"n": 1}, {"n": 2}]', 'tx_fifo') IS NOT NULL AS enqueued;
BEGIN;
SELECT count(*) AS wrong_type FROM pgjq.claim_in_transaction('wf', ARRAY['other'], 10, 'tx_fifo');
SELECT payload->>'n' AS n FROM pgjq.claim_in_transaction('wf', NULL, 10, 'tx_fifo');
SELECT count(*) AS while_held FROM pgjq.claim_in_transaction('wf', NULL, 10, 'tx_fifo');
SELECT pgjq.complete_in_transaction(ARRAY[id], 'wf') FROM pgjq.jobs
 WHERE queue_name = 'tx_fifo' AND payload->>'n' = '1';
COMMIT;
BEGIN;
SELECT payload->>'n' AS n FROM pgjq.claim_in_transaction('wf', NULL, 10, 'tx_fifo');
ROLLBACK;
-- a job of the FIFO queue held under a lease blocks in-transaction claims too
SELECT count(*) AS leased FROM pgjq.claim_job_batch('lease-fifo', NULL, 1, 'tx_fifo');
BEGIN;
SELECT count(*) AS while_leased FROM pgjq.claim_in_transaction('wf', NULL, 10, 'tx_fifo');
COMMIT;

-- a queue that keeps no completed jobs
SELECT pgjq.create_queue('tx_discard');
SELECT pgjq.alter_queue('tx_discard', keep_completed => false);
SELECT pgjq.enqueue('t', '{}', 'tx_discard') AS discarded \gset
BEGIN;
SELECT count(*) AS claimed FROM pgjq.claim_in_transaction('w1', NULL, 1, 'tx_discard');
SELECT pgjq.complete_in_transaction(ARRAY[:discarded]::bigint[], 'w1') AS completed;
COMMIT;
SELECT count(*) AS rows_left FROM pgjq.jobs WHERE id = :discarded;

-- bad input
BEGIN;
\set VERBOSITY sqlstate
SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction(NULL, NULL, 1, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('', NULL, 1, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 0, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 10001, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('w1', '{}', 1, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('w1', ARRAY[NULL]::text[], 1, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 1, 'no_such_queue');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 1, 'Bad Name');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction(NULL, 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{1}', NULL);
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{1, NULL}', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{{1}, {2}}', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction(array_fill(1::bigint, ARRAY[10001]), 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.fail_in_transaction(NULL, 'w1', 'x');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.fail_in_transaction(1, 'w1', NULL);
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.fail_in_transaction(1, NULL, 'x');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.fail_in_transaction(1, 'w1', 'x', '-1 second');
ROLLBACK TO SAVEPOINT s;
\set VERBOSITY default
SELECT * FROM pgjq.claim_in_transaction('w1', NULL, 0, 'tx');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.complete_in_transaction('{1, NULL}', 'w1');
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.fail_in_transaction(1, 'w1', NULL);
ROLLBACK TO SAVEPOINT s;
-- nothing to complete is not an error
SELECT pgjq.complete_in_transaction('{}', 'w1') AS none;
COMMIT;
