-- The functions' statements are planned once per backend (generic plans). These checks count the
-- index entries a call reads, so a plan that walks a whole index instead of looking up the rows it
-- is about fails here, whatever the machine's speed.
SELECT pgjq.create_queue('crowded');
SELECT pgjq.create_queue('sparse');
SELECT cardinality(pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 10000) g), 'crowded'))
     + cardinality(pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 10000) g), 'crowded')) AS crowded;
SELECT cardinality(pgjq.enqueue_batch('t', '[1, 2, 3, 4, 5, 6]', 'sparse')) AS sparse;
VACUUM ANALYZE pgjq.live_jobs;

\set pkey_entries_read 'pg_stat_get_xact_tuples_returned(''pgjq.live_jobs_pkey''::regclass)'

-- claim: the claimed rows are updated through their ids, not by a join that walks the primary key
-- through the 20 000 older jobs of the other queue
BEGIN;
SELECT count(*) AS claimed FROM pgjq.claim_job_batch('w', NULL, 3, 'sparse');
SELECT :pkey_entries_read < 100 AS claim_reads_few_pkey_entries;
COMMIT;
-- complete_and_claim: the same for the completion and the next claim
BEGIN;
SELECT count(*) AS claimed FROM pgjq.complete_and_claim('w',
  (SELECT array_agg(id) FROM pgjq.jobs WHERE queue_name = 'sparse' AND status = 'claimed'), NULL, 3, 'sparse');
SELECT :pkey_entries_read < 100 AS complete_and_claim_reads_few_pkey_entries;
COMMIT;
SELECT status, count(*) FROM pgjq.jobs WHERE queue_name = 'sparse' GROUP BY status ORDER BY status;

-- claim_in_transaction walks the claim index in its order and stops at the batch size (a plan that
-- sorted the queue's pending jobs would read all 20 000 entries); its completion looks up its ids
\set claim_entries_read 'pg_stat_get_xact_tuples_returned(''pgjq.live_jobs_claim_idx''::regclass)'
BEGIN;
SELECT array_agg(id) AS tx_ids, count(*) AS claimed FROM pgjq.claim_in_transaction('w', NULL, 3, 'crowded') \gset
SELECT :claimed AS claimed, :claim_entries_read < 100 AS claim_in_transaction_reads_few_claim_entries;
SELECT pgjq.complete_in_transaction(:'tx_ids', 'w') AS completed;
SELECT :pkey_entries_read < 100 AS complete_in_transaction_reads_few_pkey_entries;
COMMIT;

-- stale-lease recovery looks only at jobs in flight
UPDATE pgjq.live_jobs SET lease_expires_at = now() - interval '1 minute' WHERE queue_name = 'sparse' AND status = 'claimed';
BEGIN;
SELECT pgjq.recover_stale() AS recovered;
SELECT :pkey_entries_read < 100 AS recovery_reads_few_pkey_entries;
COMMIT;

SELECT pgjq.drop_queue('crowded', force => true);
SELECT pgjq.drop_queue('sparse', force => true);
