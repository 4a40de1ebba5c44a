-- Completions, final failures and cancellations move their jobs through the table access method
-- (core/direct_archive.hpp): each job is deleted from live_jobs and its history row inserted into
-- finished_jobs without a statement, and its pgjq_job_finished notice is sent without the table's trigger
-- being called (the trigger only sends that notice; the notices themselves are asserted by the isolation
-- spec notifications, which runs on this path). The history rows are the statement's
-- (pgjq.direct_completions = off runs the statement). Where the tables have something the statement would
-- apply and the direct path would not (a trigger of the owner's, a transaction that is not READ
-- COMMITTED), the statement runs.
SET track_functions = 'all';
SELECT setval('pgjq.job_id_seq', 290000) AS id_base;
CREATE FUNCTION public.finished_trigger_calls() RETURNS bigint LANGUAGE sql
    AS $$ SELECT coalesce(pg_catalog.pg_stat_get_xact_function_calls('pgjq.notify_job_finished'::regproc), 0) $$;

-- Two queues with the same jobs; a job with a group key, a job with a timeout of its own.
SELECT pgjq.create_queue(q, lease => '10 minutes', max_attempts => 1) FROM unnest(ARRAY['direct_q', 'statement_q']) q;
SELECT count(pgjq.enqueue('type' || (g % 2), jsonb_build_object('n', g), q,
                          group_key => CASE WHEN g = 3 THEN 'g' END,
                          timeout => CASE WHEN g = 4 THEN interval '1 hour' END))
  FROM unnest(ARRAY['direct_q', 'statement_q']) q, generate_series(1, 6) g;
SELECT count(*) AS claimed FROM unnest(ARRAY['direct_q', 'statement_q']) q, LATERAL pgjq.claim_job_batch('w1', NULL, 5, q) c;

-- Each path: a batch of three, one completion with a result, one final failure, a cancel of the job never
-- claimed. (The function statistics count calls not yet reported, across transactions: a delta is read.)
CREATE FUNCTION public.finish_jobs(queue text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE ids bigint[];
        calls_before bigint := public.finished_trigger_calls();
BEGIN
    SELECT array_agg(id ORDER BY (payload->>'n')::int) INTO ids FROM pgjq.jobs WHERE queue_name = queue;
    PERFORM pgjq.complete_batch(ids[1:3], 'w1');
    PERFORM pgjq.complete(ids[4], 'w1', '{"ok": true}');
    PERFORM pgjq.fail(ids[5], 'w1', 'broke');
    PERFORM pgjq.cancel(ids[6]);
    RETURN public.finished_trigger_calls() - calls_before;
END $$;

BEGIN;
SELECT public.finish_jobs('direct_q') AS trigger_calls_on_the_direct_path;
COMMIT;
BEGIN;
SET LOCAL pgjq.direct_completions = off;
SELECT public.finish_jobs('statement_q') AS trigger_calls_by_the_statement;
COMMIT;
-- Both paths wrote the same history: every column but the ids and times, and the times as the statement
-- sets them.
CREATE VIEW public.history AS
SELECT queue_name, (payload->>'n')::int AS n, job_type, priority, status, payload, result, unique_key, progress,
       current_stage, events_count, worker_id, attempts, max_attempts, last_error, enqueued_by, claimed_by,
       group_key, depends_on, timeout,
       claimed_at IS NOT NULL AS was_claimed, heartbeat_at IS NOT NULL AS beat, lease_expires_at IS NOT NULL AS leased,
       started_at IS NOT DISTINCT FROM claimed_at AS started_when_claimed,
       completed_at IS NOT DISTINCT FROM CASE WHEN status = 'completed' THEN finished_at END AS completed_at_right,
       failed_at IS NOT DISTINCT FROM CASE WHEN status = 'failed' THEN finished_at END AS failed_at_right,
       cancelled_at IS NOT DISTINCT FROM CASE WHEN status = 'cancelled' THEN finished_at END AS cancelled_at_right,
       finished_at >= created_at AS finished_after_created, run_at = created_at AS due_when_created
  FROM pgjq.finished_jobs;
SELECT n, status, result, progress, worker_id, attempts, last_error, group_key, timeout, was_claimed,
       completed_at_right, failed_at_right, cancelled_at_right
  FROM public.history WHERE queue_name = 'direct_q' ORDER BY n;
SELECT count(*) AS rows_that_differ
  FROM ((SELECT to_jsonb(h) - 'queue_name' FROM public.history h WHERE queue_name = 'direct_q'
         EXCEPT ALL SELECT to_jsonb(h) - 'queue_name' FROM public.history h WHERE queue_name = 'statement_q')
        UNION ALL
        (SELECT to_jsonb(h) - 'queue_name' FROM public.history h WHERE queue_name = 'statement_q'
         EXCEPT ALL SELECT to_jsonb(h) - 'queue_name' FROM public.history h WHERE queue_name = 'direct_q')) x;
-- Nothing is left live, and the counters agree.
SELECT queue_name, unfinished, completed, failed, cancelled
  FROM pgjq.queue_metrics WHERE queue_name IN ('direct_q', 'statement_q') ORDER BY 1;

-- A job not held by the caller moves on neither path, and the batch is all or nothing.
SELECT pgjq.enqueue('t', '{}', 'direct_q') AS j1, pgjq.enqueue('t', '{}', 'direct_q') AS j2 \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
\set VERBOSITY terse
SELECT pgjq.complete_batch(ARRAY[:j1, :j2], 'w1');
SELECT pgjq.complete(:j1, 'w2');
\set VERBOSITY default
SELECT count(*) AS still_live FROM pgjq.live_jobs WHERE id IN (:j1, :j2);
SELECT pgjq.complete_batch(ARRAY[:j1, :j1], 'w1') AS duplicates_count_once;
SELECT status FROM pgjq.finished_jobs WHERE id = :j1;

-- A queue that keeps no completed jobs: no history row, the counters right.
SELECT pgjq.alter_queue('direct_q', keep_completed => false);
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
SELECT pgjq.complete(:j2, 'w1');
SELECT count(*) AS history_rows FROM pgjq.finished_jobs WHERE id = :j2;
SELECT unfinished, completed FROM pgjq.queue_metrics WHERE queue_name = 'direct_q';
SELECT pgjq.alter_queue('direct_q', keep_completed => true);

-- A trigger of the owner's on finished_jobs makes the statement run, and sees the rows; dropped, the
-- direct path is back.
CREATE TABLE public.seen (id bigint, status pgjq.job_status);
CREATE FUNCTION public.note_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO public.seen VALUES (NEW.id, NEW.status); RETURN NEW; END $$;
CREATE TRIGGER noted AFTER INSERT ON pgjq.finished_jobs FOR EACH ROW EXECUTE FUNCTION public.note_finished();
SELECT pgjq.enqueue('t', '{}', 'direct_q') AS j3 \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
BEGIN;
SELECT public.finished_trigger_calls() AS calls_before \gset
SELECT pgjq.complete(:j3, 'w1');
SELECT public.finished_trigger_calls() - :calls_before AS trigger_calls_with_a_trigger_of_the_owner;
COMMIT;
SELECT status FROM public.seen WHERE id = :j3;
DROP TRIGGER noted ON pgjq.finished_jobs;
SELECT pgjq.enqueue('t', '{}', 'direct_q') AS j4 \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
BEGIN;
SELECT public.finished_trigger_calls() AS calls_before \gset
SELECT pgjq.complete(:j4, 'w1');
SELECT public.finished_trigger_calls() - :calls_before AS trigger_calls_once_dropped;
COMMIT;

-- REPEATABLE READ runs the statement (whose DELETE raises a serialization failure where the job changed).
SELECT pgjq.enqueue('t', '{}', 'direct_q') AS j5 \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT public.finished_trigger_calls() AS calls_before \gset
SELECT pgjq.complete(:j5, 'w1');
SELECT public.finished_trigger_calls() - :calls_before AS trigger_calls_in_repeatable_read;
COMMIT;
SELECT status FROM pgjq.finished_jobs WHERE id = :j5;

-- A CHECK constraint the owner added to finished_jobs applies, with the statement's error.
ALTER TABLE pgjq.finished_jobs ADD CONSTRAINT no_big_results CHECK (result IS NULL OR pg_column_size(result) < 100);
SELECT pgjq.enqueue('t', '{}', 'direct_q') AS j6 \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
\set VERBOSITY terse
SELECT pgjq.complete(:j6, 'w1', jsonb_build_object('big', repeat('x', 200)));
\set VERBOSITY default
SELECT status FROM pgjq.live_jobs WHERE id = :j6;
ALTER TABLE pgjq.finished_jobs DROP CONSTRAINT no_big_results;
SELECT pgjq.complete(:j6, 'w1', jsonb_build_object('big', repeat('x', 200)));
SELECT pg_column_size(result) > 100 AS big_result_kept FROM pgjq.finished_jobs WHERE id = :j6;

-- A completion finds the jobs this session claimed where its claim left them, without a descent of
-- live_jobs' primary key (pg_stat_get_xact_numscans counts the descents of this transaction). A job changed
-- since (a heartbeat writes a new version) is found through the key.
CREATE FUNCTION public.key_descents() RETURNS bigint LANGUAGE sql
    AS $$ SELECT pg_catalog.pg_stat_get_xact_numscans('pgjq.live_jobs_pkey'::regclass) $$;
SELECT count(pgjq.enqueue('t', jsonb_build_object('n', g), 'direct_q')) FROM generate_series(1, 4) g;
SELECT array_agg(id ORDER BY id) AS hinted FROM pgjq.claim_job_batch('w1', NULL, 4, 'direct_q') \gset
SELECT pgjq.heartbeat((:'hinted'::bigint[])[4], 'w1') IS NOT NULL AS heartbeat_sent;
BEGIN;
SELECT public.key_descents() AS scans_before \gset
SELECT pgjq.complete_batch((:'hinted'::bigint[])[1:3], 'w1') AS completed_where_claimed;
SELECT public.key_descents() - :scans_before AS key_descents_for_three;
SELECT pgjq.complete((:'hinted'::bigint[])[4], 'w1') AS completed_after_heartbeat;
SELECT public.key_descents() - :scans_before AS key_descents_with_the_changed_one;
COMMIT;
SELECT count(*) AS finished FROM pgjq.finished_jobs WHERE id = ANY (:'hinted'::bigint[]) AND status = 'completed';
-- Through the key too: jobs of a table rewritten since their claim (VACUUM FULL gives it another file), and
-- a job this transaction changed (its heartbeat's version is the one to delete).
SELECT count(pgjq.enqueue('t', jsonb_build_object('n', g), 'direct_q')) FROM generate_series(1, 3) g;
SELECT array_agg(id ORDER BY id) AS hinted FROM pgjq.claim_job_batch('w1', NULL, 2, 'direct_q') \gset
VACUUM FULL pgjq.live_jobs;
BEGIN;
SELECT public.key_descents() AS scans_before \gset
SELECT pgjq.complete_batch((:'hinted'::bigint[])[1:2], 'w1') AS completed_after_rewrite;
SELECT public.key_descents() - :scans_before AS key_descents_after_rewrite;
COMMIT;
SELECT array_agg(id) AS hinted_again FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q') \gset
BEGIN;
SELECT pgjq.heartbeat((:'hinted_again'::bigint[])[1], 'w1') IS NOT NULL AS heartbeat_in_this_transaction;
SELECT public.key_descents() AS scans_before \gset
SELECT pgjq.complete((:'hinted_again'::bigint[])[1], 'w1') AS completed_after_own_heartbeat;
SELECT public.key_descents() - :scans_before AS key_descents_after_own_heartbeat;
COMMIT;
SELECT count(*) AS finished FROM pgjq.finished_jobs
 WHERE id = ANY ((:'hinted'::bigint[])[1:2] || (:'hinted_again'::bigint[])) AND status = 'completed';

-- A batch's history rows go into finished_jobs as COPY writes rows: many to a page, one WAL record per page
-- instead of one per job.
SET client_min_messages = warning;  -- whether an earlier test created it or not
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
SELECT count(pgjq.enqueue('t', jsonb_build_object('n', g), 'direct_q')) FROM generate_series(1, 200) g;
SELECT array_agg(id ORDER BY id) AS claimed_ids FROM pgjq.claim_job_batch('w1', NULL, 200, 'direct_q') \gset
SELECT pg_current_wal_insert_lsn() AS wal_before \gset
BEGIN;  -- a commit that waits for its WAL flush (a worker call of its own would not), so that the WAL is there to read
SELECT pgjq.complete_batch(:'claimed_ids', 'w1') AS completed;
COMMIT;
SELECT count(*) FILTER (WHERE resource_manager = 'Heap' AND record_type LIKE 'INSERT%') AS row_inserts,
       count(*) FILTER (WHERE resource_manager = 'Heap2' AND record_type LIKE 'MULTI_INSERT%') BETWEEN 1 AND
       (SELECT count(DISTINCT (ctid::text::point)[0]) FROM pgjq.finished_jobs WHERE id = ANY (:'claimed_ids'))
       AS a_record_per_page
  FROM pg_get_wal_records_info(:'wal_before', pg_current_wal_flush_lsn())
 WHERE block_ref LIKE '%/' || pg_relation_filenode('pgjq.finished_jobs') || ' fork main %';
SELECT count(*) AS history_rows, count(*) FILTER (WHERE payload ? 'n' AND worker_id = 'w1') AS as_completed
  FROM pgjq.finished_jobs WHERE id = ANY (:'claimed_ids') AND status = 'completed';
SELECT count(*) AS btree_indexes_checked
  FROM pg_index i JOIN pg_class r ON r.oid = i.indexrelid JOIN pg_am am ON am.oid = r.relam AND am.amname = 'btree',
       LATERAL (SELECT bt_index_check(i.indexrelid, true)) c
 WHERE i.indrelid = 'pgjq.finished_jobs'::regclass;

SELECT pgjq.drop_queue(q, force => true) FROM unnest(ARRAY['direct_q', 'statement_q']) q;
DROP VIEW public.history;
DROP FUNCTION public.finish_jobs(text);
DROP FUNCTION public.finished_trigger_calls();
DROP FUNCTION public.key_descents();
DROP TABLE public.seen;
DROP FUNCTION public.note_finished();
RESET track_functions;
