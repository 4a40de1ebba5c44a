# pgjq.metrics() in the Prometheus text format, checked by Prometheus's own promtool (Debian's prometheus
# package, installed by the test command): valid and lint-clean for a superuser, an observer and a producer
# of one queue, who sees only that queue's figures and not the maintenance duties'. The counters it shows
# are the queues' real totals.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $promtool = '/usr/bin/promtool';
plan skip_all => "promtool is not installed ($promtool; scripts/test.sh installs Debian's prometheus)"
  unless -x $promtool;

# promtool's verdict on a text: (exit status 0?, what it said).
sub promtool_check
{
	my ($text) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ $promtool, 'check', 'metrics' ], '<', \$text, '>', \$out, '2>', \$err);
	return ($ok, $out . $err);
}

# The check can fail: a sample with a broken label set, and a counter without its HELP, are refused.
my ($ok, $said) = promtool_check("pgjq_jobs{queue=\"a\" 1\n");
ok(!$ok, 'promtool refuses a malformed sample');
($ok, $said) = promtool_check("# TYPE pgjq_x_total counter\npgjq_x_total 1\n");
ok(!$ok, 'and a family without HELP');

my $node = new_node('metrics');
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	CREATE ROLE monitoring LOGIN; CREATE ROLE mailer LOGIN;
	SELECT pgjq.create_queue('mail'); SELECT pgjq.create_queue('reports');
	SELECT pgjq.grant_observer('monitoring'); SELECT pgjq.grant_producer('mailer', 'mail');
	SELECT pgjq.enqueue_batch('t', '[1, 2, 3, 4]', 'mail');
	SELECT pgjq.enqueue('t', '{}', 'reports', run_at => now() + interval '1 hour');
	SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 2, 'mail');
	SELECT pgjq.fail(id, 'w', 'boom', retry_in => '0') FROM pgjq.claim_job_batch('w', NULL, 1, 'mail');
	SELECT id FROM pgjq.claim_job_batch('w', NULL, 1, 'mail');
});
wait_for_maintenance($node, 'postgres');

for my $role ('postgres', 'monitoring', 'mailer')
{
	my $text = $node->safe_psql('postgres', "SET ROLE $role; SELECT pgjq.metrics()");
	$text .= "\n";    # psql drops the final line feed
	($ok, $said) = promtool_check($text);
	ok($ok, "promtool accepts the metrics $role reads") or diag($said . "\n" . $text);
	if ($role eq 'mailer')
	{
		unlike($text, qr/queue="reports"/, 'a producer of one queue sees only that queue');
		unlike($text, qr/pgjq_maintenance_duty/, 'and not the maintenance duties');
		like($text, qr/^pgjq_jobs_finished_total\{queue="mail",status="completed"\} 2$/m,
			'the totals are the queue\'s real ones');
		like($text, qr/^pgjq_job_run_seconds_bucket\{queue="mail",le="\+Inf"\} 2$/m,
			'the run time histogram counts the completed jobs');
		like($text, qr/^pgjq_job_wait_seconds_count\{queue="mail"\} 2$/m, 'and so does the wait time one');
	}
	else
	{
		like($text, qr/^pgjq_jobs\{queue="reports",state="scheduled"\} 1$/m, "$role sees every queue");
		like($text, qr/^pgjq_workers\{queue="mail"\} 1$/m, 'and the workers holding jobs');
		like($text, qr/^pgjq_maintenance_duty_runs_total\{database="postgres",duty="lease_recovery"\} \d+$/m,
			'and the maintenance duties');
	}
}

my ($ret, $out, $err) = $node->psql('postgres', q{CREATE ROLE nobody LOGIN; SET ROLE nobody; SELECT pgjq.metrics()});
like($err, qr/holds no pgjq capability/, 'a role without a capability is refused');

$node->stop;
done_testing();
