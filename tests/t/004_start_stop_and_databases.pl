# Without preload: pgjq.start_worker() / pgjq.stop_worker() run one dynamic worker for the current
# database, never two, and a terminated one stays stopped. With preload: the launcher serves every
# database that has the extension (and only those, and only those in pgjq.databases), and dropping the
# extension or the database stops its worker without an error loop.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

# --- without shared_preload_libraries ---
my $plain = new_node('plain', preload => 0);
$plain->safe_psql('postgres', q{CREATE EXTENSION pgjq; SELECT pgjq.create_queue('q', lease => '1 second');});
sleep 1;
is(maintenance_pids($plain, 'postgres'), '', 'without preload no worker starts by itself');
# What only the worker acts on says so while no worker serves the database, and not once one does.
my $needs_worker = q{SELECT pgjq.schedule('nightly', '0 3 * * *', 't', '{}', 'q');
	SELECT pgjq.alter_queue('q', job_timeout => '1 hour')};
my ($ret, $out, $err) = $plain->psql('postgres', $needs_worker);
is(scalar(() = $err =~ /WARNING:  .* needs pgjq's maintenance worker, and none serves database "postgres"/g), 2,
	'without preload or a started worker, schedule() and a job_timeout warn that nothing will act on them');

my $pid = $plain->safe_psql('postgres', 'SELECT pgjq.start_worker()');
like($pid, qr/^\d+$/, 'start_worker returns the pid of the worker');
is(maintenance_pids($plain, 'postgres'), $pid, 'the worker shows in pg_stat_activity');
is($plain->safe_psql('postgres', 'SELECT pgjq.start_worker()'), $pid, 'start_worker again returns the running worker');
is(maintenance_pids($plain, 'postgres'), $pid, 'and starts no second one');
is($plain->safe_psql('postgres', q{SELECT string_agg(worker_type || ' ' || pid || ' ' || datname, ',') FROM pgjq.worker_status()}),
	"maintenance $pid postgres", 'worker_status works without preload');
($ret, $out, $err) = $plain->psql('postgres', $needs_worker);
unlike($err, qr/WARNING/, 'with a started worker they warn of nothing');
$plain->safe_psql('postgres', q{SELECT pgjq.unschedule('nightly'); SELECT pgjq.alter_queue('q', job_timeout => '0')});

my $job = $plain->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'q')});
$plain->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q')});
ok($plain->poll_query_until('postgres', "SELECT status = 'pending' FROM pgjq.live_jobs WHERE id = $job"),
	'the dynamic worker recovers expired leases');

is($plain->safe_psql('postgres', 'SELECT pgjq.stop_worker()'), 't', 'stop_worker stops the worker');
is(maintenance_pids($plain, 'postgres'), '', 'the worker is gone');
is($plain->safe_psql('postgres', 'SELECT pgjq.stop_worker()'), 'f', 'stop_worker with no worker returns false');

$pid = $plain->safe_psql('postgres', 'SELECT pgjq.start_worker()');
like($pid, qr/^\d+$/, 'start_worker starts it again');
$plain->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
sleep 3;    # pgjq.restart_delay is 1 s
is(maintenance_pids($plain, 'postgres'), '', 'a terminated worker is not restarted by the postmaster');
$plain->stop;

# --- with shared_preload_libraries: one worker per database that has the extension ---
my $node = new_node('multi');
$node->safe_psql('postgres', 'CREATE DATABASE db1; CREATE DATABASE db2; CREATE DATABASE db3;');
$node->safe_psql($_, 'CREATE EXTENSION pgjq') for qw(db1 db2);
my $pid1 = wait_for_maintenance($node, 'db1');
my $pid2 = wait_for_maintenance($node, 'db2');
like("$pid1 $pid2", qr/^\d+ \d+$/, 'db1 and db2 each have a maintenance worker');
sleep 2;    # the launcher has tried db3 and postgres meanwhile
is(maintenance_pids($node, 'db3') . maintenance_pids($node, 'postgres'), '',
	'databases without the extension have no worker');
is(maintenance_pids($node, 'db1'), $pid1, 'the workers stay (no restart loop)');
is($node->safe_psql('db1', 'SELECT pgjq.start_worker()'), $pid1, 'start_worker does not start a second worker');
is($node->safe_psql('db1', q{SELECT count(*) FROM pgjq.worker_status() WHERE worker_type = 'launcher' AND pid IS NOT NULL}),
	'1', 'worker_status shows the launcher');

# Each database's worker does its own database's work.
for my $db (qw(db1 db2))
{
	$node->safe_psql($db, q{SELECT pgjq.create_queue('q', lease => '1 second')});
	my $id = $node->safe_psql($db, q{SELECT pgjq.enqueue('t', '{}', queue_name => 'q')});
	$node->safe_psql($db, q{SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q')});
	ok($node->poll_query_until($db, "SELECT status = 'pending' FROM pgjq.live_jobs WHERE id = $id"),
		"the worker of $db recovers its leases");
}

# pgjq.databases restricts the launcher, reloadably.
$node->append_conf('postgresql.conf', "pgjq.databases = 'db1'\n");
$node->reload;
ok(wait_for_no_maintenance($node, 'db2'), 'a database removed from pgjq.databases loses its worker');
is(maintenance_pids($node, 'db1'), $pid1, 'the listed database keeps its worker');
$node->append_conf('postgresql.conf', "pgjq.databases = ''\n");
$node->reload;
$pid2 = wait_for_maintenance($node, 'db2');
like($pid2, qr/^\d+$/, 'emptying pgjq.databases serves db2 again');

# Dropping the extension, then the database.
my $log_offset = -s $node->logfile;
$node->safe_psql('db2', 'DROP EXTENSION pgjq');
ok(wait_for_no_maintenance($node, 'db2'), 'DROP EXTENSION stops the worker of that database');
$node->safe_psql('postgres', 'DROP DATABASE db1 WITH (FORCE)');
ok(wait_for_no_maintenance($node, 'db1'), 'DROP DATABASE ... WITH (FORCE) stops the worker of that database');
sleep 3;
is(maintenance_pids($node, 'db1') . maintenance_pids($node, 'db2'), '', 'neither comes back');
my $log = slurp_file($node->logfile, $log_offset);
my @errors = grep { /ERROR|FATAL/ && !/terminating background worker "pgjq maintenance"/ } split /\n/, $log;
is(scalar(@errors), 0, 'no error loop in the server log') or diag(join("\n", @errors));
$node->stop;

done_testing();
