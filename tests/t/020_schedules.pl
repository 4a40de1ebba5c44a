# Periodic jobs fired by the maintenance worker, with preload. (1) In an idle database that no worker
# serves, a committed schedule brings a worker (started by the launcher) in time for its first firing.
# (2) A schedule every second, across a server restart, a duty that fails between a job's enqueue and its
# schedule's advance, and a crash (pg_ctl -m immediate) while a firing transaction is under way: every firing
# is handled exactly once, as one job or counted as missed, and no firing becomes two jobs. (3) Firings
# missed while the server was down follow the schedule's `missed`: 'skip' drops them, 'run_once' runs one.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

# Idle workers leave after a second, so that the launcher has to bring one back for a schedule.
my $node = new_node('schedules', conf => "pgjq.maintenance_idle_timeout = '1s'\npgjq.naptime = '10s'\n");
$node->safe_psql('postgres', q{CREATE EXTENSION pgjq; SELECT pgjq.create_queue('ticks');});
wait_for_maintenance($node, 'postgres');
wait_for_no_maintenance($node, 'postgres') or die 'the idle worker did not leave';

# (1) The first firing, a few seconds ahead, by a worker the launcher starts for it.
my $second = $node->safe_psql('postgres', q{SELECT to_char(now() + interval '4 seconds', 'FMSS')});
my $committed = $node->safe_psql('postgres',
	qq{SELECT clock_timestamp() FROM pgjq.schedule('soon', '$second * * * * *', 'soon', '{}', 'ticks')});
$node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM pgjq.jobs WHERE job_type = 'soon'})
  or die 'the first firing did not happen';
is($node->safe_psql('postgres',
		qq{SELECT created_at - run_at < interval '1.5 seconds' AND run_at > '$committed'
		     FROM pgjq.jobs WHERE job_type = 'soon'}),
	't', 'an idle database: the first firing is enqueued on time');
is($node->safe_psql('postgres',
		qq{SELECT started_at > '$committed' FROM pgjq.worker_status() WHERE datname = 'postgres'}),
	't', 'by a maintenance worker the launcher started after the schedule committed');
$node->safe_psql('postgres', q{SELECT pgjq.unschedule('soon')});

sub check_exactly_once
{
	my ($name, $what) = @_;
	my ($ok, $jobs) = schedule_fired_once($node, $name);
	ok($ok, "$what: $jobs jobs, each firing handled once");
}

# (2) Every second, across a restart.
my ($ret, $out, $err) = $node->psql('postgres', q{SELECT pgjq.schedule('tick', '* * * * * *', 'tick', '{}', 'ticks')});
unlike($err, qr/WARNING/, 'with preload, schedule() warns of nothing');
$node->poll_query_until('postgres', q{SELECT count(*) >= 3 FROM pgjq.jobs WHERE job_type = 'tick'})
  or die 'the schedule did not fire every second';
$node->restart;
$node->poll_query_until('postgres',
	q{SELECT count(*) >= 3 FROM pgjq.jobs WHERE job_type = 'tick' AND created_at > pg_postmaster_start_time()})
  or die 'the schedule did not fire after the restart';
check_exactly_once('tick', 'across a restart');

# A duty failing between each job's enqueue and its schedule's advance: nothing is enqueued meanwhile, and
# once it succeeds again the firings it missed are handled once.
$node->safe_psql('postgres', q{ALTER SYSTEM SET pgjq.test_failing_duty = 'schedules'; SELECT pg_reload_conf();});
$node->poll_query_until('postgres',
	q{SELECT last_error LIKE 'schedules:%' FROM pgjq.worker_status() WHERE datname = 'postgres'})
  or die 'the schedules duty did not fail';
my $during = $node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type = 'tick'});
sleep 2;
is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type = 'tick'}),
	$during, 'a failing firing transaction commits no job');
$node->safe_psql('postgres', q{ALTER SYSTEM RESET pgjq.test_failing_duty; SELECT pg_reload_conf();});
$node->poll_query_until('postgres', qq{SELECT count(*) >= $during + 2 FROM pgjq.jobs WHERE job_type = 'tick'})
  or die 'the schedule did not fire again';
check_exactly_once('tick', 'after failures between enqueue and advance');

# A crash in the middle of a firing: the firing transaction has enqueued 'tick' (schedules due at the same
# time fire in name order) and waits to enqueue into 'blocked' (whose counter rows a session holds: the queue
# has a max_pending, so its enqueues write them) when the server stops with -m immediate.
$node->safe_psql('postgres', q{
	SELECT pgjq.create_queue('blocked', max_pending => 1000000);
	SELECT pgjq.schedule('victim', '* * * * * *', 'victim', '{}', 'blocked');
});
$node->poll_query_until('postgres', q{SELECT count(*) >= 2 FROM pgjq.jobs WHERE job_type = 'victim'})
  or die 'the second schedule did not fire';
my $holder = $node->background_psql('postgres');
$holder->query_safe(q{BEGIN; SELECT slot FROM pgjq.queue_depth WHERE queue_name = 'blocked' FOR UPDATE;});
$node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'pgjq maintenance' AND wait_event_type = 'Lock'})
  or die 'the firing transaction did not wait';
my $before = $node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type IN ('tick', 'victim')});
$node->stop('immediate');
{ local $SIG{PIPE} = 'IGNORE'; eval { $holder->quit }; }
$node->start;
$node->poll_query_until('postgres',
	q{SELECT count(*) >= 2 FROM pgjq.jobs WHERE job_type = 'victim' AND created_at > pg_postmaster_start_time()})
  or die 'the schedules did not fire after the crash';
ok($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type IN ('tick', 'victim')}) > $before,
	'firing goes on after the crash');
check_exactly_once('tick', 'across a crash mid-firing (the job enqueued before the wait)');
check_exactly_once('victim', 'across a crash mid-firing (the job that waited)');

# (3) Firings missed while the server was down: hourly schedules whose last three firings were missed.
$node->safe_psql('postgres', q{
	SELECT pgjq.unschedule('tick'), pgjq.unschedule('victim');
	SELECT pgjq.schedule('hourly-skip', '0 * * * *', 'skipped', '{}', 'ticks', missed => 'skip');
	SELECT pgjq.schedule('hourly-once', '0 * * * *', 'once', '{}', 'ticks', missed => 'run_once');
});
$node->stop;
# As if the server had been down for the last three hours: the schedules' rows say so at its start.
$node->start;
$node->safe_psql('postgres', q{
	UPDATE pgjq.schedules SET next_run = date_trunc('hour', now()) - interval '2 hours'
	 WHERE schedule_name IN ('hourly-skip', 'hourly-once');
	SELECT pgjq.start_worker();  -- a direct write reports nothing: ask for a worker now
});
$node->poll_query_until('postgres',
	q{SELECT bool_and(next_run > now()) FROM pgjq.schedules WHERE schedule_name IN ('hourly-skip', 'hourly-once')})
  or die 'the missed firings were not handled';
my $late = $node->safe_psql('postgres', q{SELECT now() - date_trunc('hour', now()) > interval '1 minute'});
SKIP: {
	skip 'the latest hourly firing is within the tolerance at this minute', 1 if $late ne 't';
	is($node->safe_psql('postgres',
			q{SELECT jobs_enqueued || '/' || firings_missed FROM pgjq.schedules WHERE schedule_name = 'hourly-skip'}),
		'0/3', "'skip': the three late firings are dropped and counted");
}
is($node->safe_psql('postgres',
		q{SELECT jobs_enqueued || '/' || firings_missed FROM pgjq.schedules WHERE schedule_name = 'hourly-once'}),
	'1/2', "'run_once': one job for the three firings");
is($node->safe_psql('postgres', q{SELECT run_at = date_trunc('hour', now()) FROM pgjq.jobs WHERE job_type = 'once'}),
	't', 'standing for the latest of them');

my @errors = grep { !/pgjq.test_failing_duty names it|due to administrator command/ }
  grep { /\b(ERROR|FATAL|PANIC):/ } split /\n/, slurp_file($node->logfile);
is(scalar(@errors), 0, 'no other error in the server log (the failing duty\'s, and shutdowns, aside)') or diag(join("\n", @errors));

$node->stop;
done_testing();
