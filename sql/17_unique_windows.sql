-- 17_unique_windows: uniqueness over a period. With unique_for, a unique_key stays taken for that long
-- after the enqueue that took it, whether or not its job has finished ("once per key per hour"); without,
-- it is held while its job is unfinished, as before. enqueue_batch takes one unique key per payload.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 17000) AS id_base;
SELECT pgjq.create_queue('uniq');
SELECT pgjq.enqueue('t', '{"n": 1}', 'uniq', unique_key => 'daily', unique_for => '1 hour') AS first \gset
SELECT pgjq.enqueue('t', '{"n": 2}', 'uniq', unique_key => 'daily', unique_for => '1 hour') = :first AS same_job;
-- finished, the key is still taken for the rest of the hour
SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 1, 'uniq');
SELECT pgjq.enqueue('t', '{"n": 3}', 'uniq', unique_key => 'daily', unique_for => '1 hour') = :first AS still_same;
SELECT pgjq.try_enqueue('t', '{"n": 4}', 'uniq', unique_key => 'daily', unique_for => '1 hour') = :first AS try_same;
SELECT count(*) AS jobs_with_key FROM pgjq.jobs WHERE unique_key = 'daily';
-- a key taken without a window is free once the job finished, as before
SELECT pgjq.enqueue('t', '{}', 'uniq', unique_key => 'plain') AS plain \gset
SELECT pgjq.cancel(:plain);
SELECT pgjq.enqueue('t', '{}', 'uniq', unique_key => 'plain') <> :plain AS new_job;
-- the window expires (moved into the past here rather than waited for): the next enqueue takes the key
UPDATE pgjq.unique_windows SET expires_at = now() - interval '1 second' WHERE unique_key = 'daily';
SELECT pgjq.enqueue('t', '{"n": 5}', 'uniq', unique_key => 'daily', unique_for => '1 hour') AS second \gset
SELECT :second <> :first AS new_job, job_id = :second AS window_moved, expires_at > now() AS running
  FROM pgjq.unique_windows WHERE unique_key = 'daily';
-- an unfinished job keeps its key after its window has passed
UPDATE pgjq.unique_windows SET expires_at = now() - interval '1 second' WHERE unique_key = 'daily';
SELECT pgjq.enqueue('t', '{"n": 6}', 'uniq', unique_key => 'daily', unique_for => '1 hour') = :second AS live_holder;
-- a rolled-back enqueue takes no key
BEGIN;
SELECT pgjq.enqueue('t', '{}', 'uniq', unique_key => 'rolled', unique_for => '1 day') IS NOT NULL AS enqueued;
ROLLBACK;
SELECT count(*) AS rolled_windows FROM pgjq.unique_windows WHERE unique_key = 'rolled';

-- enqueue_batch with unique_keys: a taken key (or one repeated in the batch) gives the holder's id
SELECT pgjq.enqueue_batch('t', '[{}, {}, {}, {}]', 'uniq', unique_keys => ARRAY['b1', 'plain', 'b1', NULL])
  AS batch \gset
SELECT (:'batch'::bigint[])[1] = (:'batch'::bigint[])[3] AS repeated_key_once,
       (:'batch'::bigint[])[2] = (SELECT id FROM pgjq.jobs WHERE unique_key = 'plain' AND status = 'pending') AS held_key,
       (SELECT count(DISTINCT x) FROM unnest(:'batch'::bigint[]) x) AS distinct_ids;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'uniq', unique_keys => ARRAY['w1', 'w2'], unique_for => '1 day') AS wb \gset
SELECT count(*) AS windows FROM pgjq.unique_windows WHERE unique_key IN ('w1', 'w2');
SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'uniq')
     = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'uniq') AS depth_matches;

-- bad input
SELECT pgjq.enqueue('t', '{}', 'uniq', unique_for => '1 hour');
SELECT pgjq.enqueue('t', '{}', 'uniq', unique_key => 'k', unique_for => '0');
SELECT pgjq.enqueue('t', '{}', 'uniq', unique_key => 'k', unique_for => '2 years');
SELECT pgjq.enqueue_batch('t', '[{}]', 'uniq', unique_keys => ARRAY['a', 'b']);
SELECT pgjq.enqueue_batch('t', '[{}]', 'uniq', unique_keys => ARRAY['']);
SELECT pgjq.enqueue_batch('t', '[{}]', 'uniq', unique_for => '1 hour');
