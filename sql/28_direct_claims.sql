-- A leased claim updates its jobs through the table access method (core/direct_claim.hpp): it reads the
-- claim index and never descends the primary key, which the claim's statement does for every job it
-- updates. Its jobs, their order and every column it returns are the statement's
-- (pgjq.direct_claims = off runs the statement). Where the table has something the statement would apply
-- and it would not (a trigger of the owner's, a transaction that is not READ COMMITTED), the statement runs.
-- A CHECK constraint of the table applies to a claim either way, with the statement's error.
CREATE FUNCTION public.primary_key_reads() RETURNS bigint LANGUAGE sql
    AS $$ SELECT pg_catalog.pg_stat_get_xact_numscans('pgjq.live_jobs_pkey'::regclass) $$;

-- Two queues with the same jobs: priorities, types, a job not due yet, a job with a timeout of its own, and
-- a queue timeout shorter than the lease.
SELECT pgjq.create_queue(q, lease => '10 minutes', job_timeout => '2 minutes')
  FROM unnest(ARRAY['direct_q', 'statement_q']) q;
SELECT count(pgjq.enqueue('type' || (g % 3), jsonb_build_object('n', g), q,
                          priority => CASE WHEN g % 4 = 0 THEN 200 ELSE 100 END,
                          run_at => CASE WHEN g = 5 THEN now() + interval '1 hour' END,
                          timeout => CASE WHEN g = 2 THEN interval '30 seconds' END))
  FROM unnest(ARRAY['direct_q', 'statement_q']) q, generate_series(1, 14) g;

CREATE TABLE public.claimed_rows (path text, call int, n int, job_type text, priority int, status pgjq.job_status,
                                  payload jsonb, attempts int, worker_id text, lease interval, timeout interval,
                                  claimed_by regrole, heartbeat_is_claim boolean, result jsonb,
                                  completed_at timestamptz);
CREATE FUNCTION public.claim_into_table(path text, call int, queue text, types text[], batch int) RETURNS bigint
LANGUAGE sql AS $$
    INSERT INTO public.claimed_rows
    SELECT path, call, (payload->>'n')::int, job_type, priority, status, payload, attempts, worker_id,
           lease_expires_at - claimed_at, timeout_at - claimed_at, claimed_by, heartbeat_at = claimed_at, result,
           completed_at
      FROM pgjq.claim_job_batch('w1', types, batch, queue);
    SELECT count(*) FROM public.claimed_rows c WHERE c.path = claim_into_table.path AND c.call = claim_into_table.call
$$;

-- The direct path: claims read no primary-key entry.
BEGIN;
SELECT public.primary_key_reads() AS before \gset
SELECT public.claim_into_table('direct', 1, 'direct_q', NULL, 3),
       public.claim_into_table('direct', 2, 'direct_q', ARRAY['type1'], 2),
       public.claim_into_table('direct', 3, 'direct_q', NULL, 20);
SELECT public.primary_key_reads() - :before AS primary_key_reads_by_direct_claims;
COMMIT;
-- The statement: the same calls.
BEGIN;
SET LOCAL pgjq.direct_claims = off;
SELECT public.primary_key_reads() AS before \gset
SELECT public.claim_into_table('statement', 1, 'statement_q', NULL, 3),
       public.claim_into_table('statement', 2, 'statement_q', ARRAY['type1'], 2),
       public.claim_into_table('statement', 3, 'statement_q', NULL, 20);
SELECT public.primary_key_reads() - :before > 0 AS statement_reads_the_primary_key;
COMMIT;

-- Both took the same jobs, in the same order, with the same columns (the job with its own timeout leased
-- for 30 seconds, the others for the queue's timeout); the job not due was left.
SELECT call, n, job_type, priority, status, attempts, worker_id, lease, timeout, claimed_by, heartbeat_is_claim,
       result, completed_at
  FROM public.claimed_rows WHERE path = 'direct' ORDER BY call, priority DESC, n;
SELECT count(*) AS rows_that_differ
  FROM ((SELECT call, n, job_type, priority, status, payload, attempts, worker_id, lease, timeout, claimed_by,
                heartbeat_is_claim, result, completed_at, row_number() OVER (PARTITION BY call ORDER BY ctid)
           FROM public.claimed_rows WHERE path = 'direct'
         EXCEPT
         SELECT call, n, job_type, priority, status, payload, attempts, worker_id, lease, timeout, claimed_by,
                heartbeat_is_claim, result, completed_at, row_number() OVER (PARTITION BY call ORDER BY ctid)
           FROM public.claimed_rows WHERE path = 'statement')
        UNION ALL
        (SELECT call, n, job_type, priority, status, payload, attempts, worker_id, lease, timeout, claimed_by,
                heartbeat_is_claim, result, completed_at, row_number() OVER (PARTITION BY call ORDER BY ctid)
           FROM public.claimed_rows WHERE path = 'statement'
         EXCEPT
         SELECT call, n, job_type, priority, status, payload, attempts, worker_id, lease, timeout, claimed_by,
                heartbeat_is_claim, result, completed_at, row_number() OVER (PARTITION BY call ORDER BY ctid)
           FROM public.claimed_rows WHERE path = 'direct')) d;
-- What the table holds of both queues is the same too, and the in-flight index finds every claimed job.
SELECT queue_name, status, count(*), sum(attempts) FROM pgjq.live_jobs
 WHERE queue_name IN ('direct_q', 'statement_q') GROUP BY 1, 2 ORDER BY 1, 2;
SET enable_seqscan = off;
SELECT count(*) AS claimed_through_in_flight_index FROM pgjq.live_jobs WHERE queue_name = 'direct_q' AND status > 'pending';
RESET enable_seqscan;

-- A completion finds the jobs a direct claim took, as held by their worker.
SELECT pgjq.complete_batch(array_agg(id), 'w1') FROM pgjq.live_jobs WHERE queue_name = 'direct_q' AND status = 'claimed';

-- A trigger of the owner's on pgjq.live_jobs: claims run the statement, and the trigger sees them. Dropped,
-- claims are direct again.
SELECT count(pgjq.enqueue('late', '{}', 'direct_q')) FROM generate_series(1, 4);
CREATE TABLE public.claims_seen (id bigint);
CREATE FUNCTION public.see_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.claims_seen VALUES (NEW.id);
    RETURN NEW;
END
$$;
CREATE TRIGGER see_claim BEFORE UPDATE ON pgjq.live_jobs FOR EACH ROW EXECUTE FUNCTION public.see_claim();
BEGIN;
SELECT public.primary_key_reads() AS before \gset
SELECT count(*) FROM pgjq.claim_job_batch('w1', NULL, 2, 'direct_q');
SELECT public.primary_key_reads() - :before > 0 AS statement_ran, (SELECT count(*) FROM public.claims_seen) AS seen;
COMMIT;
DROP TRIGGER see_claim ON pgjq.live_jobs;
BEGIN;
SELECT public.primary_key_reads() AS before \gset
SELECT count(*) FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
SELECT public.primary_key_reads() - :before AS primary_key_reads, (SELECT count(*) FROM public.claims_seen) AS seen;
COMMIT;

-- REPEATABLE READ: the statement runs (it raises a serialization failure where a direct claim would pass
-- a job over).
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT public.primary_key_reads() AS before \gset
SELECT count(*) FROM pgjq.claim_job_batch('w1', NULL, 1, 'direct_q');
SELECT public.primary_key_reads() - :before > 0 AS statement_ran;
COMMIT;

-- A CHECK constraint the owner adds: a claim that breaks it fails with the statement's error, and takes
-- nothing.
SELECT count(pgjq.enqueue('checked', '{}', 'direct_q')) FROM generate_series(1, 2);
ALTER TABLE pgjq.live_jobs ADD CONSTRAINT no_w9 CHECK (worker_id IS DISTINCT FROM 'w9');
\set VERBOSITY terse
SELECT count(*) FROM pgjq.claim_job_batch('w9', NULL, 1, 'direct_q');
SET pgjq.direct_claims = off;
SELECT count(*) FROM pgjq.claim_job_batch('w9', NULL, 1, 'direct_q');
RESET pgjq.direct_claims;
\set VERBOSITY default
ALTER TABLE pgjq.live_jobs DROP CONSTRAINT no_w9;
SELECT count(*) AS pending_left FROM pgjq.live_jobs WHERE queue_name = 'direct_q' AND status = 'pending';

-- A claim writes the job's claimed version on the page of its pending version, where live_jobs' fill factor
-- keeps room for it (see the upgrade script to 0.2.0). Jobs enqueued one by one and in a batch, on pages
-- shared with earlier tests' jobs, claimed by both paths. Each claim is one transaction, which keeps every
-- version it replaced until it ends, so the last jobs of a page may find its room taken: most, not all.
-- (With fillfactor 90, 8 % of them did.)
SELECT pgjq.create_queue('pages_q');
SELECT count(pgjq.enqueue('page', jsonb_build_object('n', g, 'to', 'user' || g || '@example.com'), 'pages_q'))
  FROM generate_series(1, 300) g;
SELECT cardinality(pgjq.enqueue_batch(
    'page', (SELECT jsonb_agg(jsonb_build_object('n', g, 'to', 'user' || g || '@example.com'))
               FROM generate_series(301, 1500) g), 'pages_q'));
CREATE TABLE public.pending_pages AS
SELECT id, (ctid::text::point)[0] AS page FROM pgjq.live_jobs WHERE queue_name = 'pages_q';
SELECT count(*) FROM pgjq.claim_job_batch('w1', NULL, 800, 'pages_q');
SET pgjq.direct_claims = off;
SELECT count(*) FROM pgjq.claim_job_batch('w1', NULL, 700, 'pages_q');
RESET pgjq.direct_claims;
SELECT count(*) AS claimed,
       count(*) FILTER (WHERE (j.ctid::text::point)[0] = p.page) >= 0.8 * count(*) AS most_on_their_page
  FROM pgjq.live_jobs j JOIN public.pending_pages p USING (id) WHERE j.status = 'claimed';
SELECT pgjq.drop_queue('pages_q', true);
DROP TABLE public.pending_pages;

SELECT pgjq.drop_queue(q, true) FROM unnest(ARRAY['direct_q', 'statement_q']) q;
DROP TABLE public.claimed_rows, public.claims_seen;
DROP FUNCTION public.claim_into_table(text, int, text, text[], int), public.see_claim(), public.primary_key_reads();
