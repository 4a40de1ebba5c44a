-- Statistics from counters (pgjq.queue_metrics, the totals of pgjq.queue_stats): what finished is counted
-- by the statements that finish jobs, in every path, so reading it never counts the history.
SELECT setval('pgjq.job_id_seq', 23000) AS id_base;
SELECT pgjq.create_queue('metrics', max_attempts => 1);
SELECT array_length(pgjq.enqueue_batch('t', '[1, 2, 3, 4, 5, 6]', 'metrics'), 1) AS enqueued;
SELECT array_agg(id ORDER BY id) AS ids FROM pgjq.claim_job_batch('wm', NULL, 3, 'metrics') \gset
SELECT pgjq.complete((:'ids'::bigint[])[1], 'wm');
SELECT pgjq.complete_batch(ARRAY[(:'ids'::bigint[])[2]], 'wm') AS completed;
SELECT pgjq.fail((:'ids'::bigint[])[3], 'wm', 'dead') AS failed;
SELECT pgjq.cancel(id) FROM pgjq.jobs WHERE queue_name = 'metrics' AND status = 'pending' ORDER BY id LIMIT 1;
-- 2 completed, 1 failed, 1 cancelled, 2 unfinished; one worker holds nothing now
SELECT unfinished, completed, failed, cancelled, workers, next_job_age >= interval '0' AS has_next_job
  FROM pgjq.queue_metrics WHERE queue_name = 'metrics';
SELECT completed, failed, cancelled FROM pgjq.queue_stats WHERE queue_name = 'metrics';
-- workers holding jobs now: distinct worker ids
SELECT pgjq.enqueue('t', '{}', 'metrics') IS NOT NULL AS one_more;
SELECT count(*) AS held FROM pgjq.claim_job_batch('wm2', NULL, 1, 'metrics');
SELECT workers FROM pgjq.queue_metrics WHERE queue_name = 'metrics';
SELECT pgjq.fail(id, 'wm2', 'dead') AS failed FROM pgjq.jobs WHERE worker_id = 'wm2' AND status = 'claimed';

-- Totals count since the queue was created: deleting history does not lower them.
SELECT pgjq.delete_jobs('metrics', max_jobs => 100) AS deleted;
SELECT completed, failed, cancelled FROM pgjq.queue_metrics WHERE queue_name = 'metrics';

-- Several reports in one transaction (the counters' changes go to the transaction's ledger), one of them
-- rolled back with its savepoint: only what committed counts.
SELECT array_agg(id ORDER BY id) AS ids FROM pgjq.claim_job_batch('wm', NULL, 2, 'metrics') \gset
BEGIN;
SELECT pgjq.enqueue('t', '{}', 'metrics') IS NOT NULL AS enqueued_first;
SELECT pgjq.complete((:'ids'::bigint[])[1], 'wm');
SAVEPOINT undo;
SELECT pgjq.complete((:'ids'::bigint[])[2], 'wm');
ROLLBACK TO SAVEPOINT undo;
COMMIT;
SELECT unfinished, completed FROM pgjq.queue_metrics WHERE queue_name = 'metrics';
BEGIN;
SELECT pgjq.complete((:'ids'::bigint[])[2], 'wm');
ROLLBACK;
SELECT completed FROM pgjq.queue_metrics WHERE queue_name = 'metrics';
SELECT pgjq.complete((:'ids'::bigint[])[2], 'wm');
SELECT completed FROM pgjq.queue_metrics WHERE queue_name = 'metrics';

-- A queue that keeps no completed jobs still counts them, reported in the claiming transaction too.
SELECT pgjq.create_queue('metrics_lean');
SELECT pgjq.alter_queue('metrics_lean', keep_completed => false);
SELECT array_length(pgjq.enqueue_batch('t', '[1, 2]', 'metrics_lean'), 1) AS enqueued;
BEGIN;
SELECT count(*) AS held FROM pgjq.claim_in_transaction('wl', NULL, 2, 'metrics_lean');
SELECT pgjq.complete_in_transaction(ARRAY(SELECT id FROM pgjq.jobs WHERE queue_name = 'metrics_lean'), 'wl');
COMMIT;
SELECT unfinished, completed, (SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'metrics_lean') AS history
  FROM pgjq.queue_metrics WHERE queue_name = 'metrics_lean';

-- A failed job retried and finished again counts as a second finish; the totals never go down.
SELECT pgjq.fail(id, 'wm', 'dead again') AS failed FROM pgjq.claim_job_batch('wm', NULL, 1, 'metrics');
SELECT pgjq.retry_failed('metrics') AS retried;
SELECT pgjq.cancel_jobs('metrics') AS cancelled;
SELECT unfinished, completed, failed, cancelled FROM pgjq.queue_metrics WHERE queue_name = 'metrics';

-- Reading the statistics never touches the history (their cost does not grow with it).
CREATE FUNCTION pg_temp.plan_of(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || query;
END $$;
SELECT q.query, bool_or(line ~ 'finished_jobs') AS reads_history
  FROM (VALUES ('SELECT * FROM pgjq.queue_metrics'), ('SELECT * FROM pgjq.queue_stats')) q(query),
       pg_temp.plan_of(q.query) line
 GROUP BY q.query ORDER BY q.query;

-- The same in the Prometheus text format: each family's HELP and TYPE, then its samples (promtool checks
-- the whole text in tests/t/023_prometheus_metrics.pl).
SELECT line FROM regexp_split_to_table(pgjq.metrics(), E'\n') WITH ORDINALITY AS t(line, n)
 WHERE line ~ '^# (HELP|TYPE) pgjq_(jobs|jobs_finished_total) ' OR line ~ 'queue="metrics"' ORDER BY n;
SELECT right(pgjq.metrics(), 1) = E'\n' AS ends_with_a_line_feed;

SELECT pgjq.drop_queue('metrics', force => true), pgjq.drop_queue('metrics_lean', force => true);
