# Upgrading in place. A database created at 0.1.0 is served by this library as it is (every 0.1.0 SQL
# function and the maintenance worker work on it), then ALTER EXTENSION pgjq UPDATE TO each version of the
# update path in turn (0.2.0, 0.3.0, ...), with jobs held across each step, brings it to the current
# version with nothing lost: every job keeps its id, state, times and result, new ids continue after the
# old ones, the backpressure counters equal the real counts, a workflow runs, and the queues drain.
# Afterwards its schema (objects, grants, comments, dump registrations) is identical to a fresh CREATE
# EXTENSION pgjq.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('upgrade', conf => "pgjq.prune_interval = '1h'\n");
my $current = $node->safe_psql('postgres', q{SELECT default_version FROM pg_available_extensions WHERE name = 'pgjq'});
isnt($current, '0.1.0', "the library's default version ($current) is newer than 0.1.0");
$node->safe_psql('postgres', q{
	CREATE ROLE app_producer; CREATE ROLE app_worker; CREATE ROLE app_admin; CREATE ROLE app_gone;
	CREATE DATABASE upgraded; CREATE DATABASE fresh;
});

# The same grants in both databases, in the same order (grant order shows in ACLs).
my $grants = q{
	SELECT pgjq.grant_producer('app_producer'); SELECT pgjq.grant_worker('app_worker');
	SELECT pgjq.grant_admin('app_admin'); SELECT pgjq.grant_worker('app_producer');
};

# --- 0.1.0, served by the new library ------------------------------------------------------------------
my $sql = sub { $node->safe_psql('upgraded', $_[0]) };
$sql->(q{CREATE EXTENSION pgjq VERSION '0.1.0'});
is($sql->(q{SELECT extversion FROM pg_extension WHERE extname = 'pgjq'}), '0.1.0', 'installed at 0.1.0');
$sql->($grants);
$sql->(q{SELECT pgjq.grant_admin('app_gone'); SELECT pgjq.revoke_admin('app_gone');});

# Queues with settings other than the defaults, the default queue's changed too.
$sql->(q{
	SELECT pgjq.create_queue('mail', max_pending => 1000, max_attempts => 5, lease => '10 minutes');
	SELECT pgjq.alter_queue('mail', retry_base => '2 seconds', retry_cap => '10 minutes', retention => '30 days');
	SELECT pgjq.create_queue('ordered', fifo => true);
	SELECT pgjq.create_queue('lean'); SELECT pgjq.alter_queue('lean', keep_completed => false);
	SELECT pgjq.create_queue('held'); SELECT pgjq.pause_queue('held');
	SELECT pgjq.create_queue('short', lease => '1 second');
	SELECT pgjq.create_queue('doomed'); SELECT pgjq.drop_queue('doomed');
	SELECT pgjq.alter_queue('default', max_attempts => 2, max_pending => 500);
});
# A forced drop of a queue with a live job: 0.1.0 has no dependencies, grants or queue state to drop with it.
$sql->(q{SELECT pgjq.create_queue('forced'); SELECT pgjq.enqueue('gone', '{}', 'forced');
	SELECT pgjq.drop_queue('forced', force => true)});
is($sql->(q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'forced'}), '0',
	'0.1.0 drop_queue(force): the live job goes with the queue');

# Jobs in every state. Each step's job_type names it, so each claim takes exactly the job it means.
my %id;
my $enqueue = sub {
	my ($name, $args) = @_;
	$id{$name} = $sql->("SELECT pgjq.enqueue('$name', '{\"step\": \"$name\"}', queue_name => 'mail'$args)");
};
my $claim = sub {
	my ($name, $worker) = @_;
	is($sql->("SELECT id FROM pgjq.claim_job_batch('$worker', ARRAY['$name'], 1, 'mail')"), $id{$name}, "0.1.0 claim_job_batch: $name");
};
$enqueue->('pending', '');
$enqueue->('scheduled', q{, run_at => now() + interval '1 day'});
$enqueue->('unique', q{, unique_key => 'u-1'});
is($sql->(q{SELECT pgjq.enqueue('unique', '{}', queue_name => 'mail', unique_key => 'u-1')}), $id{unique},
	'0.1.0 enqueue: a held unique_key returns the holder');
$id{batch} = $sql->(q{SELECT array_to_string(pgjq.enqueue_batch('batch', '[{"n": 1}, {"n": 2}]', 'mail', priority => 7), ',')});
$id{tried} = $sql->(q{SELECT pgjq.try_enqueue('tried', '{}', queue_name => 'mail')});
$sql->(q{INSERT INTO pgjq.jobs (job_type, payload, queue_name) VALUES ('inserted', '{"via": "view"}', 'mail')});
$enqueue->('claimed', '');
$claim->('claimed', 'w1');
$enqueue->('running', '');
$claim->('running', 'w1');
$sql->("SELECT pgjq.progress($id{running}, 'w1', 40, 'halfway')");
like($sql->("SELECT pgjq.heartbeat($id{running}, 'w1')"), qr/^\d{4}-/, '0.1.0 heartbeat');
$enqueue->('completed', q{, unique_key => 'u-2'});
$claim->('completed', 'w1');
$sql->("SELECT pgjq.complete($id{completed}, 'w1', '{\"ok\": true}')");
$enqueue->('batched', '');
$claim->('batched', 'w2');
is($sql->("SELECT pgjq.complete_batch(ARRAY[$id{batched}], 'w2')"), '1', '0.1.0 complete_batch');
$enqueue->('looped', '');
$claim->('looped', 'w2');
$enqueue->('next', '');
is($sql->("SELECT id FROM pgjq.complete_and_claim('w2', ARRAY[$id{looped}], ARRAY['next'], 1, 'mail')"), $id{next},
	'0.1.0 complete_and_claim');
$enqueue->('dead', q{, max_attempts => 1});
$claim->('dead', 'w1');
is($sql->("SELECT pgjq.fail($id{dead}, 'w1', 'boom')"), 'failed', '0.1.0 fail: attempts spent');
$enqueue->('retrying', '');
$claim->('retrying', 'w1');
is($sql->("SELECT pgjq.fail($id{retrying}, 'w1', 'try later', retry_in => '1 hour')"), 'pending', '0.1.0 fail: retried');
$enqueue->('cancelled', '');
is($sql->("SELECT pgjq.cancel($id{cancelled})"), 't', '0.1.0 cancel');
$enqueue->('revived', q{, max_attempts => 1});
$claim->('revived', 'w1');
$sql->("SELECT pgjq.fail($id{revived}, 'w1', 'first try')");
$sql->("SELECT pgjq.retry($id{revived})");
$enqueue->('in_tx', '');
$enqueue->('in_tx_failed', '');
is($sql->(qq{
	BEGIN;
	SELECT count(*) FROM pgjq.claim_in_transaction('w3', ARRAY['in_tx', 'in_tx_failed'], 2, 'mail');
	SELECT pgjq.complete_in_transaction(ARRAY[$id{in_tx}], 'w3');
	SELECT pgjq.fail_in_transaction($id{in_tx_failed}, 'w3', 'nope', retry_in => '1 hour');
	COMMIT;}), "2\n1\npending", '0.1.0 claim_in_transaction, complete_in_transaction, fail_in_transaction');
$sql->(q{SELECT pgjq.enqueue('first', '{}', queue_name => 'ordered'); SELECT pgjq.enqueue('second', '{}', queue_name => 'ordered');});
$sql->(q{SELECT pgjq.enqueue('lean', '{}', queue_name => 'lean')});
my $lean = $sql->(q{SELECT id FROM pgjq.claim_job_batch('w4', NULL, 1, 'lean')});
$sql->("SELECT pgjq.complete($lean, 'w4', '{\"dropped\": true}')");
$sql->(q{SELECT pgjq.enqueue('parked', '{}', queue_name => 'held')});
$sql->(q{SELECT pgjq.enqueue('plain', '{}')});
is($sql->(q{SELECT pgjq.prune('100 years')}), '0', '0.1.0 prune');
is($sql->(q{SELECT pgjq.recover_stale()}), '0', '0.1.0 recover_stale');
is($sql->(q{SELECT count(*) FROM pgjq.queue_stats}), '6', '0.1.0 queue_stats');

# The maintenance worker serves the 0.1.0 database: it recovers an expired lease, says once which
# version the database has and how to update it, and start_worker/stop_worker work.
wait_for_maintenance($node, 'upgraded');
my $short = $sql->(q{SELECT pgjq.enqueue('short', '{}', queue_name => 'short')});
$sql->(q{SELECT id FROM pgjq.claim_job_batch('gone', NULL, 1, 'short')});
$node->poll_query_until('upgraded', "SELECT status = 'pending' AND attempts = 1 FROM pgjq.live_jobs WHERE id = $short")
  or die 'the maintenance worker did not recover the lease in the 0.1.0 database';
pass('the maintenance worker recovers an expired lease in a 0.1.0 database');
is($sql->(q{SELECT jobs_recovered >= 1 FROM pgjq.worker_status() WHERE datname = 'upgraded'}), 't',
	'0.1.0 worker_status reports it');
is($sql->(q{SELECT pgjq.stop_worker()}), 't', '0.1.0 stop_worker');
like($sql->(q{SELECT pgjq.start_worker()}), qr/^\d+$/, '0.1.0 start_worker');
wait_for_maintenance($node, 'upgraded');
my $log = slurp_file($node->logfile);
my @hints = $log =~ /database "upgraded" has version 0\.1\.0 of extension pgjq/g;
is(scalar(@hints), 1, 'the older version is logged once per database, however often a worker starts there');
like($log, qr/HINT:\s+Run ALTER EXTENSION pgjq UPDATE in database "upgraded"/, 'and names the command to run');
is($sql->(q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'upgraded'}), '0',
	'and no duty fails on the 0.1.0 database');

# --- ALTER EXTENSION pgjq UPDATE, one version at a time -------------------------------------------------
# The columns 0.1.0 has (0.2.0 adds enqueued_by and claimed_by, NULL for the jobs of 0.1.0).
my $jobs_query = q{SELECT string_agg(format('%s', (id, queue_name, job_type, priority, status, payload, result, run_at,
                     unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at,
                     lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, attempts,
                     max_attempts, last_error)), E'\n' ORDER BY id) FROM pgjq.jobs};
# The settings every version has (0.2.0 adds caps, limits and timeouts, at their defaults for old queues).
my $queues_query = q{SELECT string_agg(format('%s', (queue_name, max_pending, fifo, max_attempts, lease, retry_base,
                       retry_cap, retention, keep_completed, paused, created_at)), E'\n' ORDER BY queue_name)
                       FROM pgjq.queues q};
my $max_id = $sql->(q{SELECT max(id) FROM pgjq.jobs});
# Every step of the update path, each with jobs in flight: those claimed at 0.1.0 (claimed, running, next)
# stay held across all of them, and each version between claims one more, completed at the end.
my $path = $sql->("SELECT path FROM pg_extension_update_paths('pgjq') WHERE source = '0.1.0' AND target = '$current'");
like($path, qr/^0\.1\.0--0\.2\.0--/, "the update walks 0.1.0 -> 0.2.0 -> ... -> $current ($path)");
my @versions = split /--/, $path;
shift @versions;
my (@held_between, @revived_queues);
for my $version (@versions)
{
	my $jobs_before = $sql->($jobs_query);
	my $queues_before = $sql->($queues_query);
	$sql->("ALTER EXTENSION pgjq UPDATE TO '$version'");
	is($sql->(q{SELECT extversion FROM pg_extension WHERE extname = 'pgjq'}), $version, "updated to $version");
	is($sql->($jobs_query), $jobs_before, "$version: every job is still there with its id, state, times and result");
	is($sql->($queues_query), $queues_before, "$version: every queue keeps its settings");
	is($sql->(q{SELECT count(*) FROM pgjq.live_jobs WHERE status IN ('claimed', 'running') AND worker_id IN ('w1', 'w2')}),
		'3', "$version: the jobs claimed at 0.1.0 are still held");
	next if $version eq $current;
	# served at this version: a job claimed now stays in flight across the next update, and the maintenance
	# worker recovers an expired lease
	my $held = $sql->("SELECT pgjq.enqueue('held_$version', '{}', queue_name => 'mail')");
	is($sql->("SELECT id FROM pgjq.claim_job_batch('w5', ARRAY['held_$version'], 1, 'mail')"), $held,
		"$version: claim_job_batch");
	push @held_between, $held;
	my $expiring = $sql->("SELECT pgjq.enqueue('short_$version', '{}', queue_name => 'short')");
	is($sql->("SELECT id FROM pgjq.claim_job_batch('gone', ARRAY['short_$version'], 1, 'short')"), $expiring,
		"$version: a lease to expire");
	$node->poll_query_until('upgraded', "SELECT status = 'pending' AND attempts = 1 FROM pgjq.live_jobs WHERE id = $expiring")
	  or die "the maintenance worker did not recover the lease in the $version database";
	pass("the maintenance worker recovers an expired lease at $version");
	# this version's forms of the statements whose current form names later columns: a final failure, its
	# retry, an in-transaction claim and its completion (in a queue of their own, dropped below: a retry
	# takes a job out of the history its queue's totals started from)
	$sql->("SELECT pgjq.create_queue('revived_$version')");
	my $revived = $sql->("SELECT pgjq.enqueue('revived', '{}', queue_name => 'revived_$version', max_attempts => 1)");
	$sql->("SELECT pgjq.claim_job_batch('w6', NULL, 1, 'revived_$version')");
	is($sql->("SELECT pgjq.fail($revived, 'w6', 'failed at $version')"), 'failed', "$version: a final failure");
	$sql->("SELECT pgjq.retry($revived)");
	is($sql->("BEGIN; SELECT pgjq.complete_in_transaction(ARRAY(SELECT id FROM pgjq.claim_in_transaction('w6',"
			  . " NULL, 1, 'revived_$version')), 'w6'); COMMIT;"), '1', "$version: retried, claimed and completed in a transaction");
	is($sql->("SELECT status FROM pgjq.finished_jobs WHERE id = $revived"), 'completed', "$version: in the history");
	push @revived_queues, "revived_$version";
}
like($path, qr/--0\.3\.0(--|$)/, 'through 0.3.0, the workflows');
$sql->("SELECT pgjq.drop_queue('$_')") for @revived_queues;

# 0.3.0's trace context: the jobs of the earlier versions have no headers; a new job's reach its claim.
is($sql->(q{SELECT count(*) FROM pgjq.jobs WHERE headers IS NOT NULL}), '0', 'the jobs of earlier versions have no headers');
my $traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
my $traced = $sql->("SELECT pgjq.enqueue('traced', '{}', queue_name => 'mail', headers => '{\"traceparent\": \"$traceparent\"}')");
is($sql->(q{SELECT headers ->> 'traceparent' FROM pgjq.claim_job_batch('w7', ARRAY['traced'], 1, 'mail')}), $traceparent,
	'a claim hands the headers given at enqueue to the worker');
$sql->("SELECT pgjq.complete($traced, 'w7')");
is($sql->("SELECT headers ->> 'traceparent' FROM pgjq.finished_jobs WHERE id = $traced"), $traceparent, 'and the history keeps them');

my $counters = q{
	SELECT count(*) FROM pgjq.queues q
	 WHERE (SELECT coalesce(sum(unfinished), 0) FROM pgjq.queue_depth d WHERE d.queue_name = q.queue_name)
	    <> (SELECT count(*) FROM pgjq.live_jobs l WHERE l.queue_name = q.queue_name)};
is($sql->($counters), '0', 'the backpressure counters equal the real counts');
is($sql->(q{SELECT count(*) FROM pgjq.queue_stats s
	            LEFT JOIN (SELECT queue_name, count(*) FILTER (WHERE status = 'completed') AS completed,
	                              count(*) FILTER (WHERE status = 'failed') AS failed,
	                              count(*) FILTER (WHERE status = 'cancelled') AS cancelled
	                         FROM pgjq.finished_jobs GROUP BY queue_name) f USING (queue_name)
	           WHERE (s.completed, s.failed, s.cancelled)
	                 IS DISTINCT FROM (coalesce(f.completed, 0), coalesce(f.failed, 0), coalesce(f.cancelled, 0))}),
	'0', 'the totals of finished jobs start from what the history of 0.1.0 holds');
is($sql->(q{SELECT string_agg(grantee::text || ' ' || capability || ' ' || coalesce(queue_name, '*'), ', '
                              ORDER BY grantee::text, capability) FROM pgjq.grants}),
	'app_admin admin *, app_producer producer *, app_producer worker *, app_worker worker *',
	"the roles 0.1.0 granted capabilities to hold them, as rows of pgjq.grants");
is($sql->(q{SET ROLE app_producer; SELECT pgjq.enqueue('granted', '{}', queue_name => 'mail') > 0}), 't',
	'and use them');
my $new = $sql->(q{SELECT pgjq.enqueue('after', '{}', queue_name => 'mail')});
ok($new > $max_id, "a new job's id ($new) continues after the old ones ($max_id)");

# A workflow in the updated database, started by the producer role and run by the worker role of 0.1.0:
# a, then b and c, then a join that reads both results.
$sql->(q{SELECT pgjq.create_queue('flow')});
my $flow = $sql->(q{SET ROLE app_producer; SELECT pgjq.start_workflow('after-update', '[
	{"name": "a", "job_type": "flow_a", "queue": "flow"},
	{"name": "b", "job_type": "flow_b", "queue": "flow", "after": ["a"], "payload": {"n": 1}},
	{"name": "c", "job_type": "flow_b", "queue": "flow", "after": ["a"], "payload": {"n": 2}},
	{"name": "join", "job_type": "flow_join", "queue": "flow", "after": ["b", "c"]}]')});
like($flow, qr/^\d+$/, 'a workflow starts in the updated database');
my $run_steps = sub {
	my ($type, $result) = @_;
	$sql->("SET ROLE app_worker; SELECT pgjq.complete(id, 'flow', $result) FROM pgjq.claim_job_batch('flow', ARRAY['$type'], 10, 'flow')");
	return $sql->("SELECT string_agg(step_name || ' ' || status, ', ' ORDER BY step_name) FROM pgjq.workflow_steps($flow)");
};
is($run_steps->('flow_a', q{'{}'}), 'a completed, b pending, c pending, join waiting', 'its first step runs');
is($run_steps->('flow_b', q{jsonb_build_object('n', payload -> 'n')}), 'a completed, b completed, c completed, join pending',
	'then its two middle steps');
is($run_steps->('flow_join',
		q{(SELECT jsonb_build_object('sum', sum((r.result ->> 'n')::integer), 'steps', string_agg(r.step_name, ','))
		     FROM pgjq.step_results(id) r)}),
	'a completed, b completed, c completed, join completed', 'then its join');
is($sql->("SELECT status || ' ' || steps_finished || '/' || steps_total FROM pgjq.workflows WHERE id = $flow"),
	'completed 4/4', 'and the workflow is completed');
is($sql->("SELECT result FROM pgjq.workflow_steps($flow) WHERE step_name = 'join'"), '{"sum": 3, "steps": "b,c"}',
	'the join read both results');

# Drain: the holders finish what they hold, then every runnable job is claimed and completed.
$sql->("SELECT pgjq.complete($id{claimed}, 'w1'); SELECT pgjq.complete($id{running}, 'w1'); SELECT pgjq.complete($id{next}, 'w2');");
$sql->("SELECT pgjq.complete($_, 'w5')") for @held_between;
is($sql->('SELECT count(*) FROM pgjq.finished_jobs WHERE status = \'completed\' AND worker_id = \'w5\' AND id IN (' . join(',', @held_between, 0) . ')'),
	scalar(@held_between), 'the jobs claimed at the versions between are completed by their worker');
$sql->(q{SELECT pgjq.resume_queue('held')});
$sql->(q{UPDATE pgjq.live_jobs SET run_at = now() WHERE run_at > now()});   # the scheduled ones too
my $drain = q{
	DO $$
	DECLARE q text; ids bigint[];
	BEGIN
	  FOR q IN SELECT queue_name FROM pgjq.queues LOOP
	    LOOP
	      ids := ARRAY(SELECT id FROM pgjq.claim_job_batch('drainer', NULL, 100, q));
	      EXIT WHEN ids = '{}';
	      PERFORM pgjq.complete_batch(ids, 'drainer');
	    END LOOP;
	  END LOOP;
	END $$;
	SELECT count(*) FROM pgjq.live_jobs;};
is($sql->($drain), '0', 'every queue drains');
# The workflow's steps were enqueued at 0.3.0, whose enqueues count in shared memory until the maintenance
# worker folds them into the rows: the rows come back to the real counts once it has.
ok($node->poll_query_until('upgraded', "SELECT ($counters) = 0"), 'and the counters come back to zero with it');

# --- the same schema as a fresh install -----------------------------------------------------------------
$node->safe_psql('fresh', q{CREATE EXTENSION pgjq});
$node->safe_psql('fresh', $grants);

# pg_dump leaves an extension's objects out of ordinary dumps; in binary-upgrade mode it writes every
# one of them, with its grants, comments and config-table registration. Left out of the comparison:
# object ids and frozen xids, the job and workflow id sequences' positions (data), and the registration
# line (its table oids differ; compared by name below).
sub schema_of
{
	my ($db) = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_dump', '--schema-only', '--binary-upgrade', '--no-owner', '-d', $node->connstr($db) ],
		'>', \$stdout, '2>', \$stderr) or die "pg_dump $db failed: $stderr";
	my @lines = grep {
		!/binary_upgrade_set_next_|binary_upgrade_create_empty_extension|^-- (Dumped|Started|Completed)|relfrozenxid|^WHERE oid = '\d+';$|pg_catalog\.setval\('pgjq\.(job|workflow)_id_seq'|^\\connect|^\\(un)?restrict /
	} split /\n/, $stdout;
	return join("\n", @lines) . "\n";
}
my ($upgraded_schema, $fresh_schema) = (schema_of('upgraded'), schema_of('fresh'));
like($fresh_schema, qr/CREATE TABLE pgjq\.live_jobs/, 'the dump holds the extension\'s objects');
like($fresh_schema, qr/GRANT SELECT,INSERT ON TABLE pgjq\.jobs TO PUBLIC/, 'and their grants');
if ($upgraded_schema ne $fresh_schema)
{
	my $dir = PostgreSQL::Test::Utils::tempdir();
	append_to_file("$dir/upgraded.sql", $upgraded_schema);
	append_to_file("$dir/fresh.sql", $fresh_schema);
	my ($diff) = run_command([ 'diff', '-u', "$dir/fresh.sql", "$dir/upgraded.sql" ]);
	diag($diff);
}
ok($upgraded_schema eq $fresh_schema, 'the upgraded schema is identical to a fresh install');
my $grants_query = q{SELECT string_agg(grantee::text || ' ' || capability || ' ' || coalesce(queue_name, '*'), ', '
                                       ORDER BY grantee::text, capability) FROM pgjq.grants};
is($sql->($grants_query), $node->safe_psql('fresh', $grants_query), 'the same capabilities as a fresh install given the same grants');
my $registration = q{SELECT array(SELECT c::regclass::text FROM unnest(extconfig) c)::text || ' ' || extcondition::text
                       FROM pg_extension WHERE extname = 'pgjq'};
is($sql->($registration), $node->safe_psql('fresh', $registration), 'and so are its dump registrations');

$node->stop;
done_testing();
