# Dump and restore: pg_dump of a database using pgjq, with jobs in every state, restored with pg_restore
# into a new database of another cluster. The restore reports no error; queues (the default one's changed
# settings included), jobs and backpressure counters are all there; the grants hold; the maintenance
# worker serves the restored database; new enqueues get fresh ids. Done for a database at the current
# version and for one still at 0.1.0 (restored as the current version).
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $source = new_node('source', conf => "pgjq.prune_interval = '1h'\n");
my $target = new_node('target', conf => "pgjq.prune_interval = '1h'\n");
for my $node ($source, $target)
{
	$node->safe_psql('postgres', q{CREATE ROLE app_producer; CREATE ROLE app_worker;});
}

# Queues with changed settings and jobs in every state; the 'short' queue's claimed job has a lease that
# has run out by the time the restored database is served.
sub populate
{
	my ($db, $version) = @_;
	my $sql = sub { $source->safe_psql($db, $_[0]) };
	$source->safe_psql('postgres', "CREATE DATABASE $db");
	$sql->("CREATE EXTENSION pgjq VERSION '$version'");
	# No maintenance worker in the source: nothing there changes by itself between what the test reads and
	# the dump (a lease that ran out meanwhile would be recovered there), and its enqueues write their rows.
	$sql->('SELECT pgjq.stop_worker()');
	$sql->(q{
		SELECT pgjq.grant_producer('app_producer'); SELECT pgjq.grant_worker('app_worker');
		SELECT pgjq.alter_queue('default', max_attempts => 7, max_pending => 100, retention => '3 days');
		SELECT pgjq.create_queue('mail', max_pending => 50, lease => '10 minutes');
		SELECT pgjq.alter_queue('mail', retry_base => '5 seconds', keep_completed => false);
		SELECT pgjq.create_queue('ordered', fifo => true);
		SELECT pgjq.create_queue('short', lease => '1 second');
		SELECT pgjq.enqueue('pending', '{"n": 1}');
		SELECT pgjq.enqueue('scheduled', '{}', run_at => now() + interval '1 day');
		SELECT pgjq.enqueue('unique', '{}', queue_name => 'mail', unique_key => 'k');
		SELECT pgjq.enqueue_batch('batch', '[{"i": 1}, {"i": 2}, {"i": 3}]', 'mail');
		SELECT pgjq.enqueue('first', '{}', queue_name => 'ordered');
		SELECT pgjq.enqueue('claimed', '{}'); SELECT pgjq.enqueue('running', '{}');
		SELECT pgjq.enqueue('completed', '{}'); SELECT pgjq.enqueue('dead', '{}', max_attempts => 1);
		SELECT pgjq.enqueue('retrying', '{}'); SELECT pgjq.enqueue('cancelled', '{}');
		SELECT pgjq.enqueue('expiring', '{}', queue_name => 'short');
	});
	my $claim = sub {
		my ($type, $queue) = @_;
		return $sql->("SELECT id FROM pgjq.claim_job_batch('w', ARRAY['$type'], 1, '$queue')");
	};
	$claim->('claimed', 'default');
	my $running = $claim->('running', 'default');
	$sql->("SELECT pgjq.progress($running, 'w', 60, 'copying')");
	$sql->("SELECT pgjq.complete(" . $claim->('completed', 'default') . ", 'w', '{\"rows\": 3}')");
	$sql->("SELECT pgjq.fail(" . $claim->('dead', 'default') . ", 'w', 'broken')");
	$sql->("SELECT pgjq.fail(" . $claim->('retrying', 'default') . ", 'w', 'later', retry_in => '1 hour')");
	$sql->(q{SELECT pgjq.cancel(id) FROM pgjq.jobs WHERE job_type = 'cancelled'});
	$claim->('first', 'ordered');
	return $claim->('expiring', 'short');
}

# The columns every version has (0.2.0 adds enqueued_by and claimed_by). The job whose lease runs out is left
# out: the restored database's worker may recover it before this is read; it has checks of its own below.
my $jobs_query = q{SELECT string_agg(format('%s', (id, queue_name, job_type, priority, status, payload, result, run_at,
                     unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at,
                     lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, attempts,
                     max_attempts, last_error)), E'\n' ORDER BY id) FROM pgjq.jobs WHERE job_type <> 'expiring'};
# The settings every version has (0.2.0 adds caps, limits and timeouts, at their defaults for old queues).
my $queues_query = q{SELECT string_agg(format('%s', (queue_name, max_pending, fifo, max_attempts, lease, retry_base,
                       retry_cap, retention, keep_completed, paused, created_at)), E'\n' ORDER BY queue_name)
                       FROM pgjq.queues q};
my $rows_depth_query = q{SELECT string_agg(queue_name || ' ' || n, ', ' ORDER BY queue_name)
                      FROM (SELECT queue_name, sum(unfinished) AS n FROM pgjq.queue_depth GROUP BY 1) d};
# From 0.2.0 enqueues count in shared memory until the worker folds them into the rows: the count is the
# view's.
my $metrics_depth_query = q{SELECT string_agg(queue_name || ' ' || unfinished, ', ' ORDER BY queue_name)
                              FROM pgjq.queue_metrics};
# From 0.2.0 the counters also hold the totals of what finished.
my $finished_query = q{SELECT string_agg(format('%s', m), E'\n' ORDER BY queue_name)
                         FROM (SELECT queue_name, completed, failed, cancelled FROM pgjq.queue_metrics) m};
my $live_query = q{SELECT string_agg(queue_name || ' ' || n, ', ' ORDER BY queue_name)
                     FROM (SELECT q.queue_name, count(l.id) AS n FROM pgjq.queues q
                             LEFT JOIN pgjq.live_jobs l USING (queue_name) GROUP BY 1) c};

for my $case ([ 'current', $source->safe_psql('postgres', q{SELECT default_version FROM pg_available_extensions WHERE name = 'pgjq'}) ],
	[ 'old', '0.1.0' ])
{
	my ($db, $version) = @$case;
	my $depth_query = $version eq '0.1.0' ? $rows_depth_query : $metrics_depth_query;
	my $expiring = populate($db, $version);
	my %before = map { $_ => $source->safe_psql($db, $_) } ($jobs_query, $queues_query, $depth_query);
	my $max_id = $source->safe_psql($db, q{SELECT max(id) FROM pgjq.jobs});
	is($before{$depth_query}, $source->safe_psql($db, $live_query), "$db: the source's counters are right");

	my $dump = $source->basedir . "/$db.dump";
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr($db) ], '>', \$out, '2>', \$err)
	  or die "pg_dump failed: $err";
	$target->safe_psql('postgres', "CREATE DATABASE $db");
	my $restored = IPC::Run::run([ 'pg_restore', '-d', $target->connstr($db), $dump ], '>', \$out, '2>', \$err);
	if ($version eq '0.1.0')
	{
		# The dump's GRANTs on the functions whose arguments 0.2.0 extended name signatures that no longer
		# exist; they are all that fails, and the capabilities they gave are adopted below.
		my @errors = grep { /error: could not execute query/ } split /\n/, $err;
		my @other = grep { !/function pgjq\.(enqueue|try_enqueue|enqueue_batch|create_queue|alter_queue)\(.*\) does not exist/ } @errors;
		is(scalar(@other), 0, "$db: pg_restore fails only the GRANTs on functions with new arguments")
		  or diag($err);
	}
	else
	{
		ok($restored, "$db ($version): pg_restore succeeds");
		is($err, '', "$db: pg_restore reports no error");
	}

	my $sql = sub { $target->safe_psql($db, $_[0]) };
	# 0.1.0 kept capabilities as GRANTs, which the dump brings back and later versions do not read.
	is($sql->(q{SELECT pgjq.adopt_legacy_grants()}), '2', "$db: the capabilities of 0.1.0 are adopted") if $version eq '0.1.0';
	is($sql->(q{SELECT count(*) FROM pgjq.grants}), '2', "$db: the capabilities are there");
	is($sql->($queues_query), $before{$queues_query}, "$db: every queue is restored with its settings");
	is($sql->($jobs_query), $before{$jobs_query}, "$db: every job is restored with its id, state, times and result");
	# The COPY of the jobs and of the counter rows recounts the queues' unfinished jobs when it is done: the
	# counters are right as soon as pg_restore returns, whatever the order of its COPYs and whether a worker
	# reconciled the database in between.
	is($sql->($depth_query), $before{$depth_query}, "$db: the backpressure counters are restored");
	is($sql->($depth_query), $sql->($live_query), "$db: and equal the real counts");
	if ($version ne '0.1.0')
	{
		is($sql->($finished_query), $source->safe_psql($db, $finished_query),
			"$db: the totals of finished jobs are restored");
	}
	is($sql->(q{SET ROLE app_producer; SELECT pgjq.enqueue('granted', '{}') > 0}), 't', "$db: the grants are restored");
	my $new = $sql->(q{SELECT pgjq.enqueue('fresh', '{}', queue_name => 'mail')});
	ok($new > $max_id, "$db: a new job's id ($new) comes after the restored ones ($max_id)");

	is($sql->("SELECT count(*) FROM pgjq.live_jobs WHERE id = $expiring AND attempts = 1"),
		'1', "$db: the job whose lease runs out is restored, with its attempt");
	wait_for_maintenance($target, $db);
	$target->poll_query_until($db, "SELECT status = 'pending' AND attempts = 1 FROM pgjq.live_jobs WHERE id = $expiring")
	  or die "the maintenance worker did not serve the restored database $db";
	pass("$db: the maintenance worker serves the restored database (it recovered an expired lease)");
}

# A restore whose jobs arrive first and are reconciled by the restored database's worker before the counter
# rows arrive (pg_restore commits each COPY on its own, and a worker may serve the database in between): the
# dumped rows count those jobs again unless the load recounts them. With the worker stopped afterwards, the
# counters stay as the restore left them.
{
	my $dump = $source->basedir . '/current.dump';
	my ($out, $err) = ('', '');
	my $restore = sub {
		IPC::Run::run([ 'pg_restore', '-d', $target->connstr('staged'), @_, $dump ], '>', \$out, '2>', \$err)
		  or die "pg_restore @_ failed: $err";
	};
	$target->safe_psql('postgres', 'CREATE DATABASE staged');
	$restore->('--section=pre-data');
	IPC::Run::run([ 'pg_restore', '-l', $dump ], '>', \my $toc, '2>', \$err) or die "pg_restore -l failed: $err";
	my @data = grep { /TABLE DATA pgjq / } split /\n/, $toc;
	my ($jobs_entry) = grep { /TABLE DATA pgjq live_jobs / } @data;
	my $list = $source->basedir . '/staged.list';
	open(my $fh, '>', $list) or die;
	print $fh "$jobs_entry\n";
	close $fh;
	$restore->('--data-only', '-L', $list);
	my $real = q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'default'};
	my $counted = q{SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'default'};
	$target->poll_query_until('staged', "SELECT ($counted) = ($real)")
	  or die 'the jobs restored first were not counted';
	wait_for_maintenance($target, 'staged');
	$target->safe_psql('staged', 'SELECT pgjq.stop_worker()');
	wait_for_no_maintenance($target, 'staged') or die 'the worker of the staged restore did not stop';
	open($fh, '>', $list) or die;
	print $fh "$_\n" for grep { $_ ne $jobs_entry } @data;
	close $fh;
	$restore->('--data-only', '-L', $list);
	$restore->('--section=post-data');
	is($target->safe_psql('staged', $counted), $target->safe_psql('staged', $real),
		'counter rows restored after their jobs were counted do not count them twice');
}

$source->stop;
$target->stop;
done_testing();
