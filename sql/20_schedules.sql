-- 20_schedules: periodic jobs. schedule (create or replace), unschedule, pause_schedule, resume_schedule,
-- pgjq.schedules, and firing by hand with fire_schedules (what the maintenance worker does when a schedule
-- is due; the worker itself is tested in tests/t/020_schedules.pl). A schedule is made due by moving its
-- next_run into the past, as if its time had come or the server had been down.
\set VERBOSITY default
SET timezone = 'UTC';
SELECT setval('pgjq.job_id_seq', 20000) AS id_base;
SELECT pgjq.create_queue('cron');
CREATE FUNCTION depth_matches(q text) RETURNS boolean LANGUAGE sql AS
  $$ SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = q)
          = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = q) $$;

-- Creating returns the first firing, which is the expression's next after now
SELECT pgjq.schedule('nightly', '0 3 * * *', 'report', '{"kind": "nightly"}', 'cron') AS first \gset
SELECT :'first'::timestamptz = (SELECT f FROM pgjq.next_firings('0 3 * * *', 'UTC', now(), 1) f) AS first_is_next;
SELECT schedule_name, cron, time_zone, job_type, payload, queue_name, priority, max_attempts, missed, paused,
       scheduled_by, next_run = :'first' AS next_run_is_first, retry_at, failures, last_run, last_job_id,
       last_error, jobs_enqueued, firings_missed
  FROM pgjq.schedules;
-- defaults: queue 'default', priority 100, UTC, skip
SELECT pgjq.schedule('defaults', '@hourly', 't') > now() AS scheduled;
SELECT queue_name, priority, time_zone, missed, payload FROM pgjq.schedules WHERE schedule_name = 'defaults';
-- a time zone is kept under its own name
SELECT pgjq.schedule('zoned', '0 9 * * mon-fri', 't', time_zone => 'america/NEW_york') IS NOT NULL AS scheduled;
SELECT time_zone, next_run = (SELECT f FROM pgjq.next_firings('0 9 * * mon-fri', 'America/New_York', now(), 1) f)
       AS next_in_new_york
  FROM pgjq.schedules WHERE schedule_name = 'zoned';

-- Replacing: the same name takes the new definition, keeps its history and counts
UPDATE pgjq.schedules SET jobs_enqueued = 7, last_error = 'old error' WHERE schedule_name = 'nightly';
SELECT pgjq.schedule('nightly', '30 4 * * *', 'report', '{"kind": "later"}', 'cron', priority => 5,
                     max_attempts => 2, missed => 'run_once') IS NOT NULL AS replaced;
SELECT cron, payload, priority, max_attempts, missed, jobs_enqueued, last_error, updated_at >= created_at AS updated,
       next_run = (SELECT f FROM pgjq.next_firings('30 4 * * *', 'UTC', now(), 1) f) AS next_of_new_cron
  FROM pgjq.schedules WHERE schedule_name = 'nightly';
SELECT count(*) AS schedules FROM pgjq.schedules;

-- Paused: no next firing; resumed: the first firing after now (what it missed meanwhile is not made up)
SELECT pgjq.schedule('paused', '* * * * *', 't', paused => true) AS first_while_paused;
SELECT paused, next_run FROM pgjq.schedules WHERE schedule_name = 'paused';
SELECT pgjq.resume_schedule('paused');
SELECT paused, next_run > now() AS next_ahead FROM pgjq.schedules WHERE schedule_name = 'paused';
SELECT pgjq.pause_schedule('paused'), pgjq.pause_schedule('paused') AS again;
SELECT paused, next_run FROM pgjq.schedules WHERE schedule_name = 'paused';
SELECT pgjq.pause_schedule('nothing such'), pgjq.resume_schedule('nothing such');

-- Firing. Nothing is due yet.
SELECT pgjq.fire_schedules() AS nothing_due;
-- Its time comes: one job, enqueued as the role that set the schedule, its run_at the firing it stands for
UPDATE pgjq.schedules SET next_run = date_trunc('minute', now()) - interval '1 minute' WHERE schedule_name = 'nightly'
RETURNING next_run AS firing \gset
SELECT pgjq.fire_schedules() AS fired;
SELECT id > 20000 AS new_id, queue_name, job_type, payload, priority, max_attempts, status, run_at = :'firing' AS run_at_is_firing,
       enqueued_by
  FROM pgjq.jobs WHERE queue_name = 'cron';
SELECT last_job_id = (SELECT id FROM pgjq.jobs WHERE queue_name = 'cron') AS last_job, last_run >= :'firing' AS last_run_set,
       jobs_enqueued, firings_missed, retry_at, failures,
       next_run = (SELECT f FROM pgjq.next_firings('30 4 * * *', 'UTC', now(), 1) f) AS advanced
  FROM pgjq.schedules WHERE schedule_name = 'nightly';
SELECT pgjq.fire_schedules() AS fired_again;
SELECT count(*) AS jobs FROM pgjq.jobs WHERE queue_name = 'cron';
SELECT depth_matches('cron');
-- the firing and its advance are one: rolled back together
SELECT count(*) AS default_jobs FROM pgjq.jobs WHERE queue_name = 'default' \gset
BEGIN;
UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = 'defaults';
SELECT pgjq.fire_schedules() AS fired_then_rolled_back;
ROLLBACK;
SELECT count(*) = :default_jobs AS no_job_left FROM pgjq.jobs WHERE queue_name = 'default';
SELECT next_run > now() AS still_ahead, jobs_enqueued FROM pgjq.schedules WHERE schedule_name = 'defaults';
-- paused schedules never fire
UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = 'paused';
SELECT pgjq.fire_schedules() AS paused_fires_nothing;
SELECT pgjq.unschedule('paused');

-- Missed firings, as after the server was down. Every second for the last 10 seconds: the latest is within
-- the tolerance (a minute), so one job stands for all 11 firings, and 10 count as missed.
SELECT pgjq.schedule('ticks', '* * * * * *', 'tick', '{}', 'cron') IS NOT NULL AS scheduled;
BEGIN;
UPDATE pgjq.schedules SET next_run = date_trunc('second', now()) - interval '10 seconds' WHERE schedule_name = 'ticks';
SELECT pgjq.fire_schedules() AS fired;
SELECT run_at = date_trunc('second', now()) AS run_at_is_latest FROM pgjq.jobs WHERE job_type = 'tick';
SELECT jobs_enqueued, firings_missed FROM pgjq.schedules WHERE schedule_name = 'ticks';
COMMIT;
-- (An every-second schedule left in place would fire again in any later call that a second boundary precedes.)
SELECT pgjq.unschedule('ticks') AS ticks_removed;
-- Yearly since 2020, missed for years: 'skip' drops every firing (the latest is months late) ...
SELECT pgjq.schedule('yearly-skip', '@yearly', 'yearly', '{}', 'cron', missed => 'skip') IS NOT NULL AS scheduled;
UPDATE pgjq.schedules SET next_run = '2020-01-01 00:00+00' WHERE schedule_name = 'yearly-skip';
SELECT pgjq.fire_schedules() AS fired;
SELECT jobs_enqueued, firings_missed = extract(year FROM now()) - 2019 AS every_new_year_missed,
       next_run = date_trunc('year', now()) + interval '1 year' AS next_new_year, last_job_id
  FROM pgjq.schedules WHERE schedule_name = 'yearly-skip';
-- ... 'run_once' enqueues one job for all of them, standing for the latest
SELECT pgjq.schedule('yearly-once', '@yearly', 'yearly', '{}', 'cron', missed => 'run_once') IS NOT NULL AS scheduled;
UPDATE pgjq.schedules SET next_run = '2020-01-01 00:00+00' WHERE schedule_name = 'yearly-once';
SELECT pgjq.fire_schedules() AS fired;
SELECT jobs_enqueued, firings_missed = extract(year FROM now()) - 2020 AS others_missed,
       next_run = date_trunc('year', now()) + interval '1 year' AS next_new_year
  FROM pgjq.schedules WHERE schedule_name = 'yearly-once';
SELECT run_at = date_trunc('year', now()) AS stands_for_latest FROM pgjq.jobs WHERE job_type = 'yearly';
SELECT depth_matches('cron');

-- A full queue: the firing is refused, recorded, and tried again later; it is not lost
SELECT pgjq.create_queue('tight', max_pending => 1);
SELECT pgjq.enqueue('filler', '{}', 'tight') AS filler \gset
SELECT pgjq.schedule('into-tight', '@daily', 'squeezed', '{}', 'tight', missed => 'skip') IS NOT NULL AS scheduled;
UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = 'into-tight'
RETURNING next_run AS firing \gset
SELECT pgjq.fire_schedules() AS refused;
SELECT last_error, failures, retry_at > now() AS retry_later, next_run = :'firing' AS firing_kept, jobs_enqueued
  FROM pgjq.schedules WHERE schedule_name = 'into-tight';
SELECT count(*) AS squeezed FROM pgjq.jobs WHERE job_type = 'squeezed';
-- before its retry time nothing is tried again
SELECT pgjq.fire_schedules() AS not_yet;
-- room again a day later: at the retry time the firing is enqueued, though it is now late (a refused
-- firing is never skipped), coalesced with the midnight since
SELECT pgjq.cancel(:filler);
UPDATE pgjq.schedules SET retry_at = now() - interval '1 second', next_run = next_run - interval '1 day'
 WHERE schedule_name = 'into-tight';
SELECT pgjq.fire_schedules() AS fired;
SELECT jobs_enqueued, failures, retry_at, firings_missed, last_error AS last_error_kept,
       next_run = date_trunc('day', now()) + interval '1 day' AS next_midnight
  FROM pgjq.schedules WHERE schedule_name = 'into-tight';
SELECT run_at = date_trunc('day', now()) AS stands_for_latest FROM pgjq.jobs WHERE job_type = 'squeezed';
SELECT depth_matches('tight');

-- Roles. Capabilities: producer of a queue schedules into it; the jobs are the producer's
CREATE ROLE regress_sched_producer;
CREATE ROLE regress_sched_other_producer;
CREATE ROLE regress_sched_admin;
CREATE ROLE regress_sched_observer;
CREATE ROLE regress_sched_worker;
CREATE ROLE regress_sched_nobody;
SELECT pgjq.grant_producer('regress_sched_producer', 'cron'), pgjq.grant_producer('regress_sched_other_producer', 'cron'),
       pgjq.grant_admin('regress_sched_admin', 'cron'), pgjq.grant_observer('regress_sched_observer', 'cron'),
       pgjq.grant_worker('regress_sched_worker', 'cron');

SET ROLE regress_sched_producer;
SELECT pgjq.schedule('mine', '*/5 * * * *', 'own', '{"by": "producer"}', 'cron') IS NOT NULL AS scheduled;
SELECT schedule_name, scheduled_by FROM pgjq.schedules ORDER BY 1;
SELECT count(*) FROM pgjq.next_firings('@daily', 'UTC', now(), 2);
-- not into another queue, not another role's schedule, not firing by hand
SELECT pgjq.schedule('elsewhere', '@daily', 'x', '{}', 'tight');
SELECT pgjq.schedule('nightly', '@daily', 'x', '{}', 'cron');
SELECT pgjq.unschedule('nightly') AS invisible_to_producer;
SELECT pgjq.pause_schedule('nightly') AS invisible_to_producer;
SELECT pgjq.fire_schedules();
UPDATE pgjq.schedules SET next_run = now();
DELETE FROM pgjq.schedules;
INSERT INTO pgjq.schedules (schedule_name, cron, time_zone, job_type, payload, queue_name, priority, missed, paused, scheduled_by)
VALUES ('forged', '@daily', 'UTC', 'x', '{}', 'cron', 100, 'skip', false, 'regress_sched_producer');
RESET ROLE;

-- its firing is enqueued as that role
UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = 'mine';
SELECT pgjq.fire_schedules() AS fired;
SELECT job_type, payload, enqueued_by FROM pgjq.jobs WHERE job_type = 'own';
SET ROLE regress_sched_producer;
SELECT count(*) AS producer_sees_its_job FROM pgjq.jobs WHERE job_type = 'own';
RESET ROLE;

-- another producer of the queue sees neither the schedule nor may it take the name over
SET ROLE regress_sched_other_producer;
SELECT count(*) AS sees FROM pgjq.schedules;
SELECT pgjq.schedule('mine', '@daily', 'x', '{}', 'cron');
SELECT pgjq.unschedule('mine') AS invisible;
RESET ROLE;

-- observer and worker read every schedule of their queue and change none
SET ROLE regress_sched_observer;
SELECT count(*) AS observer_sees FROM pgjq.schedules;
SELECT pgjq.schedule('obs', '@daily', 'x', '{}', 'cron');
SELECT pgjq.unschedule('mine');
SELECT pgjq.pause_schedule('mine');
RESET ROLE;
SET ROLE regress_sched_worker;
SELECT count(*) AS worker_sees FROM pgjq.schedules;
SELECT pgjq.unschedule('mine');
RESET ROLE;

-- the queue's admin pauses, resumes and removes any schedule of it, but schedules nothing (not a producer)
SET ROLE regress_sched_admin;
SELECT count(*) AS admin_sees FROM pgjq.schedules;
SELECT pgjq.pause_schedule('mine'), pgjq.resume_schedule('mine');
SELECT pgjq.schedule('adm', '@daily', 'x', '{}', 'cron');
SELECT pgjq.fire_schedules();
RESET ROLE;

-- a role without any capability is refused everything and sees nothing
SET ROLE regress_sched_nobody;
SELECT count(*) AS sees FROM pgjq.schedules;
SELECT pgjq.schedule('no', '@daily', 'x');
SELECT pgjq.unschedule('mine');
SELECT pgjq.pause_schedule('mine');
SELECT pgjq.resume_schedule('mine');
SELECT pgjq.next_firings('@daily');
SELECT pgjq.fire_schedules();
RESET ROLE;

-- A schedule whose role lost the producer capability records the refusal and enqueues nothing, until the
-- capability comes back
SELECT pgjq.revoke_producer('regress_sched_producer', 'cron');
UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = 'mine';
SELECT pgjq.fire_schedules() AS refused;
SELECT last_error, failures, retry_at > now() AS retry_later, jobs_enqueued FROM pgjq.schedules WHERE schedule_name = 'mine';
SELECT pgjq.grant_producer('regress_sched_producer', 'cron');
UPDATE pgjq.schedules SET retry_at = now() - interval '1 second' WHERE schedule_name = 'mine';
SELECT pgjq.fire_schedules() AS fired;
SELECT failures, jobs_enqueued FROM pgjq.schedules WHERE schedule_name = 'mine';
SELECT count(*) AS own_jobs FROM pgjq.jobs WHERE job_type = 'own';

-- a schedule whose role was dropped records that, and its queue's admin removes it
CREATE ROLE regress_sched_gone;
SELECT pgjq.grant_producer('regress_sched_gone', 'cron');
SET ROLE regress_sched_gone;
SELECT pgjq.schedule('orphan', '@hourly', 'orphan', '{}', 'cron') IS NOT NULL AS scheduled;
RESET ROLE;
SELECT pgjq.revoke_producer('regress_sched_gone');
DROP ROLE regress_sched_gone;
UPDATE pgjq.schedules SET next_run = now() - interval '1 second' WHERE schedule_name = 'orphan';
SELECT pgjq.fire_schedules() AS refused;
SELECT last_error LIKE 'role with OID %, which set the schedule, does not exist' AS role_gone,
       jobs_enqueued
  FROM pgjq.schedules WHERE schedule_name = 'orphan';
SET ROLE regress_sched_admin;
SELECT pgjq.unschedule('orphan') AS removed_by_admin;
RESET ROLE;

-- the producer removes its own schedule
SET ROLE regress_sched_producer;
SELECT pgjq.unschedule('mine'), pgjq.unschedule('mine') AS again;
RESET ROLE;

-- Dropping a queue drops its schedules
SELECT pgjq.schedule('doomed', '@daily', 'x', '{}', 'tight') IS NOT NULL AS scheduled;
SELECT pgjq.drop_queue('tight', force => true);
SELECT count(*) AS doomed_left FROM pgjq.schedules WHERE schedule_name = 'doomed';

-- Bad input: nothing is written
SELECT count(*) AS before FROM pgjq.schedules \gset
SELECT pgjq.schedule(NULL, '@daily', 'x');
SELECT pgjq.schedule('bad', NULL, 'x');
SELECT pgjq.schedule('bad', '@daily', NULL);
SELECT pgjq.schedule('bad', '@daily', 'x', NULL);
SELECT pgjq.schedule('bad', '@daily', 'x', '{}', NULL);
SELECT pgjq.schedule('bad', '@daily', 'x', '{}', 'cron', NULL);
SELECT pgjq.schedule('bad', '@daily', 'x', time_zone => NULL);
SELECT pgjq.schedule('bad', '@daily', 'x', missed => NULL);
SELECT pgjq.schedule('bad', '@daily', 'x', paused => NULL);
SELECT pgjq.schedule('', '@daily', 'x');
SELECT pgjq.schedule(repeat('n', 201), '@daily', 'x');
SELECT pgjq.schedule('bad', '61 * * * *', 'x');
SELECT pgjq.schedule('bad', '0 0 30 2 *', 'x');
SELECT pgjq.schedule('bad', '@daily', '');
SELECT pgjq.schedule('bad', '@daily', 'x', '{}', 'Bad Queue');
SELECT pgjq.schedule('bad', '@daily', 'x', '{}', 'no-such-queue');
SELECT pgjq.schedule('bad', '@daily', 'x', priority => 40000);
SELECT pgjq.schedule('bad', '@daily', 'x', max_attempts => 0);
SELECT pgjq.schedule('bad', '@daily', 'x', time_zone => 'Nowhere/Special');
SELECT pgjq.schedule('bad', '@daily', 'x', missed => 'sometimes');
SET pgjq.max_payload_bytes = 100;
SELECT pgjq.schedule('bad', '@daily', 'x', jsonb_build_object('blob', repeat('x', 200)));
RESET pgjq.max_payload_bytes;
SELECT count(*) = :before AS nothing_written FROM pgjq.schedules;
SELECT pgjq.unschedule(NULL);
SELECT pgjq.unschedule('');
SELECT pgjq.pause_schedule(NULL);
SELECT pgjq.resume_schedule(NULL);

-- Clean up for the files after this one
SELECT pgjq.unschedule(schedule_name) FROM pgjq.schedules ORDER BY 1;
SELECT pgjq.revoke_producer('regress_sched_producer'), pgjq.revoke_producer('regress_sched_other_producer'),
       pgjq.revoke_admin('regress_sched_admin'), pgjq.revoke_observer('regress_sched_observer'),
       pgjq.revoke_worker('regress_sched_worker');
DROP ROLE regress_sched_producer, regress_sched_other_producer, regress_sched_admin, regress_sched_observer,
          regress_sched_worker, regress_sched_nobody;
SELECT pgjq.drop_queue('cron', force => true);
DROP FUNCTION depth_matches(text);
RESET timezone;
