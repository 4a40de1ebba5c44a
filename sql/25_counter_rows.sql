-- The counter rows of pgjq.queue_depth are written in place (tableam/counter_row.cpp) while the table is as
-- pgjq made it, and with an UPDATE statement otherwise. Either way every job is counted once.
CREATE TEMP VIEW rows_counted AS
SELECT (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'rows_q') AS unfinished,
       (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'rows_q') AS counted,
       (SELECT sum(cancelled) FROM pgjq.queue_depth WHERE queue_name = 'rows_q') AS cancelled;
SELECT pgjq.create_queue('rows_q');
SET pgjq.depth_slot = 7;
SELECT pg_relation_size('pgjq.queue_depth') AS depth_size_before \gset
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
SELECT pg_current_wal_lsn() AS writes_start \gset

-- In place: many transactions in a row on one slot row, then the finished totals (a cancel written at
-- commit with the rest of its transaction's changes).
DO $$
BEGIN
    FOR i IN 1..200 LOOP
        PERFORM pgjq.enqueue('t', to_jsonb(i), 'rows_q');
        COMMIT;
    END LOOP;
END
$$;
SELECT * FROM rows_counted;
-- Writes prune the row's page of the versions nobody sees any more (as a read through the key did): the
-- new versions stay on it instead of growing the table.
SELECT pg_relation_size('pgjq.queue_depth') <= :depth_size_before AS versions_pruned_in_place;
-- But only once the page runs short of room for more versions, not at every write: a prune writes a WAL
-- record of its own, and on a page whose fillfactor leaves most of it free, pruning when the free space
-- fell below what the fillfactor keeps would prune at every write.
SELECT count(*) < 20 AS pruned_seldom
  FROM pg_get_wal_records_info(:'writes_start', pg_current_wal_lsn())
 WHERE record_type = 'PRUNE'
   AND block_ref LIKE '%/' || pg_relation_filenode('pgjq.queue_depth') || ' %';
BEGIN;
SELECT pgjq.enqueue('t', '0', 'rows_q') > 0 AS enqueued;
SELECT count(pgjq.cancel(id)) AS cancelled
  FROM (SELECT id FROM pgjq.live_jobs WHERE queue_name = 'rows_q' ORDER BY id LIMIT 3) j;
COMMIT;
SELECT * FROM rows_counted;
-- The row is found through its primary key, which still finds it (and only it) after all those versions.
SET enable_seqscan = off;
SELECT count(*) AS slot_rows FROM pgjq.queue_depth WHERE queue_name = 'rows_q' AND slot = 7;
RESET enable_seqscan;

-- A read-only transaction is refused as the statements refuse it, with nothing counted.
BEGIN READ ONLY;
SELECT pgjq.enqueue('t', '0', 'rows_q');
ROLLBACK;
SELECT * FROM rows_counted;

-- A table changed by its owner is written with the statement, which fires a trigger on update and keeps
-- another index: the trigger's notice shows which path ran.
CREATE FUNCTION pg_temp.counter_row_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'counter row % of % updated by a statement', NEW.slot, NEW.queue_name;
    RETURN NEW;
END
$$;
CREATE TRIGGER counter_row_updated AFTER UPDATE ON pgjq.queue_depth
    FOR EACH ROW WHEN (NEW.queue_name = 'rows_q') EXECUTE FUNCTION pg_temp.counter_row_updated();
SELECT pgjq.enqueue('t', '0', 'rows_q') > 0 AS enqueued;
DROP TRIGGER counter_row_updated ON pgjq.queue_depth;
CREATE INDEX queue_depth_by_unfinished ON pgjq.queue_depth (unfinished);
SELECT pgjq.enqueue('t', '0', 'rows_q') > 0 AS enqueued;
SELECT unfinished AS slot_unfinished FROM pgjq.queue_depth WHERE queue_name = 'rows_q' AND slot = 7 \gset
SET enable_seqscan = off;
SELECT count(*) FILTER (WHERE queue_name = 'rows_q' AND slot = 7) AS found_by_other_index
  FROM pgjq.queue_depth WHERE unfinished = :slot_unfinished;
RESET enable_seqscan;
DROP INDEX pgjq.queue_depth_by_unfinished;
SELECT * FROM rows_counted;

-- Each backend remembers where it last wrote its row: a version that rolled back, or a table rewritten
-- since, is found again through the key, and counted once.
BEGIN;
SELECT pgjq.enqueue('t', '0', 'rows_q') > 0 AS enqueued;
ROLLBACK;
SELECT pgjq.enqueue('t', '0', 'rows_q') > 0 AS enqueued;
VACUUM FULL pgjq.queue_depth;
SELECT pgjq.enqueue('t', '0', 'rows_q') > 0 AS enqueued;
SELECT * FROM rows_counted;

-- A dropped queue has no rows left to add to: the producer is told the queue does not exist.
BEGIN;
SELECT pgjq.drop_queue('rows_q', force => true);
SELECT pgjq.enqueue('t', '0', 'rows_q');
ROLLBACK;
SELECT pgjq.drop_queue('rows_q', force => true);
RESET pgjq.depth_slot;
