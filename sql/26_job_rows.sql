-- A single job, and a batch's jobs, are inserted into pgjq.live_jobs through the table access method
-- (tableam/row_insert.cpp; a batch several rows to a page in one write, as COPY writes them), with what the INSERT
-- statement applied: the columns' defaults, NOT NULL and CHECK constraints and every index's entry, including
-- those an owner adds; a table it cannot serve that way gets the statement.
SET client_min_messages = warning;  -- whether an earlier test created them or not
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
CREATE TEMP VIEW rows_q_jobs AS
SELECT count(*) AS jobs,
       count(*) FILTER (WHERE status = 'pending' AND attempts = 0 AND events_count = 0 AND created_at = now()
                          AND enqueued_by = current_user::regrole) AS as_enqueued,
       count(DISTINCT id) AS ids
  FROM pgjq.live_jobs WHERE queue_name = 'rows_q';
-- Every index of live_jobs holds exactly the entries its heap calls for (heapallindexed), partial ones
-- included.
CREATE TEMP VIEW live_indexes_checked AS
SELECT count(*) AS indexes_checked
  FROM pg_index i, LATERAL (SELECT bt_index_check(i.indexrelid, true)) c
 WHERE i.indrelid = 'pgjq.live_jobs'::regclass;
-- The heap records written for live_jobs since the LSN in pgjq_test.wal_before, by kind.
CREATE TEMP VIEW live_jobs_heap_records AS
SELECT count(*) FILTER (WHERE resource_manager = 'Heap' AND record_type LIKE 'INSERT%') AS row_inserts,
       count(*) FILTER (WHERE resource_manager = 'Heap2' AND record_type LIKE 'MULTI_INSERT%') AS multi_inserts
  FROM pg_get_wal_records_info(current_setting('pgjq_test.wal_before')::pg_lsn, pg_current_wal_flush_lsn())
 WHERE block_ref LIKE '%/' || pg_relation_filenode('pgjq.live_jobs') || ' fork main %';

SELECT pgjq.create_queue('rows_q', max_attempts => 7);
BEGIN;
SELECT count(pgjq.enqueue('t', jsonb_build_object('n', g), 'rows_q')) AS enqueued FROM generate_series(1, 50) g;
SELECT * FROM rows_q_jobs;
-- run_at took its default, the queue's max_attempts was applied, and the ids came from the sequence.
SELECT count(*) FILTER (WHERE run_at = now()) AS due_now, min(max_attempts) AS max_attempts,
       max(id) <= (SELECT last_value FROM pgjq.job_id_seq) AS ids_drawn
  FROM pgjq.live_jobs WHERE queue_name = 'rows_q';
-- A batch: the same, and its ids come back in payload order, each with its payload.
SELECT pgjq.enqueue_batch('t', '[{"a": 1}, {"b": 2}, "three"]', 'rows_q') AS ids \gset
SELECT * FROM rows_q_jobs;
SELECT o.i, j.payload, j.max_attempts, j.priority, j.timeout, j.run_at = now() AS due_now
  FROM unnest(:'ids'::bigint[]) WITH ORDINALITY AS o(id, i) JOIN pgjq.live_jobs j ON j.id = o.id ORDER BY o.i;
COMMIT;
-- A batch of 1000 jobs writes one heap record per page, not one per job, and leaves each page the room the
-- table's fill factor asks for.
SELECT set_config('pgjq_test.wal_before', pg_current_wal_insert_lsn()::text, false) IS NOT NULL AS wal_marked;
SELECT pgjq.enqueue_batch('big', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, 1000) g),
                          'rows_q') AS ids \gset
SELECT r.row_inserts, r.multi_inserts BETWEEN 1 AND p.pages AS a_record_per_page, p.pages > 1 AS several_pages,
       p.in_order
  FROM live_jobs_heap_records r,
       (SELECT count(DISTINCT (j.ctid::text::point)[0]) AS pages,
               bool_and((j.payload->>'n')::int = o.i) AND count(*) = 1000 AS in_order
          FROM unnest(:'ids'::bigint[]) WITH ORDINALITY AS o(id, i) JOIN pgjq.live_jobs j ON j.id = o.id) p;
SELECT min(h.upper - h.lower) >= 4000 AS half_left_free
  FROM (SELECT DISTINCT (ctid::text::point)[0]::int AS page FROM pgjq.live_jobs WHERE job_type = 'big') b,
       LATERAL page_header(get_raw_page('pgjq.live_jobs', b.page)) h;
SELECT pgjq.cancel_jobs('rows_q', job_type => 'big') AS cancelled;
-- A scheduled job (the partial index on run_at), a large payload (stored out of line), explicit arguments.
SELECT pgjq.enqueue('t', '{}', 'rows_q', run_at => now() + interval '1 hour') > 0 AS scheduled;
SELECT pgjq.enqueue('t', jsonb_build_object('blob', repeat(md5(g::text), 4000)), 'rows_q', 5, NULL, 2,
                    timeout => interval '3 minutes') > 0 AS large
  FROM generate_series(1, 2) g;
SELECT cardinality(pgjq.enqueue_batch('t', '[{}]', 'rows_q', run_at => now() + interval '1 hour')) AS scheduled;
SELECT cardinality(pgjq.enqueue_batch('t', (SELECT jsonb_agg(jsonb_build_object('blob', repeat(md5(g::text), 4000)))
                                              FROM generate_series(3, 4) g),
                                      'rows_q', 5, NULL, 2, timeout => interval '3 minutes')) AS large;
SELECT count(*) AS large_payloads, min(length(payload->>'blob')) AS blob_length, min(max_attempts) AS max_attempts,
       min(priority) AS priority, min(timeout) AS timeout
  FROM pgjq.live_jobs WHERE queue_name = 'rows_q' AND payload ? 'blob';
SELECT count(*) AS scheduled FROM pgjq.live_jobs WHERE queue_name = 'rows_q' AND run_at > created_at;
SELECT * FROM live_indexes_checked;
-- The jobs are claimable from the claim index, the scheduled ones are not due.
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', batch_size => 100, queue_name => 'rows_q');

-- A default changed by the owner is taken.
ALTER TABLE pgjq.live_jobs ALTER COLUMN events_count SET DEFAULT 5;
SELECT pgjq.enqueue('t', '{}', 'rows_q') AS new_id \gset
SELECT events_count FROM pgjq.live_jobs WHERE id = :new_id;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'rows_q') AS ids \gset
SELECT array_agg(events_count) AS events_counts FROM pgjq.live_jobs WHERE id = ANY (:'ids');
ALTER TABLE pgjq.live_jobs ALTER COLUMN events_count SET DEFAULT 0;
SELECT pgjq.enqueue('t', '{}', 'rows_q') AS new_id \gset
SELECT events_count FROM pgjq.live_jobs WHERE id = :new_id;

-- A CHECK constraint added by the owner is enforced; nothing of the refused job is left, not even its count.
ALTER TABLE pgjq.live_jobs ADD CONSTRAINT guarded_jobs_have_x CHECK (job_type <> 'guarded' OR payload ? 'x') NOT VALID;
SELECT sum(unfinished) AS counted_before FROM pgjq.queue_depth WHERE queue_name = 'rows_q' \gset
\set VERBOSITY terse
SELECT pgjq.enqueue('guarded', '{}', 'rows_q');
SELECT pgjq.enqueue_batch('guarded', '[{"x": 1}, {"x": 2}, {}, {"x": 4}]', 'rows_q');
\set VERBOSITY default
SELECT pgjq.enqueue('guarded', '{"x": 1}', 'rows_q') > 0 AS guarded_with_x;
SELECT cardinality(pgjq.enqueue_batch('guarded', '[{"x": 2}, {"x": 3}]', 'rows_q')) AS guarded_with_x;
SELECT count(*) AS guarded, (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'rows_q') - :counted_before
       AS counted_since
  FROM pgjq.live_jobs WHERE queue_name = 'rows_q' AND job_type = 'guarded';
ALTER TABLE pgjq.live_jobs DROP CONSTRAINT guarded_jobs_have_x;

-- An index added by the owner gets its entries (amcheck finds a heap row without one), partial or not.
CREATE INDEX live_jobs_by_type ON pgjq.live_jobs (job_type, priority);
CREATE INDEX live_jobs_urgent ON pgjq.live_jobs (id) WHERE priority > 50;
SELECT count(pgjq.enqueue('typed', '{}', 'rows_q', p)) AS enqueued FROM generate_series(1, 100) p;
SELECT cardinality(pgjq.enqueue_batch('typed', (SELECT jsonb_agg(g) FROM generate_series(1, 50) g), 'rows_q', p))
       AS enqueued
  FROM (VALUES (10), (90)) v(p);
SELECT * FROM live_indexes_checked;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS found_by_type FROM pgjq.live_jobs WHERE job_type = 'typed' AND priority >= 1;
SELECT count(*) AS found_urgent FROM pgjq.live_jobs WHERE priority > 50 AND id > 0 AND job_type = 'typed';
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP INDEX pgjq.live_jobs_by_type;
DROP INDEX pgjq.live_jobs_urgent;
-- A unique one refuses a second job of the same batch, with the statement's SQLSTATE.
CREATE UNIQUE INDEX live_jobs_one_solo ON pgjq.live_jobs (queue_name, job_type) WHERE job_type = 'solo';
\set VERBOSITY terse
SELECT pgjq.enqueue_batch('solo', '[{}, {}]', 'rows_q');
\set VERBOSITY default
SELECT cardinality(pgjq.enqueue_batch('solo', '[{}]', 'rows_q')) AS one_solo;
SELECT count(*) AS solos FROM pgjq.live_jobs WHERE job_type = 'solo';
DROP INDEX pgjq.live_jobs_one_solo;

-- NOT NULL set by the owner is enforced, with the statement's SQLSTATE.
BEGIN;
UPDATE pgjq.live_jobs SET current_stage = 'set';
ALTER TABLE pgjq.live_jobs ALTER COLUMN current_stage SET NOT NULL;
SAVEPOINT before_enqueues;
\set VERBOSITY terse
SELECT pgjq.enqueue('t', '{}', 'rows_q');
ROLLBACK TO SAVEPOINT before_enqueues;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'rows_q');
\set VERBOSITY default
ROLLBACK;

-- A column the owner adds with a domain type gets the statement's coercion of its NULL, which applies the
-- domain's NOT NULL (added to an emptied table, in a transaction rolled back).
BEGIN;
CREATE DOMAIN pg_temp.required_note AS text NOT NULL;
DELETE FROM pgjq.live_jobs;
ALTER TABLE pgjq.live_jobs ADD COLUMN note pg_temp.required_note;
SAVEPOINT before_enqueues;
\set VERBOSITY terse
SELECT pgjq.enqueue('t', '{}', 'rows_q');
ROLLBACK TO SAVEPOINT before_enqueues;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'rows_q');
\set VERBOSITY default
ROLLBACK;

-- An index of another access method than b-tree gets its entries from the statement.
CREATE INDEX live_jobs_payload ON pgjq.live_jobs USING gin (payload);
SELECT count(pgjq.enqueue('gin', jsonb_build_object('tag', 'found', 'n', g), 'rows_q')) AS enqueued
  FROM generate_series(1, 20) g;
ANALYZE pgjq.live_jobs;
SELECT count(pgjq.enqueue('gin', jsonb_build_object('tag', 'found', 'n', g), 'rows_q')) AS enqueued
  FROM generate_series(21, 40) g;
SELECT cardinality(pgjq.enqueue_batch('gin', (SELECT jsonb_agg(jsonb_build_object('tag', 'found', 'n', g))
                                                FROM generate_series(41, 60) g), 'rows_q')) AS enqueued;
SET enable_seqscan = off;
SELECT count(*) AS found_by_gin FROM pgjq.live_jobs WHERE payload @> '{"tag": "found"}';
RESET enable_seqscan;
DROP INDEX pgjq.live_jobs_payload;

-- A trigger on insert needs the statement, which fires it.
CREATE FUNCTION pg_temp.stage_new_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.current_stage := 'staged by trigger';
    RETURN NEW;
END
$$;
CREATE TRIGGER stage_new_job BEFORE INSERT ON pgjq.live_jobs FOR EACH ROW EXECUTE FUNCTION pg_temp.stage_new_job();
SELECT pgjq.enqueue('t', '{}', 'rows_q') AS new_id \gset
SELECT current_stage FROM pgjq.live_jobs WHERE id = :new_id;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'rows_q') AS ids \gset
SELECT array_agg(current_stage) AS stages FROM pgjq.live_jobs WHERE id = ANY (:'ids');
DROP TRIGGER stage_new_job ON pgjq.live_jobs;
SELECT pgjq.enqueue('t', '{}', 'rows_q') AS new_id \gset
SELECT current_stage FROM pgjq.live_jobs WHERE id = :new_id;
SELECT pgjq.enqueue_batch('t', '[{}, {}]', 'rows_q') AS ids \gset
SELECT array_agg(current_stage) AS stages FROM pgjq.live_jobs WHERE id = ANY (:'ids');

-- The insert and the rows it leaves roll back with a savepoint.
BEGIN;
SAVEPOINT s;
SELECT pgjq.enqueue('t', '{"gone": true}', 'rows_q') > 0 AS enqueued;
SELECT cardinality(pgjq.enqueue_batch('t', '[{"gone": true}, {"gone": true}]', 'rows_q')) AS enqueued;
ROLLBACK TO SAVEPOINT s;
SELECT pgjq.enqueue('t', '{"kept": true}', 'rows_q') > 0 AS enqueued;
SELECT cardinality(pgjq.enqueue_batch('t', '[{"kept": true}, {"kept": true}]', 'rows_q')) AS enqueued;
COMMIT;
SELECT count(*) FILTER (WHERE payload ? 'gone') AS gone, count(*) FILTER (WHERE payload ? 'kept') AS kept
  FROM pgjq.live_jobs WHERE queue_name = 'rows_q';
SELECT * FROM live_indexes_checked;
-- Every unfinished job is counted once.
SELECT (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'rows_q') =
       (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'rows_q') AS counted_once;
SELECT pgjq.drop_queue('rows_q', force => true);
