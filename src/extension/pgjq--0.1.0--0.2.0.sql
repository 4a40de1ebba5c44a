-- pgjq 0.1.0 -> 0.2.0. A fresh CREATE EXTENSION pgjq runs pgjq--0.1.0.sql and then this script (see the
-- README's "Upgrading"), so everything 0.2.0 changes is written here, once.
\echo Use "ALTER EXTENSION pgjq UPDATE TO '0.2.0'" to load this file. \quit

-- Dump and restore -----------------------------------------------------------------------------------
-- pg_restore runs CREATE EXTENSION pgjq, whose script creates the queue 'default' and its 16 counter
-- rows, and only then loads the dumped rows of pgjq.queues and pgjq.queue_depth (both registered with
-- pg_extension_config_dump). In 0.1.0 the dumped 'default' rows collided with the script's, each COPY
-- failed as a whole, and the restored database lost every queue and every counter. A dumped row now
-- merges into the row the script made.

-- The queue the install script made is 'default', with the table's default settings. A dumped queue
-- 'default' takes its place while it is still unchanged; any other duplicate is refused as before (23505).
CREATE FUNCTION pgjq.merge_restored_queue() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE pgjq.queues q
       SET max_pending = NEW.max_pending, fifo = NEW.fifo, max_attempts = NEW.max_attempts, lease = NEW.lease,
           retry_base = NEW.retry_base, retry_cap = NEW.retry_cap, retention = NEW.retention,
           keep_completed = NEW.keep_completed, paused = NEW.paused, created_at = NEW.created_at
     WHERE q.queue_name = NEW.queue_name
       AND q.max_pending IS NULL AND NOT q.fifo AND q.max_attempts = 3 AND q.lease = interval '5 minutes'
       AND q.retry_base = interval '1 second' AND q.retry_cap = interval '1 hour'
       AND q.retention = interval '7 days' AND q.keep_completed AND NOT q.paused;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER merge_restored_queue BEFORE INSERT ON pgjq.queues
    FOR EACH ROW WHEN (NEW.queue_name = 'default') EXECUTE FUNCTION pgjq.merge_restored_queue();

-- The script's counter rows (of 'default', each 0) meet the dumped ones: the counts add up. Counter rows
-- are created once per queue, so no other insert ever meets an existing row.
CREATE FUNCTION pgjq.merge_restored_depth() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE pgjq.queue_depth d SET unfinished = d.unfinished + NEW.unfinished
     WHERE d.queue_name = NEW.queue_name AND d.slot = NEW.slot;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER merge_restored_depth BEFORE INSERT ON pgjq.queue_depth
    FOR EACH ROW WHEN (NEW.queue_name = 'default') EXECUTE FUNCTION pgjq.merge_restored_depth();

REVOKE ALL ON FUNCTION pgjq.merge_restored_queue(), pgjq.merge_restored_depth() FROM PUBLIC;
