# The maintenance worker vacuums pgjq.live_jobs itself, often while it is small and once enough of it is
# dead when it is large: autovacuum (off here, so that it cannot be the one doing it) visits a database
# only once a minute, too rarely for a queue.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $node = new_node('vacuum', conf => "autovacuum = off\npgjq.naptime = '1s'\npgjq.prune_interval = '1h'\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pgjq');
wait_for_maintenance($node, 'postgres');

my $before = $node->safe_psql('postgres',
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'});

# 20 000 jobs claimed and completed: two dead row versions each (the pending one, the claimed one).
$node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 1000) g))
	                        FROM generate_series(1, 20)) AS s;
});
$node->safe_psql('postgres', q{
	DO $$
	DECLARE ids bigint[];
	BEGIN
	  LOOP
	    SELECT array_agg(id) INTO ids FROM pgjq.claim_job_batch('w', NULL, 1000);
	    EXIT WHEN ids IS NULL;
	    PERFORM pgjq.complete_batch(ids, 'w');
	  END LOOP;
	END $$;
});
ok($node->poll_query_until('postgres',
		qq{SELECT vacuum_count > $before AND n_dead_tup < 2000 FROM pg_stat_user_tables WHERE relname = 'live_jobs'}),
	'the maintenance worker vacuumed live_jobs and its dead rows are gone');
is($node->safe_psql('postgres', q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'postgres'}), '0',
	'without errors');
is($node->safe_psql('postgres', q{SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'}), '0',
	'autovacuum did not do it');

# $rounds rounds, 100 ms apart, of 20 jobs enqueued, claimed and completed.
sub trickle
{
	my ($rounds) = @_;
	$node->safe_psql('postgres', qq{
		DO \$\$
		DECLARE ids bigint[];
		BEGIN
		  FOR i IN 1 .. $rounds LOOP
		    PERFORM pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 20) g));
		    COMMIT;
		    SELECT array_agg(id) INTO ids FROM pgjq.claim_job_batch('w', NULL, 20);
		    PERFORM pgjq.complete_batch(ids, 'w');
		    COMMIT;
		    PERFORM pg_sleep(0.1);
		  END LOOP;
		END \$\$;
	});
}

# $rounds transactions of one statement, 100 ms apart.
sub every_100ms
{
	my ($rounds, $statement) = @_;
	$node->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
		  FOR i IN 1 .. $rounds LOOP
		    $statement;
		    COMMIT;
		    PERFORM pg_sleep(0.1);
		  END LOOP;
		END \$\$;
	});
}

# New jobs leave no dead row versions, so a stream of enqueues alone (20 jobs every 100 ms for 3 s) is no
# reason to vacuum: each vacuum rewrites live_jobs' pg_class row in place, and its invalidation makes
# every producer rebuild its cache of the table and re-plan its statements.
sleep(0.5);    # whatever the completions above left for the worker has been looked at
$before = $node->safe_psql('postgres',
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
every_100ms(30, q{PERFORM pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 20) g))});
is($node->safe_psql('postgres', qq{SELECT vacuum_count - $before FROM pg_stat_user_tables WHERE relname = 'live_jobs'}),
	'0', 'enqueues alone do not make the worker vacuum live_jobs');
$node->safe_psql('postgres', q{
	SELECT pgjq.complete_batch(array_agg(id), 'w') FROM pgjq.claim_job_batch('w', NULL, 1000);
});

# A retry delayed by its backoff is announced only once it is due, yet its claim and its requeue left dead
# rows at once: the requeue alone tells the worker to vacuum. 200 jobs claimed and failed 20 at a time,
# none finished and none due again meanwhile (400 dead row versions: the statistics rule stays quiet).
$node->safe_psql('postgres', q{SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 200) g))});
sleep(0.5);
$before = $node->safe_psql('postgres',
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
every_100ms(10, q{PERFORM pgjq.fail(id, 'w', 'down', interval '1 hour') FROM pgjq.claim_job_batch('w', NULL, 20)});
ok($node->poll_query_until('postgres',
		qq{SELECT vacuum_count > $before FROM pg_stat_user_tables WHERE relname = 'live_jobs'}),
	'jobs failed with a delayed retry make the worker vacuum live_jobs');
$node->safe_psql('postgres', q{SELECT pgjq.cancel(id) FROM pgjq.live_jobs});

# A trickle that never leaves 2 000 dead rows behind (20 jobs every 100 ms for 3 s): the statistics
# alone would never call for a vacuum, but a small table is vacuumed whenever jobs moved, so that its
# dead rows are reused before new ones extend it.
$before = $node->safe_psql('postgres',
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
trickle(30);
my $during = $node->safe_psql('postgres',
	qq{SELECT vacuum_count - $before FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
cmp_ok($during, '>=', 3, 'a small live_jobs is vacuumed while jobs move, long before 2 000 rows are dead');

# Under a snapshot held open (a long report, a session idle in transaction), nothing that jobs leave
# behind can be removed, so vacuuming again is pure cost, paid while the held-back history slows the
# claims already: the worker vacuums once more, then waits until the horizon moves. The same trickle, a
# snapshot held throughout.
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM pgjq.queues');
$before = $node->safe_psql('postgres',
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
trickle(30);
$during = $node->safe_psql('postgres',
	qq{SELECT vacuum_count - $before FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
cmp_ok($during, '<=', 1, "under a held snapshot live_jobs is not vacuumed again and again ($during times)");
cmp_ok($node->safe_psql('postgres', q{SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'live_jobs'}),
	'>=', 1000, 'and the dead rows stay, as they must');

# Once the snapshot is gone the next vacuum removes them (a vacuum: pruning alone would lower the count too).
$holder->query_safe('COMMIT');
$holder->quit;
$before = $node->safe_psql('postgres',
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_jobs'});
trickle(3);
ok($node->poll_query_until('postgres',
		qq{SELECT vacuum_count > $before AND n_dead_tup < 200 FROM pg_stat_user_tables WHERE relname = 'live_jobs'}),
	'after the snapshot ends, the worker vacuums the dead rows away');

$node->stop;
done_testing();
