# A schedule's firing enqueues a job, and an enqueue commits as durably as the server says: the maintenance
# worker's own bookkeeping commits without waiting for its WAL, but a firing must not, or a crash (or a
# failover) after a worker ran the fired job could lose the firing, and the schedule would fire it again.
# Seen from outside: with synchronous_commit = on and a synchronous standby that never answers, a commit
# waits, and its job stays invisible until the standby requirement is lifted; the rest of the worker's
# bookkeeping (which waits for nothing) is not what the test watches.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

# A synchronous standby needs WAL senders (the test framework's default node has none).
my $node = new_node('durable_firing', conf => "synchronous_commit = on\nwal_level = replica\nmax_wal_senders = 2\n");
$node->safe_psql('postgres', q{CREATE EXTENSION pgjq; SELECT pgjq.create_queue('ticks');});
wait_for_maintenance($node, 'postgres');
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET synchronous_standby_names = 'nobody_answers'; SELECT pg_reload_conf();});
# The test's own writes commit locally (they would wait for the phantom standby too).
my $local = sub { $node->safe_psql('postgres', "SET synchronous_commit = local; $_[0]") };
$local->(q{SELECT pgjq.schedule('tick', '@every 1s', 'tick', '{}', 'ticks')});

# The worker fires at least one firing within a few seconds; its transaction waits for the standby.
$node->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'pgjq maintenance' AND wait_event = 'SyncRep'})
  or die 'the firing transaction never waited for the synchronous standby';
pass('a firing waits for the synchronous standby, as an enqueue does');
is($local->(q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'ticks'}), '0', 'and its job is not visible meanwhile');

# Without the requirement the firing commits and its job appears.
$local->(q{ALTER SYSTEM RESET synchronous_standby_names; SELECT pg_reload_conf();});
$node->poll_query_until('postgres', q{SELECT count(*) > 0 FROM pgjq.jobs WHERE queue_name = 'ticks'})
  or die 'the firing did not commit once the standby requirement was lifted';
pass('once the requirement is lifted the firing commits');

$node->stop;
done_testing();
