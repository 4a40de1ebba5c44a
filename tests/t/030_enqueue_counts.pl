# Enqueues into a queue without max_pending count their jobs in shared memory (core/enqueue_counts.hpp):
# no counter row is written, pgjq.queue_metrics adds what the maintenance worker has not yet folded into the
# rows, and the count stays exact through rollbacks, savepoints, prepared transactions, drop_queue,
# alter_queue setting max_pending, a crash (the worker reconciles the rows with the live jobs) and the
# extension dropped and created again. Shared memory needs the preload: the regression suites run without
# it and so test the counter rows alone.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('counts', conf => "max_prepared_transactions = 2\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('free');
	SELECT pgjq.create_queue('capped', max_pending => 3);
});
wait_for_maintenance($node, 'postgres');

sub sql { return $node->safe_psql('postgres', $_[0]); }

# What a transaction that enqueues one job updates in pgjq.queue_depth.
sub rows_updated_by_enqueue
{
	my ($queue) = @_;
	return sql(qq{
		BEGIN;
		SELECT pgjq.enqueue('t', '{}', queue_name => '$queue');
		SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'pgjq.queue_depth'::regclass;
		ROLLBACK;
	}) =~ s/^\d+\n//r;
}
# The queue's unfinished jobs as queue_metrics shows them, as its rows hold them, and as counted.
sub counts
{
	my ($queue) = @_;
	return sql(qq{
		SELECT (SELECT unfinished FROM pgjq.queue_metrics WHERE queue_name = '$queue') || ' '
		    || (SELECT coalesce(sum(unfinished), 0) FROM pgjq.queue_depth WHERE queue_name = '$queue') || ' '
		    || (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = '$queue')});
}
sub metrics_exact
{
	my ($queue) = @_;
	my ($shown, $rows, $live) = split / /, counts($queue);
	return $shown == $live;
}

# A new extension's tables are empty, so its enqueues count in shared memory as soon as a worker serves the
# database.
$node->poll_query_until('postgres', q{
	SELECT n_tup_upd = 0 FROM (SELECT pgjq.enqueue('t', '{}', queue_name => 'free')) e,
	       pg_stat_xact_user_tables WHERE relid = 'pgjq.queue_depth'::regclass})
  or die 'enqueues into a queue without max_pending write a counter row';
is(rows_updated_by_enqueue('free'), '0', 'an enqueue into a queue without max_pending writes no counter row');
is(rows_updated_by_enqueue('capped'), '1', 'one into a queue with max_pending writes its row, as before');
# pgjq.shared_enqueue_counts (a developer setting, for comparisons) off: the enqueue writes its row at once.
is(sql(q{
	BEGIN;
	SET LOCAL pgjq.shared_enqueue_counts = off;
	SELECT pgjq.enqueue('t', '{}', queue_name => 'free');
	SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'pgjq.queue_depth'::regclass;
	COMMIT;
}) =~ s/^\d+\n//r, '1', 'with pgjq.shared_enqueue_counts = off an enqueue writes its counter row');
ok(metrics_exact('free'), 'queue_metrics counts the jobs that are not in the rows yet');

# Rollbacks, savepoints, a batch.
sql(q{
	BEGIN;
	SELECT pgjq.enqueue('t', '{}', queue_name => 'free');
	SAVEPOINT s;
	SELECT pgjq.enqueue('t', '{}', queue_name => 'free') FROM generate_series(1, 2);
	ROLLBACK TO s;
	SELECT pgjq.enqueue_batch('t', '[{}, {}, {}]', queue_name => 'free');
	COMMIT;
	BEGIN;
	SELECT pgjq.enqueue('t', '{}', queue_name => 'free');
	ROLLBACK;
});
ok(metrics_exact('free'), 'what rolled back (a savepoint, a transaction) is not counted');

# The worker folds the counts into the rows.
$node->poll_query_until('postgres', q{
	SELECT (SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'free')
	     = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'free')})
  or die 'the worker did not fold the counts into the rows';
ok(metrics_exact('free'), 'the rows hold the count once folded, and queue_metrics still shows it once');

# A prepared transaction (one that enqueued jobs not due yet announces nothing, so it may be prepared) writes
# its row: its commit may come from another session, or after a restart.
# (One at a time: a prepared transaction holds its row until it ends, and the next session may share its slot.)
sql(q{BEGIN; SELECT pgjq.enqueue('t', '{}', queue_name => 'free', run_at => now() + interval '1 hour');
      PREPARE TRANSACTION 'kept'});
sql(q{COMMIT PREPARED 'kept'});
sql(q{BEGIN; SELECT pgjq.enqueue('t', '{}', queue_name => 'free', run_at => now() + interval '1 hour');
      PREPARE TRANSACTION 'dropped'});
sql(q{ROLLBACK PREPARED 'dropped'});
ok(metrics_exact('free'), 'prepared transactions count what commits');

# The worker's fold fails from here on (a test setting), so that nothing is folded behind the test's back.
sub fail_fold
{
	my ($on) = @_;
	sql($on ? q{ALTER SYSTEM SET pgjq.test_failing_duty = 'count_fold'} : q{ALTER SYSTEM RESET pgjq.test_failing_duty});
	sql(q{SELECT pg_reload_conf()});
}
fail_fold(1);
$node->poll_query_until('postgres', q{
	SELECT failures_in_row > 0 FROM pgjq.maintenance_duties() WHERE datname = 'postgres' AND duty = 'count_fold'})
  or die 'the fold did not fail';
sql(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'free') FROM generate_series(1, 5)});
my ($shown, $rows, $live) = split / /, counts('free');
is($shown - $rows, 5, 'five jobs are counted in shared memory only');
ok(metrics_exact('free'), 'and queue_metrics shows them');

# alter_queue setting max_pending folds the count into the rows, which the check against it reads.
sql(q{SELECT pgjq.create_queue('later')});
sql(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'later') FROM generate_series(1, 4)});
is(counts('later'), '4 0 4', 'four jobs of a queue without max_pending, none in its rows');
sql(q{SELECT pgjq.alter_queue('later', max_pending => 5)});
is(counts('later'), '4 4 4', 'max_pending set: the rows hold the four jobs');
is(sql(q{SELECT count(*) FROM (SELECT pgjq.try_enqueue('t', '{}', queue_name => 'later')
                                 FROM generate_series(1, 3)) e WHERE e.try_enqueue IS NOT NULL}),
	'1', 'and max_pending admits one more job, not three');

# drop_queue waits for a transaction that is enqueuing into the queue; a queue created again starts at 0.
sql(q{SELECT pgjq.create_queue('doomed')});
my $producer = $node->background_psql('postgres');
$producer->query_safe(q{BEGIN; SELECT pgjq.enqueue('t', '{}', queue_name => 'doomed')});
my $dropper = $node->background_psql('postgres');
$dropper->query_until(qr/dropping/, q{\echo dropping
SELECT pgjq.drop_queue('doomed', force => true);
\echo dropped
});
$node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%drop_queue%'})
  or die 'drop_queue did not wait for the enqueuing transaction';
pass('drop_queue waits for a transaction enqueuing into the queue');
$producer->query_safe('COMMIT');
$dropper->query_until(qr/dropped/, '');
$producer->quit;
$dropper->quit;
is(sql(q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'doomed'}), '0', 'the drop took the job with it');
sql(q{SELECT pgjq.create_queue('doomed')});
is(counts('doomed'), '0 0 0', 'the queue created again counts nothing');

# A COPY into the live jobs (pg_restore loads a dump so; its rows lack what its source had not folded) brings
# jobs that no count knows of: the worker reconciles the rows with the jobs again, and until it has, enqueues
# write their rows.
fail_fold(0);
sql(q{COPY pgjq.live_jobs (queue_name, job_type) FROM PROGRAM 'printf "free\\tcopied\\nfree\\tcopied\\n"'});
$node->poll_query_until('postgres', q{
	SELECT (SELECT unfinished FROM pgjq.queue_metrics WHERE queue_name = 'free')
	     = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'free')})
  or die 'the copied jobs were not reconciled';
pass('jobs copied into the live table are counted once the worker reconciled them');
$node->poll_query_until('postgres', q{
	SELECT n_tup_upd = 0 FROM (SELECT pgjq.enqueue('t', '{}', queue_name => 'free')) e,
	       pg_stat_xact_user_tables WHERE relid = 'pgjq.queue_depth'::regclass})
  or die 'enqueues do not count in shared memory again after the reconcile';
ok(metrics_exact('free'), 'and enqueues count in shared memory again, exactly');

# A crash loses what shared memory held: the worker started after it reconciles the rows with the jobs, and
# until it has, enqueues write their rows (a CREATE EXTENSION IF NOT EXISTS, which creates nothing, does not
# change that).
fail_fold(1);
$node->poll_query_until('postgres', q{
	SELECT failures_in_row > 0 FROM pgjq.maintenance_duties() WHERE datname = 'postgres' AND duty = 'count_fold'})
  or die 'the fold did not fail';
sql(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'free') FROM generate_series(1, 3)});
($shown, $rows, $live) = split / /, counts('free');
isnt($rows, $live, 'before the crash the rows lack jobs counted in shared memory');
my $backend = $node->background_psql('postgres');
my $pid = $backend->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $pid;
{ local $SIG{PIPE} = 'IGNORE'; eval { $backend->quit }; }
wait_for_server($node);
wait_for_maintenance($node, 'postgres');
sql(q{CREATE EXTENSION IF NOT EXISTS pgjq});
is(rows_updated_by_enqueue('free'), '1', 'after the crash, before the reconcile, an enqueue writes its row');
fail_fold(0);
$node->poll_query_until('postgres', q{
	SELECT (SELECT unfinished FROM pgjq.queue_metrics WHERE queue_name = 'free')
	     = (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'free')})
  or die 'the counts were not reconciled after the crash';
($shown, $rows, $live) = split / /, counts('free');
is("$rows $live", "$live $live", 'after the crash the rows hold every unfinished job');
ok(metrics_exact('capped') && metrics_exact('later'), 'and the other queues are exact too');

# Without a worker to fold, enqueues write their rows; an extension dropped and created again does not
# inherit counts from shared memory.
sql(q{SELECT pgjq.stop_worker()});
wait_for_no_maintenance($node, 'postgres');
is(rows_updated_by_enqueue('free'), '1', 'with no worker serving the database, an enqueue writes its row');
sql(q{DROP EXTENSION pgjq; CREATE EXTENSION pgjq; SELECT pgjq.create_queue('free')});
is(counts('free'), '0 0 0', 'a new extension starts its queues at 0');
sql(q{SELECT pgjq.start_worker()});
$node->poll_query_until('postgres', q{
	SELECT n_tup_upd = 0 FROM (SELECT pgjq.enqueue('t', '{}', queue_name => 'free')) e,
	       pg_stat_xact_user_tables WHERE relid = 'pgjq.queue_depth'::regclass})
  or die 'the new extension does not count in shared memory once a worker serves it';
ok(metrics_exact('free'), 'and counts in shared memory, exactly, once a worker serves it');

$node->stop;
done_testing();
