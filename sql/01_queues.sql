-- Queue administration: create_queue, alter_queue, drop_queue, pause_queue, resume_queue.
\set VERBOSITY default
-- job ids of this file start at a fixed base, so its output does not depend on the files before it
SELECT setval('pgjq.job_id_seq', 1000) AS id_base;

-- the default queue exists after CREATE EXTENSION
SELECT queue_name, max_pending, fifo, max_attempts, lease, paused FROM pgjq.queues ORDER BY queue_name;
SELECT count(*) AS depth_slots FROM pgjq.queue_depth WHERE queue_name = 'default';

SELECT pgjq.create_queue('emails');
SELECT pgjq.create_queue('reports.v2', max_pending => 100, fifo => true, max_attempts => 5, lease => '30 seconds');
SELECT queue_name, max_pending, fifo, max_attempts, lease, retry_base, retry_cap, retention, paused
  FROM pgjq.queues ORDER BY queue_name;

-- alter_queue changes only what is given
SELECT pgjq.alter_queue('emails', max_pending => 10, retry_base => '2 seconds', retry_cap => '1 minute',
                        retention => '1 day');
SELECT queue_name, max_pending, fifo, max_attempts, lease, retry_base, retry_cap, retention
  FROM pgjq.queues WHERE queue_name = 'emails';
SELECT pgjq.alter_queue('emails', clear_max_pending => true, fifo => true, max_attempts => 7, lease => '1 hour');
SELECT queue_name, max_pending, fifo, max_attempts, lease FROM pgjq.queues WHERE queue_name = 'emails';
SELECT pgjq.alter_queue('emails', fifo => false);
-- keep_completed: true by default; NULL keeps the current value
SELECT keep_completed FROM pgjq.queues WHERE queue_name = 'emails';
SELECT pgjq.alter_queue('emails', keep_completed => false);
SELECT pgjq.alter_queue('emails', keep_completed => NULL, max_attempts => 8);
SELECT keep_completed, max_attempts FROM pgjq.queues WHERE queue_name = 'emails';

-- pause and resume
SELECT pgjq.pause_queue('emails');
SELECT paused FROM pgjq.queues WHERE queue_name = 'emails';
SELECT pgjq.resume_queue('emails');
SELECT paused FROM pgjq.queues WHERE queue_name = 'emails';

-- drop_queue refuses while jobs are unfinished, unless forced
SELECT pgjq.enqueue('send', '{}', 'emails') > 0 AS enqueued;
SELECT pgjq.drop_queue('emails');
SELECT pgjq.drop_queue('emails', force => true);
SELECT count(*) FROM pgjq.queues WHERE queue_name = 'emails';
SELECT count(*) FROM pgjq.queue_depth WHERE queue_name = 'emails';
SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'emails';
-- an empty queue drops without force
SELECT pgjq.drop_queue('reports.v2');

-- bad input
SELECT pgjq.create_queue(NULL);
SELECT pgjq.create_queue('');
SELECT pgjq.create_queue('Has Upper');
SELECT pgjq.create_queue('semi;colon');
SELECT pgjq.create_queue(repeat('x', 49));
SELECT pgjq.create_queue('default');
SELECT pgjq.create_queue('q1', max_pending => 0);
SELECT pgjq.create_queue('q1', max_pending => -5);
SELECT pgjq.create_queue('q1', max_attempts => 0);
SELECT pgjq.create_queue('q1', max_attempts => 1001);
SELECT pgjq.create_queue('q1', max_attempts => NULL);
SELECT pgjq.create_queue('q1', fifo => NULL);
SELECT pgjq.create_queue('q1', lease => '0 seconds');
SELECT pgjq.create_queue('q1', lease => '-1 minute');
SELECT pgjq.create_queue('q1', lease => NULL);
SELECT count(*) AS q1_not_created FROM pgjq.queues WHERE queue_name = 'q1';
SELECT pgjq.alter_queue('missing', fifo => true);
SELECT pgjq.alter_queue(NULL);
SELECT pgjq.alter_queue('default', max_pending => 0);
SELECT pgjq.alter_queue('default', max_attempts => -1);
SELECT pgjq.alter_queue('default', lease => '0');
SELECT pgjq.alter_queue('default', retry_base => '-1 second');
SELECT pgjq.alter_queue('default', retry_cap => '-1 second');
SELECT pgjq.alter_queue('default', retention => '-1 day');
SELECT pgjq.alter_queue('default', retry_base => '2 hours');
SELECT pgjq.alter_queue('default', max_pending => 5, clear_max_pending => true);
SELECT pgjq.alter_queue('default', clear_max_pending => NULL);
SELECT retry_base, retry_cap, max_pending FROM pgjq.queues WHERE queue_name = 'default';
SELECT pgjq.drop_queue('missing');
SELECT pgjq.drop_queue(NULL);
SELECT pgjq.drop_queue('default', force => NULL);
SELECT pgjq.pause_queue('missing');
SELECT pgjq.resume_queue('missing');
SELECT pgjq.pause_queue(NULL);
SELECT pgjq.resume_queue('BAD NAME');
