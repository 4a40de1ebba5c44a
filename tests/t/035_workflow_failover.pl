# A workflow across a failover. pgjq is preloaded on a primary and its synchronous streaming standby; a
# workflow fetch -> part-1..4 -> join is half done on the primary (fetch and two parts completed, a third
# part claimed with a checkpoint recorded, the fourth pending) when the primary stops abruptly and the
# standby is promoted. On the new primary the workflow is where it was: the held part's lease is
# recovered, its checkpoint is there, the parts finish, the join starts exactly once and reads every part's
# result, and the counters of pgjq.workflows add up to the steps' own states.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Worker commits wait for the standby too (by default a worker's commit does not wait for its WAL, so the
# last completions before a failover may be undone and run again, docs/guarantees.md): this test counts
# what the old primary finished.
my ($primary, $standby) = new_synchronous_pair('wf_ha', conf => "pgjq.synchronous_worker_commit = on\n", setup => q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('wf', lease => '2 seconds', max_attempts => 5);
	-- the join's runs, one row each (a handler's effect, committed with its completion)
	CREATE TABLE join_runs (job_id bigint NOT NULL, worker text NOT NULL);
	CREATE FUNCTION step_id(w bigint, s text) RETURNS bigint LANGUAGE sql AS
	  $$ SELECT job_id FROM pgjq.workflow_steps(w) WHERE step_name = s $$;
	-- what pgjq.workflows says of workflow w, and what its steps say
	CREATE FUNCTION counters(w bigint) RETURNS text LANGUAGE sql AS $$
	  SELECT status || ' ' || steps_finished || '/' || steps_total || ' failed ' || steps_failed FROM pgjq.workflows WHERE id = w $$;
	CREATE FUNCTION counted(w bigint) RETURNS text LANGUAGE sql AS $$
	  SELECT count(*) FILTER (WHERE status IN ('completed', 'failed', 'cancelled')) || '/' || count(*)
	         || ' failed ' || count(*) FILTER (WHERE status IN ('failed', 'cancelled'))
	    FROM pgjq.workflow_steps(w) $$;
});
my $parts = 4;
my %result = map { ("part-$_" => $_ * 10) } 1 .. $parts;
my $expected = 0;
$expected += $_ for values %result;

# claims one job of the type on $node; returns its id ('' for none)
sub claim
{
	my ($node, $type, $worker) = @_;
	return $node->safe_psql('postgres', "SELECT id FROM pgjq.claim_job_batch('$worker', ARRAY['$type'], 1, 'wf')");
}

sub complete_part
{
	my ($node, $job, $worker, $name) = @_;
	$node->safe_psql('postgres', "SELECT pgjq.complete($job, '$worker', '{\"value\": $result{$name}}')");
}

my $part_steps = join(', ', map { qq{{"name": "part-$_", "job_type": "part", "queue": "wf", "after": ["fetch"]}} } 1 .. $parts);
my $after = join(', ', map { qq{"part-$_"} } 1 .. $parts);
my $wf = $primary->safe_psql('postgres', qq{SELECT pgjq.start_workflow('failover', '[
	{"name": "fetch", "job_type": "fetch", "queue": "wf"}, $part_steps,
	{"name": "join", "job_type": "join", "queue": "wf", "after": [$after]}]')});
my %step = map { $_ => $primary->safe_psql('postgres', "SELECT step_id($wf, '$_')") } ('fetch', 'join', map { "part-$_" } 1 .. $parts);

# --- half of it on the primary ---------------------------------------------------------------------------
wait_for_maintenance($primary, 'postgres');
is(claim($primary, 'fetch', 'p1'), $step{fetch}, 'fetch is claimed');
$primary->safe_psql('postgres', "SELECT pgjq.complete($step{fetch}, 'p1', '{\"fetched\": true}')");
for my $i (1, 2)
{
	is(claim($primary, 'part', 'p1'), $step{"part-$i"}, "part-$i is claimed on the primary");
	complete_part($primary, $step{"part-$i"}, 'p1', "part-$i");
}
is(claim($primary, 'part', 'p1'), $step{'part-3'}, 'part-3 is claimed on the primary');
$primary->safe_psql('postgres', "SELECT pgjq.checkpoint($step{'part-3'}, 'p1', 'half', '{\"done\": 15}')");
is($primary->safe_psql('postgres', "SELECT counters($wf)"), 'running 3/6 failed 0', 'the workflow is half done');
is($primary->safe_psql('postgres', "SELECT unmet FROM pgjq.workflow_run_steps WHERE job_id = $step{join}"), '2',
	'the join waits for two parts');

# the standby has all of it
is($standby->safe_psql('postgres', "SELECT counters($wf) || ', join ' || (SELECT unmet FROM pgjq.workflow_run_steps WHERE job_id = $step{join})"),
	'running 3/6 failed 0, join 2', 'the standby has the workflow as the primary left it');

$primary->stop('immediate');
$standby->promote;
my $new = $standby;
wait_for_maintenance($new, 'postgres');
pass('the promoted standby is served');

# --- the rest on the new primary -------------------------------------------------------------------------
is($new->safe_psql('postgres', "SELECT counters($wf)"), 'running 3/6 failed 0', 'the workflow is where it was');
is($new->safe_psql('postgres', "SELECT string_agg(step_name || ' ' || status, ', ' ORDER BY step_name) FROM pgjq.workflow_steps($wf) WHERE step_name <> 'part-3'"),
	'fetch completed, join waiting, part-1 completed, part-2 completed, part-4 pending',
	'every step is as it was');
# (part-3's lease may be recovered already: it ended while no primary served it)
is($new->safe_psql('postgres', "SELECT status IN ('claimed', 'pending') AND attempts = 1 FROM pgjq.jobs WHERE id = $step{'part-3'}"),
	't', 'part-3 is held, or back after its first attempt');
$new->poll_query_until('postgres',
	"SELECT status = 'pending' AND worker_id IS NULL AND attempts = 1 FROM pgjq.jobs WHERE id = $step{'part-3'}")
  or die 'the lease of part-3 was not recovered on the new primary';
pass('the lease the old primary granted is recovered on the new one');
is(claim($new, 'part', 'n1'), $step{'part-3'}, 'part-3 is claimed again');
is($new->safe_psql('postgres', "SELECT pgjq.checkpoints($step{'part-3'})"), '{"half": {"done": 15}}',
	'with the checkpoint recorded on the old primary');
is(claim($new, 'join', 'n1'), '', 'the join cannot start yet');
complete_part($new, $step{'part-3'}, 'n1', 'part-3');
is(claim($new, 'part', 'n1'), $step{'part-4'}, 'part-4 is claimed');
is($new->safe_psql('postgres', "SELECT step_name || ' ' || status FROM pgjq.workflow_steps($wf) WHERE step_name = 'join'"),
	'join waiting', 'the join waits for the last part');
complete_part($new, $step{'part-4'}, 'n1', 'part-4');

# the join starts once: one claim gets it, no other, and it runs one attempt
is(claim($new, 'join', 'n1'), $step{join}, 'the join is claimed once the parts are done');
is(claim($new, 'join', 'n2'), '', 'by one claim only');
$new->safe_psql('postgres', qq{
	INSERT INTO join_runs VALUES ($step{join}, 'n1');
	SELECT pgjq.complete($step{join}, 'n1',
	         (SELECT jsonb_build_object('total', sum((result ->> 'value')::integer), 'parts', count(*))
	            FROM pgjq.step_results($step{join}) WHERE status = 'completed'));});
is($new->safe_psql('postgres', "SELECT count(*) FROM join_runs"), '1', 'the join ran once');
is($new->safe_psql('postgres', "SELECT attempts FROM pgjq.jobs WHERE id = $step{join}"), '1', 'in one attempt');
is($new->safe_psql('postgres', "SELECT result FROM pgjq.workflow_steps($wf) WHERE step_name = 'join'"),
	qq{{"parts": $parts, "total": $expected}}, 'and read the result of every part, from both primaries');

is($new->safe_psql('postgres', "SELECT counters($wf)"), 'completed 6/6 failed 0', 'the workflow is completed');
is($new->safe_psql('postgres', "SELECT counted($wf)"), '6/6 failed 0', 'its counters add up to its steps\' states');
is($new->safe_psql('postgres', "SELECT finished_at IS NOT NULL FROM pgjq.workflows WHERE id = $wf"), 't',
	'with its end time');
is($new->safe_psql('postgres', "SELECT string_agg(step_name || ' ' || attempts, ', ' ORDER BY step_name) FROM pgjq.workflow_steps($wf)"),
	'fetch 1, join 1, part-1 1, part-2 1, part-3 2, part-4 1', 'only the part held across the failover ran twice');
is($new->safe_psql('postgres',
		q{SELECT (SELECT coalesce(sum(unfinished), 0) FROM pgjq.queue_depth WHERE queue_name = 'wf')
		       = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'wf')}),
	't', 'the backpressure counters equal the real count');
is($new->safe_psql('postgres', q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'postgres'}), '0',
	'the maintenance worker met no error');

$new->stop;
done_testing();
