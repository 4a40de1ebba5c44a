# One failing maintenance duty stops none of the others. A retention so long that `now() - retention`
# overflows makes every prune fail (on a database whose only queue is 'default', so that it is the shortest); meanwhile notifications are still relayed to workers that only LISTEN,
# expired leases are still recovered, the failure is counted and named in worker_status(), and it is
# logged with a growing backoff, not once a second. Once the setting is fixed the prune runs again.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('duty', conf => "pgjq.prune_interval = '1s'\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.alter_queue('default', lease => '1 second');
});
wait_for_maintenance($node, 'postgres');
# The relay is attached once the worker has run: transactions hand their notifications to it.
my $warm_up = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('warm-up', '{}')});
$node->safe_psql('postgres', qq{
	SELECT id FROM pgjq.claim_job_batch('w', ARRAY['warm-up'], 1);
	SELECT pgjq.complete($warm_up, 'w');
});

my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{ALTER SYSTEM SET pgjq.test_failing_duty = 'prune'; SELECT pg_reload_conf();});
$node->poll_query_until('postgres',
	q{SELECT errors > 0 AND last_error LIKE 'prune:%' FROM pgjq.worker_status() WHERE datname = 'postgres'})
  or die 'the prune did not fail';
pass('the failing prune is counted and named in worker_status()');
$node->poll_query_until('postgres', q{
	SELECT bool_and(CASE duty WHEN 'prune' THEN errors > 0 AND failures_in_row > 0 AND retry_at IS NOT NULL
	                                          AND last_error LIKE '%test_failing_duty%'
	                          ELSE errors = 0 END) AND count(*) = 9
	  FROM pgjq.maintenance_duties() WHERE datname = 'postgres'})
  or die 'maintenance_duties() does not show the failing prune alone';
pass('maintenance_duties() shows the failure in the prune\'s own row, and no other duty failing');

# A worker that only LISTENs still hears of a new job: the relay kept running.
my ($out, $err) = ('', '');
my $listener = IPC::Run::start([ $ENV{PGJQ_LISTEN}, $node->connstr('postgres'), 'default', '1', '20' ],
	'>', \$out, '2>', \$err);
my $t = time;
IPC::Run::pump($listener) until $out =~ /ready/ || time - $t > 20;
die "listener did not start: $err" unless $out =~ /ready/;
$node->safe_psql('postgres', q{SELECT pgjq.enqueue('after', '{}')});
$listener->finish;
like($out, qr/^\d+\.\d+ default$/m, 'a listening worker is notified of a new job while the prune fails');
is($node->safe_psql('postgres',
		q{SELECT runs > 0 AND done > 0 FROM pgjq.maintenance_duties() WHERE datname = 'postgres' AND duty = 'notification_relay'}),
	't', 'the relay\'s own row counts its runs and the notices it relayed');

# An expired lease is still recovered.
my $job = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('held', '{}')});
$node->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('gone', ARRAY['held'], 1)});
$node->poll_query_until('postgres', "SELECT status = 'pending' AND attempts = 1 FROM pgjq.live_jobs WHERE id = $job")
  or die 'the lease was not recovered while the prune fails';
pass('an expired lease is recovered while the prune fails');

# Logged with its duty's name, and backed off: 1, 2, 4, 8 s between tries, so at most 4 in 8 s.
sleep 8;
my $log = substr(slurp_file($node->logfile), $log_offset);
my @failures = $log =~ /pgjq maintenance duty "prune" of database "postgres" \(retried in \d+ s/g;
ok(@failures >= 2 && @failures <= 5, 'the failure is logged with a growing backoff (' . scalar(@failures) . ' times)');
like($log, qr/ERROR:\s+duty "prune" fails because pgjq.test_failing_duty names it/, 'with the error that caused it');

# Fixed, the prune runs again (after its current backoff).
my $errors = $node->safe_psql('postgres', q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'postgres'});
$node->safe_psql('postgres', q{ALTER SYSTEM RESET pgjq.test_failing_duty; SELECT pg_reload_conf();});
my $completed = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('old', '{}')});
$node->safe_psql('postgres', qq{
	SELECT id FROM pgjq.claim_job_batch('w', ARRAY['old'], 1);
	SELECT pgjq.complete($completed, 'w');
	UPDATE pgjq.finished_jobs SET finished_at = now() - interval '8 days' WHERE id = $completed;
});
$node->poll_query_until('postgres', "SELECT NOT EXISTS (SELECT 1 FROM pgjq.finished_jobs WHERE id = $completed)")
  or die 'the prune did not run again';
pass('once the setting is fixed the prune deletes old jobs again');
my $errors_after = $node->safe_psql('postgres', q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'postgres'});
ok($errors_after - $errors <= 1, 'and fails no more');

$node->stop;
done_testing();
