# The maintenance worker's part in scheduling. A job that runs past its execution timeout is failed at the
# timeout, not at the lease's or the worker's next pass (pgjq.naptime at 60 s here): the claim tells the
# worker when the lease ends, and the lease ends at the timeout. And the waiting_jobs duty settles what no
# committing transaction did: a group whose group_concurrency was raised by a direct UPDATE (which settles
# nothing), a dependency on a job that finished while its row said nothing about it, and a workflow step
# that finished so. And the first depends_on in a database whose jobs only waited as workflow steps; a
# timed-out attempt's error, and the prune of the failed attempts of jobs gone.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = new_node('waiting', conf => "pgjq.naptime = '60s'\npgjq.prune_interval = '1s'\n");
my $sql = sub { $node->safe_psql('postgres', $_[0]) };
$sql->(q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('slow', lease => '10 minutes', job_timeout => '2 seconds', max_attempts => 2);
	SELECT pgjq.create_queue('grp');
});
wait_for_maintenance($node, 'postgres');

# --- timeouts --------------------------------------------------------------------------------------
my $job = $sql->(q{SELECT pgjq.enqueue('hang', '{}', 'slow')});
my $timeout_at = $sql->(q{SELECT extract(epoch FROM timeout_at) FROM pgjq.claim_job_batch('w', NULL, 1, 'slow')});
die "job $job was not claimed" unless $timeout_at =~ /^\d+(\.\d+)?$/;
# the worker heartbeats faithfully; the lease still ends at the timeout
is($sql->("SELECT pgjq.heartbeat($job, 'w') = timeout_at FROM pgjq.jobs WHERE id = $job"), 't',
	'a heartbeat does not extend the lease past the timeout');
$node->poll_query_until('postgres', "SELECT status = 'pending' FROM pgjq.jobs WHERE id = $job")
  or die "job $job was not recovered";
my $late = time - $timeout_at;
note(sprintf('timed-out job failed %.3f s after its timeout', $late));
ok($late < 10, 'a job is failed at its timeout, not at the next naptime (60 s)');
like($sql->("SELECT last_error FROM pgjq.jobs WHERE id = $job"), qr/^timed out: worker w ran past the job's execution timeout of 00:00:02/,
	'with the reason');
is($sql->("SELECT attempts FROM pgjq.jobs WHERE id = $job"), '1', 'and the attempt counted');
my ($stdout, $stderr) = ('', '');
$node->psql('postgres', "SELECT pgjq.heartbeat($job, 'w')", stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/does not hold job/, 'the late worker is refused');
like($sql->("SELECT attempt || ' ' || worker_id || ': ' || error FROM pgjq.job_errors WHERE job_id = $job"),
	qr/^1 w: timed out: worker w ran past the job's execution timeout of 00:00:02$/,
	'the timed-out attempt keeps its error');

# --- failed attempts of jobs gone: the prune duty removes them after the queue's retention ------------
# A queue that keeps no completed jobs leaves nothing to prune but the errors of a job that failed once.
$sql->(q{SELECT pgjq.create_queue('brief'); SELECT pgjq.alter_queue('brief', keep_completed => false, retention => '0')});
my $brief = $sql->(q{SELECT pgjq.enqueue('once', '{}', 'brief')});
$sql->(q{SELECT pgjq.claim_job_batch('w', ARRAY['once'], 1, 'brief')});
$sql->("SELECT pgjq.fail($brief, 'w', 'first try', retry_in => '0')");
is($sql->("SELECT count(*) FROM pgjq.attempt_errors WHERE job_id = $brief"), '1', 'the failed attempt is recorded');
$sql->(q{SELECT pgjq.claim_job_batch('w', ARRAY['once'], 1, 'brief')});
$sql->("SELECT pgjq.complete($brief, 'w')");
$node->poll_query_until('postgres', "SELECT NOT EXISTS (SELECT FROM pgjq.attempt_errors WHERE job_id = $brief)")
  or die 'the failed attempt of a job gone was not pruned';
pass('the prune duty removes the failed attempts of a job that is gone');

# --- the first depends_on in a database whose jobs only waited as workflow steps ----------------------
# Until a job is enqueued with depends_on, pgjq.job_dependencies has no page and a commit that finishes steps
# looks for no dependents there (core/waiting_jobs.cpp); the first such job is found.
is($sql->(q{SELECT pg_relation_size('pgjq.job_dependencies')}), '0', 'no job has depended on another yet');
my $step_workflow = $sql->(q{SELECT pgjq.start_workflow('first', '[{"name": "s", "job_type": "first", "queue": "grp"}]')});
my $step = $sql->("SELECT job_id FROM pgjq.workflow_steps($step_workflow)");
my $dependent = $sql->("SELECT pgjq.enqueue('after_step', '{}', 'grp', depends_on => ARRAY[$step]::bigint[])");
is($sql->(q{SELECT id FROM pgjq.claim_job_batch('w', ARRAY['first'], 1, 'grp')}), $step, 'the step is claimed');
$sql->("SELECT pgjq.complete($step, 'w')");
is($sql->("SELECT status FROM pgjq.jobs WHERE id = $dependent"), 'pending',
	'a job that depends on a workflow step starts when the step completes');
$sql->("SELECT pgjq.cancel($dependent)");

# --- the sweep: a group opened by a direct write ---------------------------------------------------
$sql->(q{SELECT count(pgjq.enqueue('t', '{}', 'grp', group_key => 'k')) FROM generate_series(1, 3)});
is($sql->(q{SELECT count(*) FILTER (WHERE status = 'pending') FROM pgjq.jobs WHERE queue_name = 'grp'}), '1',
	'one job of the group is live');
# A direct UPDATE settles nothing (alter_queue would); the duty notices within pgjq.prune_interval.
$sql->(q{UPDATE pgjq.queues SET group_concurrency = 3 WHERE queue_name = 'grp'});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 3 FROM pgjq.jobs WHERE queue_name = 'grp' AND status = 'pending'})
  or die 'the waiting jobs of the group were not started';
pass('the waiting_jobs duty starts the jobs a raised group_concurrency lets start');

# --- the sweep: a dependency left behind -------------------------------------------------------------
# The parent leaves the live table by a direct DELETE and INSERT (as only a hand or a bug would), so no
# transaction looked for its dependents.
my $parent = $sql->(q{SELECT pgjq.enqueue('parent', '{}', 'grp')});
my $child = $sql->("SELECT pgjq.enqueue('child', '{}', 'grp', depends_on => ARRAY[$parent]::bigint[])");
$sql->(qq{
	WITH gone AS (DELETE FROM pgjq.live_jobs WHERE id = $parent RETURNING *)
	INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, run_at, events_count,
	                                created_at, finished_at, completed_at, attempts, max_attempts)
	SELECT id, queue_name, job_type, priority, 'completed', payload, run_at, events_count, created_at, now(), now(),
	       attempts, max_attempts FROM gone;
	UPDATE pgjq.queue_depth SET unfinished = unfinished - 1 WHERE queue_name = 'grp' AND slot = (
	  SELECT slot FROM pgjq.queue_depth WHERE queue_name = 'grp' AND unfinished > 0 LIMIT 1);
});
is($sql->("SELECT status FROM pgjq.jobs WHERE id = $child"), 'waiting', 'the child still waits');
$node->poll_query_until('postgres', "SELECT status = 'pending' FROM pgjq.jobs WHERE id = $child")
  or die 'the dependency was not settled';
pass('the waiting_jobs duty releases a dependent whose dependency completed unseen');

# --- the sweep: a workflow step that finished unseen --------------------------------------------------
# The same direct move for a workflow's first step: the duty records its outcome, counts it in the workflow
# and starts the step after it.
my $workflow = $sql->(q{SELECT pgjq.start_workflow('swept', '[{"name": "a", "job_type": "t", "queue": "grp"},
	{"name": "b", "job_type": "t", "queue": "grp", "after": ["a"]}]')});
my ($first, $second) = split /\n/, $sql->("SELECT job_id FROM pgjq.workflow_steps($workflow) ORDER BY step_name");
$sql->(qq{
	WITH gone AS (DELETE FROM pgjq.live_jobs WHERE id = $first RETURNING *)
	INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, result, run_at,
	                                events_count, created_at, finished_at, completed_at, attempts, max_attempts)
	SELECT id, queue_name, job_type, priority, 'completed', payload, '{"swept": true}', run_at, events_count,
	       created_at, now(), now(), attempts, max_attempts FROM gone;
	UPDATE pgjq.queue_depth SET unfinished = unfinished - 1 WHERE queue_name = 'grp' AND slot = (
	  SELECT slot FROM pgjq.queue_depth WHERE queue_name = 'grp' AND unfinished > 0 LIMIT 1);
});
is($sql->("SELECT status FROM pgjq.jobs WHERE id = $second"), 'waiting', 'the next step still waits');
$node->poll_query_until('postgres', "SELECT status = 'pending' FROM pgjq.jobs WHERE id = $second")
  or die 'the workflow step was not settled';
is($sql->("SELECT status || ' ' || result::text FROM pgjq.workflow_steps($workflow) WHERE job_id = $first"),
	'completed {"swept": true}', 'the waiting_jobs duty records the outcome of a step that finished unseen');
is($sql->("SELECT steps_finished || ' of ' || steps_total FROM pgjq.workflows WHERE id = $workflow"), '1 of 2',
	'counts it in its workflow, and starts the step after it');
is($sql->(q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'postgres'}), '0', 'without an error');

$node->stop;
done_testing();
