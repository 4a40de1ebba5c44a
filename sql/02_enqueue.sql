-- Producers: enqueue, try_enqueue, enqueue_batch, INSERT INTO pgjq.jobs, transactional enqueue.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 2000) AS id_base;
SELECT pgjq.create_queue('enq');

SELECT pgjq.enqueue('email', '{"to": "alice@example.com"}', 'enq') AS first_id \gset
SELECT id = :first_id AS same_id, queue_name, job_type, priority, status, payload, attempts, max_attempts,
       run_at = created_at AS due_now, worker_id IS NULL AS unclaimed
  FROM pgjq.jobs WHERE id = :first_id;

-- every argument given, by name
SELECT pgjq.enqueue(job_type => 'report', payload => '{"month": 11}', queue_name => 'enq', priority => 7,
                    run_at => now() + interval '1 hour', max_attempts => 9, unique_key => 'report-11') AS report_id \gset
SELECT job_type, priority, max_attempts, unique_key, run_at > now() AS scheduled
  FROM pgjq.jobs WHERE id = :report_id;

-- defaults: payload {}, queue default, priority 100, the queue's max_attempts
SELECT pgjq.enqueue('noop') AS noop_id \gset
SELECT queue_name, payload, priority, max_attempts FROM pgjq.jobs WHERE id = :noop_id;
SELECT pgjq.cancel(:noop_id);

-- a unique_key held by an unfinished job returns that job instead of a new one
SELECT pgjq.enqueue('report', '{"month": 11}', 'enq', unique_key => 'report-11') = :report_id AS deduplicated;
SELECT count(*) FROM pgjq.jobs WHERE unique_key = 'report-11';
-- ... and once that job has finished, the key is free again
SELECT pgjq.cancel(:report_id);
SELECT pgjq.enqueue('report', '{"month": 11}', 'enq', unique_key => 'report-11') <> :report_id AS new_job;
-- unique keys are per queue
SELECT pgjq.enqueue('report', '{}', 'default', unique_key => 'report-11') IS NOT NULL AS other_queue;

-- batches: ids in payload order, all or nothing
SELECT pgjq.enqueue_batch('email', '[{"to": "a"}, {"to": "b"}, {"to": "c"}]', 'enq') AS batch_ids \gset
SELECT array_length(:'batch_ids'::bigint[], 1) AS batch_length;
SELECT j.payload->>'to' AS recipient FROM unnest(:'batch_ids'::bigint[]) WITH ORDINALITY AS b(id, n)
  JOIN pgjq.jobs j ON j.id = b.id ORDER BY b.n;
SELECT pgjq.enqueue_batch('email', '[]', 'enq') AS empty_batch;
SELECT pgjq.enqueue_batch('email', '[1, "two", null, [3]]', 'enq') IS NOT NULL AS scalar_payloads;

-- transactional: a rolled-back enqueue leaves nothing behind
SELECT count(*) AS jobs_before FROM pgjq.jobs WHERE queue_name = 'enq' \gset
BEGIN;
SELECT pgjq.enqueue('email', '{}', 'enq') IS NOT NULL AS enqueued_in_tx;
SELECT pgjq.enqueue_batch('email', '[{}, {}]', 'enq') IS NOT NULL AS batch_in_tx;
ROLLBACK;
SELECT count(*) = :jobs_before AS nothing_left FROM pgjq.jobs WHERE queue_name = 'enq';
SELECT sum(unfinished) = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'enq') AS depth_matches
  FROM pgjq.queue_depth WHERE queue_name = 'enq';

-- INSERT INTO pgjq.jobs takes the enqueue path
INSERT INTO pgjq.jobs (job_type, payload, queue_name) VALUES ('via_view', '{"v": 1}', 'enq')
  RETURNING id IS NOT NULL AS has_id, status;
SELECT job_type, status, priority, max_attempts FROM pgjq.jobs WHERE job_type = 'via_view';
INSERT INTO pgjq.jobs (job_type) VALUES (NULL);
INSERT INTO pgjq.jobs (job_type, queue_name) VALUES ('x', 'missing');
INSERT INTO pgjq.jobs (job_type, priority) VALUES ('x', -1);
-- the same rules as enqueue's, every one of them
INSERT INTO pgjq.jobs (job_type, run_at) VALUES ('x', '-infinity');
INSERT INTO pgjq.jobs (job_type, run_at) VALUES ('x', 'infinity');
INSERT INTO pgjq.jobs (job_type, max_attempts) VALUES ('x', 1001);
INSERT INTO pgjq.jobs (job_type, unique_key) VALUES ('x', '');
INSERT INTO pgjq.jobs (job_type, queue_name) VALUES ('x', 'Bad Name');
INSERT INTO pgjq.jobs (job_type) VALUES (repeat('x', 201));
-- columns pgjq sets itself are refused, not silently ignored (their values would come back in RETURNING)
INSERT INTO pgjq.jobs (job_type, attempts) VALUES ('x', 5);
INSERT INTO pgjq.jobs (job_type, enqueued_by) VALUES ('x', 'pg_monitor');
INSERT INTO pgjq.jobs (job_type, status) VALUES ('x', 'completed');
INSERT INTO pgjq.jobs (id, job_type) VALUES (1, 'x');
SELECT count(*) AS none_inserted FROM pgjq.jobs WHERE job_type = 'x';
SELECT count(*) AS stats_still_readable FROM pgjq.queue_stats;
-- RETURNING shows the job as it was stored: the defaults the enqueue applied, and for a unique_key that an
-- unfinished job holds, that job (not the caller's values with its id)
INSERT INTO pgjq.jobs (job_type, queue_name, unique_key) VALUES ('returned', 'enq', 'r1')
  RETURNING id AS returned_id, queue_name, priority, payload, max_attempts, run_at = now() AS run_now,
            enqueued_by = current_user::regrole AS by_me \gset
SELECT :'queue_name', :priority, :'payload', :max_attempts, :'run_now', :'by_me';
INSERT INTO pgjq.jobs (job_type, payload, queue_name, priority, unique_key) VALUES ('other', '{"new": 1}', 'enq', 7, 'r1')
  RETURNING id = :returned_id AS the_holder, job_type, payload, priority;

-- backpressure: max_pending counts unfinished (pending, claimed, running) jobs
SELECT pgjq.create_queue('bounded', max_pending => 3);
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'bounded') IS NOT NULL AS two_in;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'bounded');  -- does not fit: none enqueued
SELECT count(*) AS bounded_jobs FROM pgjq.jobs WHERE queue_name = 'bounded';
SELECT pgjq.try_enqueue('t', '{}', 'bounded') IS NOT NULL AS third_in;
SELECT pgjq.try_enqueue('t', '{}', 'bounded') IS NULL AS full_returns_null;
SELECT pgjq.enqueue('t', '{}', 'bounded');
\set VERBOSITY sqlstate
SELECT pgjq.enqueue('t', '{}', 'bounded');
\set VERBOSITY default
-- finishing a job makes room
SELECT id AS bounded_job FROM pgjq.jobs WHERE queue_name = 'bounded' ORDER BY id LIMIT 1 \gset
SELECT pgjq.cancel(:bounded_job);
SELECT pgjq.try_enqueue('t', '{}', 'bounded') IS NOT NULL AS room_again;
-- a unique_key already held returns its job even when the queue is full
SELECT pgjq.alter_queue('bounded', max_pending => 10);
SELECT pgjq.enqueue('t', '{}', 'bounded', unique_key => 'k1') AS k1 \gset
SELECT pgjq.alter_queue('bounded', max_pending => 1);
SELECT pgjq.enqueue('t', '{}', 'bounded', unique_key => 'k1') = :k1 AS held_key_returned;
SELECT pgjq.alter_queue('bounded', clear_max_pending => true);
SELECT pgjq.enqueue('t', '{}', 'bounded') IS NOT NULL AS unbounded_again;

-- fifo queues keep strict order, so a priority other than the default is refused
SELECT pgjq.create_queue('strict', fifo => true);
SELECT pgjq.enqueue('t', '{}', 'strict', priority => 5);
SELECT pgjq.enqueue('t', '{}', 'strict', priority => 100) IS NOT NULL AS default_priority_ok;

-- bad input: nothing is written
SELECT count(*) AS jobs_before FROM pgjq.jobs \gset
SELECT pgjq.enqueue(NULL);
SELECT pgjq.enqueue('');
SELECT pgjq.enqueue(repeat('x', 201));
SELECT pgjq.enqueue('t', NULL);
SELECT pgjq.enqueue('t', '{}', NULL);
SELECT pgjq.enqueue('t', '{}', 'missing');
SELECT pgjq.enqueue('t', '{}', 'Bad Queue');
SELECT pgjq.enqueue('t', '{}', 'enq', -1);
SELECT pgjq.enqueue('t', '{}', 'enq', 32768);
SELECT pgjq.enqueue('t', '{}', 'enq', NULL);
SELECT pgjq.enqueue('t', '{}', 'enq', 100, 'infinity');
SELECT pgjq.enqueue('t', '{}', 'enq', 100, NULL, 0);
SELECT pgjq.enqueue('t', '{}', 'enq', 100, NULL, 1001);
SELECT pgjq.enqueue('t', '{}', 'enq', 100, NULL, NULL, '');
SELECT pgjq.try_enqueue(NULL);
SELECT pgjq.try_enqueue('t', '{}', 'missing');
SELECT pgjq.enqueue_batch(NULL, '[{}]');
SELECT pgjq.enqueue_batch('t', NULL);
SELECT pgjq.enqueue_batch('t', '{"not": "an array"}');
SELECT pgjq.enqueue_batch('t', '"scalar"');
SELECT pgjq.enqueue_batch('t', '[{}]', 'missing');
SELECT pgjq.enqueue_batch('t', '[{}]', 'enq', 99999);
SELECT pgjq.enqueue_batch('t', '[{}]', 'enq', 100, NULL, 0);
-- payloads over pgjq.max_payload_bytes
SET pgjq.max_payload_bytes = 64;
SELECT pgjq.enqueue('t', jsonb_build_object('blob', repeat('x', 100)), 'enq');
SELECT pgjq.enqueue_batch('t', jsonb_build_array('{}'::jsonb, jsonb_build_object('blob', repeat('x', 100))), 'enq');
SELECT pgjq.enqueue_batch('t', jsonb_build_array(repeat('x', 100)), 'enq');
SELECT count(*) - :jobs_before AS jobs_added_by_bad_input FROM pgjq.jobs;
SELECT pgjq.enqueue('t', '{"small": true}', 'enq') IS NOT NULL AS small_fits;
RESET pgjq.max_payload_bytes;
