-- A node of a pgjq cluster (docs/scale-out.md): join_cluster makes the node draw job ids congruent to its
-- node number modulo 1024, so that a router finds a job's node from its id alone. In a database of its own:
-- the earlier files leave unfinished jobs behind.
\set regress_db :DBNAME
CREATE DATABASE regress_pgjq_cluster_node;
\c regress_pgjq_cluster_node
CREATE EXTENSION pgjq;
SELECT pgjq.create_queue('node_q');
SELECT pgjq.cluster_node() IS NULL AS not_in_a_cluster;

-- Refused while unfinished jobs carry ids that do not name the node, or failed and cancelled ones that retry
-- would bring back with such an id.
SELECT pgjq.enqueue('t', '{}', queue_name => 'node_q') AS before_join \gset
SELECT pgjq.join_cluster(5);
SELECT pgjq.cancel(:before_join);
SELECT pgjq.join_cluster(5);
SELECT pgjq.delete_jobs('node_q');

-- Bad node numbers are refused with 22023 and change nothing.
\set VERBOSITY sqlstate
SELECT pgjq.join_cluster(-1);
SELECT pgjq.join_cluster(1024);
SELECT pgjq.join_cluster(NULL);
\set VERBOSITY default
SELECT pgjq.cluster_node() IS NULL AS still_not_in_a_cluster;

SELECT pgjq.join_cluster(5);
SELECT pgjq.cluster_node();
-- Every id drawn now names node 5, single or batched, and lies above every id drawn before.
SELECT pgjq.enqueue('t', '{}', queue_name => 'node_q') AS single \gset
SELECT :single % 1024 AS residue, :single > :before_join AS above_history;
SELECT bool_and(i % 1024 = 5) AS batch_names_node, count(*)
  FROM unnest(pgjq.enqueue_batch('t', '[{}, {}, {}]', queue_name => 'node_q')) i;
INSERT INTO pgjq.jobs (queue_name, job_type) VALUES ('node_q', 't');
SELECT bool_and(id % 1024 = 5) AS all_live_jobs_name_node FROM pgjq.live_jobs;

-- Joining again as the same node changes nothing; as another node is refused, even once idle.
SELECT pgjq.join_cluster(5);
SELECT pgjq.enqueue('t', '{}', queue_name => 'node_q') % 1024 AS residue_after_rejoin;
SELECT pgjq.join_cluster(6);
SELECT pgjq.cancel_jobs('node_q');
SELECT pgjq.delete_jobs('node_q');
SELECT pgjq.join_cluster(6);
SELECT pgjq.cluster_node();

-- After a restore from a logical dump the sequence keeps its value but not its increment: the unfinished
-- jobs name the node, and joining again makes new ids name it too.
SELECT pgjq.enqueue('t', '{}', queue_name => 'node_q') AS before_restore \gset
ALTER SEQUENCE pgjq.job_id_seq INCREMENT BY 1 START WITH 1;
SELECT pgjq.cluster_node() IS NULL AS forgotten;
SELECT pgjq.join_cluster(5);
SELECT pgjq.enqueue('t', '{}', queue_name => 'node_q') % 1024 AS residue_after_restore,
       pgjq.enqueue('t', '{}', queue_name => 'node_q') > :before_restore AS above_the_restored;

-- Only the extension's owner may join: a plain role is refused.
CREATE ROLE regress_pgjq_stranger;
SET ROLE regress_pgjq_stranger;
SELECT pgjq.join_cluster(7);
SELECT pgjq.cluster_node();
RESET ROLE;
DROP ROLE regress_pgjq_stranger;
\c :regress_db
DROP DATABASE regress_pgjq_cluster_node;
