# The notification relay never loses events silently. A delivery that fails after the maintenance worker
# took the events from the ring (here by pgjq.test_failing_duty, a superuser-only switch for tests) is
# counted, logged and retried; the events it held are announced again once delivery works (every queue
# on pgjq_new_job, and an overflow notice on pgjq_job_finished, so that waiters look again), and so a
# worker that only LISTENs still learns of the job.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('relay', conf => "pgjq.prune_interval = '1h'\n");
$node->safe_psql('postgres', q{CREATE EXTENSION pgjq});
wait_for_maintenance($node, 'postgres');
$node->safe_psql('postgres', q{SELECT pgjq.enqueue('warm-up', '{}')});   # the relay is attached

$node->safe_psql('postgres', q{ALTER SYSTEM SET pgjq.test_failing_duty = 'notification_relay'; SELECT pg_reload_conf();});
sleep 1;

my ($out, $err) = ('', '');
my $listener = IPC::Run::start([ $ENV{PGJQ_LISTEN}, $node->connstr('postgres'), 'default', '1', '30' ],
	'>', \$out, '2>', \$err);
my $t = time;
IPC::Run::pump($listener) until $out =~ /ready/ || time - $t > 20;
die "listener did not start: $err" unless $out =~ /ready/;

$node->safe_psql('postgres', q{SELECT pgjq.enqueue('after', '{}')});
$node->poll_query_until('postgres',
	q{SELECT errors > 0 AND last_error LIKE 'notification_relay:%' FROM pgjq.worker_status() WHERE datname = 'postgres'})
  or die 'the delivery did not fail';
pass('the failed delivery is counted and named in worker_status()');
IPC::Run::pump_nb($listener);
unlike($out, qr/^\d+\.\d+ default$/m, 'while delivery fails the listener hears nothing');

$node->safe_psql('postgres', q{ALTER SYSTEM RESET pgjq.test_failing_duty; SELECT pg_reload_conf();});
$listener->finish;
like($out, qr/^\d+\.\d+ default$/m, 'once delivery works again the listener is told of the queue');

my $log = slurp_file($node->logfile);
like($log, qr/pgjq maintenance duty "notification_relay" of database "postgres"/, 'the failure is logged with its duty');

$node->stop;
done_testing();
