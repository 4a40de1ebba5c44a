-- One turn of a pgjq worker in plain psql, for work that is SQL itself: claim up to 10 jobs under a
-- lease, and report each with the statement \gexec runs for it (complete, or fail for a job type it cannot
-- handle). Each statement is a transaction by itself. Prints one line per job handled, none when idle, so
-- that a shell can loop until the queue is drained:
--   while [ -n "$(psql -X -At -v ON_ERROR_STOP=1 -f worker.sql)" ]; do :; done
-- (let psql finish: a reader that stops at the first line, like grep -q, would kill it mid-turn.)
-- A long-lived worker would LISTEN pgjq_new_job and claim again when notified (see ../python/worker.py).
SELECT CASE job_type
         WHEN 'email' THEN format('SELECT %s AS completed, pgjq.complete(%s, %L, %L::jsonb)', id, id,
                                  'psql-example', jsonb_build_object('sent_to', 'customer of order ' || (payload->>'order')))
         ELSE format('SELECT %s AS failed, pgjq.fail(%s, %L, %L)', id, id, 'psql-example',
                     'no handler for job type ' || job_type)
       END
  FROM pgjq.claim_job_batch('psql-example', NULL, 10, 'examples') \gexec
