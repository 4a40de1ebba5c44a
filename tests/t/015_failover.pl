# Failover. pgjq is preloaded on a primary and on its synchronous streaming standby. On the standby the
# launcher and the maintenance workers do nothing, and log nothing. The primary is stopped abruptly (with
# a worker of the C++ client draining a queue through a multi-host conninfo, and jobs whose leases expire
# meanwhile) and the standby is promoted: the new primary is served without pgjq.start_worker(), the
# expired leases are recovered, the client reconnects to it and drains, and no job whose enqueue committed
# is lost.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my ($primary, $standby) = new_synchronous_pair('ha', conf => "log_line_prefix = '%m [%p] %b '\n", setup => q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('ha', lease => '2 seconds', max_attempts => 100);
});

my $jobs = 300;
$primary->safe_psql('postgres', "SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, $jobs) g), 'ha')");
is($standby->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'ha'}), $jobs,
	'the standby has every job whose enqueue committed');

# The standby: no launcher, no maintenance worker, no error.
wait_for_maintenance($primary, 'postgres');
sleep 2;
is($standby->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'pgjq%'}), '0',
	'on the standby neither the launcher nor a maintenance worker runs');

# Jobs whose leases will expire while no primary serves them. Their claim waits for the standby (a worker's
# commit does not by default: a claim lost with the old primary would leave nothing to recover).
my $lost = $primary->safe_psql('postgres', q{SET pgjq.synchronous_worker_commit = on;
	SELECT string_agg(id::text, ',') FROM pgjq.claim_job_batch('lost', NULL, 5, 'ha')});

my $conninfo = sprintf('host=%s,%s port=%d,%d dbname=postgres target_session_attrs=read-write connect_timeout=2',
	$primary->host, $standby->host, $primary->port, $standby->port);
my ($out, $err) = ('', '');
my $drain = IPC::Run::start([ $ENV{PGJQ_DRAIN}, $conninfo, 'ha' ], '>', \$out, '2>', \$err);
$primary->poll_query_until('postgres', q{SELECT count(*) >= 50 FROM pgjq.finished_jobs WHERE queue_name = 'ha'})
  or die "the client did not drain: $err";
pass('the client drains through the multi-host conninfo');

$primary->stop('immediate');
$standby->promote;
wait_for_maintenance($standby, 'postgres');
pass('the promoted standby is served without pgjq.start_worker()');

$standby->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pgjq.live_jobs WHERE queue_name = 'ha'}, 't')
  or die "the queue was not drained after the failover: $err";
$drain->signal('TERM');
eval { $drain->finish };
pass('the client reconnected to the new primary and drained the queue');
is($standby->safe_psql('postgres', q{SELECT count(*) FROM pgjq.finished_jobs WHERE queue_name = 'ha' AND status = 'completed'}),
	$jobs, 'every job is completed: none was lost');
is($standby->safe_psql('postgres',
		"SELECT count(*) FROM pgjq.finished_jobs WHERE id IN ($lost) AND worker_id = 'drain' AND attempts = 2"),
	'5', 'the jobs whose leases expired with the old primary were recovered and run again (their second attempt)');
ok($err =~ /reconnect|connection/i, 'the client saw the connection drop and came back');

my @standby_errors = grep { /pgjq/ && /\b(ERROR|FATAL|PANIC):/ } split /\n/, slurp_file($standby->logfile);
is(scalar(@standby_errors), 0, 'no pgjq error in the standby\'s log') or diag(join("\n", @standby_errors));

$standby->stop;
done_testing();
