-- Workers: claim_job_batch. Order, filters, scheduling, pausing, FIFO, bad input.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 3000) AS id_base;
SELECT pgjq.create_queue('claims');

-- priority order first (higher first), then enqueue order
SELECT pgjq.enqueue('a', '{"n": 1}', 'claims', 100) AS j1 \gset
SELECT pgjq.enqueue('b', '{"n": 2}', 'claims', 300) AS j2 \gset
SELECT pgjq.enqueue('a', '{"n": 3}', 'claims', 100) AS j3 \gset
SELECT pgjq.enqueue('c', '{"n": 4}', 'claims', 300) AS j4 \gset
SELECT pgjq.enqueue('a', '{"n": 5}', 'claims', 50)  AS j5 \gset
SELECT pgjq.enqueue('a', '{"n": 6}', 'claims', 999, now() + interval '1 hour') AS scheduled \gset
SELECT pgjq.enqueue('d', '{"n": 7}', 'claims', 1) AS j7 \gset

SELECT payload->>'n' AS n, job_type, priority, status, attempts, worker_id,
       claimed_at IS NOT NULL AS stamped, lease_expires_at > now() AS leased,
       lease_expires_at - claimed_at AS lease
  FROM pgjq.claim_job_batch('worker-1', NULL, 3, 'claims');
SELECT payload->>'n' AS n, status FROM pgjq.jobs WHERE queue_name = 'claims' ORDER BY id;

-- type filter: only the listed types
SELECT payload->>'n' AS n, job_type FROM pgjq.claim_job_batch('worker-2', ARRAY['d', 'zzz'], 10, 'claims');
SELECT payload->>'n' AS n, job_type FROM pgjq.claim_job_batch('worker-2', ARRAY['a'], 10, 'claims');
-- the scheduled job is not runnable yet, so nothing is left
SELECT count(*) AS nothing_left FROM pgjq.claim_job_batch('worker-2', NULL, 10, 'claims');
-- once due it is claimable
UPDATE pgjq.live_jobs SET run_at = now() - interval '1 second' WHERE id = :scheduled;
SELECT payload->>'n' AS n FROM pgjq.claim_job_batch('worker-2', NULL, 10, 'claims');

-- defaults: any type, batch of 10, the default queue
SELECT count(*) AS default_queue_jobs FROM pgjq.jobs WHERE queue_name = 'default' AND status = 'pending' \gset
SELECT count(*) = least(10, :default_queue_jobs) AS claimed_default_batch FROM pgjq.claim_job_batch('worker-3');

-- a paused queue hands out nothing
SELECT pgjq.enqueue('a', '{}', 'claims') AS paused_job \gset
SELECT pgjq.pause_queue('claims');
SELECT count(*) AS from_paused FROM pgjq.claim_job_batch('worker-4', NULL, 10, 'claims');
SELECT pgjq.resume_queue('claims');
SELECT count(*) AS after_resume FROM pgjq.claim_job_batch('worker-4', NULL, 10, 'claims');

-- FIFO: only the oldest runnable job, and only when none of the queue is claimed or running
SELECT pgjq.create_queue('fifo_q', fifo => true);
SELECT pgjq.enqueue_batch('step', '[{"n": 1}, {"n": 2}, {"n": 3}]', 'fifo_q') IS NOT NULL AS enqueued;
SELECT payload->>'n' AS n FROM pgjq.claim_job_batch('w-fifo', NULL, 10, 'fifo_q');
SELECT count(*) AS while_one_in_flight FROM pgjq.claim_job_batch('w-fifo-2', NULL, 10, 'fifo_q');
SELECT pgjq.complete(id, 'w-fifo') FROM pgjq.jobs WHERE queue_name = 'fifo_q' AND status = 'claimed';
-- a worker that does not handle the oldest job's type gets nothing; the order is never skipped
SELECT count(*) AS wrong_type FROM pgjq.claim_job_batch('w-fifo-2', ARRAY['other'], 10, 'fifo_q');
SELECT payload->>'n' AS n FROM pgjq.claim_job_batch('w-fifo-2', ARRAY['step'], 10, 'fifo_q');
-- fifo claims need READ COMMITTED: the in-flight check must see claims committed meanwhile
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM pgjq.claim_job_batch('w-fifo-3', NULL, 1, 'fifo_q');
ROLLBACK;

-- the claim reads the partial index in its order and stops at the batch size
SELECT pgjq.enqueue_batch('bulk', (SELECT jsonb_agg(g) FROM generate_series(1, 50) g), 'claims') IS NOT NULL AS bulk;
SELECT count(*) AS claimed_5 FROM pgjq.claim_job_batch('worker-5', ARRAY['bulk'], 5, 'claims');
SELECT count(*) AS pending_45 FROM pgjq.jobs WHERE job_type = 'bulk' AND status = 'pending';

-- bad input
SELECT pgjq.claim_job_batch(NULL);
SELECT pgjq.claim_job_batch('');
SELECT pgjq.claim_job_batch(repeat('w', 201));
SELECT pgjq.claim_job_batch('w', '{}');
SELECT pgjq.claim_job_batch('w', ARRAY['a', NULL]);
SELECT pgjq.claim_job_batch('w', ARRAY[''::text]);
SELECT pgjq.claim_job_batch('w', ARRAY[['a'], ['b']]);
SELECT pgjq.claim_job_batch('w', NULL, 0);
SELECT pgjq.claim_job_batch('w', NULL, 10001);
SELECT pgjq.claim_job_batch('w', NULL, -1);
SELECT pgjq.claim_job_batch('w', NULL, NULL);
SELECT pgjq.claim_job_batch('w', NULL, 10, NULL);
SELECT pgjq.claim_job_batch('w', NULL, 10, 'missing');
SELECT pgjq.claim_job_batch('w', NULL, 10, 'NOT VALID');

-- complete_and_claim: the previous batch is completed and the next claimed in one call
SELECT pgjq.create_queue('loop');
SELECT pgjq.enqueue_batch('t', '[1, 2, 3, 4, 5]', 'loop') IS NOT NULL AS enqueued;
SELECT array_agg(id ORDER BY id) AS first_batch FROM pgjq.complete_and_claim('wl', NULL, NULL, 2, 'loop') \gset
SELECT array_agg(payload ORDER BY id) AS second_batch
  FROM pgjq.complete_and_claim('wl', :'first_batch', NULL, 2, 'loop');
SELECT payload, status FROM pgjq.jobs WHERE queue_name = 'loop' ORDER BY id;
SELECT count(*) AS empty_list_claims FROM pgjq.complete_and_claim('wl2', '{}', ARRAY['t'], 10, 'loop');
-- all or nothing: a job not held by the worker refuses the whole call, nothing is completed or claimed
SELECT array_agg(id ORDER BY id) AS held FROM pgjq.jobs WHERE queue_name = 'loop' AND worker_id = 'wl' AND status = 'claimed' \gset
SELECT pgjq.complete_and_claim('wl', :'held'::bigint[] || :'first_batch'::bigint[], NULL, 2, 'loop');
SELECT count(*) AS still_claimed FROM pgjq.jobs WHERE id = ANY (:'held') AND status = 'claimed';
-- bad input
SELECT pgjq.complete_and_claim(NULL, '{}');
SELECT pgjq.complete_and_claim('wl', ARRAY[NULL]::bigint[]);
SELECT pgjq.complete_and_claim('wl', '{}', '{}');
SELECT pgjq.complete_and_claim('wl', '{}', NULL, 0);
SELECT pgjq.complete_and_claim('wl', '{}', NULL, 10, 'missing');
