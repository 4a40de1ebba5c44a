-- 14_dependencies: depends_on. A job waits until every job it depends on has completed; if one of them
-- fails for good or is cancelled, it is cancelled too (and so are the jobs that depend on it), with the
-- reason in last_error. A job can only depend on jobs that exist when it is enqueued, so no cycle can form.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 14000) AS id_base;
SELECT pgjq.create_queue('dep');
CREATE FUNCTION state(job bigint) RETURNS text LANGUAGE sql AS
  $$ SELECT status || coalesce(' (' || last_error || ')', '') FROM pgjq.jobs WHERE id = job $$;
-- claims every runnable job of queue q and completes the one given (the others stay claimed)
CREATE FUNCTION run(q text, job bigint, outcome text DEFAULT 'complete') RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM pgjq.claim_job_batch('w', NULL, 100, q);
  IF outcome = 'complete' THEN
    PERFORM pgjq.complete(job, 'w');
    RETURN 'completed';
  END IF;
  RETURN pgjq.fail(job, 'w', outcome, retry_in => '0')::text;
END $$;
CREATE FUNCTION depth_matches(q text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = q)
          = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = q) $$;

-- a diamond: d waits for b and c, which wait for a
SELECT pgjq.enqueue('step', '{"s": "a"}', 'dep') AS a \gset
SELECT pgjq.enqueue('step', '{"s": "b"}', 'dep', depends_on => ARRAY[:a]::bigint[]) AS b \gset
SELECT pgjq.enqueue('step', '{"s": "c"}', 'dep', depends_on => ARRAY[:a]::bigint[]) AS c \gset
SELECT pgjq.enqueue('step', '{"s": "d"}', 'dep', depends_on => ARRAY[:b, :c]::bigint[]) AS d \gset
SELECT state(:a) AS a, state(:b) AS b, state(:c) AS c, state(:d) AS d;
SELECT depends_on = ARRAY[:b, :c]::bigint[] AS recorded FROM pgjq.jobs WHERE id = :d;
-- only a can be claimed
SELECT id = :a AS only_a FROM pgjq.claim_job_batch('w', NULL, 10, 'dep');
SELECT pgjq.complete(:a, 'w');
SELECT state(:b) AS b, state(:c) AS c, state(:d) AS d;
SELECT count(*) AS claimed FROM (SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 1, 'dep')) x;
SELECT state(:d) AS d_after_one;
SELECT count(*) AS claimed FROM (SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 1, 'dep')) x;
SELECT state(:d) AS d_after_both;

-- a dependency that fails for good cancels its dependents, transitively
SELECT pgjq.create_queue('dep_fail');
SELECT pgjq.enqueue('step', '{}', 'dep_fail', max_attempts => 1) AS x \gset
SELECT pgjq.enqueue('step', '{}', 'dep_fail', depends_on => ARRAY[:x]::bigint[]) AS y \gset
SELECT pgjq.enqueue('step', '{}', 'dep_fail', depends_on => ARRAY[:y]::bigint[]) AS z \gset
SELECT run('dep_fail', :x, 'broken');
SELECT state(:x) AS x, state(:y) AS y, state(:z) AS z;
-- ... and so does a cancelled one
SELECT pgjq.enqueue('step', '{}', 'dep') AS p \gset
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => ARRAY[:p]::bigint[]) AS q \gset
SELECT pgjq.cancel(:p);
SELECT state(:q) AS q;
-- a retry on the way (not a final failure) keeps the dependents waiting
SELECT pgjq.create_queue('dep_retry');
SELECT pgjq.enqueue('step', '{}', 'dep_retry', max_attempts => 3) AS r \gset
SELECT pgjq.enqueue('step', '{}', 'dep_retry', depends_on => ARRAY[:r]::bigint[]) AS s \gset
SELECT run('dep_retry', :r, 'once');
SELECT state(:s) AS s;
SELECT pgjq.cancel(:r);

-- depending on jobs already finished: completed ones are met, a failed or cancelled one cancels the new job
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => ARRAY[:a, :b]::bigint[]) AS met \gset
SELECT state(:met) AS met;
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => ARRAY[:a, :x, :p]::bigint[]) AS doomed \gset
SELECT state(:doomed) AS doomed;

-- a job and its dependents in one transaction: nothing runs before the commit, the order holds after it
SELECT pgjq.create_queue('dep_tx');
BEGIN;
SELECT pgjq.enqueue('step', '{}', 'dep_tx') AS t1 \gset
SELECT pgjq.enqueue('step', '{}', 'dep_tx', depends_on => ARRAY[:t1]::bigint[]) AS t2 \gset
COMMIT;
SELECT state(:t1) AS t1, state(:t2) AS t2;
-- and with a group key: released by its dependency, the job still waits for its turn in the group
SELECT pgjq.enqueue('step', '{}', 'dep_tx', group_key => 'g') AS g1 \gset
SELECT pgjq.enqueue('step', '{}', 'dep_tx', group_key => 'g', depends_on => ARRAY[:t1]::bigint[]) AS g2 \gset
SELECT run('dep_tx', :t1);
SELECT state(:t2) AS t2, state(:g2) AS g2_behind_g1;
SELECT run('dep_tx', :g1);
SELECT state(:g2) AS g2;
-- across queues
SELECT pgjq.enqueue('step', '{}', 'default', depends_on => ARRAY[:g2]::bigint[]) AS other \gset
SELECT state(:other) AS other_queue;
SELECT pgjq.cancel(:g2);
SELECT state(:other) AS other_queue;
SELECT depth_matches('dep'), depth_matches('dep_fail'), depth_matches('dep_tx'), depth_matches('default');
SELECT count(*) AS dependency_rows_left FROM pgjq.job_dependencies
 WHERE job_id IN (SELECT id FROM pgjq.finished_jobs) OR depends_on IN (SELECT id FROM pgjq.finished_jobs);

-- enqueue_batch: every job of the batch depends on the same jobs
SELECT pgjq.enqueue('step', '{}', 'dep') AS root \gset
SELECT pgjq.enqueue_batch('step', '[{}, {}]', 'dep', depends_on => ARRAY[:root]::bigint[]) AS fan \gset
SELECT status, count(*) FROM pgjq.jobs WHERE id = ANY (:'fan'::bigint[]) GROUP BY status;
SELECT pgjq.cancel(:root);
SELECT status, count(*) FROM pgjq.jobs WHERE id = ANY (:'fan'::bigint[]) GROUP BY status;

-- bad input
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => ARRAY[999999999]::bigint[]);
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => ARRAY[NULL]::bigint[]);
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => '{{1}}'::bigint[]);
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => (SELECT array_agg(g) FROM generate_series(1, 101) g));
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => '{}') IS NOT NULL AS empty_is_none;
DROP FUNCTION state(bigint), run(text, bigint, text), depth_matches(text);
-- dropping a queue with force cancels the jobs of other queues that wait for its jobs
SELECT pgjq.create_queue('doomed');
SELECT pgjq.enqueue('step', '{}', 'doomed') AS in_doomed \gset
SELECT pgjq.enqueue('step', '{}', 'dep', depends_on => ARRAY[:in_doomed]::bigint[]) AS outside \gset
SELECT pgjq.drop_queue('doomed', force => true);
SELECT status, last_error FROM pgjq.jobs WHERE id = :outside;
SELECT count(*) AS dependency_rows_of_the_dropped FROM pgjq.job_dependencies WHERE depends_on = :in_doomed;
