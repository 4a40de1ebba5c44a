-- Bounded inputs: every interval has a documented maximum and the arithmetic on it cannot overflow, a
-- failure's message is capped (truncated, never refused), a batch is bounded in elements and bytes, and a
-- retry that would take a unique_key another job holds says which.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 11000) AS id_base;

-- Intervals: lease 1 microsecond to 1 year; retry_base, retry_cap and retry_in 0 to 1 year; retention 0 to
-- 100 years. Beyond: 22023, whatever the size (no overflow into a small value).
SELECT pgjq.create_queue('limits', lease => '178000000 years');
SELECT pgjq.create_queue('limits', lease => '1 year 1 second');
SELECT pgjq.create_queue('limits', lease => '1 year');
SELECT pgjq.alter_queue('limits', retention => '200000 years');
SELECT pgjq.alter_queue('limits', retention => '101 years');
SELECT pgjq.alter_queue('limits', retry_cap => '290000 years');
SELECT pgjq.alter_queue('limits', retry_base => '2 years');
SELECT pgjq.alter_queue('limits', retry_base => '1 year', retry_cap => '1 year', retention => '100 years');
SELECT lease, retry_base, retry_cap, retention FROM pgjq.queues WHERE queue_name = 'limits';
-- the table says the same to a direct write by the owner (terse: the failing row holds a timestamp)
\set VERBOSITY terse
UPDATE pgjq.queues SET lease = '2 years' WHERE queue_name = 'limits';
UPDATE pgjq.queues SET retention = '1000 years' WHERE queue_name = 'limits';
\set VERBOSITY default

-- retry_in: the same bounds; and the backoff saturates at retry_cap whatever the attempt.
SELECT pgjq.alter_queue('limits', max_attempts => 1000);
SELECT pgjq.enqueue('t', '{}', 'limits') AS job \gset
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 1, 'limits');
SELECT pgjq.fail(:job, 'w', 'too far', '3560000 years');
SELECT pgjq.fail(:job, 'w', 'too far', '1 year 1 day');
UPDATE pgjq.live_jobs SET attempts = 999 WHERE id = :job;
SELECT pgjq.fail(:job, 'w', 'attempt 999');
SELECT status, run_at > now() AND run_at <= now() + interval '1 year' AS within_cap FROM pgjq.jobs WHERE id = :job;

-- A failure's message is capped at 8192 bytes: a longer one is cut (on a character boundary) and marked.
UPDATE pgjq.live_jobs SET run_at = now() WHERE id = :job;
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 1, 'limits');
SELECT pgjq.fail(:job, 'w', repeat('é', 50000), '0');
SELECT octet_length(last_error) <= 8192 AS capped, last_error LIKE 'éé%' AS kept_the_start,
       right(last_error, 40) AS ending FROM pgjq.jobs WHERE id = :job;

-- enqueue_batch: at most 10000 payloads, and at most pgjq.max_batch_bytes (64 MB) of them.
SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 10001) g), 'limits');
SET pgjq.max_batch_bytes = '10kB';
SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(repeat('x', 100)) FROM generate_series(1, 200) g), 'limits');
SELECT array_length(pgjq.enqueue_batch('t', (SELECT jsonb_agg(repeat('x', 10)) FROM generate_series(1, 200) g),
                                      'limits'), 1) AS under_the_limit;
RESET pgjq.max_batch_bytes;
SELECT count(*) AS nothing_half_written FROM pgjq.jobs WHERE queue_name = 'limits' AND job_type = 't' AND payload::text LIKE '"xxxxxxxxxxxxx%';
SELECT pgjq.enqueue_batch('t', '[{}]', 'limits', run_at => 'infinity');

-- retry of a job whose unique_key another unfinished job holds now: PJ004, naming the holder.
SELECT pgjq.enqueue('u', '{}', 'limits', unique_key => 'report') AS first \gset
SELECT pgjq.cancel(:first);
SELECT pgjq.enqueue('u', '{}', 'limits', unique_key => 'report') AS second \gset
SELECT pgjq.retry(:first);
SELECT status FROM pgjq.jobs WHERE id = :first;

SELECT pgjq.drop_queue('limits', force => true);
