# Pruning removes exactly the finished jobs (completed, failed, cancelled) older than their queue's
# retention, in small batches, and nothing else.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('prune', conf => "pgjq.prune_interval = '1s'\npgjq.prune_batch_size = 2\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('short');
	SELECT pgjq.alter_queue('short', retention => '1 hour');
	SELECT pgjq.create_queue('long');
	SELECT pgjq.alter_queue('long', retention => '1 day');
});
wait_for_maintenance($node, 'postgres');

# An old pending job is never pruned, however old.
my $live = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'short', run_at => now() - interval '30 days')});
$node->safe_psql('postgres', q{
	INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, run_at, events_count,
	                                created_at, finished_at, attempts, max_attempts)
	SELECT id, queue, 't', 100, status::pgjq.job_status, '{}', now() - age, 0, now() - age, now() - age, 1, 3
	  FROM (VALUES (1001, 'short', 'completed', interval '2 hours'),
	               (1002, 'short', 'completed', interval '2 hours'),
	               (1003, 'short', 'completed', interval '3 hours'),
	               (1004, 'short', 'cancelled', interval '1 day'),
	               (1005, 'short', 'completed', interval '61 minutes'),
	               (1006, 'short', 'completed', interval '10 minutes'),
	               (1007, 'short', 'failed',    interval '3 hours'),
	               (1011, 'long',  'completed', interval '2 hours'),
	               (1012, 'long',  'completed', interval '2 days'),
	               (1013, 'long',  'cancelled', interval '25 hours'),
	               (1014, 'long',  'failed',    interval '23 hours')) AS v(id, queue, status, age);
});

ok($node->poll_query_until('postgres', q{SELECT string_agg(id::text, ',' ORDER BY id) FROM pgjq.finished_jobs}, '1006,1011,1014'),
	'the finished jobs past their queue retention are pruned');
sleep 2;    # two more prune passes
is($node->safe_psql('postgres', q{SELECT string_agg(id::text, ',' ORDER BY id) FROM pgjq.finished_jobs}),
	'1006,1011,1014', 'jobs within their retention are kept');
is($node->safe_psql('postgres', "SELECT status FROM pgjq.live_jobs WHERE id = $live"), 'pending', 'live jobs are untouched');
is($node->safe_psql('postgres', q{SELECT jobs_pruned FROM pgjq.worker_status() WHERE datname = 'postgres'}), '8',
	'worker_status counts the pruned jobs');

# An error in a pass is logged, counted and survived: the same worker carries on once it is fixed.
my $pid = maintenance_pids($node, 'postgres');
$node->safe_psql('postgres', 'ALTER TABLE pgjq.queues RENAME TO queues_away');
ok($node->poll_query_until('postgres', q{SELECT errors > 0 AND last_error LIKE '%queues%' FROM pgjq.worker_status() WHERE datname = 'postgres'}),
	'a failing pass is reported in worker_status');
$node->safe_psql('postgres', 'ALTER TABLE pgjq.queues_away RENAME TO queues');
$node->safe_psql('postgres', q{
	INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, run_at, events_count,
	                                created_at, finished_at, attempts, max_attempts)
	VALUES (1020, 'short', 't', 100, 'completed', '{}', now(), 0, now(), now() - interval '2 hours', 1, 3)});
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pgjq.finished_jobs WHERE id = 1020}),
	'after the fix the worker prunes again');
is(maintenance_pids($node, 'postgres'), $pid, 'the same worker survived the errors');
my $errors = () = slurp_file($node->logfile) =~ /ERROR:  relation "pgjq.queues" does not exist/g;
ok($errors >= 1, "the errors are in the server log ($errors)");

$node->stop;
done_testing();
