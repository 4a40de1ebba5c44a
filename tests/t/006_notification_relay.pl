# The notification relay: with a maintenance worker serving the database, producers and workers do not
# NOTIFY themselves (that would serialize their commits); the worker sends the same notifications after
# they commit. Same channels and payloads, nothing for rolled-back work (including a rolled-back
# savepoint), and the transaction's own NOTIFY again once the worker is stopped.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('relay', conf => "pgjq.naptime = '60s'\npgjq.prune_interval = '1h'\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('a');
	SELECT pgjq.create_queue('b');
	SELECT pgjq.create_queue('rolled');
	SELECT pgjq.create_queue('sub');
	SELECT pgjq.create_queue('kept');
	SELECT pgjq.create_queue('direct');
});
my $worker = wait_for_maintenance($node, 'postgres');

# A psql session that LISTENs for $seconds; its output lists what it received, with the sender's pid.
sub start_listener
{
	my ($seconds, $out) = @_;
	# a script on stdin: psql reports notifications between its commands (not within one -c string)
	my $script = "LISTEN pgjq_new_job;\nLISTEN pgjq_job_finished;\nSELECT pg_sleep($seconds);\nSELECT 1;\n";
	my $h = IPC::Run::start([ 'psql', '-X', '-d', $node->connstr('postgres') ],
		'<', \$script, '>', $out, '2>', \my $err);
	IPC::Run::pump($h) while length $script;  # IPC::Run writes stdin only while pumped
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(%' AND wait_event = 'PgSleep'})
	  or die 'listener did not start';
	return $h;
}

# "channel|payload|pid" for each notification in a listener's output.
sub received
{
	my ($out) = @_;
	my @got;
	while ($out =~ /Asynchronous notification "(\S+)" with payload "(.*?)" received from server process with PID (\d+)\./g)
	{
		push @got, "$1|$2|$3";
	}
	return \@got;
}

my $out = '';
my $listener = start_listener(3, \$out);
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT pgjq.enqueue('t', '{}', 'a');
	SELECT pgjq.enqueue_batch('t', '[1, 2, 3]', 'a');
	SELECT pgjq.enqueue('t', '{}', 'b');
	COMMIT;
	BEGIN;
	SELECT pgjq.enqueue('t', '{}', 'rolled');
	ROLLBACK;
	BEGIN;
	SAVEPOINT s;
	SELECT pgjq.enqueue('t', '{}', 'sub');
	ROLLBACK TO SAVEPOINT s;
	SELECT pgjq.enqueue('t', '{}', 'kept');
	COMMIT;
});
my $job = $node->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('w', NULL, 1, 'a')});
$node->safe_psql('postgres', qq{SELECT pgjq.complete($job, 'w', '{"ok": true}')});
$listener->finish;

my @got = @{ received($out) };
is_deeply(
	[ sort @got ],
	[ sort(
		"pgjq_new_job|a|$worker", "pgjq_new_job|b|$worker", "pgjq_new_job|kept|$worker",
		qq{pgjq_job_finished|{"id":$job,"queue":"a","status":"completed"}|$worker}) ],
	'each committed queue is announced once and the finished job with its status, all by the maintenance worker;'
	  . ' nothing for the rolled-back transaction or savepoint')
  or diag($out);

# With the worker stopped, a transaction notifies itself again.
$node->safe_psql('postgres', 'SELECT pgjq.stop_worker()');
wait_for_no_maintenance($node, 'postgres');
$out = '';
$listener = start_listener(2, \$out);
my $producer = $node->safe_psql('postgres', q{SELECT pg_backend_pid() FROM (SELECT pgjq.enqueue('t', '{}', 'direct')) AS s});
$listener->finish;
is_deeply(received($out), [ "pgjq_new_job|direct|$producer" ],
	'without a worker the enqueuing transaction sends the notification itself') or diag($out);

$node->stop;
done_testing();
