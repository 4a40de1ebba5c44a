-- 15_queue_limits: a cap on a queue's jobs claimed or running at once (max_running), shared by every
-- worker, and a rate limit (at most rate_limit claims per rate_interval, a token bucket that refills
-- continuously), enforced in the claim. Claimers of a capped or rate-limited queue take turns on it.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 15000) AS id_base;
SELECT pgjq.create_queue('capped', max_running => 2);
SELECT queue_name, max_running, rate_limit, rate_interval, group_concurrency, job_timeout
  FROM pgjq.queues WHERE queue_name = 'capped';
SELECT count(pgjq.enqueue('t', '{}', 'capped')) FROM generate_series(1, 5);

-- the cap counts what every worker holds
SELECT count(*) AS first_claim FROM pgjq.claim_job_batch('w1', NULL, 10, 'capped');
SELECT count(*) AS second_claim FROM pgjq.claim_job_batch('w2', NULL, 10, 'capped');
SELECT pgjq.complete(id, 'w1') FROM pgjq.jobs WHERE queue_name = 'capped' AND worker_id = 'w1' AND status = 'claimed'
 ORDER BY id LIMIT 1;
SELECT count(*) AS after_one_finished FROM pgjq.claim_job_batch('w2', NULL, 10, 'capped');
-- complete_and_claim frees its room before it claims
SELECT count(*) AS completed_and_claimed FROM pgjq.complete_and_claim('w1',
  (SELECT array_agg(id) FROM pgjq.jobs WHERE queue_name = 'capped' AND worker_id = 'w1' AND status = 'claimed'),
  NULL, 10, 'capped');
-- claims in a transaction count too, for the claimer and for the others
SELECT pgjq.complete(id, worker_id) FROM pgjq.jobs WHERE queue_name = 'capped' AND status = 'claimed';
SELECT count(pgjq.enqueue('t', '{}', 'capped')) FROM generate_series(1, 5);
BEGIN;
SELECT count(*) AS in_transaction FROM pgjq.claim_in_transaction('w3', NULL, 10, 'capped');
SELECT count(*) AS again_in_transaction FROM pgjq.claim_in_transaction('w3', NULL, 10, 'capped');
ROLLBACK;
-- 0 removes the cap
SELECT pgjq.alter_queue('capped', max_running => 0);
SELECT max_running FROM pgjq.queues WHERE queue_name = 'capped';
SELECT count(*) AS uncapped FROM pgjq.claim_job_batch('w1', NULL, 10, 'capped');

-- rate limit: 3 claims per hour; the bucket starts full
SELECT pgjq.create_queue('limited', rate_limit => 3, rate_interval => '1 hour');
SELECT count(pgjq.enqueue('t', '{}', 'limited')) FROM generate_series(1, 5);
SELECT count(*) AS first_claim FROM pgjq.claim_job_batch('w1', NULL, 2, 'limited');
SELECT count(*) AS second_claim FROM pgjq.claim_job_batch('w2', NULL, 10, 'limited');
SELECT count(*) AS nothing_left_to_spend FROM pgjq.claim_job_batch('w2', NULL, 10, 'limited');
-- a claim that finds fewer jobs than it may take spends only what it took
SELECT pgjq.alter_queue('limited', rate_limit => 100);
SELECT count(*) AS two_left FROM pgjq.claim_job_batch('w1', NULL, 10, 'limited');
SELECT tokens >= 1 AS unspent_kept FROM pgjq.rate_limits WHERE queue_name = 'limited';
-- 0 removes the limit
SELECT pgjq.alter_queue('limited', rate_limit => 0);
SELECT rate_limit, (SELECT count(*) FROM pgjq.rate_limits WHERE queue_name = 'limited') AS buckets
  FROM pgjq.queues WHERE queue_name = 'limited';

-- bad input
SELECT pgjq.create_queue('bad', max_running => 0);
SELECT pgjq.create_queue('bad', max_running => -1);
SELECT pgjq.create_queue('bad', rate_limit => 1000001);
SELECT pgjq.create_queue('bad', rate_limit => 5, rate_interval => '0');
SELECT pgjq.create_queue('bad', rate_limit => 5, rate_interval => '2 days');
SELECT pgjq.create_queue('bad', rate_interval => NULL);
SELECT pgjq.alter_queue('capped', max_running => -1);
SELECT pgjq.alter_queue('capped', rate_limit => -5);
SELECT pgjq.alter_queue('capped', rate_interval => '-1 second');
SELECT count(*) AS no_bad_queue FROM pgjq.queues WHERE queue_name = 'bad';
