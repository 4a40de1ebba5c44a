# Delayed jobs reach workers that only LISTEN (and never poll) close to their due time: a job enqueued
# with run_at = now() + 2 s, and a job waiting out a retry backoff. pgjq.naptime is 60 s here, so only
# the deadline-driven sleep and the commit-time wake-up can deliver them in time.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('due', conf => "pgjq.naptime = '60s'\npgjq.prune_interval = '1h'\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('later');
	SELECT pgjq.create_queue('retry');
});
wait_for_maintenance($node, 'postgres');
is($node->safe_psql('postgres', q{SELECT next_wake > now() + interval '30 seconds' FROM pgjq.worker_status() WHERE datname = 'postgres'}),
	't', 'with nothing scheduled the worker sleeps for pgjq.naptime');

# Starts a listening worker and waits until it listens.
sub listen_on
{
	my ($queue, $out, $err) = @_;
	my $h = IPC::Run::start([ $ENV{PGJQ_LISTEN}, $node->connstr('postgres'), $queue, '1', '30' ],
		'>', $out, '2>', $err);
	my $t = time;
	IPC::Run::pump($h) until $$out =~ /ready/ || time - $t > 30;
	die "listener did not start: $$err" unless $$out =~ /ready/;
	return $h;
}

# Seconds from the job's run_at to the notification's arrival.
sub delay_of
{
	my ($job, $out) = @_;
	my ($arrived) = $out =~ /^(\d+\.\d+) \S+$/m;
	return undef unless defined $arrived;
	my $due = $node->safe_psql('postgres', "SELECT extract(epoch FROM run_at) FROM pgjq.live_jobs WHERE id = $job");
	return $arrived - $due;
}

# 1. A job enqueued for two seconds from now.
my ($out, $err) = ('', '');
my $listener = listen_on('later', \$out, \$err);
my $job = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'later', run_at => now() + interval '2 seconds')});
$listener->finish;
my $delay = delay_of($job, $out);
ok(defined $delay, 'the listening worker was notified of the delayed job') or diag($err);
diag(sprintf('delayed job: notified %.3f s after its run_at', $delay)) if defined $delay;
ok(defined $delay && $delay >= -0.01 && $delay < 1.5, 'the notification came at the due time, not before it nor a naptime later');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 1, 'later')}), '1',
	'the notified job is claimable');

# 2. A job that failed and waits out a two-second retry backoff.
my $retry = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'retry')});
$node->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('w', NULL, 1, 'retry')});
($out, $err) = ('', '');
$listener = listen_on('retry', \$out, \$err);
is($node->safe_psql('postgres', qq{SELECT pgjq.fail($retry, 'w', 'transient', retry_in => '2 seconds')}),
	'pending', 'the failed job waits for its retry');
$listener->finish;
$delay = delay_of($retry, $out);
ok(defined $delay, 'the listening worker was notified when the retry fell due') or diag($err);
diag(sprintf('retried job: notified %.3f s after its run_at', $delay)) if defined $delay;
ok(defined $delay && $delay >= -0.01 && $delay < 1.5, 'the retry notification came at the due time');

ok($node->safe_psql('postgres', q{SELECT jobs_notified >= 2 FROM pgjq.worker_status() WHERE datname = 'postgres'}) eq 't',
	'worker_status counts the notified jobs');

$node->stop;
done_testing();
