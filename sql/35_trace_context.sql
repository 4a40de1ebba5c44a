-- 35_trace_context: a job's headers (a W3C traceparent and tracestate, or other strings) are stored at
-- enqueue by every producer path, returned by every claim (leased through the table access method and by the
-- statement, FIFO, in a transaction), kept in the history by completion and final failure (both paths),
-- carried back by a retry; a job without them has NULL. Malformed headers are refused with 22023 naming what
-- is wrong, and nothing is written.
\set VERBOSITY default
SELECT pgjq.create_queue('traced');
SELECT pgjq.create_queue('traced_fifo', fifo => true);
\set tp '\'{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "rojo=00f067aa0ba902b7"}\''

-- Every producer path.
SELECT pgjq.enqueue('plain', '{"n": 1}', 'traced', headers => :tp) > 0 AS enqueued;
SELECT pgjq.enqueue('plain', '{"n": 2}', 'traced') > 0 AS enqueued;                  -- no headers
SELECT pgjq.enqueue('keyed', '{"n": 3}', 'traced', unique_key => 'k3', headers => '{"x-request-id": "r3"}') > 0 AS enqueued;
SELECT pgjq.enqueue('grouped', '{"n": 4}', 'traced', group_key => 'g', max_attempts => 1, headers => '{"x-request-id": "r4"}') > 0 AS enqueued;
SELECT pgjq.try_enqueue('tried', '{"n": 5}', 'traced', headers => '{"x-request-id": "r5"}') > 0 AS enqueued;
SELECT cardinality(pgjq.enqueue_batch('batch', '[{"n": 6}, {"n": 7}]', 'traced', headers => '{"x-request-id": "b"}')) AS batch;
SELECT cardinality(pgjq.enqueue_batch('batch', '[{"n": 8}]', 'traced', depends_on => ARRAY[pgjq.enqueue('parent', '{"n": 0}', 'traced_fifo')],
                                      headers => '{"x-request-id": "w"}')) AS waiting_batch;
INSERT INTO pgjq.jobs (job_type, payload, queue_name, headers) VALUES ('inserted', '{"n": 9}', 'traced', '{"x-request-id": "r9"}')
    RETURNING job_type, headers;
SELECT payload->>'n' AS n, job_type, status, headers FROM pgjq.jobs WHERE queue_name = 'traced' ORDER BY id;

-- Claims hand the headers to the worker: through the table access method, by the statement, in a transaction.
SELECT job_type, headers FROM pgjq.claim_job_batch('w1', ARRAY['plain'], 10, 'traced') ORDER BY id;
SET pgjq.direct_claims = off;
SELECT job_type, headers FROM pgjq.claim_job_batch('w1', ARRAY['keyed', 'grouped'], 10, 'traced') ORDER BY id;
RESET pgjq.direct_claims;
BEGIN;
SELECT job_type, headers FROM pgjq.claim_in_transaction('w2', ARRAY['tried'], 10, 'traced');
SELECT pgjq.complete_in_transaction(array_agg(id), 'w2') FROM pgjq.live_jobs WHERE job_type = 'tried';
COMMIT;
SELECT job_type, headers, attempts FROM pgjq.complete_and_claim('w3', NULL, ARRAY['batch', 'inserted'], 10, 'traced') ORDER BY id;

-- FIFO: leased, and in a transaction (whose last, internal column the headers come before).
SELECT pgjq.enqueue('fifo', '{}', 'traced_fifo', headers => :tp) > 0 AS enqueued;
SELECT job_type, headers IS NULL AS no_headers FROM pgjq.claim_job_batch('wf', NULL, 1, 'traced_fifo');
SELECT pgjq.complete_batch(array_agg(id), 'wf') FROM pgjq.live_jobs WHERE queue_name = 'traced_fifo' AND status <> 'pending';
BEGIN;
SELECT job_type, headers->>'traceparent' AS traceparent FROM pgjq.claim_in_transaction('wf', NULL, 1, 'traced_fifo');
ROLLBACK;
SELECT job_type, headers->>'traceparent' AS traceparent FROM pgjq.claim_job_batch('wf', NULL, 1, 'traced_fifo');

-- The history keeps them: completion through the table access method and by the statement, a final failure.
SELECT pgjq.complete_batch(array_agg(id), 'w1') FROM pgjq.live_jobs WHERE job_type = 'plain' AND status <> 'pending';
SET pgjq.direct_completions = off;
SELECT pgjq.complete_batch(array_agg(id), 'w1') FROM pgjq.live_jobs WHERE job_type = 'keyed';
RESET pgjq.direct_completions;
SELECT pgjq.fail(id, 'w1', 'boom') FROM pgjq.live_jobs WHERE job_type = 'grouped';
SELECT job_type, status, headers FROM pgjq.finished_jobs WHERE queue_name IN ('traced', 'traced_fifo') ORDER BY id;
-- A retry carries them back.
SELECT pgjq.retry(id) FROM pgjq.finished_jobs WHERE job_type = 'grouped';
SELECT job_type, status, headers FROM pgjq.live_jobs WHERE job_type = 'grouped';

-- Bad input: refused with 22023, naming what is wrong, and nothing written.
SELECT count(*) AS jobs_before FROM pgjq.jobs \gset
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '"text"');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"sampled": true}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"": "x"}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => (SELECT jsonb_object_agg('h' || i, 'v') FROM generate_series(1, 33) i));
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => jsonb_build_object('tracestate', repeat('x', 5000)));
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736"}');
SELECT pgjq.enqueue_batch('bad', '[{}, {}]', 'traced', headers => '{"n": 1}');
INSERT INTO pgjq.jobs (job_type, queue_name, headers) VALUES ('bad', 'traced', '[]');
\set VERBOSITY sqlstate
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '[]');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"sampled": true}');
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => jsonb_build_object('tracestate', repeat('x', 5000)));
SELECT pgjq.enqueue('bad', '{}', 'traced', headers => '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736"}');
\set VERBOSITY default
SELECT count(*) = :jobs_before AS nothing_written FROM pgjq.jobs;
-- The bounds themselves are accepted: 32 members, a later version's traceparent with a field more.
SELECT pgjq.enqueue('bounds', '{}', 'traced', headers => (SELECT jsonb_object_agg('h' || i, 'v') FROM generate_series(1, 32) i)) > 0 AS enqueued;
SELECT pgjq.enqueue('bounds', '{}', 'traced', headers => '{"traceparent": "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-ab"}') > 0 AS enqueued;
