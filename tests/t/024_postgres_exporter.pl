# contrib/postgres_exporter/pgjq-queries.yaml works with the real postgres_exporter (Debian's
# prometheus-postgres-exporter, installed by the test command): connected as a role with pgjq's observer
# capability, the exporter serves every queue's figures, promtool accepts what it serves, and the values are
# the queues' real ones.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use HTTP::Tiny;
use Time::HiRes qw(sleep);

my $exporter = '/usr/bin/prometheus-postgres-exporter';
my $promtool = '/usr/bin/promtool';
plan skip_all => 'scripts/test.sh installs prometheus-postgres-exporter and prometheus'
  unless -x $exporter && -x $promtool;
my $queries = "$FindBin::Bin/../../contrib/postgres_exporter/pgjq-queries.yaml";

my $node = new_node('exporter');
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	CREATE ROLE monitoring LOGIN; SELECT pgjq.grant_observer('monitoring');
	SELECT pgjq.create_queue('mail');
	SELECT pgjq.enqueue_batch('t', '[1, 2, 3]', 'mail');
	SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 2, 'mail');
});

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $dsn = sprintf('host=%s port=%d user=monitoring dbname=postgres sslmode=disable', $node->host, $node->port);
my ($out, $err) = ('', '');
my $run = IPC::Run::start(
	[ $exporter, "--extend.query-path=$queries", "--web.listen-address=127.0.0.1:$port",
	  '--disable-default-metrics', '--disable-settings-metrics' ],
	'>', \$out, '2>', \$err, init => sub { $ENV{DATA_SOURCE_NAME} = $dsn });

my $text = '';
my $http = HTTP::Tiny->new(timeout => 5);
for (1 .. 100)
{
	my $response = $http->get("http://127.0.0.1:$port/metrics");
	$text = $response->{content} if $response->{success};
	last if $text =~ /pgjq_queue_completed_total/;
	sleep(0.2);
}
$run->kill_kill;
like($text, qr/^pgjq_queue_completed_total\{[^}]*queue="mail"[^}]*\} 2$/m, 'the exporter serves a queue\'s completed total')
  or diag("exporter said: $err");
like($text, qr/^pgjq_queue_unfinished\{[^}]*queue="mail"[^}]*\} 1$/m, 'and its unfinished jobs');
like($text, qr/^pgjq_queue_jobs_pending\{[^}]*queue="mail"[^}]*\} 1$/m, 'and its jobs by state');
like($text, qr/^pgjq_queue_completed_total\{[^}]*queue="default"/m, 'for every queue the observer may read');
like($text, qr/^pgjq_latency_jobs_total\{[^}]*measure="run"[^}]*queue="mail"[^}]*\} 2$/m,
	'and the times of its finished jobs');

my ($check_out, $check_err) = ('', '');
my @ours = grep { /pgjq_/ } split /\n/, $text;    # the exporter's own families are its business
my $ours = join("\n", @ours) . "\n";
ok(IPC::Run::run([ $promtool, 'check', 'metrics' ], '<', \$ours, '>', \$check_out, '2>', \$check_err),
	'promtool accepts the pgjq families it serves') or diag($check_out . $check_err);

$node->stop;
done_testing();
