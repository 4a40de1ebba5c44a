-- Versions: every update path from 0.1.0 reaches the default version, step by step as well as at once;
-- and the rows a dump brings back merge into those the install script made (pg_restore runs CREATE
-- EXTENSION before it loads the dumped rows). The TAP tests 009 and 010 do the same with real data,
-- pg_dump and pg_restore.
SELECT name, default_version FROM pg_available_extensions WHERE name = 'pgjq';
SELECT source, target, path FROM pg_extension_update_paths('pgjq') WHERE path IS NOT NULL ORDER BY 1, 2;

DROP EXTENSION pgjq;
CREATE EXTENSION pgjq VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'pgjq';
SELECT pgjq.enqueue('kept', '{}') AS kept_id \gset
ALTER EXTENSION pgjq UPDATE TO '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'pgjq';
SELECT count(*) AS kept FROM pgjq.jobs WHERE id = :kept_id AND status = 'pending';
DROP EXTENSION pgjq;
CREATE EXTENSION pgjq;
SELECT extversion = default_version AS at_default FROM pg_extension, pg_available_extensions
 WHERE extname = 'pgjq' AND name = 'pgjq';

-- A dumped 'default' queue takes the place of the one the install script made, with its settings.
INSERT INTO pgjq.queues (queue_name, max_pending, max_attempts, lease, created_at)
VALUES ('default', 10, 9, '1 hour', '2020-01-01');
SELECT queue_name, max_pending, max_attempts, lease, created_at = '2020-01-01' AS dumped_time
  FROM pgjq.queues;
-- Its counters add to the script's zeros.
INSERT INTO pgjq.queue_depth (queue_name, slot, unfinished) VALUES ('default', 3, 4), ('default', 5, 1);
SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'default';
-- A queue that was changed (or created) here is not replaced: a duplicate is refused as before.
INSERT INTO pgjq.queues (queue_name) VALUES ('default');
SELECT pgjq.create_queue('default');
SELECT pgjq.create_queue('other');
INSERT INTO pgjq.queues (queue_name) VALUES ('other');
SELECT queue_name, max_pending, max_attempts FROM pgjq.queues ORDER BY 1;

-- Back to a fresh install for whatever runs next.
DROP EXTENSION pgjq;
CREATE EXTENSION pgjq;
