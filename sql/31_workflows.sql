-- 31_workflows: workflows. Steps pass results along their dependencies; a join waits for every child by a
-- counter and starts once; a failure cancels what is downstream under on_failure = 'fail', or is handed to
-- the join under 'continue'; a workflow counts its steps and ends with the last; it can be cancelled and
-- retried (the failed step and what is downstream of it wait again); a key starts a workflow once; bad
-- steps are refused with nothing written.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 31000) AS id_base, setval('pgjq.workflow_id_seq', 3100) AS workflow_base;
SELECT pgjq.create_queue('wf');
-- the step of workflow w called s, as the view of its steps says
CREATE FUNCTION step(w bigint, s text) RETURNS text LANGUAGE sql AS $$
  SELECT status || coalesce(' waiting for ' || waiting_for, '') || coalesce(' (' || last_error || ')', '')
    FROM pgjq.workflow_steps(w) WHERE step_name = s $$;
CREATE FUNCTION step_id(w bigint, s text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT job_id FROM pgjq.workflow_steps(w) WHERE step_name = s $$;
-- claims every runnable job of the queue; completes the one of step s with its result
CREATE FUNCTION finish(w bigint, s text, result jsonb DEFAULT NULL) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
  PERFORM pgjq.complete(step_id(w, s), 'w', result);
  RETURN s || ' completed';
END $$;
CREATE FUNCTION break(w bigint, s text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
  RETURN s || ' ' || pgjq.fail(step_id(w, s), 'w', 'broken');
END $$;
CREATE FUNCTION depth_matches(q text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = q)
          = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = q) $$;

-- fetch, then a fan-out over three images, then a join that reads every result
SELECT pgjq.start_workflow('thumbnails', jsonb_build_array(
         jsonb_build_object('name', 'fetch', 'job_type', 'fetch', 'payload', jsonb_build_object('url', 'u'), 'queue', 'wf'),
         jsonb_build_object('name', 'join', 'job_type', 'join', 'queue', 'wf',
                            'after', jsonb_build_array('resize-1', 'resize-2', 'resize-3'))) ||
       (SELECT jsonb_agg(jsonb_build_object('name', 'resize-' || i, 'job_type', 'resize', 'queue', 'wf',
                                            'payload', jsonb_build_object('image', i), 'after', jsonb_build_array('fetch')))
          FROM generate_series(1, 3) i)) AS w \gset
SELECT workflow_name, status, steps_total, steps_finished, on_failure FROM pgjq.workflows WHERE id = :w;
SELECT step_name, status, depends_on, waiting_for FROM pgjq.workflow_steps(:w);
-- the steps are enqueued after the steps they depend on
SELECT bool_and(p.job_id < s.job_id) AS parents_first
  FROM pgjq.workflow_steps(:w) s CROSS JOIN LATERAL unnest(s.depends_on) d
  JOIN pgjq.workflow_steps(:w) p ON p.step_name = d;
-- only fetch can run
SELECT job_type FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
SELECT pgjq.complete(step_id(:w, 'fetch'), 'w', '{"bytes": 3}');
SELECT step_name, status FROM pgjq.workflow_steps(:w) ORDER BY step_name;
-- a resize reads what fetch handed on
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
SELECT step_name, status, result FROM pgjq.step_results(step_id(:w, 'resize-1'));
SELECT pgjq.complete(step_id(:w, 'resize-1'), 'w', '{"size": 1}');
SELECT pgjq.complete(step_id(:w, 'resize-2'), 'w', '{"size": 2}');
SELECT step(:w, 'join') AS join_after_two;
SELECT unmet FROM pgjq.workflow_run_steps s WHERE s.job_id = step_id(:w, 'join');
SELECT pgjq.complete(step_id(:w, 'resize-3'), 'w', '{"size": 3}');
SELECT step(:w, 'join') AS join_after_three;
-- the join reads every child's result, a page at a time
SELECT step_name, result FROM pgjq.step_results(step_id(:w, 'join'));
SELECT step_name FROM pgjq.step_results(step_id(:w, 'join'), after_step => 'resize-1', max_results => 1);
SELECT pgjq.step_results(step_id(:w, 'join'), max_results => 0);
SELECT finish(:w, 'join', '{"done": true}');
SELECT status, steps_finished, steps_failed, finished_at IS NOT NULL AS finished FROM pgjq.workflows WHERE id = :w;
-- a finished step keeps its times
SELECT bool_and(started_at IS NOT NULL AND finished_at >= started_at) AS times_kept FROM pgjq.workflow_steps(:w);
SELECT depth_matches('wf');

-- on_failure = 'fail': a step that fails for good cancels what is downstream, and the workflow fails
SELECT pgjq.start_workflow('chain', '[{"name": "a", "job_type": "t", "queue": "wf", "max_attempts": 1},
                                      {"name": "b", "job_type": "t", "queue": "wf", "after": ["a"]},
                                      {"name": "c", "job_type": "t", "queue": "wf", "after": ["b"]},
                                      {"name": "side", "job_type": "t", "queue": "wf"}]') AS f \gset
SELECT break(:f, 'a');
SELECT step_name, status, last_error FROM pgjq.workflow_steps(:f) ORDER BY step_name;
SELECT status, steps_finished, steps_failed FROM pgjq.workflows WHERE id = :f;
SELECT pgjq.complete(step_id(:f, 'side'), 'w');
SELECT status, steps_finished, steps_failed, finished_at IS NOT NULL AS finished FROM pgjq.workflows WHERE id = :f;
-- retrying the workflow brings back the failed step and what is downstream of it, waiting again
SELECT pgjq.retry_workflow(:f) AS revived;
SELECT step_name, status, waiting_for, attempts FROM pgjq.workflow_steps(:f) ORDER BY step_name;
SELECT status, steps_finished, steps_failed, finished_at IS NULL AS unfinished FROM pgjq.workflows WHERE id = :f;
SELECT finish(:f, 'a');
SELECT step(:f, 'b') AS b, step(:f, 'c') AS c;
SELECT finish(:f, 'b');
SELECT finish(:f, 'c');
SELECT status, steps_finished, steps_failed FROM pgjq.workflows WHERE id = :f;
-- pgjq.retry of one failed step does the same
SELECT pgjq.start_workflow('pair', '[{"name": "a", "job_type": "t", "queue": "wf", "max_attempts": 1},
                                     {"name": "b", "job_type": "t", "queue": "wf", "after": ["a"]}]') AS r \gset
SELECT break(:r, 'a');
SELECT pgjq.retry(step_id(:r, 'a'));
SELECT step(:r, 'a') AS a, step(:r, 'b') AS b;
-- ... and retrying the cancelled dependent alone makes it wait for its parent again, not run
SELECT break(:r, 'a');
SELECT pgjq.retry(step_id(:r, 'b'));
SELECT step(:r, 'b') AS b_alone;

-- a retry brings back what the failure cancelled, not a step cancelled by hand
SELECT pgjq.start_workflow('handpicked', '[{"name": "a", "job_type": "t", "queue": "wf", "max_attempts": 1},
                                           {"name": "b", "job_type": "t", "queue": "wf", "after": ["a"]},
                                           {"name": "c", "job_type": "t", "queue": "wf", "after": ["b"]}]') AS h \gset
SELECT pgjq.cancel(step_id(:h, 'c'));
SELECT break(:h, 'a');
SELECT pgjq.retry(step_id(:h, 'a'));
SELECT step_name, status FROM pgjq.workflow_steps(:h) ORDER BY step_name;

-- on_failure = 'continue': the join runs and sees the failure; 'ignore': it sees only what completed
SELECT pgjq.start_workflow('tolerant', '[{"name": "x", "job_type": "t", "queue": "wf", "max_attempts": 1},
                                         {"name": "y", "job_type": "t", "queue": "wf"},
                                         {"name": "j", "job_type": "t", "queue": "wf", "after": ["x", "y"]}]',
                           on_failure => 'continue') AS c \gset
SELECT break(:c, 'x');
SELECT finish(:c, 'y', '{"y": 1}');
SELECT step(:c, 'j') AS j;
SELECT step_name, status, result, last_error FROM pgjq.step_results(step_id(:c, 'j'));
SELECT pgjq.start_workflow('ignoring', '[{"name": "x", "job_type": "t", "queue": "wf", "max_attempts": 1},
                                         {"name": "y", "job_type": "t", "queue": "wf"},
                                         {"name": "j", "job_type": "t", "queue": "wf", "after": ["x", "y"]}]',
                           on_failure => 'ignore') AS i \gset
SELECT break(:i, 'x');
SELECT finish(:i, 'y', '{"y": 1}');
SELECT step_name, status FROM pgjq.step_results(step_id(:i, 'j'));
SELECT finish(:c, 'j');
SELECT finish(:i, 'j');
SELECT workflow_name, status, steps_failed FROM pgjq.workflows WHERE id IN (:c, :i) ORDER BY id;

-- dynamic fan-out: a running step adds steps to its workflow, committed with its completion
SELECT pgjq.start_workflow('dynamic', '[{"name": "split", "job_type": "split", "queue": "wf"}]') AS d \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
BEGIN;
SELECT cardinality(pgjq.add_steps(step_id(:d, 'split'), 'w',
         '[{"name": "part-1", "job_type": "part", "queue": "wf", "after": ["split"]},
           {"name": "part-2", "job_type": "part", "queue": "wf", "after": ["split"]},
           {"name": "merge", "job_type": "merge", "queue": "wf", "after": ["part-1", "part-2"]}]')) AS added;
SELECT pgjq.complete(step_id(:d, 'split'), 'w', '{"parts": 2}');
COMMIT;
SELECT step_name, status, depends_on FROM pgjq.workflow_steps(:d);
SELECT steps_total FROM pgjq.workflows WHERE id = :d;
SELECT finish(:d, 'part-1');
SELECT finish(:d, 'part-2');
SELECT finish(:d, 'merge');
SELECT status, steps_total, steps_finished FROM pgjq.workflows WHERE id = :d;
-- a name the workflow has, or an unknown one, is refused, and nothing is added
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
SELECT pgjq.start_workflow('dyn2', '[{"name": "s", "job_type": "t", "queue": "wf"}]') AS d2 \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
SELECT pgjq.add_steps(step_id(:d2, 's'), 'w', '[{"name": "s", "job_type": "t", "queue": "wf"}]');
SELECT pgjq.add_steps(step_id(:d2, 's'), 'w', '[{"name": "t", "job_type": "t", "queue": "wf", "after": ["nope"]}]');
SELECT pgjq.add_steps(step_id(:d2, 's'), 'other-worker', '[{"name": "t", "job_type": "t", "queue": "wf"}]');
SELECT steps_total FROM pgjq.workflows WHERE id = :d2;
SELECT pgjq.complete(step_id(:d2, 's'), 'w');

-- a key starts a workflow once while it is unfinished
SELECT pgjq.start_workflow('order', '[{"name": "charge", "job_type": "t", "queue": "wf"}]', workflow_key => 'order-17') AS k1 \gset
SELECT pgjq.start_workflow('order', '[{"name": "charge", "job_type": "t", "queue": "wf"}]', workflow_key => 'order-17') = :k1 AS same;
SELECT count(*) AS steps FROM pgjq.workflow_steps(:k1);
SELECT finish(:k1, 'charge');
SELECT pgjq.start_workflow('order', '[{"name": "charge", "job_type": "t", "queue": "wf"}]', workflow_key => 'order-17') <> :k1 AS new_once_finished;

-- cancelling a workflow cancels its unfinished steps, claimed ones included
SELECT pgjq.start_workflow('doomed', '[{"name": "a", "job_type": "t", "queue": "wf"},
                                       {"name": "b", "job_type": "t", "queue": "wf", "after": ["a"]}]') AS x \gset
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', NULL, 100, 'wf');
SELECT pgjq.cancel_workflow(:x) AS cancelled;
SELECT step_name, status, last_error FROM pgjq.workflow_steps(:x) ORDER BY step_name;
SELECT status, finished_at IS NOT NULL AS finished FROM pgjq.workflows WHERE id = :x;
SELECT pgjq.complete(step_id(:x, 'a'), 'w');
SELECT pgjq.cancel_workflow(-1);
SELECT depth_matches('wf');

-- bad steps: refused with what was wrong, and nothing written
SELECT count(*) AS workflows_before FROM pgjq.workflows \gset
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "after": ["b"]}, {"name": "b", "job_type": "t", "after": ["c"]},
                                    {"name": "c", "job_type": "t", "after": ["a"]}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "after": ["a"]}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t"}, {"name": "a", "job_type": "t"}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "after": ["zz"]}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "colour": "red"}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a"}]');
SELECT pgjq.start_workflow('bad', '[{"name": "", "job_type": "t"}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "priority": 1.5}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "timeout": "2 years"}]');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "queue": "no_such_queue"}]');
SELECT pgjq.start_workflow('bad', '[]');
SELECT pgjq.start_workflow('bad', '{"name": "a"}');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t"}]', on_failure => 'shrug');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t"}]', retention => '101 years');
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "after": ["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]}]');
SELECT pgjq.start_workflow('bad', (SELECT jsonb_agg(jsonb_build_object('name', 's' || i, 'job_type', 't'))
                                     FROM generate_series(1, 100001) i));
SELECT pgjq.create_queue('forgetful');
SELECT pgjq.alter_queue('forgetful', keep_completed => false);
SELECT pgjq.start_workflow('bad', '[{"name": "a", "job_type": "t", "queue": "forgetful"}]');
SELECT count(*) = :workflows_before AS nothing_written FROM pgjq.workflows;
SELECT count(*) AS stray_steps FROM pgjq.workflow_run_steps s
 WHERE NOT EXISTS (SELECT 1 FROM pgjq.workflow_runs w WHERE w.id = s.workflow_id);

-- pruning: a finished workflow goes whole (its row, its steps' records, their edges); a running one stays
SELECT count(*) AS running FROM pgjq.workflows WHERE finished_at IS NULL \gset
SELECT count(*) > :running AS some_finished, :running > 0 AS some_running FROM pgjq.workflows;
SELECT pgjq.prune('0') IS NOT NULL AS pruned;
SELECT count(*) = :running AS only_running_left, bool_and(finished_at IS NULL) AS all_unfinished FROM pgjq.workflows;
SELECT count(*) AS stray_steps FROM pgjq.workflow_run_steps s
 WHERE NOT EXISTS (SELECT 1 FROM pgjq.workflow_runs w WHERE w.id = s.workflow_id);
SELECT count(*) AS stray_edges FROM pgjq.workflow_edges e
 WHERE NOT EXISTS (SELECT 1 FROM pgjq.workflow_run_steps s WHERE s.job_id = e.child_job);
