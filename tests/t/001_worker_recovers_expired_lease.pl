# A worker's backend is killed with SIGKILL mid-job (the whole cluster goes through crash recovery):
# after the lease the maintenance worker puts the job back to pending (notifying its queue), another
# worker completes it, attempts are counted and nothing is lost. A job whose attempts are spent goes
# to the dead letter state instead.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('lease');
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('q', lease => '4 seconds');
});
wait_for_maintenance($node, 'postgres');

my $job = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('work', '{"n": 1}', queue_name => 'q')});
my $spent = $node->safe_psql('postgres',
	q{SELECT pgjq.enqueue('work', '{"n": 2}', queue_name => 'q', max_attempts => 1)});

# The doomed worker claims both jobs, reports progress on one, and is killed mid-job.
my $doomed = $node->background_psql('postgres', on_error_stop => 0);
my $doomed_pid = $doomed->query_safe('SELECT pg_backend_pid()');
# Its claim and progress must outlive the crash for a lease to recover: with pgjq.synchronous_worker_commit
# off (the default) the crash may undo them, and the job is simply pending again.
$doomed->query_safe('SET pgjq.synchronous_worker_commit = on');
is($doomed->query_safe(q{SELECT count(*) FROM pgjq.claim_job_batch('doomed', NULL, 10, 'q')}),
	'2', 'the doomed worker claimed both jobs');
$doomed->query_safe(qq{SELECT pgjq.progress($job, 'doomed', 50, 'halfway')});
my $log_offset = -s $node->logfile;
kill 'KILL', $doomed_pid;
{ local $SIG{PIPE} = 'IGNORE'; eval { $doomed->quit }; }

# Crash recovery; then a worker that only LISTENs waits for the requeue's notification.
$node->wait_for_log(qr/database system is ready to accept connections/, $log_offset);
wait_for_server($node);
# A connection made before the postmaster learnt of the killed backend would be cut by the reset: the
# log's "ready" after the kill says the recovery is over. A listener refused all the same is started again.
my ($out, $err, $listener) = ('', '');
my $t = time;
while ($out !~ /ready/ && time - $t < 30)
{
	($out, $err) = ('', '');
	$listener = IPC::Run::start(
		[ $ENV{PGJQ_LISTEN}, $node->connstr('postgres'), 'q', '1', '60' ],
		'>', \$out, '2>', \$err);
	eval { IPC::Run::pump($listener) until $out =~ /ready/ || time - $t > 30; };
	if ($out !~ /ready/)
	{
		eval { $listener->finish };
		select(undef, undef, undef, 0.2);
	}
}
$out =~ /ready/ or die "the listener never got ready: $err";
my $still_held = $node->safe_psql('postgres', "SELECT status FROM pgjq.live_jobs WHERE id = $job");
is($still_held, 'running', 'after the crash the job is still running under the dead worker');

$node->poll_query_until('postgres',
	"SELECT status = 'pending' AND worker_id IS NULL FROM pgjq.live_jobs WHERE id = $job")
  or die 'the job was not recovered';
like($node->safe_psql('postgres', "SELECT last_error FROM pgjq.live_jobs WHERE id = $job"),
	qr/lease expired/, 'last_error says the lease expired');
$listener->finish;
like($out, qr/^\d+\.\d+ q$/m, 'a listening worker was notified of the requeued job');

$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pgjq.finished_jobs WHERE id = $spent AND status = 'failed'")
  or die 'the spent job was not dead-lettered';
like($node->safe_psql('postgres', "SELECT last_error FROM pgjq.finished_jobs WHERE id = $spent"),
	qr/lease expired/, 'the spent job is failed with a lease-expired error');

# Another worker completes it; the dead worker's late report is refused.
is($node->safe_psql('postgres', q{SELECT string_agg(id::text, ',') FROM pgjq.claim_job_batch('rescuer', NULL, 10, 'q')}),
	$job, 'the rescuer claims the recovered job');
$node->safe_psql('postgres', qq{SELECT pgjq.complete($job, 'rescuer', '{"ok": true}')});
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{SELECT pgjq.complete($job, 'doomed')});
isnt($ret, 0, 'the dead worker cannot complete the job any more');

is($node->safe_psql('postgres', "SELECT status || ' ' || attempts || ' ' || worker_id FROM pgjq.finished_jobs WHERE id = $job"),
	'completed 2 rescuer', 'completed once, on the second attempt');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'q'}), '2', 'no job was lost');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.live_jobs}), '0', 'no job is left in flight');
ok($node->safe_psql('postgres', q{SELECT jobs_recovered >= 2 FROM pgjq.worker_status() WHERE datname = 'postgres'}) eq 't',
	'worker_status counts the recovered jobs');

$node->stop;
done_testing();
