-- 33_attempt_errors: every failed attempt keeps its error, its worker and its times (pgjq.job_errors): a
-- worker's fail with attempts left and on the last one, fail_in_transaction, an expired lease, with attempts
-- left and on the last one. A retry by hand counts on; a job that never fails has none; the newest 20 of a
-- job are kept and the view says how many went; pgjq.prune removes those of jobs gone. Who may read them,
-- role by role.
\set VERBOSITY default
SELECT setval('pgjq.job_id_seq', 33000) AS id_base;
SELECT pgjq.create_queue('errs', max_attempts => 3);
CREATE FUNCTION claim_as(worker text, job_type text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT id FROM pgjq.claim_job_batch(worker, ARRAY[job_type], 1, 'errs') $$;
CREATE FUNCTION errors_of(job bigint) RETURNS TABLE (failure integer, attempt integer, worker_id text,
                                                     error text, timed boolean, not_kept bigint)
  LANGUAGE sql AS
  $$ SELECT failure, attempt, worker_id, error, started_at <= failed_at, failures_not_kept
       FROM pgjq.job_errors WHERE job_id = job ORDER BY failure $$;

-- a worker's fail, twice with attempts left, then on the last attempt: three errors, each with its worker
SELECT pgjq.enqueue('flaky', '{}', 'errs') AS j \gset
SELECT claim_as('w1', 'flaky') = :j AS claimed;
SELECT pgjq.fail(:j, 'w1', 'connection refused', retry_in => '0');
SELECT claim_as('w2', 'flaky') = :j AS claimed;
SELECT pgjq.fail(:j, 'w2', 'timeout talking to the bank', retry_in => '0');
SELECT claim_as('w1', 'flaky') = :j AS claimed;
SELECT pgjq.fail(:j, 'w1', 'card declined');
SELECT * FROM errors_of(:j);
SELECT status, last_error FROM pgjq.jobs WHERE id = :j;
-- a retry by hand starts the attempts again; the failures count on
SELECT pgjq.retry(:j) AS retried;
SELECT claim_as('w3', 'flaky') = :j AS claimed;
SELECT pgjq.fail(:j, 'w3', 'still declined', retry_in => '0');
SELECT failure, attempt, worker_id, error FROM errors_of(:j) WHERE failure = 4;

-- a job that never fails has none; one that completes after a failure keeps that one
SELECT pgjq.enqueue('steady', '{}', 'errs') AS ok \gset
SELECT claim_as('w1', 'steady') = :ok AS claimed;
SELECT pgjq.complete(:ok, 'w1');
SELECT count(*) AS errors_of_a_job_that_never_failed FROM pgjq.job_errors WHERE job_id = :ok;
SELECT pgjq.enqueue('steady', '{}', 'errs') AS recovered \gset
SELECT claim_as('w1', 'steady') = :recovered AS claimed;
SELECT pgjq.fail(:recovered, 'w1', 'flaky network', retry_in => '0');
SELECT claim_as('w2', 'steady') = :recovered AS claimed;
SELECT pgjq.complete(:recovered, 'w2');
SELECT failure, attempt, worker_id, error FROM errors_of(:recovered);

-- fail_in_transaction: the attempt began in this transaction
SELECT pgjq.enqueue('in_tx', '{}', 'errs') AS tx \gset
BEGIN;
SELECT id = :tx AS claimed FROM pgjq.claim_in_transaction('tw', ARRAY['in_tx'], 1, 'errs');
SELECT pgjq.fail_in_transaction(:tx, 'tw', 'rolled back by the handler', retry_in => '0');
COMMIT;
SELECT * FROM errors_of(:tx);
SELECT pgjq.cancel(:tx) AS cancelled;

-- an expired lease (the clock moved by hand): attempts left, then the last one
SELECT pgjq.enqueue('lapsing', '{}', 'errs') AS lapsed \gset
UPDATE pgjq.live_jobs SET max_attempts = 2 WHERE id = :lapsed;
SELECT claim_as('w9', 'lapsing') = :lapsed AS claimed;
UPDATE pgjq.live_jobs SET lease_expires_at = now() - interval '1 minute' WHERE id = :lapsed;
SELECT pgjq.recover_stale() AS recovered;
SELECT claim_as('w8', 'lapsing') = :lapsed AS claimed;
UPDATE pgjq.live_jobs SET lease_expires_at = now() - interval '1 minute' WHERE id = :lapsed;
SELECT pgjq.recover_stale() AS recovered;
SELECT * FROM errors_of(:lapsed);
SELECT status, last_error FROM pgjq.jobs WHERE id = :lapsed;

-- the newest 20 failures of a job are kept: of 23, failures 4 to 23, and the view says 3 went
SELECT pgjq.enqueue('many', '{}', 'errs') AS many \gset
UPDATE pgjq.live_jobs SET max_attempts = 1000 WHERE id = :many;
\o /dev/null
SELECT format('SELECT claim_as(%L, %L)', 'w', 'many'), format('SELECT pgjq.fail(%s, %L, %L, retry_in => %L)', :many, 'w', 'failure ' || g, '0')
  FROM generate_series(1, 23) g \gexec
\o
SELECT count(*) AS kept, min(failure) AS oldest, max(failure) AS newest, min(failures_not_kept) AS not_kept,
       max(failures_not_kept) AS not_kept_on_every_row
  FROM pgjq.job_errors WHERE job_id = :many;
SELECT error FROM errors_of(:many) ORDER BY failure DESC LIMIT 1;
-- an error is kept up to 8192 bytes, like last_error
SELECT claim_as('w', 'many') = :many AS claimed;
SELECT pgjq.fail(:many, 'w', repeat('x', 10000), retry_in => '0');
SELECT octet_length(error) <= 8192 AS capped, right(error, 30) AS marked
  FROM pgjq.job_errors WHERE job_id = :many AND failure = 24;

-- who may read them: pgjq.jobs' rule
CREATE ROLE regress_err_producer;
CREATE ROLE regress_err_other;
CREATE ROLE regress_err_observer;
CREATE ROLE regress_err_nobody;
SELECT pgjq.grant_producer('regress_err_producer', 'errs'), pgjq.grant_producer('regress_err_other', 'errs'),
       pgjq.grant_observer('regress_err_observer', 'errs');
SET ROLE regress_err_producer;
SELECT pgjq.enqueue('own', '{}', 'errs') AS own \gset
RESET ROLE;
SELECT claim_as('w', 'own') = :own AS claimed;
SELECT pgjq.fail(:own, 'w', 'the producer''s job failed', retry_in => '0');
SET ROLE regress_err_producer;
SELECT job_id = :own AS own_job, error FROM pgjq.job_errors;
RESET ROLE;
SET ROLE regress_err_other;
SELECT count(*) AS another_producer_sees FROM pgjq.job_errors WHERE job_id = :own;
RESET ROLE;
SET ROLE regress_err_observer;
SELECT count(*) AS the_observer_sees_every_failure_of_the_queue FROM pgjq.job_errors;
RESET ROLE;
SET ROLE regress_err_nobody;
SELECT count(*) AS a_role_without_capabilities_sees FROM pgjq.job_errors;
SELECT count(*) FROM pgjq.attempt_errors;
RESET ROLE;

-- pgjq.prune removes the failures of jobs gone, not those of jobs kept
SELECT pgjq.cancel(:many) AS cancelled;
SELECT pgjq.prune(older_than => '0') > 0 AS pruned;
SELECT count(*) AS left_of_pruned_jobs FROM pgjq.attempt_errors WHERE job_id IN (:recovered, :tx, :many, :lapsed);
SELECT count(*) AS left_of_live_jobs FROM pgjq.attempt_errors WHERE job_id IN (:j, :own);

DROP FUNCTION claim_as(text, text), errors_of(bigint);
