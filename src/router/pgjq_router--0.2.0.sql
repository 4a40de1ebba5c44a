-- pgjq_router: the router database of a pgjq cluster (docs/scale-out.md). PL/Proxy runs each call on the
-- node that holds its queue or its job; this database holds only the cluster's shape: the nodes (the
-- options of the SQL/MED server pgjq_nodes, one libpq conninfo per node) and the placement of the queues.
-- It offers pgjq's producer, worker and admin calls under the same names, arguments and results.
\echo Use "CREATE EXTENSION pgjq_router" to load this file. \quit

-- Nodes and placement -------------------------------------------------------------------------------

CREATE SCHEMA pgjq_router;
CREATE SCHEMA pgjq;
GRANT USAGE ON SCHEMA pgjq_router, pgjq TO PUBLIC;

-- The same labels, in the same order, as on the nodes (results cross in text form: disable_binary).
CREATE TYPE pgjq.job_status AS ENUM ('waiting', 'pending', 'claimed', 'running', 'completed', 'failed', 'cancelled');

-- Each queue has partitions 0..n-1 (most have one), each on its own node. A move in progress keeps the
-- node the partition leaves as draining_node: workers drain it while producers already reach the new node.
CREATE TABLE pgjq_router.placements (
    -- The nodes' rule for a queue name (pgjq's limits.hpp), so that a placement names a queue a node can have.
    queue_name    text    NOT NULL CHECK (queue_name ~ '^[a-z0-9_.-]{1,48}$'),
    partition     integer NOT NULL CHECK (partition BETWEEN 0 AND 1023),
    node          integer NOT NULL CHECK (node BETWEEN 0 AND 1023),
    draining_node integer CHECK (draining_node BETWEEN 0 AND 1023 AND draining_node <> node),
    -- A move keeps the new node's queue paused until the old node is drained (FIFO order, group keys); it
    -- resumes it then unless the queue is paused on the old node (a pause through the router pauses both).
    hold_until_moved  boolean NOT NULL DEFAULT false,
    -- The queue has existed on its nodes: once none holds it, it was dropped and the placement may go.
    created           boolean NOT NULL DEFAULT false,
    PRIMARY KEY (queue_name, partition),
    UNIQUE (queue_name, node)
);
SELECT pg_catalog.pg_extension_config_dump('pgjq_router.placements', '');
-- Everyone may read where queues live (the cluster client needs it: queue names are not secret from the
-- router's roles). Only the owner writes it; create_queue and drop_queue through the router record what the
-- nodes did through mark_created and forget_placement.
GRANT SELECT ON pgjq_router.placements TO PUBLIC;

-- Node n is the server's option pn: PL/Proxy's partition n (modular_mapping: any number of nodes).
CREATE FUNCTION pgjq_router.nodes(OUT node integer, OUT conninfo text) RETURNS SETOF record
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT substr(o.option_name, 2)::integer, o.option_value
      FROM pg_catalog.pg_foreign_server s, pg_catalog.pg_options_to_table(s.srvoptions) o
     WHERE s.srvname = 'pgjq_nodes' AND o.option_name ~ '^p[0-9]+$'
     ORDER BY 1
$$;
GRANT EXECUTE ON FUNCTION pgjq_router.nodes() TO PUBLIC;

-- What a node's conninfo may say. Everyone reads it (nodes()), and PL/Proxy connects every role of the
-- router with it, so it says where the node is and how to reach and verify it, and nothing else: every
-- keyword not listed is refused (22023), among them user, password, passfile and service (which would
-- connect every role as one user, or publish a secret), sslcert, sslkey and sslpassword (which would lend
-- the router server's own client certificate), and options, replication and client_encoding (which change
-- the sessions PL/Proxy relies on). docs/scale-out.md lists the keywords. The string is read as libpq reads
-- it, by libpq (pgjq_router.so): a pattern cannot know that dbname='x'user=y sets a user.
CREATE FUNCTION pgjq_router.conninfo_keywords(conninfo text) RETURNS text[]
    LANGUAGE c STABLE STRICT AS 'MODULE_PATHNAME', 'pgjq_conninfo_keywords';
CREATE FUNCTION pgjq_router.checked_conninfo(conninfo text, node integer) RETURNS text
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    allowed CONSTANT text[] := ARRAY[
        'host', 'hostaddr', 'port', 'dbname',                                   -- where the node is
        'connect_timeout', 'keepalives', 'keepalives_idle', 'keepalives_interval', 'keepalives_count',
        'tcp_user_timeout',                                                     -- how long to wait for it
        'target_session_attrs', 'load_balance_hosts',                           -- which of its servers
        'sslmode', 'sslnegotiation', 'sslrootcert', 'sslcrl', 'sslcrldir', 'sslsni', 'sslcertmode',
        'ssl_min_protocol_version', 'ssl_max_protocol_version', 'channel_binding', 'require_auth',
        'requirepeer', 'gssencmode', 'krbsrvname',                              -- how to verify it
        'application_name'];                                                    -- what its sessions are called
    refused text[];
BEGIN
    IF conninfo IS NULL OR length(conninfo) NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'pgjq: the conninfo of node % must hold 1 to 1000 characters', node
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    refused := ARRAY(SELECT k FROM unnest(pgjq_router.conninfo_keywords(conninfo)) k WHERE k <> ALL (allowed));
    IF cardinality(refused) > 0 THEN
        RAISE EXCEPTION 'pgjq: the conninfo of node % must not set %', node, array_to_string(refused, ', ')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Every role of the router reads the nodes'' conninfos, and PL/Proxy connects every role with them.',
                  HINT = 'Users and passwords go into user mappings for SERVER pgjq_nodes. A conninfo may set only '
                         || array_to_string(allowed, ', ') || '.';
    END IF;
    -- PL/Proxy hands a conninfo that contains "user=" anywhere, a value included, to libpq as it is, without
    -- the user of the calling role or of its user mapping: libpq would connect as the router server's
    -- operating system user.
    IF strpos(conninfo, 'user=') > 0 THEN
        RAISE EXCEPTION 'pgjq: the conninfo of node % must not contain "user="', node
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'PL/Proxy would connect every role as the router server''s operating system user.';
    END IF;
    RETURN conninfo;
END
$$;

CREATE FUNCTION pgjq_router.checked_node(node integer) RETURNS integer
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF node IS NULL OR NOT EXISTS (SELECT FROM pgjq_router.nodes() n WHERE n.node = checked_node.node) THEN
        RAISE EXCEPTION 'pgjq: node % is not in the cluster', coalesce(node::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'pgjq_router.nodes() lists the nodes.';
    END IF;
    RETURN node;
END
$$;

-- A job's id names its node (pgjq.join_cluster on the node).
CREATE FUNCTION pgjq_router.job_node(job_id bigint) RETURNS integer
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM pgjq_router.nodes() n WHERE n.node = job_id % 1024) THEN
        RAISE EXCEPTION 'job % does not exist', job_id USING ERRCODE = 'no_data_found',
            DETAIL = format('Its id names node %s, which is not in the cluster.', job_id % 1024);
    END IF;
    RETURN (job_id % 1024)::integer;
END
$$;

CREATE FUNCTION pgjq_router.raise_unplaced_queue(queue_name text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'queue "%" does not exist', queue_name USING ERRCODE = 'undefined_object',
        DETAIL = 'The router holds no placement for it.',
        HINT = 'Create it through the router (pgjq.create_queue), or place it with pgjq_router.place_queue.';
END
$$;

-- An error a node gave, kept while the router asks the other nodes, to raise it again after them.
CREATE TYPE pgjq_router.node_error AS (code text, message text, detail text, hint text);
-- Raises it again: the node's SQLSTATE, on which callers branch as on the node; its message, which names
-- the node; its detail, and after it what the router adds (what the other nodes did).
CREATE FUNCTION pgjq_router.raise_node_error(failure pgjq_router.node_error, more_detail text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    detail text := concat_ws(' ', nullif(failure.detail, ''), more_detail);
BEGIN
    -- An empty DETAIL or HINT would still be sent: each combination has its own RAISE.
    IF detail = '' AND coalesce(failure.hint, '') = '' THEN
        RAISE EXCEPTION USING ERRCODE = failure.code, MESSAGE = failure.message;
    ELSIF coalesce(failure.hint, '') = '' THEN
        RAISE EXCEPTION USING ERRCODE = failure.code, MESSAGE = failure.message, DETAIL = detail;
    ELSIF detail = '' THEN
        RAISE EXCEPTION USING ERRCODE = failure.code, MESSAGE = failure.message, HINT = failure.hint;
    END IF;
    RAISE EXCEPTION USING ERRCODE = failure.code, MESSAGE = failure.message, DETAIL = detail, HINT = failure.hint;
END
$$;

-- The node a producer's job goes to: the queue's only partition, or for a partitioned queue the
-- partition of the routing key (the same key, the same partition: per-key order and uniqueness hold), a
-- random one without a key.
CREATE FUNCTION pgjq_router.queue_node(queue_name text, routing_key text) RETURNS integer
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    partitions integer;
    chosen integer;
BEGIN
    SELECT count(*) INTO partitions FROM pgjq_router.placements p WHERE p.queue_name = queue_node.queue_name;
    IF partitions = 0 THEN
        PERFORM pgjq_router.raise_unplaced_queue(queue_name);
    END IF;
    chosen := CASE WHEN partitions = 1 THEN 0
                   WHEN routing_key IS NULL THEN floor(random() * partitions)::integer
                   ELSE ((hashtext(routing_key)::bigint & 2147483647) % partitions)::integer END;
    RETURN (SELECT p.node FROM pgjq_router.placements p
             WHERE p.queue_name = queue_node.queue_name AND p.partition = chosen);
END
$$;

-- The node of a producer's job: queue_node's, except that a job that depends on others must live on their
-- node (a node knows only its own jobs), which must then hold a partition of the queue and agree with the
-- job's routing key.
CREATE FUNCTION pgjq_router.producer_node(queue_name text, routing_key text, depends_on bigint[]) RETURNS integer
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    dependency_nodes integer[];
    by_key integer;
BEGIN
    dependency_nodes := ARRAY(SELECT DISTINCT (d % 1024)::integer FROM unnest(depends_on) d WHERE d IS NOT NULL);
    IF cardinality(dependency_nodes) = 0 THEN
        RETURN pgjq_router.queue_node(queue_name, routing_key);
    END IF;
    IF cardinality(dependency_nodes) > 1 THEN
        RAISE EXCEPTION 'pgjq: the jobs in depends_on live on nodes %', array_to_string(dependency_nodes, ', ')
            USING ERRCODE = 'feature_not_supported', DETAIL = 'A job can depend only on jobs of its own node.';
    END IF;
    IF NOT EXISTS (SELECT FROM pgjq_router.placements p
                    WHERE p.queue_name = producer_node.queue_name AND p.node = dependency_nodes[1]) THEN
        RAISE EXCEPTION 'pgjq: queue "%" has no partition on node %, where the jobs in depends_on live',
            queue_name, dependency_nodes[1]
            USING ERRCODE = 'feature_not_supported', DETAIL = 'A job can depend only on jobs of its own node.';
    END IF;
    IF routing_key IS NOT NULL THEN
        by_key := pgjq_router.queue_node(queue_name, routing_key);
        IF by_key <> dependency_nodes[1] THEN
            RAISE EXCEPTION 'pgjq: the job''s key belongs to node %, the jobs in depends_on to node %', by_key,
                dependency_nodes[1]
                USING ERRCODE = 'feature_not_supported', DETAIL = 'A job can depend only on jobs of its own node.';
        END IF;
    END IF;
    RETURN dependency_nodes[1];
END
$$;

-- Every node that holds the queue (admin calls reach them all).
CREATE FUNCTION pgjq_router.queue_nodes(queue_name text) RETURNS SETOF integer
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT x.node
      FROM pgjq_router.placements p, LATERAL (VALUES (p.node), (p.draining_node)) x(node)
     WHERE p.queue_name = queue_nodes.queue_name AND x.node IS NOT NULL
     ORDER BY 1
$$;

-- Every node a worker of the queue claims from (NULL: every node), in a random order so that workers
-- spread over the partitions: each partition's node, and a node a partition is leaving.
CREATE FUNCTION pgjq_router.claim_nodes(queue_name text) RETURNS SETOF integer
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF queue_name IS NULL THEN
        RETURN QUERY SELECT n.node FROM pgjq_router.nodes() n ORDER BY random();
        RETURN;
    END IF;
    RETURN QUERY SELECT q FROM pgjq_router.queue_nodes(queue_name) q ORDER BY random();
    IF NOT FOUND THEN
        PERFORM pgjq_router.raise_unplaced_queue(queue_name);
    END IF;
END
$$;

GRANT EXECUTE ON FUNCTION pgjq_router.checked_node(integer), pgjq_router.job_node(bigint),
    pgjq_router.raise_unplaced_queue(text), pgjq_router.raise_node_error(pgjq_router.node_error, text),
    pgjq_router.queue_node(text, text), pgjq_router.claim_nodes(text), pgjq_router.producer_node(text, text, bigint[]),
    pgjq_router.queue_nodes(text)
    TO PUBLIC;

-- Listings, gathered from every node ---------------------------------------------------------------
-- As on a node, except that enqueued_by and claimed_by are role names (text): a node's roles need not
-- exist in the router's server. Each all_X() asks the nodes one by one (gather over all_X_on): a node that
-- cannot be reached, or refuses the caller, is left out with a NOTICE rather than blanking the cluster's view when
-- it is needed most. (PL/Proxy cannot nest calls to one cluster, so the nodes that answer cannot be
-- chosen by a RUN ON function that asks them.)

-- The one home of "ask every node, leave out the ones that do not answer": runs per_node(node) for each
-- node (a PL/Proxy function of one node, returning rows shaped like `shape`) and returns all the rows.
CREATE FUNCTION pgjq_router.gather(per_node regproc, shape anyelement) RETURNS SETOF anyelement
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    target integer;
BEGIN
    FOR target IN SELECT x.node FROM pgjq_router.nodes() x LOOP
        BEGIN
            RETURN QUERY EXECUTE format('SELECT * FROM %s($1)', per_node) USING target;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'pgjq: node % left out: %', target, SQLERRM;
        END;
    END LOOP;
END
$$;

CREATE TYPE pgjq_router.jobs_row AS (id bigint, queue_name text, job_type text, priority integer, status pgjq.job_status,
                   payload jsonb, result jsonb, run_at timestamptz, unique_key text, progress integer,
                   current_stage text, events_count integer, worker_id text, claimed_at timestamptz,
                   heartbeat_at timestamptz, lease_expires_at timestamptz, created_at timestamptz,
                   started_at timestamptz, completed_at timestamptz, failed_at timestamptz,
                   cancelled_at timestamptz, attempts integer, max_attempts integer, last_error text,
                   enqueued_by text, claimed_by text, group_key text, depends_on bigint[], timeout interval,
                   timeout_at timestamptz);
CREATE FUNCTION pgjq_router.all_jobs_on(target integer) RETURNS SETOF pgjq_router.jobs_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT * FROM pgjq.jobs;
$$;
CREATE FUNCTION pgjq_router.all_jobs() RETURNS SETOF pgjq_router.jobs_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_jobs_on'::regproc, NULL::pgjq_router.jobs_row)
$$;
CREATE VIEW pgjq.jobs AS SELECT * FROM pgjq_router.all_jobs();

CREATE TYPE pgjq_router.queue_stats_row AS (queue_name text, pending bigint, scheduled bigint, claimed bigint, running bigint,
                   completed bigint, failed bigint, cancelled bigint, oldest_runnable_age interval,
                   max_pending bigint, fifo boolean, paused boolean, waiting bigint);
CREATE FUNCTION pgjq_router.all_queue_stats_on(target integer) RETURNS SETOF pgjq_router.queue_stats_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT * FROM pgjq.queue_stats;
$$;
CREATE FUNCTION pgjq_router.all_queue_stats() RETURNS SETOF pgjq_router.queue_stats_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_queue_stats_on'::regproc, NULL::pgjq_router.queue_stats_row)
$$;
-- A partitioned queue is one row: its partitions' counts added (max_pending holds per partition).
CREATE VIEW pgjq.queue_stats AS
    SELECT s.queue_name, sum(s.pending)::bigint AS pending, sum(s.scheduled)::bigint AS scheduled,
           sum(s.claimed)::bigint AS claimed, sum(s.running)::bigint AS running,
           sum(s.completed)::bigint AS completed, sum(s.failed)::bigint AS failed,
           sum(s.cancelled)::bigint AS cancelled, max(s.oldest_runnable_age) AS oldest_runnable_age,
           max(s.max_pending) AS max_pending, bool_or(s.fifo) AS fifo, bool_or(s.paused) AS paused,
           sum(s.waiting)::bigint AS waiting
      FROM pgjq_router.all_queue_stats() s GROUP BY s.queue_name;

CREATE TYPE pgjq_router.queue_metrics_row AS (queue_name text, unfinished bigint, completed bigint, failed bigint, cancelled bigint,
                   workers bigint, next_job_age interval, paused boolean);
CREATE FUNCTION pgjq_router.all_queue_metrics_on(target integer) RETURNS SETOF pgjq_router.queue_metrics_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT * FROM pgjq.queue_metrics;
$$;
CREATE FUNCTION pgjq_router.all_queue_metrics() RETURNS SETOF pgjq_router.queue_metrics_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_queue_metrics_on'::regproc, NULL::pgjq_router.queue_metrics_row)
$$;
CREATE VIEW pgjq.queue_metrics AS
    SELECT m.queue_name, sum(m.unfinished)::bigint AS unfinished, sum(m.completed)::bigint AS completed,
           sum(m.failed)::bigint AS failed, sum(m.cancelled)::bigint AS cancelled,
           sum(m.workers)::bigint AS workers, max(m.next_job_age) AS next_job_age, bool_or(m.paused) AS paused
      FROM pgjq_router.all_queue_metrics() m GROUP BY m.queue_name;

GRANT SELECT ON pgjq.jobs, pgjq.queue_stats, pgjq.queue_metrics TO PUBLIC;

-- Producers ----------------------------------------------------------------------------------------
-- One PL/Proxy call each: the job goes to its queue's node (a partitioned queue's: by group_key, else
-- unique_key, else at random). Each runs in its own transaction on the node (docs/scale-out.md).

CREATE FUNCTION pgjq.enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                             priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                             max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL,
                             group_key text DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                             timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL)
    RETURNS bigint LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.producer_node(queue_name, coalesce(group_key, unique_key), depends_on);
$$;
CREATE FUNCTION pgjq.try_enqueue(job_type text, payload jsonb DEFAULT '{}', queue_name text DEFAULT 'default',
                                 priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL,
                                 group_key text DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                                 timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL)
    RETURNS bigint LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.producer_node(queue_name, coalesce(group_key, unique_key), depends_on);
$$;

CREATE FUNCTION pgjq_router.enqueue_batch_on(node integer, job_type text, payloads jsonb, queue_name text,
                                             priority integer, run_at timestamptz, max_attempts integer,
                                             unique_keys text[], group_keys text[], depends_on bigint[],
                                             timeout interval, unique_for interval)
    RETURNS bigint[] LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.enqueue_batch(job_type, payloads, queue_name, priority, run_at, max_attempts, unique_keys,
                              group_keys, depends_on, timeout, unique_for);
$$;

-- A partitioned queue's batch is split by routing key, one call per partition (in node order), each
-- committing on its own: unlike on a node, an error part-way leaves the partitions before it enqueued, and
-- its DETAIL says how many jobs (docs/scale-out.md). The ids come back in payload order.
CREATE FUNCTION pgjq.enqueue_batch(job_type text, payloads jsonb, queue_name text DEFAULT 'default',
                                   priority integer DEFAULT 100, run_at timestamptz DEFAULT NULL,
                                   max_attempts integer DEFAULT NULL, unique_keys text[] DEFAULT NULL,
                                   group_keys text[] DEFAULT NULL, depends_on bigint[] DEFAULT NULL,
                                   timeout interval DEFAULT NULL, unique_for interval DEFAULT NULL)
    RETURNS bigint[] LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    target record;
    ids bigint[];
    result bigint[];
    enqueued integer := 0;
    enqueued_on integer[] := '{}';
    target_node integer;
    detail text;
    hint text;
BEGIN
    IF (SELECT count(*) FROM pgjq_router.placements p WHERE p.queue_name = enqueue_batch.queue_name) <= 1
       OR jsonb_typeof(payloads) IS DISTINCT FROM 'array' OR cardinality(depends_on) > 0 THEN
        -- One call (all or nothing): a queue with one partition, a malformed batch (the node says why), or
        -- jobs that depend on others, which all go to those jobs' node.
        IF cardinality(depends_on) > 0 THEN
            PERFORM pgjq_router.producer_node(queue_name, coalesce(group_keys[i], unique_keys[i]), depends_on)
               FROM generate_subscripts(coalesce(group_keys, unique_keys, ARRAY[NULL::text]), 1) i;
        END IF;
        RETURN pgjq_router.enqueue_batch_on(pgjq_router.producer_node(queue_name, NULL, depends_on), job_type, payloads,
                                            queue_name, priority, run_at, max_attempts, unique_keys, group_keys,
                                            depends_on, timeout, unique_for);
    END IF;
    IF cardinality(unique_keys) <> jsonb_array_length(payloads) OR cardinality(group_keys) <> jsonb_array_length(payloads) THEN
        RAISE EXCEPTION 'pgjq: unique_keys and group_keys hold one key (or NULL) per payload'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('%s payloads, %s unique keys, %s group keys', jsonb_array_length(payloads),
                                  cardinality(unique_keys), cardinality(group_keys));
    END IF;
    result := array_fill(NULL::bigint, ARRAY[jsonb_array_length(payloads)]);
    BEGIN
        FOR target IN
            SELECT pgjq_router.queue_node(queue_name, coalesce(group_keys[e.i], unique_keys[e.i])) AS node,
                   array_agg(e.i ORDER BY e.i) AS positions, jsonb_agg(e.payload ORDER BY e.i) AS payloads,
                   CASE WHEN unique_keys IS NOT NULL THEN array_agg(unique_keys[e.i] ORDER BY e.i) END AS unique_keys,
                   CASE WHEN group_keys IS NOT NULL THEN array_agg(group_keys[e.i] ORDER BY e.i) END AS group_keys
              FROM jsonb_array_elements(payloads) WITH ORDINALITY e(payload, i)
             GROUP BY 1 ORDER BY 1
        LOOP
            target_node := target.node;
            ids := pgjq_router.enqueue_batch_on(target.node, job_type, target.payloads, queue_name, priority, run_at,
                                                max_attempts, target.unique_keys, target.group_keys, depends_on,
                                                timeout, unique_for);
            FOR i IN 1 .. cardinality(target.positions) LOOP
                result[target.positions[i]] := ids[i];
            END LOOP;
            enqueued := enqueued + cardinality(ids);
            enqueued_on := enqueued_on || target.node;
        END LOOP;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        -- The partitions before the error stay enqueued: say how many jobs, so that nobody takes the error
        -- for all or nothing.
        GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
        PERFORM pgjq_router.raise_node_error(
            ROW(SQLSTATE, concat_ws(': ', 'node ' || target_node, SQLERRM), detail, hint)::pgjq_router.node_error,
            format('%s of the batch''s %s jobs were enqueued before this error%s, and stay.', enqueued,
                   jsonb_array_length(payloads),
                   CASE WHEN enqueued > 0 THEN ', on node ' || array_to_string(enqueued_on, ', ') ELSE '' END));
    END;
    RETURN result;
END
$$;

-- Workers ------------------------------------------------------------------------------------------

CREATE FUNCTION pgjq_router.claim_job_batch_on(node integer, worker_id text, job_types text[],
                                               batch_size integer, queue_name text)
    RETURNS SETOF pgjq.jobs LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT * FROM pgjq.claim_job_batch(worker_id, job_types, batch_size, queue_name);
$$;

-- Up to batch_size jobs from the queue's nodes. A queue on one node: one call there, its outcome the
-- caller's. Several (partitions, a move): visited in a random order until the batch is full. Each node's
-- claim commits there at once, so from the first jobs a node gives on, the call returns them whatever
-- happens next, and a later error becomes a WARNING: a cancel or a statement timeout too (PL/Proxy cancels
-- the node's claim in flight), which PL/pgSQL's OTHERS does not catch. Jobs kept from the caller would
-- wait out their lease and spend an attempt. A node that cannot be reached (PL/Proxy's XX000, a server
-- shutting down, a lost connection), or that the queue has left (finish_move dropped it there, the placement
-- read before that), is passed over with a NOTICE; any other error is raised if no node gave a job.
CREATE FUNCTION pgjq.claim_job_batch(worker_id text, job_types text[] DEFAULT NULL, batch_size integer DEFAULT 10,
                                     queue_name text DEFAULT 'default')
    RETURNS SETOF pgjq.jobs LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    target integer;
    targets integer[] := ARRAY(SELECT * FROM pgjq_router.claim_nodes(queue_name));
    claimed pgjq.jobs[] := '{}';
    failure pgjq_router.node_error;  -- the first error that is not passed over
    detail text;
    hint text;
BEGIN
    IF cardinality(targets) = 1 THEN
        -- A queue on one node (the usual case): one call, its outcome the caller's, no subtransaction.
        RETURN QUERY SELECT * FROM pgjq_router.claim_job_batch_on(targets[1], worker_id, job_types, batch_size, queue_name);
        RETURN;
    END IF;
    BEGIN
        FOREACH target IN ARRAY targets LOOP
            BEGIN
                -- One assignment: a node's jobs are in `claimed` as soon as its claim has returned, or not at all.
                claimed := claimed || ARRAY(SELECT c FROM pgjq_router.claim_job_batch_on(target, worker_id, job_types,
                                                                                    batch_size - cardinality(claimed),
                                                                                    queue_name) c);
            EXCEPTION WHEN OTHERS THEN
                IF SQLSTATE IN ('XX000', '57P01', '57P02', '57P03') OR SQLSTATE LIKE '08%'
                   OR (SQLSTATE = '42704' AND NOT EXISTS (SELECT FROM pgjq_router.placements p
                                                           WHERE p.queue_name = claim_job_batch.queue_name
                                                             AND p.node = target)) THEN
                    RAISE NOTICE 'pgjq: node % passed over: %', target, SQLERRM;
                ELSIF failure.code IS NULL THEN
                    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
                    failure := ROW(SQLSTATE, format('node %s: %s', target, SQLERRM), detail, hint);
                END IF;
            END;
            EXIT WHEN cardinality(claimed) >= batch_size;
        END LOOP;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        IF cardinality(claimed) = 0 THEN
            RAISE;
        END IF;
        RAISE WARNING 'pgjq: % (the % jobs claimed before are returned)', SQLERRM, cardinality(claimed);
    END;
    IF failure.code IS NOT NULL THEN
        IF cardinality(claimed) = 0 THEN
            PERFORM pgjq_router.raise_node_error(failure, NULL);
        END IF;
        RAISE WARNING 'pgjq: % (the jobs claimed on the other nodes are returned)', failure.message;
    END IF;
    RETURN QUERY SELECT * FROM unnest(claimed);
END
$$;

CREATE FUNCTION pgjq_router.complete_and_claim_on(node integer, worker_id text, completed_ids bigint[],
                                                  job_types text[], batch_size integer, queue_name text)
    RETURNS SETOF pgjq.jobs LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT * FROM pgjq.complete_and_claim(worker_id, completed_ids, job_types, batch_size, queue_name);
$$;

-- One round trip when the queue lives on one node and the finished jobs are its own (the common case);
-- otherwise complete_batch, then claim_job_batch.
CREATE FUNCTION pgjq.complete_and_claim(worker_id text, completed_ids bigint[], job_types text[] DEFAULT NULL,
                                        batch_size integer DEFAULT 10, queue_name text DEFAULT 'default')
    RETURNS SETOF pgjq.jobs LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    nodes integer[];
BEGIN
    nodes := ARRAY(SELECT * FROM pgjq_router.queue_nodes(queue_name));
    IF cardinality(nodes) = 1
       AND NOT EXISTS (SELECT FROM unnest(completed_ids) c WHERE c IS NULL OR c % 1024 <> nodes[1]) THEN
        RETURN QUERY SELECT * FROM pgjq_router.complete_and_claim_on(nodes[1], worker_id, completed_ids,
                                                                     job_types, batch_size, queue_name);
        RETURN;
    END IF;
    IF cardinality(completed_ids) > 0 THEN
        PERFORM pgjq.complete_batch(completed_ids, worker_id);
    END IF;
    RETURN QUERY SELECT * FROM pgjq.claim_job_batch(worker_id, job_types, batch_size, queue_name);
END
$$;

CREATE FUNCTION pgjq.complete(job_id bigint, worker_id text, result jsonb DEFAULT NULL)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.job_node(job_id);
$$;
CREATE FUNCTION pgjq.fail(job_id bigint, worker_id text, error_message text, retry_in interval DEFAULT NULL)
    RETURNS pgjq.job_status LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.job_node(job_id);
$$;
CREATE FUNCTION pgjq.heartbeat(job_id bigint, worker_id text)
    RETURNS timestamptz LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.job_node(job_id);
$$;
CREATE FUNCTION pgjq.progress(job_id bigint, worker_id text, progress integer, current_stage text DEFAULT NULL)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.job_node(job_id);
$$;

CREATE FUNCTION pgjq_router.complete_batch_on(node integer, job_ids bigint[], worker_id text)
    RETURNS integer LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.complete_batch(job_ids, worker_id);
$$;
-- One call per node of the jobs, each all or nothing and committed on its own. When a node fails (it is
-- down, or refuses its part), the other nodes' parts are completed all the same, and its error is raised
-- after them, with a DETAIL naming the nodes whose jobs were completed: the worker reports only the failed
-- node's jobs again. A malformed batch goes whole to one node, which says why.
CREATE FUNCTION pgjq.complete_batch(job_ids bigint[], worker_id text)
    RETURNS integer LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    targets integer[];
    target integer;
    completed integer := 0;
    completed_on integer[] := '{}';
    failure pgjq_router.node_error;  -- the first node's error
    detail text;
    hint text;
BEGIN
    IF cardinality(job_ids) = 0 THEN
        RETURN 0;
    END IF;
    IF job_ids IS NULL OR array_ndims(job_ids) > 1 OR EXISTS (SELECT FROM unnest(job_ids) j WHERE j IS NULL) THEN
        RETURN pgjq_router.complete_batch_on((SELECT min(n.node) FROM pgjq_router.nodes() n), job_ids, worker_id);
    END IF;
    targets := ARRAY(SELECT DISTINCT pgjq_router.job_node(j) FROM unnest(job_ids) j ORDER BY 1);
    IF cardinality(targets) = 1 THEN
        RETURN pgjq_router.complete_batch_on(targets[1], job_ids, worker_id);
    END IF;
    FOREACH target IN ARRAY targets LOOP
        BEGIN
            completed := completed
                + pgjq_router.complete_batch_on(target, ARRAY(SELECT j FROM unnest(job_ids) WITH ORDINALITY u(j, i)
                                                               WHERE j % 1024 = target ORDER BY i), worker_id);
            completed_on := completed_on || target;
        EXCEPTION WHEN OTHERS THEN
            IF failure.code IS NULL THEN
                GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
                failure := ROW(SQLSTATE, format('node %s: %s', target, SQLERRM), detail, hint);
            END IF;
        END;
    END LOOP;
    IF failure.code IS NOT NULL THEN
        PERFORM pgjq_router.raise_node_error(failure,
            CASE WHEN completed_on = '{}' THEN 'No node completed its part of the batch.'
                 ELSE format('The jobs of node %s were completed (%s jobs), each node''s on its own.',
                             array_to_string(completed_on, ', '), completed) END);
    END IF;
    RETURN completed;
END
$$;

-- An in-transaction claim holds its jobs in the caller's transaction; through the router that transaction
-- would be PL/Proxy's own, committed at once. Refused: claim on the queue's node (docs/scale-out.md).
CREATE FUNCTION pgjq_router.refuse_in_transaction(call text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'pgjq: % cannot run through the router', call USING ERRCODE = 'feature_not_supported',
        DETAIL = 'A call through the router commits on the node in its own transaction.',
        HINT = 'Connect to the queue''s node (pgjq_router.placements, pgjq_router.nodes()) and call it there.';
END
$$;
CREATE FUNCTION pgjq.claim_in_transaction(worker_id text, job_types text[] DEFAULT NULL,
                                          batch_size integer DEFAULT 10, queue_name text DEFAULT 'default')
    RETURNS SETOF pgjq.jobs LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pgjq_router.refuse_in_transaction('claim_in_transaction');
END
$$;
CREATE FUNCTION pgjq.complete_in_transaction(job_ids bigint[], worker_id text)
    RETURNS integer LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pgjq_router.refuse_in_transaction('complete_in_transaction');
    RETURN NULL;
END
$$;
CREATE FUNCTION pgjq.fail_in_transaction(job_id bigint, worker_id text, error_message text,
                                         retry_in interval DEFAULT NULL)
    RETURNS pgjq.job_status LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pgjq_router.refuse_in_transaction('fail_in_transaction');
    RETURN NULL;
END
$$;

-- Admin --------------------------------------------------------------------------------------------

CREATE FUNCTION pgjq_router.create_queue_on(node integer, queue_name text, max_pending bigint, fifo boolean,
                                            max_attempts integer, lease interval, group_concurrency integer,
                                            max_running integer, rate_limit integer, rate_interval interval,
                                            job_timeout interval)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.create_queue(queue_name, max_pending, fifo, max_attempts, lease, group_concurrency, max_running,
                             rate_limit, rate_interval, job_timeout);
$$;

CREATE FUNCTION pgjq_router.queue_exists_on(node integer, queue_name text) RETURNS boolean LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT EXISTS (SELECT FROM pgjq.queues q WHERE q.queue_name = queue_name);
$$;

-- A placed queue follows what the nodes hold, checked with the owner's rights, so that whoever may create or
-- drop a placed queue on its nodes (their capabilities decide) has the router follow, and nobody can forget
-- a queue against the nodes' word:
-- - mark_created notes that a placed queue exists on all its nodes;
-- - forget_placement removes a placement only once the queue existed and no node holds it any more.
-- Placing a queue is the router owner's alone (place_queue, or create_queue of a queue without a placement):
-- no function places one with the owner's rights, for it would let any role ask the nodes, as the owner,
-- which queues they hold, and take a name before the owner's place_queue.
CREATE FUNCTION pgjq_router.mark_created(queue_name text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pgjq_router.queue_nodes(queue_name) n WHERE NOT pgjq_router.queue_exists_on(n, queue_name)) THEN
        UPDATE pgjq_router.placements p SET created = true WHERE p.queue_name = mark_created.queue_name;
    END IF;
END
$$;
CREATE FUNCTION pgjq_router.forget_placement(queue_name text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pgjq_router.placements p WHERE p.queue_name = forget_placement.queue_name AND p.created)
       OR EXISTS (SELECT FROM pgjq_router.queue_nodes(queue_name) n WHERE pgjq_router.queue_exists_on(n, queue_name)) THEN
        RAISE EXCEPTION 'pgjq: the placement of queue "%" stays: a node holds the queue, or it was never created', queue_name
            USING ERRCODE = 'object_in_use';
    END IF;
    DELETE FROM pgjq_router.placements p WHERE p.queue_name = forget_placement.queue_name;
END
$$;
GRANT EXECUTE ON FUNCTION pgjq_router.queue_exists_on(integer, text), pgjq_router.mark_created(text),
    pgjq_router.forget_placement(text)
    TO PUBLIC;

-- With a placement (place_queue), each of the queue's nodes gets the queue; the nodes decide who may (the
-- caller needs admin there). A queue the router does not place yet is placed by the hash of its name, and
-- stays there (the placement is stored: adding nodes later moves nothing); placing is the router owner's
-- (whoever may write pgjq_router.placements), so others are refused before any node is asked.
CREATE FUNCTION pgjq.create_queue(queue_name text, max_pending bigint DEFAULT NULL, fifo boolean DEFAULT false,
                                  max_attempts integer DEFAULT 3, lease interval DEFAULT '5 minutes',
                                  group_concurrency integer DEFAULT 1, max_running integer DEFAULT NULL,
                                  rate_limit integer DEFAULT NULL, rate_interval interval DEFAULT '1 second',
                                  job_timeout interval DEFAULT NULL)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    node integer;
BEGIN
    IF queue_name IS NULL THEN
        RAISE EXCEPTION 'queue_name must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF EXISTS (SELECT FROM pgjq_router.placements p WHERE p.queue_name = create_queue.queue_name) THEN
        -- Where the queue is missing: a call again after a partial failure finishes the work.
        FOR node IN SELECT * FROM pgjq_router.queue_nodes(queue_name) n
                     WHERE NOT pgjq_router.queue_exists_on(n, queue_name) LOOP
            PERFORM pgjq_router.create_queue_on(node, queue_name, max_pending, fifo, max_attempts, lease,
                                                group_concurrency, max_running, rate_limit, rate_interval,
                                                job_timeout);
        END LOOP;
        PERFORM pgjq_router.mark_created(queue_name);
        RETURN;
    END IF;
    IF NOT has_table_privilege('pgjq_router.placements', 'INSERT') THEN
        RAISE EXCEPTION 'pgjq: queue "%" has no placement, and only the router''s owner places a queue', queue_name
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The router''s owner places it (pgjq_router.place_queue); then create it through the router.';
    END IF;
    SELECT n.node INTO node FROM pgjq_router.nodes() n ORDER BY n.node
    OFFSET (hashtext(queue_name)::bigint & 2147483647) % greatest((SELECT count(*) FROM pgjq_router.nodes()), 1)
     LIMIT 1;
    IF node IS NULL THEN
        RAISE EXCEPTION 'pgjq: the cluster has no nodes' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Add them with pgjq_router.add_node(conninfo).';
    END IF;
    IF EXISTS (SELECT FROM pgjq_router.nodes() n WHERE pgjq_router.queue_exists_on(n.node, queue_name)) THEN
        RAISE EXCEPTION 'pgjq: queue "%" exists on a node, but the router does not place it', queue_name
            USING ERRCODE = 'duplicate_object', HINT = 'pgjq_router.place_queue registers it where it is.';
    END IF;
    PERFORM pgjq_router.create_queue_on(node, queue_name, max_pending, fifo, max_attempts, lease, group_concurrency,
                                        max_running, rate_limit, rate_interval, job_timeout);
    INSERT INTO pgjq_router.placements (queue_name, partition, node, created) VALUES (queue_name, 0, node, true);
END
$$;

CREATE FUNCTION pgjq_router.alter_queue_on(node integer, queue_name text, max_pending bigint, fifo boolean,
                                           max_attempts integer, lease interval, retry_base interval,
                                           retry_cap interval, retention interval, clear_max_pending boolean,
                                           keep_completed boolean, group_concurrency integer,
                                           max_running integer, rate_limit integer, rate_interval interval,
                                           job_timeout interval)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.alter_queue(queue_name, max_pending, fifo, max_attempts, lease, retry_base, retry_cap, retention,
                            clear_max_pending, keep_completed, group_concurrency, max_running, rate_limit,
                            rate_interval, job_timeout);
$$;
CREATE FUNCTION pgjq.alter_queue(queue_name text, max_pending bigint DEFAULT NULL, fifo boolean DEFAULT NULL,
                                 max_attempts integer DEFAULT NULL, lease interval DEFAULT NULL,
                                 retry_base interval DEFAULT NULL, retry_cap interval DEFAULT NULL,
                                 retention interval DEFAULT NULL, clear_max_pending boolean DEFAULT false,
                                 keep_completed boolean DEFAULT NULL, group_concurrency integer DEFAULT NULL,
                                 max_running integer DEFAULT NULL, rate_limit integer DEFAULT NULL,
                                 rate_interval interval DEFAULT NULL, job_timeout interval DEFAULT NULL)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    node integer;
BEGIN
    FOR node IN SELECT * FROM pgjq_router.claim_nodes(queue_name) LOOP
        PERFORM pgjq_router.alter_queue_on(node, queue_name, max_pending, fifo, max_attempts, lease, retry_base,
                                           retry_cap, retention, clear_max_pending, keep_completed,
                                           group_concurrency, max_running, rate_limit, rate_interval, job_timeout);
    END LOOP;
END
$$;

CREATE FUNCTION pgjq_router.drop_queue_on(node integer, queue_name text, force boolean)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.drop_queue(queue_name, force);
$$;
-- Each node's drop commits on its own: if one refuses (55006: unfinished jobs), the nodes dropped before
-- it stay dropped and the placement stays; calling again finishes the work.
CREATE FUNCTION pgjq.drop_queue(queue_name text, force boolean DEFAULT false)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    node integer;
BEGIN
    FOR node IN SELECT * FROM pgjq_router.claim_nodes(queue_name) LOOP
        BEGIN
            PERFORM pgjq_router.drop_queue_on(node, queue_name, force);
        EXCEPTION WHEN undefined_object THEN
            NULL;  -- dropped there by an earlier call
        END;
    END LOOP;
    PERFORM pgjq_router.forget_placement(queue_name);
END
$$;

CREATE FUNCTION pgjq_router.pause_queue_on(node integer, queue_name text, pause boolean)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT CASE WHEN pause THEN pgjq.pause_queue(queue_name) ELSE pgjq.resume_queue(queue_name) END;
$$;
-- During a move that holds the new node paused, a resume leaves that node paused until the move ends.
CREATE FUNCTION pgjq.pause_queue(queue_name text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    node integer;
BEGIN
    FOR node IN SELECT * FROM pgjq_router.claim_nodes(queue_name) LOOP
        PERFORM pgjq_router.pause_queue_on(node, queue_name, true);
    END LOOP;
END
$$;
CREATE FUNCTION pgjq.resume_queue(queue_name text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    node integer;
BEGIN
    FOR node IN SELECT * FROM pgjq_router.claim_nodes(queue_name)
                EXCEPT SELECT p.node FROM pgjq_router.placements p
                        WHERE p.queue_name = resume_queue.queue_name AND p.hold_until_moved LOOP
        PERFORM pgjq_router.pause_queue_on(node, queue_name, false);
    END LOOP;
END
$$;

CREATE FUNCTION pgjq.cancel(job_id bigint) RETURNS boolean LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.job_node(job_id);
$$;
CREATE FUNCTION pgjq.retry(job_id bigint) RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.job_node(job_id);
$$;

-- Bulk operations on one queue: every node of the queue, the counts added.
CREATE FUNCTION pgjq_router.retry_failed_on(node integer, queue_name text, job_type text, failed_after timestamptz,
                                            failed_before timestamptz, max_jobs integer)
    RETURNS bigint LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.retry_failed(queue_name, job_type, failed_after, failed_before, max_jobs);
$$;
CREATE FUNCTION pgjq.retry_failed(queue_name text, job_type text DEFAULT NULL, failed_after timestamptz DEFAULT NULL,
                                  failed_before timestamptz DEFAULT NULL, max_jobs integer DEFAULT 1000)
    RETURNS bigint LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(sum(pgjq_router.retry_failed_on(n, queue_name, job_type, failed_after, failed_before, max_jobs)), 0)::bigint
      FROM pgjq_router.claim_nodes(queue_name) n;
$$;
CREATE FUNCTION pgjq_router.cancel_jobs_on(node integer, queue_name text, job_type text, created_after timestamptz,
                                           created_before timestamptz, status pgjq.job_status, max_jobs integer)
    RETURNS bigint LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.cancel_jobs(queue_name, job_type, created_after, created_before, status, max_jobs);
$$;
CREATE FUNCTION pgjq.cancel_jobs(queue_name text, job_type text DEFAULT NULL, created_after timestamptz DEFAULT NULL,
                                 created_before timestamptz DEFAULT NULL, status pgjq.job_status DEFAULT NULL,
                                 max_jobs integer DEFAULT 1000)
    RETURNS bigint LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(sum(pgjq_router.cancel_jobs_on(n, queue_name, job_type, created_after, created_before, status,
                                                   max_jobs)), 0)::bigint
      FROM pgjq_router.claim_nodes(queue_name) n;
$$;
CREATE FUNCTION pgjq_router.delete_jobs_on(node integer, queue_name text, job_type text, finished_after timestamptz,
                                           finished_before timestamptz, status pgjq.job_status, max_jobs integer)
    RETURNS bigint LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.delete_jobs(queue_name, job_type, finished_after, finished_before, status, max_jobs);
$$;
CREATE FUNCTION pgjq.delete_jobs(queue_name text, job_type text DEFAULT NULL, finished_after timestamptz DEFAULT NULL,
                                 finished_before timestamptz DEFAULT NULL, status pgjq.job_status DEFAULT NULL,
                                 max_jobs integer DEFAULT 1000)
    RETURNS bigint LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(sum(pgjq_router.delete_jobs_on(n, queue_name, job_type, finished_after, finished_before, status,
                                                   max_jobs)), 0)::bigint
      FROM pgjq_router.claim_nodes(queue_name) n;
$$;

-- Housekeeping on every node, the counts added.
CREATE FUNCTION pgjq_router.recover_stale_all() RETURNS SETOF integer LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON ALL;
    SELECT pgjq.recover_stale();
$$;
CREATE FUNCTION pgjq.recover_stale() RETURNS integer LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(sum(n), 0)::integer FROM pgjq_router.recover_stale_all() n;
$$;
CREATE FUNCTION pgjq_router.prune_all(older_than interval) RETURNS SETOF bigint LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON ALL;
    SELECT pgjq.prune(older_than);
$$;
CREATE FUNCTION pgjq.prune(older_than interval) RETURNS bigint LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(sum(n), 0)::bigint FROM pgjq_router.prune_all(older_than) n;
$$;

-- Schedules: a schedule lives on a node of its queue (a partitioned queue's: by the schedule's name);
-- the calls by name reach every node.
CREATE FUNCTION pgjq_router.schedule_on(target integer, schedule_name text, cron text, job_type text,
                                        payload jsonb, queue_name text, priority integer, max_attempts integer,
                                        time_zone text, missed text, paused boolean)
    RETURNS timestamptz LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT pgjq.schedule(schedule_name, cron, job_type, payload, queue_name, priority, max_attempts, time_zone,
                         missed, paused);
$$;
CREATE FUNCTION pgjq_router.schedule_exists_on(target integer, schedule_name text) RETURNS boolean
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT EXISTS (SELECT FROM pgjq.schedules s WHERE s.schedule_name = schedule_name);
$$;
-- On a node, schedule() replaces a schedule of the same name; a schedule on another node would fire
-- beside the new one, so that is refused (unschedule it first).
CREATE FUNCTION pgjq.schedule(schedule_name text, cron text, job_type text, payload jsonb DEFAULT '{}',
                              queue_name text DEFAULT 'default', priority integer DEFAULT 100,
                              max_attempts integer DEFAULT NULL, time_zone text DEFAULT 'UTC',
                              missed text DEFAULT 'skip', paused boolean DEFAULT false)
    RETURNS timestamptz LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    target integer := pgjq_router.queue_node(queue_name, schedule_name);
    elsewhere integer;
BEGIN
    SELECT n.node INTO elsewhere FROM pgjq_router.nodes() n
     WHERE n.node <> target AND pgjq_router.schedule_exists_on(n.node, schedule_name) LIMIT 1;
    IF elsewhere IS NOT NULL THEN
        RAISE EXCEPTION 'pgjq: schedule "%" exists on node %', schedule_name, elsewhere
            USING ERRCODE = 'duplicate_object', HINT = 'Unschedule it first: two copies would both fire.';
    END IF;
    RETURN pgjq_router.schedule_on(target, schedule_name, cron, job_type, payload, queue_name, priority,
                                   max_attempts, time_zone, missed, paused);
END
$$;
CREATE FUNCTION pgjq_router.schedule_call_all(schedule_name text, action text) RETURNS SETOF boolean
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON ALL;
    SELECT CASE action WHEN 'unschedule' THEN pgjq.unschedule(schedule_name)
                       WHEN 'pause' THEN pgjq.pause_schedule(schedule_name)
                       WHEN 'resume' THEN pgjq.resume_schedule(schedule_name) END;
$$;
CREATE FUNCTION pgjq.unschedule(schedule_name text) RETURNS boolean
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(bool_or(r), false) FROM pgjq_router.schedule_call_all(schedule_name, 'unschedule') r;
$$;
CREATE FUNCTION pgjq.pause_schedule(schedule_name text) RETURNS boolean
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(bool_or(r), false) FROM pgjq_router.schedule_call_all(schedule_name, 'pause') r;
$$;
CREATE FUNCTION pgjq.resume_schedule(schedule_name text) RETURNS boolean
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(bool_or(r), false) FROM pgjq_router.schedule_call_all(schedule_name, 'resume') r;
$$;

-- Capabilities: a grant for one queue reaches that queue's nodes, a grant for every queue every node.
CREATE FUNCTION pgjq_router.capability_on(node integer, role_name name, capability text, queue_name text,
                                          grant_it boolean)
    RETURNS void LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT CASE WHEN grant_it THEN
                CASE capability WHEN 'producer' THEN pgjq.grant_producer(role_name, queue_name)
                                WHEN 'worker' THEN pgjq.grant_worker(role_name, queue_name)
                                WHEN 'admin' THEN pgjq.grant_admin(role_name, queue_name)
                                WHEN 'observer' THEN pgjq.grant_observer(role_name, queue_name) END
           ELSE CASE capability WHEN 'producer' THEN pgjq.revoke_producer(role_name, queue_name)
                                WHEN 'worker' THEN pgjq.revoke_worker(role_name, queue_name)
                                WHEN 'admin' THEN pgjq.revoke_admin(role_name, queue_name)
                                WHEN 'observer' THEN pgjq.revoke_observer(role_name, queue_name) END END;
$$;
CREATE FUNCTION pgjq_router.set_capability(role_name name, capability text, queue_name text, grant_it boolean)
    RETURNS void LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT pgjq_router.capability_on(n, role_name, capability, queue_name, grant_it)
      FROM (SELECT node FROM pgjq_router.nodes() WHERE queue_name IS NULL
            UNION SELECT * FROM pgjq_router.claim_nodes(queue_name) WHERE queue_name IS NOT NULL) t(n);
$$;
CREATE FUNCTION pgjq.grant_producer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'producer', queue_name, true); END;
CREATE FUNCTION pgjq.grant_worker(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'worker', queue_name, true); END;
CREATE FUNCTION pgjq.grant_admin(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'admin', queue_name, true); END;
CREATE FUNCTION pgjq.grant_observer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'observer', queue_name, true); END;
CREATE FUNCTION pgjq.revoke_producer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'producer', queue_name, false); END;
CREATE FUNCTION pgjq.revoke_worker(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'worker', queue_name, false); END;
CREATE FUNCTION pgjq.revoke_admin(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'admin', queue_name, false); END;
CREATE FUNCTION pgjq.revoke_observer(role_name name, queue_name text DEFAULT NULL) RETURNS void LANGUAGE sql
    BEGIN ATOMIC SELECT pgjq_router.set_capability(role_name, 'observer', queue_name, false); END;

-- The cluster's shape: nodes, placement, moves (the router's owner; docs/scale-out.md) ----------------

CREATE FUNCTION pgjq_router.join_cluster_on(node integer) RETURNS integer LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT pgjq.join_cluster(node);
$$;

-- A role with USAGE on a server may create its own user mapping, and PL/Proxy would then connect it to the
-- nodes as whatever user the mapping names: only the server's owner and superusers may map users for
-- pgjq_nodes.
CREATE FUNCTION pgjq_router.guard_user_mappings() RETURNS event_trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_event_trigger_ddl_commands() c
                 JOIN pg_user_mappings m ON m.umid = c.objid
                 JOIN pg_foreign_server s ON s.oid = m.srvid
                WHERE c.classid = 'pg_user_mapping'::regclass AND s.srvname = 'pgjq_nodes'
                  AND NOT pg_has_role(current_user, s.srvowner, 'USAGE')
                  AND NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user)) THEN
        RAISE EXCEPTION 'pgjq: only the owner of server pgjq_nodes may map users for it'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;
CREATE EVENT TRIGGER pgjq_router_guard_user_mappings ON ddl_command_end
    WHEN TAG IN ('CREATE USER MAPPING', 'ALTER USER MAPPING')
    EXECUTE FUNCTION pgjq_router.guard_user_mappings();

-- Adds a node (a database with pgjq, no unfinished jobs) as the next node number and makes it draw ids
-- that name it. Its conninfo is checked (checked_conninfo): no user, no password; passwords belong in user
-- mappings of pgjq_nodes (the PUBLIC mapping made here connects as the calling role, with .pgpass or trust).
CREATE FUNCTION pgjq_router.add_node(conninfo text) RETURNS integer
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    node integer := 0;
    first boolean;
BEGIN
    LOCK TABLE pgjq_router.placements IN SHARE ROW EXCLUSIVE MODE;  -- one add_node at a time
    first := NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_server WHERE srvname = 'pgjq_nodes');
    IF NOT first THEN
        SELECT count(*) INTO node FROM pgjq_router.nodes();
        IF node >= 1024 THEN
            RAISE EXCEPTION 'pgjq: a cluster holds at most 1024 nodes' USING ERRCODE = 'program_limit_exceeded';
        END IF;
    END IF;
    PERFORM pgjq_router.checked_conninfo(conninfo, node);
    IF first THEN
        -- Text transfer: a node's regrole and enum values cross as names, never as oids. PL/Proxy refuses
        -- a cluster without partitions, so the server comes with its first node.
        EXECUTE format('CREATE SERVER pgjq_nodes FOREIGN DATA WRAPPER plproxy'
                       ' OPTIONS (modular_mapping %L, disable_binary %L, p0 %L)', '1', '1', conninfo);
        CREATE USER MAPPING FOR PUBLIC SERVER pgjq_nodes;
        GRANT USAGE ON FOREIGN SERVER pgjq_nodes TO PUBLIC;
    ELSE
        EXECUTE format('ALTER SERVER pgjq_nodes OPTIONS (ADD %I %L)', 'p' || node, conninfo);
    END IF;
    PERFORM pgjq_router.join_cluster_on(node);
    IF node = 0 THEN
        -- Every node has a queue named default (CREATE EXTENSION pgjq). The router places node 0's, so that
        -- calls that leave queue_name at its default reach one queue, as on a single server, and adding
        -- nodes moves nothing (a partitioned default would re-route its keys at every add_node).
        INSERT INTO pgjq_router.placements (queue_name, partition, node, created)
        VALUES ('default', 0, 0, pgjq_router.queue_exists_on(0, 'default'))
        ON CONFLICT DO NOTHING;
    ELSE
        -- Capabilities granted for every queue hold on every node, the new one too.
        PERFORM pgjq_router.copy_grants(0, node, NULL);
    END IF;
    RETURN node;
END
$$;

-- The same check for every node whoever sets its conninfo: ALTER SERVER pgjq_nodes OPTIONS (SET p1 ...) is
-- the documented way to change one (a failover), and the server's owner and superusers may add one by hand.
CREATE FUNCTION pgjq_router.guard_node_conninfos() RETURNS event_trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pgjq_router.checked_conninfo(n.conninfo, n.node) FROM pgjq_router.nodes() n;
END
$$;
CREATE EVENT TRIGGER pgjq_router_guard_node_conninfos ON ddl_command_end
    WHEN TAG IN ('CREATE SERVER', 'ALTER SERVER')
    EXECUTE FUNCTION pgjq_router.guard_node_conninfos();

-- Places a queue the router does not place yet: partition i on nodes[i] (one node: an ordinary queue).
-- The queue may already exist on those nodes (a queue made on a node before the router knew it);
-- pgjq.create_queue through the router creates it where it is missing.
CREATE FUNCTION pgjq_router.place_queue(queue_name text, nodes integer[]) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF queue_name IS NULL OR nodes IS NULL OR cardinality(nodes) = 0 THEN
        RAISE EXCEPTION 'pgjq: place_queue needs a queue name and at least one node'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(nodes) > 1024 OR (SELECT count(DISTINCT n) FROM unnest(nodes) n) <> cardinality(nodes) THEN
        RAISE EXCEPTION 'pgjq: the partitions of a queue need distinct nodes' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pgjq_router.checked_node(n) FROM unnest(nodes) n;
    IF EXISTS (SELECT FROM pgjq_router.placements p WHERE p.queue_name = place_queue.queue_name) THEN
        RAISE EXCEPTION 'pgjq: queue "%" is placed already', queue_name USING ERRCODE = 'duplicate_object',
            HINT = 'pgjq_router.move_queue moves a partition to another node.';
    END IF;
    INSERT INTO pgjq_router.placements (queue_name, partition, node)
    SELECT place_queue.queue_name, (o.i - 1)::integer, o.n FROM unnest(nodes) WITH ORDINALITY o(n, i);
    PERFORM pgjq_router.mark_created(queue_name);
END
$$;

CREATE FUNCTION pgjq_router.queue_settings_on(node integer, queue_name text)
    RETURNS TABLE (max_pending bigint, fifo boolean, max_attempts integer, lease interval, retry_base interval,
                   retry_cap interval, retention interval, keep_completed boolean, paused boolean,
                   group_concurrency integer, max_running integer, rate_limit integer, rate_interval interval,
                   job_timeout interval, schedules bigint, unfinished bigint, failed bigint)
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT q.max_pending, q.fifo, q.max_attempts, q.lease, q.retry_base, q.retry_cap, q.retention,
           q.keep_completed, q.paused, q.group_concurrency, q.max_running, q.rate_limit, q.rate_interval,
           q.job_timeout,
           (SELECT count(*) FROM pgjq.schedules s WHERE s.queue_name = q.queue_name) AS schedules,
           (SELECT count(*) FROM pgjq.live_jobs j WHERE j.queue_name = q.queue_name) AS unfinished,
           (SELECT count(*) FROM pgjq.jobs j WHERE j.queue_name = q.queue_name AND j.status = 'failed') AS failed
      FROM pgjq.queues q WHERE q.queue_name = queue_name;
$$;

-- The capabilities granted for one queue (NULL: for every queue) on a node, to give them to another.
CREATE FUNCTION pgjq_router.queue_grants_on(node integer, queue_name text)
    RETURNS TABLE (grantee text, capability text) LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(node);
    SELECT g.grantee::text AS grantee, g.capability FROM pgjq.grants g
     WHERE g.queue_name IS NOT DISTINCT FROM queue_name;
$$;
CREATE FUNCTION pgjq_router.copy_grants(from_node integer, to_node integer, queue_name text) RETURNS void
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT pgjq_router.capability_on(to_node, g.grantee::name, g.capability, queue_name, true)
      FROM pgjq_router.queue_grants_on(from_node, queue_name) g;
$$;

-- Moves a partition of a queue to another node without losing or repeating a job: the queue is made on
-- the new node with the same settings and capabilities, producers reach the new node from now on, and
-- workers drain both until finish_move drops the old node's (emptied) queue. With keep_order (the default,
-- and always for a FIFO queue) the new node's queue stays paused until then, so that no job overtakes one
-- on the old node and no group key runs on both nodes at once; without it, both run during the move. Refused
-- while the queue has schedules on the old node (they would fire there, then go with the queue): unschedule
-- them and schedule them again through the router after the move. Safe to call again after a failure.
CREATE FUNCTION pgjq_router.move_queue(queue_name text, to_node integer, partition integer DEFAULT 0,
                                       keep_order boolean DEFAULT true)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    placement pgjq_router.placements;
    settings record;
    hold boolean;
BEGIN
    PERFORM pgjq_router.checked_node(to_node);
    SELECT * INTO placement FROM pgjq_router.placements p
     WHERE p.queue_name = move_queue.queue_name AND p.partition = move_queue.partition FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM pgjq_router.raise_unplaced_queue(queue_name);
    END IF;
    IF placement.node = to_node THEN
        RETURN;
    END IF;
    IF placement.draining_node IS NOT NULL THEN
        RAISE EXCEPTION 'pgjq: queue "%" is still leaving node %', queue_name, placement.draining_node
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'pgjq_router.finish_move ends that move first.';
    END IF;
    IF EXISTS (SELECT FROM pgjq_router.queue_nodes(queue_name) n WHERE n = to_node) THEN
        RAISE EXCEPTION 'pgjq: node % holds (or is leaving) another partition of queue "%"', to_node, queue_name
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The partitions of a queue live on distinct nodes.';
    END IF;
    SELECT * INTO settings FROM pgjq_router.queue_settings_on(placement.node, queue_name);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'queue "%" does not exist on node %', queue_name, placement.node
            USING ERRCODE = 'undefined_object';
    END IF;
    IF settings.schedules > 0 THEN
        RAISE EXCEPTION 'pgjq: queue "%" has % schedules on node %', queue_name, settings.schedules, placement.node
            USING ERRCODE = 'object_in_use',
                  HINT = 'Unschedule them, and schedule them again through the router once the queue has moved.';
    END IF;
    hold := settings.fifo OR coalesce(keep_order, true);
    IF NOT pgjq_router.queue_exists_on(to_node, queue_name) THEN
        PERFORM pgjq_router.create_queue_on(to_node, queue_name, settings.max_pending, settings.fifo,
                                            settings.max_attempts, settings.lease, settings.group_concurrency,
                                            settings.max_running, settings.rate_limit, settings.rate_interval,
                                            settings.job_timeout);
    END IF;
    PERFORM pgjq_router.alter_queue_on(to_node, queue_name, settings.max_pending, settings.fifo,
                                       settings.max_attempts, settings.lease, settings.retry_base, settings.retry_cap,
                                       settings.retention, settings.max_pending IS NULL, settings.keep_completed,
                                       settings.group_concurrency, coalesce(settings.max_running, 0),
                                       coalesce(settings.rate_limit, 0), settings.rate_interval,
                                       coalesce(settings.job_timeout, interval '0'));
    PERFORM pgjq_router.copy_grants(placement.node, to_node, queue_name);
    -- Set either way: a call again after a failure may decide differently from the first.
    PERFORM pgjq_router.pause_queue_on(to_node, queue_name, hold OR settings.paused);
    UPDATE pgjq_router.placements p SET node = to_node, draining_node = placement.node, hold_until_moved = hold
     WHERE p.queue_name = move_queue.queue_name AND p.partition = move_queue.partition;
END
$$;

-- Ends a move once the old node holds no unfinished and no failed job of the queue (read together: with no
-- job unfinished, none can fail before the drop): drops it there (with its
-- history) and resumes the new node's queue if the move held it and the queue is not paused. Returns false,
-- changing nothing, while jobs remain there (a NOTICE says which): failed jobs must be retried or deleted
-- on the old node first, so that no dead letter is dropped unseen.
CREATE FUNCTION pgjq_router.finish_move(queue_name text, partition integer DEFAULT 0) RETURNS boolean
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    placement pgjq_router.placements;
    settings record;
BEGIN
    SELECT * INTO placement FROM pgjq_router.placements p
     WHERE p.queue_name = finish_move.queue_name AND p.partition = finish_move.partition FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM pgjq_router.raise_unplaced_queue(queue_name);
    END IF;
    IF placement.draining_node IS NULL THEN
        RETURN true;
    END IF;
    SELECT * INTO settings FROM pgjq_router.queue_settings_on(placement.draining_node, queue_name);
    IF FOUND THEN
        IF settings.unfinished > 0 THEN
            RETURN false;
        END IF;
        IF settings.failed > 0 THEN
            RAISE NOTICE 'pgjq: queue "%" has % failed jobs on node %: retry or delete them there first',
                queue_name, settings.failed, placement.draining_node;
            RETURN false;
        END IF;
        BEGIN
            -- drop_queue waits for enqueues in flight and refuses while unfinished jobs remain: no job can
            -- arrive on the old node after the check.
            PERFORM pgjq_router.drop_queue_on(placement.draining_node, queue_name, false);
        EXCEPTION
            WHEN object_in_use THEN
                RETURN false;
            WHEN undefined_object THEN
                NULL;  -- dropped meanwhile
        END;
    END IF;
    IF placement.hold_until_moved AND NOT coalesce(settings.paused, false) THEN
        PERFORM pgjq_router.pause_queue_on(placement.node, queue_name, false);
    END IF;
    UPDATE pgjq_router.placements p SET draining_node = NULL, hold_until_moved = false
     WHERE p.queue_name = finish_move.queue_name AND p.partition = finish_move.partition;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION pgjq_router.add_node(text), pgjq_router.place_queue(text, integer[]),
    pgjq_router.move_queue(text, integer, integer, boolean), pgjq_router.finish_move(text, integer),
    pgjq_router.join_cluster_on(integer), pgjq_router.copy_grants(integer, integer, text)
    FROM PUBLIC;

-- What the pgjq command line and dashboard read, for the whole cluster ---------------------------------

CREATE TYPE pgjq_router.schedules_row AS (schedule_name text, cron text, time_zone text, job_type text, payload jsonb, queue_name text,
                   priority integer, max_attempts integer, missed text, paused boolean, scheduled_by text,
                   next_run timestamptz, retry_at timestamptz, failures integer, last_run timestamptz,
                   last_job_id bigint, last_error text, last_error_at timestamptz, jobs_enqueued bigint,
                   firings_missed bigint, created_at timestamptz, updated_at timestamptz);
CREATE FUNCTION pgjq_router.all_schedules_on(target integer) RETURNS SETOF pgjq_router.schedules_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT * FROM pgjq.schedules;
$$;
CREATE FUNCTION pgjq_router.all_schedules() RETURNS SETOF pgjq_router.schedules_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_schedules_on'::regproc, NULL::pgjq_router.schedules_row)
$$;
CREATE VIEW pgjq.schedules AS SELECT * FROM pgjq_router.all_schedules();

-- One row per node and database: datname says which node ("node 1: app").
CREATE TYPE pgjq_router.worker_status_row AS (worker_type text, pid integer, datname name, started_at timestamptz, last_run timestamptz,
                   next_wake timestamptz, jobs_recovered bigint, jobs_notified bigint, jobs_pruned bigint,
                   errors bigint, last_error text, last_error_at timestamptz, stopped boolean, state text,
                   waiting_since timestamptz, wake_reason text);
CREATE FUNCTION pgjq_router.all_worker_status_on(target integer) RETURNS SETOF pgjq_router.worker_status_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT w.worker_type, w.pid,
           ('node ' || pgjq.cluster_node() || ': ' || coalesce(w.datname::text, '-'))::name AS datname,
           w.started_at, w.last_run, w.next_wake, w.jobs_recovered, w.jobs_notified, w.jobs_pruned, w.errors,
           w.last_error, w.last_error_at, w.stopped, w.state, w.waiting_since, w.wake_reason
      FROM pgjq.worker_status() w;
$$;
CREATE FUNCTION pgjq_router.all_worker_status() RETURNS SETOF pgjq_router.worker_status_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_worker_status_on'::regproc, NULL::pgjq_router.worker_status_row)
$$;
CREATE FUNCTION pgjq.worker_status()
    RETURNS TABLE (worker_type text, pid integer, datname name, started_at timestamptz, last_run timestamptz,
                   next_wake timestamptz, jobs_recovered bigint, jobs_notified bigint, jobs_pruned bigint,
                   errors bigint, last_error text, last_error_at timestamptz, stopped boolean, state text,
                   waiting_since timestamptz, wake_reason text)
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.all_worker_status() ORDER BY 3, 1
$$;
CREATE TYPE pgjq_router.maintenance_duties_row AS (datname name, duty text, runs bigint, done bigint, errors bigint, failures_in_row integer,
                   last_run timestamptz, next_run timestamptz, retry_at timestamptz, last_error text,
                   last_error_at timestamptz);
CREATE FUNCTION pgjq_router.all_maintenance_duties_on(target integer) RETURNS SETOF pgjq_router.maintenance_duties_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT ('node ' || pgjq.cluster_node() || ': ' || d.datname)::name AS datname, d.duty, d.runs, d.done, d.errors,
           d.failures_in_row, d.last_run, d.next_run, d.retry_at, d.last_error, d.last_error_at
      FROM pgjq.maintenance_duties() d;
$$;
CREATE FUNCTION pgjq_router.all_maintenance_duties() RETURNS SETOF pgjq_router.maintenance_duties_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_maintenance_duties_on'::regproc, NULL::pgjq_router.maintenance_duties_row)
$$;
CREATE FUNCTION pgjq.maintenance_duties()
    RETURNS TABLE (datname name, duty text, runs bigint, done bigint, errors bigint, failures_in_row integer,
                   last_run timestamptz, next_run timestamptz, retry_at timestamptz, last_error text,
                   last_error_at timestamptz)
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.all_maintenance_duties() ORDER BY 1, 2
$$;

-- Latency: a partitioned queue's histograms added bucket by bucket (every node has the same bounds), its
-- quantiles computed by a node's own pgjq.histogram_quantile.
CREATE TYPE pgjq_router.latency_row AS (queue_name text, measure text, jobs bigint, sum_seconds double precision,
                   le double precision[], buckets bigint[]);
CREATE FUNCTION pgjq_router.all_latency_on(target integer) RETURNS SETOF pgjq_router.latency_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT l.queue_name, l.measure, l.jobs, l.sum_seconds, l.le, l.buckets FROM pgjq.queue_latency l;
$$;
CREATE FUNCTION pgjq_router.all_latency() RETURNS SETOF pgjq_router.latency_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_latency_on'::regproc, NULL::pgjq_router.latency_row)
$$;
CREATE FUNCTION pgjq_router.quantiles_on(target integer, q double precision[], le double precision[], buckets bigint[])
    RETURNS SETOF double precision LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT pgjq.histogram_quantile(x, le, buckets) FROM unnest(q) WITH ORDINALITY u(x, i) ORDER BY i;
$$;
-- Computed by the first node that answers (the function's one home is the node's extension).
CREATE FUNCTION pgjq_router.quantiles(q double precision[], le double precision[], buckets bigint[])
    RETURNS double precision[] LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    target integer;
BEGIN
    FOR target IN SELECT x.node FROM pgjq_router.nodes() x LOOP
        BEGIN
            RETURN ARRAY(SELECT pgjq_router.quantiles_on(target, q, le, buckets));
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'pgjq: node % left out: %', target, SQLERRM;
        END;
    END LOOP;
    RETURN NULL;
END
$$;
CREATE VIEW pgjq.queue_latency AS
    SELECT m.queue_name, m.measure, m.jobs, m.sum_seconds / nullif(m.jobs, 0)::double precision AS mean_seconds,
           p.v[1] AS p50_seconds, p.v[2] AS p90_seconds, p.v[3] AS p99_seconds, m.sum_seconds, m.le, m.buckets
      FROM (SELECT a.queue_name, a.measure, sum(a.jobs)::bigint AS jobs, sum(a.sum_seconds) AS sum_seconds,
                   min(a.le) AS le,
                   ARRAY(SELECT sum(b.n)::bigint FROM pgjq_router.all_latency() x, unnest(x.buckets) WITH ORDINALITY b(n, i)
                          WHERE x.queue_name = a.queue_name AND x.measure = a.measure GROUP BY b.i ORDER BY b.i) AS buckets
              FROM pgjq_router.all_latency() a GROUP BY a.queue_name, a.measure) m,
           LATERAL (SELECT pgjq_router.quantiles(ARRAY[0.5, 0.9, 0.99], m.le, m.buckets) AS v) p;

-- The Prometheus text of every node, each sample labelled with its node (node="1"), each metric family's
-- HELP and TYPE once, its samples from every node together after them.
CREATE TYPE pgjq_router.metrics_row AS (node integer, metrics text);
CREATE FUNCTION pgjq_router.all_metrics_on(target integer) RETURNS SETOF pgjq_router.metrics_row
    LANGUAGE plproxy AS $$
    CLUSTER 'pgjq_nodes';
    RUN ON pgjq_router.checked_node(target);
    SELECT pgjq.cluster_node() AS node, pgjq.metrics() AS metrics;
$$;
CREATE FUNCTION pgjq_router.all_metrics() RETURNS SETOF pgjq_router.metrics_row
    LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT * FROM pgjq_router.gather('pgjq_router.all_metrics_on'::regproc, NULL::pgjq_router.metrics_row)
$$;
CREATE FUNCTION pgjq.metrics() RETURNS text LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH lines AS (
        SELECT m.node, l.line, l.n,
               count(*) FILTER (WHERE l.line ~ '^# HELP ') OVER (PARTITION BY m.node ORDER BY l.n) AS block
          FROM pgjq_router.all_metrics() m, regexp_split_to_table(m.metrics, E'\n') WITH ORDINALITY l(line, n)
         WHERE l.line <> ''),
    named AS (  -- each line with its metric family: the name in its block's HELP line
        SELECT l.*, h.family
          FROM lines l
          LEFT JOIN (SELECT node, block, split_part(line, ' ', 3) AS family FROM lines WHERE line ~ '^# HELP ') h
                 ON h.node = l.node AND h.block = l.block),
    families AS (  -- in the order of the lowest node that has each, whose HELP and TYPE lines are kept
        SELECT DISTINCT ON (family) family, node AS header_node, n AS first FROM named ORDER BY family, node, n)
    SELECT string_agg(x.line, E'\n' ORDER BY f.header_node, f.first, x.header DESC, x.node, x.n) || E'\n'
      FROM families f
      JOIN (SELECT family, node, n, true AS header, line FROM named WHERE line ~ '^#'
            UNION ALL
            SELECT family, node, n, false,
                   CASE WHEN line ~ '^[a-zA-Z_:][a-zA-Z0-9_:]*\{'
                        THEN regexp_replace(line, '^([a-zA-Z_:][a-zA-Z0-9_:]*)\{', '\1{node="' || node || '",')
                        ELSE regexp_replace(line, '^([a-zA-Z_:][a-zA-Z0-9_:]*) ', '\1{node="' || node || '"} ') END
              FROM named WHERE line !~ '^#') x
        ON x.family IS NOT DISTINCT FROM f.family AND (NOT x.header OR x.node = f.header_node)
$$;

GRANT SELECT ON pgjq.schedules, pgjq.queue_latency TO PUBLIC;
