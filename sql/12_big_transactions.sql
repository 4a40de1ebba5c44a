-- 12_big_transactions: a call costs the same however many calls its transaction made before it. The
-- backpressure counter rows are written at most twice per transaction (at the first reservation, which
-- checks max_pending and locks the row, and once at commit), not once per call: a transaction that
-- rewrites one row N times walks a chain of N versions each time. pg_stat_xact_user_tables counts the
-- backend's row writes not yet sent to the statistics (in PostgreSQL 15, those of earlier transactions
-- too, but none are sent during a transaction): the difference across a transaction is its own. The
-- counters stay exact, savepoints included.
SET client_min_messages = warning;
SELECT pgjq.create_queue('big');
SELECT pgjq.create_queue('bounded', max_pending => 5);

CREATE FUNCTION depth_writes() RETURNS bigint LANGUAGE sql AS
  $$ SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'pgjq.queue_depth'::regclass $$;
CREATE FUNCTION depth_writes_since(before bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT depth_writes() - before $$;
CREATE FUNCTION depth_matches(queue text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = queue)
          = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = queue) $$;

-- Producers: every enqueue path, many calls in one transaction.
BEGIN;
SELECT depth_writes() AS before \gset
SELECT count(pgjq.enqueue('t', jsonb_build_object('n', g), 'big', max_attempts => 1)) FROM generate_series(1, 2000) g;
INSERT INTO pgjq.jobs (queue_name, job_type, payload, max_attempts)
  SELECT 'big', 't', '{}', 1 FROM generate_series(1, 500);
SELECT count(pgjq.try_enqueue('t', '{}', 'big')) FROM generate_series(1, 500);
SELECT depth_writes_since(:before) AS depth_row_writes_before_commit;
COMMIT;
SELECT sum(unfinished) AS big_depth, depth_matches('big') FROM pgjq.queue_depth WHERE queue_name = 'big';

-- Workers and cancellations: decrements wait for the commit.
BEGIN;
SELECT depth_writes() AS before \gset
SELECT count(pgjq.complete(id, 'w')) FROM pgjq.claim_job_batch('w', NULL, 1000, 'big');
SELECT count(pgjq.fail(id, 'w', 'no')) FROM pgjq.claim_job_batch('w', NULL, 500, 'big');
SELECT count(pgjq.cancel(id)) FROM (SELECT id FROM pgjq.live_jobs WHERE queue_name = 'big' LIMIT 500) j;
SELECT depth_writes_since(:before) AS depth_row_writes_before_commit;
COMMIT;
SELECT sum(unfinished) AS big_depth, depth_matches('big') FROM pgjq.queue_depth WHERE queue_name = 'big';

-- Savepoints: what a rolled-back savepoint reserved is given back, what a released one reserved stays.
BEGIN;
SELECT pgjq.enqueue('t', '{}', 'bounded') IS NOT NULL AS one;
SAVEPOINT a;
SELECT count(pgjq.enqueue('t', '{}', 'bounded')) AS two_rolled_back FROM generate_series(1, 2);
ROLLBACK TO a;
SAVEPOINT b;
SELECT count(pgjq.enqueue('t', '{}', 'bounded')) AS two_kept FROM generate_series(1, 2);
RELEASE b;
SELECT count(pgjq.try_enqueue('t', '{}', 'bounded')) AS two_of_three_fit FROM generate_series(1, 3);
COMMIT;
SELECT sum(unfinished) AS bounded_depth, depth_matches('bounded') FROM pgjq.queue_depth WHERE queue_name = 'bounded';

-- Room freed earlier in the same transaction counts at once, before the commit writes it.
BEGIN;
SELECT count(pgjq.complete(id, 'w')) AS completed FROM pgjq.claim_job_batch('w', NULL, 2, 'bounded');
SELECT count(pgjq.try_enqueue('t', '{}', 'bounded')) AS two_of_three_fit FROM generate_series(1, 3);
SELECT pgjq.enqueue('t', '{}', 'bounded');
COMMIT;
SELECT sum(unfinished) AS bounded_depth, depth_matches('bounded') FROM pgjq.queue_depth WHERE queue_name = 'bounded';

-- The first reservation (the one that writes and locks the row) rolled back with its savepoint: the
-- next one writes again.
SELECT pgjq.create_queue('bounded2', max_pending => 3);
BEGIN;
SAVEPOINT a;
SELECT pgjq.enqueue('t', '{}', 'bounded2') IS NOT NULL AS rolled_back;
ROLLBACK TO a;
SELECT count(pgjq.enqueue('t', '{}', 'bounded2')) AS three_fit FROM generate_series(1, 3);
SELECT pgjq.try_enqueue('t', '{}', 'bounded2') AS full;
COMMIT;
SELECT sum(unfinished) AS bounded2_depth, depth_matches('bounded2') FROM pgjq.queue_depth WHERE queue_name = 'bounded2';

-- Subtransactions by the thousand (a PL/pgSQL loop with an exception block), some failing.
DO $$
BEGIN
  FOR i IN 1..1000 LOOP
    BEGIN
      PERFORM pgjq.enqueue('t', '{}', 'big');
      IF i % 3 = 0 THEN
        RAISE EXCEPTION 'undo this one';
      END IF;
    EXCEPTION WHEN raise_exception THEN
      NULL;
    END;
  END LOOP;
END $$;
SELECT sum(unfinished) AS big_depth, depth_matches('big') FROM pgjq.queue_depth WHERE queue_name = 'big';

-- A queue dropped in the transaction that filled it: the commit has nothing left to write.
BEGIN;
SELECT pgjq.create_queue('brief');
SELECT count(pgjq.enqueue('t', '{}', 'brief')) FROM generate_series(1, 3);
SELECT pgjq.drop_queue('brief', force => true);
COMMIT;
SELECT count(*) AS brief_rows FROM pgjq.queue_depth WHERE queue_name = 'brief';

-- A transaction that rolls back leaves the counters as they were.
BEGIN;
SELECT depth_writes() AS before \gset
SELECT count(pgjq.enqueue('t', '{}', 'big')) FROM generate_series(1, 3);
SELECT depth_writes_since(:before) AS depth_row_writes_before_commit;
ROLLBACK;
SELECT sum(unfinished) AS big_depth, depth_matches('big') FROM pgjq.queue_depth WHERE queue_name = 'big';

SELECT pgjq.drop_queue(q, force => true) FROM unnest(ARRAY['big', 'bounded', 'bounded2']) q;
DROP FUNCTION depth_writes_since(bigint);
DROP FUNCTION depth_writes();
DROP FUNCTION depth_matches(text);
