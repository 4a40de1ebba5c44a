-- 36_queue_samples: pgjq.sample_queues() records every queue's figures (what the maintenance worker does each
-- pgjq.queue_sample_interval) and deletes the samples older than a day; pgjq.queue_history shows a role
-- the samples of the queues it may read; sampling is the admin's, refused to others (42501).
\set VERBOSITY default
SELECT pgjq.create_queue('sampled_a');
SELECT pgjq.create_queue('sampled_b');
SELECT cardinality(pgjq.enqueue_batch('t', '[{}, {}, {}, {}]', 'sampled_a'));
SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 1, 'sampled_a');
SELECT count(*) AS held FROM pgjq.claim_job_batch('w', NULL, 2, 'sampled_a');
SELECT pgjq.cancel(id) FROM pgjq.live_jobs WHERE queue_name = 'sampled_a' AND status = 'pending';
SELECT pgjq.enqueue('t', '{}', 'sampled_b', run_at => now() + interval '1 hour') > 0 AS scheduled;
SELECT pgjq.sample_queues() >= 2 AS sampled;
SELECT queue_name, unfinished, in_flight, completed, failed, cancelled, next_job_age IS NULL AS nothing_due,
       sampled_at > now() - interval '1 minute' AS recent
  FROM pgjq.queue_history WHERE queue_name LIKE 'sampled_%' ORDER BY queue_name;
-- A sample older than a day goes at the next sampling; the recent ones stay.
INSERT INTO pgjq.queue_samples (queue_name, sampled_at, unfinished, in_flight, completed, failed, cancelled)
VALUES ('sampled_a', now() - interval '25 hours', 9, 0, 0, 0, 0), ('sampled_a', now() - interval '23 hours', 8, 0, 0, 0, 0);
SELECT pgjq.sample_queues() >= 2 AS sampled;
SELECT count(*) FILTER (WHERE sampled_at < now() - interval '24 hours') AS past_a_day,
       count(*) FILTER (WHERE unfinished = 8) AS within_a_day
  FROM pgjq.queue_history WHERE queue_name = 'sampled_a';
-- Role by role: an observer of one queue reads its samples alone; only an admin samples.
CREATE ROLE regress_sample_observer;
CREATE ROLE regress_sample_admin;
SELECT pgjq.grant_observer('regress_sample_observer', 'sampled_b');
SELECT pgjq.grant_admin('regress_sample_admin');
SET ROLE regress_sample_observer;
SELECT DISTINCT queue_name FROM pgjq.queue_history WHERE queue_name LIKE 'sampled_%';
SELECT count(*) FROM pgjq.queue_samples;
\set VERBOSITY sqlstate
SELECT pgjq.sample_queues();
\set VERBOSITY default
RESET ROLE;
SET ROLE regress_sample_admin;
SELECT pgjq.sample_queues() >= 2 AS sampled;
RESET ROLE;
