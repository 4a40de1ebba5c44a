# Many databases under PostgreSQL's default max_worker_processes (8): 40 databases with pgjq, each with
# an abandoned job whose lease ends. pgjq runs at most pgjq.max_maintenance_workers maintenance workers at a time
# (plus its launcher), so every lease is recovered, a parallel query still gets its workers, no slot
# error reaches the log, an idle database costs no process, and worker_status() says which databases are
# served, which wait and why.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $databases = 40;
my $max_workers = 2;
my $node = new_node('many',
	conf => "max_worker_processes = 8\n"
	  . "pgjq.max_maintenance_workers = $max_workers\n"
	  . "pgjq.maintenance_idle_timeout = '2s'\n"
	  . "pgjq.naptime = '5s'\n"
	  . "pgjq.launcher_naptime = '30s'\n");
my @dbs = map { sprintf('tenant%02d', $_) } 1 .. $databases;
$node->safe_psql('postgres', "CREATE DATABASE $_") for @dbs;
for my $db (@dbs)
{
	$node->safe_psql($db, q{
		CREATE EXTENSION pgjq;
		SELECT pgjq.create_queue('q', lease => '2 seconds');
		SELECT pgjq.enqueue('t', '{}', queue_name => 'q');
	});
}

# Never more processes than the setting, sampled while the launcher first visits every database.
my $most = 0;
for (1 .. 30)
{
	my $n = $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pgjq maintenance'});
	$most = $n if $n > $most;
	select(undef, undef, undef, 0.1);
}
cmp_ok($most, '<=', $max_workers, "at most pgjq.max_maintenance_workers ($max_workers) maintenance workers run at once");

# Every database: a job claimed by a worker that then goes silent.
my %lease_end;
for my $db (@dbs)
{
	$node->safe_psql($db, q{SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q')});
	$lease_end{$db} =
	  $node->safe_psql($db, q{SELECT extract(epoch FROM lease_expires_at) FROM pgjq.live_jobs WHERE status <> 'pending'});
}
for my $db (@dbs)
{
	$node->poll_query_until($db, q{SELECT status = 'pending' FROM pgjq.live_jobs})
	  or die "the lease in $db was not recovered";
}
my @late;
for my $db (@dbs)
{
	my $recovered = $node->safe_psql($db,
		q{SELECT extract(epoch FROM run_at) FROM pgjq.live_jobs WHERE last_error LIKE 'lease expired%'});
	push @late, $recovered - $lease_end{$db};
}
is(scalar(@late), $databases, "the expired lease of each of the $databases databases was recovered");
my @sorted = sort { $a <=> $b } @late;
diag(sprintf('recovered after the lease ended: median %.2f s, worst %.2f s', $sorted[@sorted / 2], $sorted[-1]));
# Generous for a shared machine: a database waits its turn behind the others, in order of urgency.
cmp_ok($sorted[-1], '<', 5, 'each one within seconds of its expiry, not at the next launcher pass');

# A parallel query gets its workers while pgjq serves the databases.
$node->safe_psql('postgres', q{
	CREATE TABLE big AS SELECT g AS n FROM generate_series(1, 300000) g;
	ANALYZE big;
});
my $plan = $node->safe_psql('postgres', q{
	SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM big});
like($plan, qr/Workers Launched: 2/, 'a parallel query launched both of its workers');

# Idle databases cost nothing: once the leases are recovered and the idle timeout passed, the workers go.
ok( $node->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'pgjq maintenance'}),
	'idle databases have no resident worker');

# worker_status(): a row per database with pgjq, each with its state; nothing is due in any of them.
my $status = $node->safe_psql('tenant01', q{
	SELECT count(*) FILTER (WHERE state = 'idle' AND pid IS NULL AND next_wake IS NULL), count(*)
	  FROM pgjq.worker_status() WHERE worker_type = 'maintenance'});
is($status, "$databases|$databases", 'worker_status shows every database, idle, with no visit planned');

# An observer of one database sees its own database's rows, not what the server's other databases are, as
# pg_stat_activity hides other sessions' details; a role with pg_read_all_stats sees them all.
$node->safe_psql('postgres', q{CREATE ROLE watcher; CREATE ROLE stats_reader IN ROLE pg_read_all_stats});
$node->safe_psql('tenant01', q{SELECT pgjq.grant_observer('watcher'); SELECT pgjq.grant_observer('stats_reader')});
is($node->safe_psql('tenant01', q{SET ROLE watcher;
	SELECT string_agg(DISTINCT datname, ',') FROM pgjq.worker_status() WHERE worker_type = 'maintenance'}),
	'tenant01', 'an observer\'s worker_status shows its own database only');
is($node->safe_psql('tenant01', q{SET ROLE watcher; SELECT string_agg(DISTINCT datname, ',') FROM pgjq.maintenance_duties()}),
	'tenant01', 'and so do its maintenance_duties');
is($node->safe_psql('tenant01', q{SET ROLE stats_reader;
	SELECT count(DISTINCT datname) FROM pgjq.worker_status() WHERE worker_type = 'maintenance'}),
	$databases, 'a member of pg_read_all_stats sees every database');

# An idle database's worker is started again by what needs it: a claim whose lease ends soon.
my $db = $dbs[7];
my $job = $node->safe_psql($db, q{SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q')});
$node->poll_query_until($db, "SELECT status = 'pending' AND attempts = 2 FROM pgjq.live_jobs WHERE id = $job")
  or die 'the second lease was not recovered';
pass('a claim in an idle database brings a worker back for its lease');

# An expired lease whose row is locked when recovery looks (a worker finishing the job, then rolling back)
# is looked at again, though nothing else is due in its database.
my $locked_db = $dbs[5];
my $locked = $node->safe_psql($locked_db, q{SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q')});
my $holder = $node->background_psql($locked_db);
$holder->query_safe("BEGIN; SELECT id FROM pgjq.live_jobs WHERE id = $locked FOR UPDATE");
sleep 4;    # past the 2 s lease: recovery skips the locked row
is($node->safe_psql($locked_db, "SELECT status FROM pgjq.live_jobs WHERE id = $locked"), 'claimed',
	'a locked expired lease is left to its holder');
$holder->query_safe('ROLLBACK');
$holder->quit;
ok($node->poll_query_until($locked_db, "SELECT status = 'pending' FROM pgjq.live_jobs WHERE id = $locked"),
	'and recovered once the lock is gone');

# A committing transaction's notification reaches a listener whether or not a worker is resident.
my ($stdout, $stderr);
$node->psql($dbs[3], q{LISTEN pgjq_new_job; SELECT pgjq.enqueue('t', '{}', queue_name => 'q'); SELECT 1},
	stdout => \$stdout, stderr => \$stderr);
like($stdout, qr/pgjq_new_job/, 'an enqueue in an idle database still notifies (sent by the transaction itself)')
  or diag($stderr);

my $log = slurp_file($node->logfile);
my @slot_errors = grep { /could not register|could not start|slots are in use|out of background worker/i }
  split /\n/, $log;
is(scalar(@slot_errors), 0, 'no background worker slot error in the server log') or diag(join("\n", @slot_errors[0 .. 4]));
$node->stop;

# Slots taken by others: pgjq.max_maintenance_workers asks for more workers than max_worker_processes has room for.
# The launcher serves with what it gets, retries after pgjq.restart_delay and warns once per
# pgjq.launcher_naptime, not once per attempt.
my $full = new_node('full',
	conf => "max_worker_processes = 3\n"    # the logical replication launcher, pgjq's launcher, one more
	  . "pgjq.max_maintenance_workers = 4\n"
	  . "pgjq.launcher_naptime = '30s'\n");
my $full_started = time;
my @few = map { "crowded$_" } 1 .. 6;
for my $db (@few)
{
	$full->safe_psql('postgres', "CREATE DATABASE $db");
	$full->safe_psql($db, q{
		CREATE EXTENSION pgjq;
		SELECT pgjq.create_queue('q', lease => '2 seconds');
		SELECT pgjq.enqueue('t', '{}', queue_name => 'q');
		SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q');
	});
}
for my $db (@few)
{
	$full->poll_query_until($db, q{SELECT status = 'pending' FROM pgjq.live_jobs})
	  or die "the lease in $db was not recovered";
}
pass('with one background worker slot left, every database\'s lease is recovered');
sleep 5;
my @warnings = grep { /could not start a maintenance worker/ } split /\n/, slurp_file($full->logfile);
# Six databases due at once and room for one worker: the launcher did run out of slots, so it must have
# said so, and no more often than once per launcher_naptime (30 s) since the server started.
my $allowed = 1 + int((time - $full_started) / 30);
ok(@warnings >= 1 && @warnings <= $allowed,
	'the missing slots are reported, once per pgjq.launcher_naptime (' . scalar(@warnings) . " times, at most $allowed)")
  or diag(join("\n", grep { defined } @warnings[0 .. 4]));
$full->stop;

done_testing();
