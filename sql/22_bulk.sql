-- 22_bulk: retry_failed, cancel_jobs and delete_jobs, a queue admin's operations on many jobs by filters.
-- Each call handles at most max_jobs jobs and returns how many; callers loop until 0. The depth counters
-- are checked against real counts after every step.
\set VERBOSITY default
SET timezone = 'UTC';
SELECT setval('pgjq.job_id_seq', 22000) AS id_base;
SELECT pgjq.create_queue('bulk', max_attempts => 1);
SELECT pgjq.create_queue('bystander', max_attempts => 1);
CREATE FUNCTION depth_matches(q text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT (SELECT coalesce(sum(unfinished), 0) FROM pgjq.queue_depth WHERE queue_name = q)
          = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = q) $$;
CREATE FUNCTION statuses(q text) RETURNS TABLE (job_type text, status pgjq.job_status, n bigint) LANGUAGE sql AS
  $$ SELECT job_type, status, count(*) FROM pgjq.jobs WHERE queue_name = q GROUP BY 1, 2 ORDER BY 1, 2 $$;
-- n jobs of a type, claimed and failed for good (max_attempts 1)
CREATE FUNCTION failed_jobs(q text, t text, n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE j record;
BEGIN
    PERFORM pgjq.enqueue_batch(t, (SELECT jsonb_agg(g) FROM generate_series(1, n) g), q);
    FOR j IN SELECT id FROM pgjq.claim_job_batch('w', ARRAY[t], n, q) LOOP
        PERFORM pgjq.fail(j.id, 'w', 'boom');
    END LOOP;
END $$;

SELECT failed_jobs('bulk', 'a', 7), failed_jobs('bulk', 'b', 3), failed_jobs('bystander', 'a', 2);
SELECT * FROM statuses('bulk');

-- retry_failed in batches: 4 + 4 + 2, then 0
SELECT pgjq.retry_failed('bulk', max_jobs => 4) AS first, pgjq.retry_failed('bulk', max_jobs => 4) AS second;
SELECT pgjq.retry_failed('bulk', max_jobs => 4) AS third, pgjq.retry_failed('bulk', max_jobs => 4) AS done;
SELECT * FROM statuses('bulk');
SELECT bool_and(attempts = 0 AND run_at <= now()) AS fresh_attempts FROM pgjq.jobs WHERE queue_name = 'bulk';
SELECT depth_matches('bulk'), * FROM statuses('bystander');
SELECT pending FROM pgjq.queue_stats WHERE queue_name = 'bulk';

-- Filters: job type, and when it failed ([failed_after, failed_before))
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 100, 'bulk');
SELECT count(pgjq.fail(id, 'w', 'again')) FROM pgjq.live_jobs WHERE queue_name = 'bulk';
UPDATE pgjq.finished_jobs SET failed_at = '2026-01-01'::timestamptz + (id - 22000) * interval '1 hour'
 WHERE queue_name = 'bulk';
SELECT pgjq.retry_failed('bulk', 'b') AS type_b;
SELECT pgjq.retry_failed('bulk', failed_after => '2026-01-01 03:00', failed_before => '2026-01-01 05:00') AS two_hours;
SELECT id - 22000 AS n, job_type, status FROM pgjq.jobs WHERE queue_name = 'bulk' AND status = 'pending' ORDER BY id;
SELECT pgjq.retry_failed('bulk', 'nope') AS no_such_type;
SELECT depth_matches('bulk');

-- A job whose unique_key an unfinished job holds stays failed, is not counted, and the call that ends the loop
-- says how many
SELECT pgjq.enqueue('u', '{}', 'bulk', unique_key => 'k1') AS u1 \gset
SELECT count(*) FROM pgjq.claim_job_batch('w', ARRAY['u'], 1, 'bulk');
SELECT pgjq.fail(:u1, 'w', 'x');
SELECT pgjq.enqueue('u', '{}', 'bulk', unique_key => 'k1') AS holder \gset
SELECT pgjq.retry_failed('bulk', 'u') AS retried;
SELECT status FROM pgjq.jobs WHERE id = :u1;
-- two failed jobs of one key, no holder: the first comes back, the second then finds its key held
SELECT pgjq.cancel(:holder);
SELECT pgjq.enqueue('u', '{}', 'bulk', unique_key => 'k1') AS u2 \gset
SELECT count(*) FROM pgjq.claim_job_batch('w', ARRAY['u'], 1, 'bulk');
SELECT pgjq.fail(:u2, 'w', 'x');
SELECT pgjq.retry_failed('bulk', 'u') AS retried;
SELECT id = :u1 AS first_back, status FROM pgjq.jobs WHERE job_type = 'u' AND status <> 'cancelled' ORDER BY id;
SELECT depth_matches('bulk');

-- retry (of one job) shares the same statement: a held key is still PJ004, the job still failed
\set VERBOSITY sqlstate
SELECT pgjq.retry(:u2);
\set VERBOSITY default
SELECT status FROM pgjq.jobs WHERE id = :u2;

-- Grouped jobs come back waiting for their turn, and start as their group allows
SELECT pgjq.create_queue('grouped', max_attempts => 1);
SELECT pgjq.enqueue('g', '{"n": 1}', 'grouped', group_key => 'x') AS g1 \gset
SELECT pgjq.enqueue('g', '{"n": 2}', 'grouped', group_key => 'x') AS g2 \gset
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 10, 'grouped');
SELECT pgjq.fail(:g1, 'w', 'x');
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 10, 'grouped');
SELECT pgjq.fail(:g2, 'w', 'x');
SELECT pgjq.retry_failed('grouped') AS retried;
SELECT id = :g1 AS first, status FROM pgjq.jobs WHERE queue_name = 'grouped' ORDER BY id;
SELECT depth_matches('grouped');

-- cancel_jobs: unfinished jobs by type, enqueue time and status
SELECT pgjq.enqueue_batch('c', '[1, 2, 3, 4, 5, 6]', 'bulk') IS NOT NULL AS enqueued;
SELECT pgjq.enqueue('d', '{}', 'bulk') AS d1 \gset
SELECT count(*) FROM pgjq.claim_job_batch('holder', ARRAY['c'], 2, 'bulk');
SELECT pgjq.cancel_jobs('bulk', 'c', status => 'claimed') AS claimed_cancelled;
-- their worker learns it at its next call
\set VERBOSITY sqlstate
SELECT pgjq.complete(min(id), 'holder') FROM pgjq.jobs WHERE job_type = 'c' AND status = 'cancelled';
\set VERBOSITY default
SELECT pgjq.cancel_jobs('bulk', 'c', max_jobs => 3) AS three, pgjq.cancel_jobs('bulk', 'c', max_jobs => 3) AS one,
       pgjq.cancel_jobs('bulk', 'c') AS done;
SELECT status, count(*) FROM pgjq.jobs WHERE job_type = 'c' GROUP BY 1;
UPDATE pgjq.live_jobs SET created_at = '2026-01-01' WHERE id = :d1;
SELECT pgjq.cancel_jobs('bulk', created_before => '2026-01-02') AS old_ones;
SELECT status FROM pgjq.jobs WHERE id = :d1;
SELECT pgjq.cancel_jobs('bulk', created_after => now() + interval '1 day') AS none_in_future;
SELECT depth_matches('bulk');
-- waiting jobs too; cancelling a group's live job starts the next
SELECT pgjq.enqueue('g', '{"n": 3}', 'grouped', group_key => 'y') AS g3 \gset
SELECT pgjq.enqueue('g', '{"n": 4}', 'grouped', group_key => 'y') AS g4 \gset
SELECT pgjq.cancel_jobs('grouped', status => 'pending') AS pending_cancelled;
SELECT id IN (:g3) AS was_g3, status FROM pgjq.jobs WHERE queue_name = 'grouped' ORDER BY id;
SELECT pgjq.cancel_jobs('grouped') AS rest;
SELECT status, count(*) FROM pgjq.jobs WHERE queue_name = 'grouped' GROUP BY 1;
SELECT depth_matches('grouped');
SELECT pgjq.cancel_jobs('bulk') AS everything_left, pgjq.cancel_jobs('bulk') AS then_nothing;
SELECT count(*) AS live FROM pgjq.live_jobs WHERE queue_name = 'bulk';
SELECT depth_matches('bulk'), depth_matches('bystander');

-- delete_jobs: finished jobs by type, finishing time and status; live jobs are untouched
SELECT pgjq.enqueue('live', '{}', 'bulk') AS live1 \gset
UPDATE pgjq.finished_jobs SET finished_at = '2026-01-01' WHERE queue_name = 'bulk' AND job_type = 'a';
SELECT pgjq.delete_jobs('bulk', finished_before => '2026-02-01', max_jobs => 3) AS three;
SELECT pgjq.delete_jobs('bulk', finished_before => '2026-02-01') AS rest_of_old;
SELECT pgjq.delete_jobs('bulk', status => 'failed') AS failed_deleted;
SELECT pgjq.delete_jobs('bulk', 'c') AS type_c;
SELECT status, count(*) FROM pgjq.jobs WHERE queue_name = 'bulk' GROUP BY 1 ORDER BY 1;
SELECT pgjq.delete_jobs('bulk') AS all_finished, pgjq.delete_jobs('bulk') AS then_nothing;
SELECT id = :live1 AS live_kept, status FROM pgjq.jobs WHERE queue_name = 'bulk';
SELECT * FROM statuses('bystander');
SELECT depth_matches('bulk');

-- Roles: a queue's admin only
CREATE ROLE regress_bulk_admin;
CREATE ROLE regress_bulk_other_admin;
CREATE ROLE regress_bulk_producer;
CREATE ROLE regress_bulk_observer;
SELECT pgjq.grant_admin('regress_bulk_admin', 'bulk'), pgjq.grant_admin('regress_bulk_other_admin', 'bystander'),
       pgjq.grant_producer('regress_bulk_producer', 'bulk'), pgjq.grant_observer('regress_bulk_observer');
SET ROLE regress_bulk_admin;
SELECT pgjq.cancel_jobs('bulk') AS cancelled, pgjq.retry_failed('bulk') AS retried, pgjq.delete_jobs('bulk') AS deleted;
SELECT pgjq.cancel_jobs('bystander');
SELECT pgjq.retry_failed('bystander');
SELECT pgjq.delete_jobs('bystander');
RESET ROLE;
SET ROLE regress_bulk_other_admin;
SELECT pgjq.retry_failed('bulk');
RESET ROLE;
SET ROLE regress_bulk_producer;
SELECT pgjq.cancel_jobs('bulk');
SELECT pgjq.retry_failed('bulk');
SELECT pgjq.delete_jobs('bulk');
RESET ROLE;
SET ROLE regress_bulk_observer;
SELECT pgjq.delete_jobs('bulk');
RESET ROLE;
SELECT * FROM statuses('bystander');

-- Bad input
SELECT pgjq.retry_failed(NULL);
SELECT pgjq.retry_failed('Bad Name');
SELECT pgjq.retry_failed('no-such-queue');
SELECT pgjq.retry_failed('bulk', '');
SELECT pgjq.retry_failed('bulk', repeat('t', 201));
SELECT pgjq.retry_failed('bulk', max_jobs => 0);
SELECT pgjq.retry_failed('bulk', max_jobs => 10001);
SELECT pgjq.retry_failed('bulk', max_jobs => NULL);
SELECT pgjq.cancel_jobs(NULL);
SELECT pgjq.cancel_jobs('no-such-queue');
SELECT pgjq.cancel_jobs('bulk', status => 'completed');
SELECT pgjq.cancel_jobs('bulk', status => 'finished');
SELECT pgjq.cancel_jobs('bulk', max_jobs => -1);
SELECT pgjq.delete_jobs(NULL);
SELECT pgjq.delete_jobs('no-such-queue');
SELECT pgjq.delete_jobs('bulk', status => 'pending');
SELECT pgjq.delete_jobs('bulk', max_jobs => 20000);

-- Clean up for the files after this one
SELECT pgjq.revoke_admin('regress_bulk_admin'), pgjq.revoke_admin('regress_bulk_other_admin'),
       pgjq.revoke_producer('regress_bulk_producer'), pgjq.revoke_observer('regress_bulk_observer');
DROP ROLE regress_bulk_admin, regress_bulk_other_admin, regress_bulk_producer, regress_bulk_observer;
SELECT pgjq.drop_queue(q, force => true) FROM unnest(ARRAY['bulk', 'bystander', 'grouped']) q;
DROP FUNCTION depth_matches(text), statuses(text), failed_jobs(text, text, int);
RESET timezone;
