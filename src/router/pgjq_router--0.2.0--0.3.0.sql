-- pgjq_router 0.2.0 -> 0.3.0: the router's calls that bring jobs' rows back from the nodes name the columns
-- they take (those of pgjq_router.jobs_row and the router's pgjq.jobs), instead of taking every column: a node
-- at pgjq 0.3.0 returns one more, the jobs' headers, which PL/Proxy refuses as "too many fields". Nodes at
-- 0.2.0 and 0.3.0 are served alike; the headers are not routed. PL/Proxy puts a function's argument in place of
-- each name of it in the remote query, columns included, so the two claims are made again with arguments
-- whose names no column of pgjq.jobs has (their callers pass them by position).
\echo Use "ALTER EXTENSION pgjq_router UPDATE TO '0.3.0'" to load this file. \quit

CREATE OR REPLACE FUNCTION pgjq_router.all_jobs_on(target integer) RETURNS SETOF pgjq_router.jobs_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT id, queue_name, job_type, priority, status, payload, result, run_at, unique_key, progress,
           current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at, created_at,
           started_at, completed_at, failed_at, cancelled_at, attempts, max_attempts, last_error, enqueued_by,
           claimed_by, group_key, depends_on, timeout, timeout_at
      FROM pgjq.jobs;
$$;

DROP FUNCTION pgjq_router.claim_job_batch_on(integer, text, text[], integer, text);
CREATE FUNCTION pgjq_router.claim_job_batch_on(node integer, claimer text, types text[], batch integer, queue text)
    RETURNS SETOF pgjq.jobs LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT id, queue_name, job_type, priority, status, payload, result, run_at, unique_key, progress,
           current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at, created_at,
           started_at, completed_at, failed_at, cancelled_at, attempts, max_attempts, last_error, enqueued_by,
           claimed_by, group_key, depends_on, timeout, timeout_at
      FROM pgjq.claim_job_batch(claimer, types, batch, queue);
$$;

DROP FUNCTION pgjq_router.complete_and_claim_on(integer, text, bigint[], text[], integer, text);
CREATE FUNCTION pgjq_router.complete_and_claim_on(node integer, claimer text, completed bigint[], types text[],
                                                  batch integer, queue text)
    RETURNS SETOF pgjq.jobs LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT id, queue_name, job_type, priority, status, payload, result, run_at, unique_key, progress,
           current_stage, events_count, worker_id, claimed_at, heartbeat_at, lease_expires_at, created_at,
           started_at, completed_at, failed_at, cancelled_at, attempts, max_attempts, last_error, enqueued_by,
           claimed_by, group_key, depends_on, timeout, timeout_at
      FROM pgjq.complete_and_claim(claimer, completed, types, batch, queue);
$$;
