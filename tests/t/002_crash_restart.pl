# Crashes: (1) the maintenance worker itself is killed with SIGKILL: the postmaster restarts the
# cluster, the launcher starts a new worker and it resumes recovering leases. (2) The server is stopped
# with pg_ctl -m immediate while producers and workers are busy: after restart every job whose enqueue
# committed exists, none stays in flight past its lease, and every job is completed exactly once.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('crash');
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('q', lease => '1 second');
	SELECT pgjq.create_queue('load', lease => '2 seconds', max_attempts => 10);
});

# (1) SIGKILL the maintenance worker.
my $old = wait_for_maintenance($node, 'postgres');
like($old, qr/^\d+$/, 'one maintenance worker serves the database');
kill 'KILL', $old;
wait_for_server($node);
my $new = wait_for_maintenance($node, 'postgres', $old);
isnt($new, $old, 'a new maintenance worker replaced the killed one');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.worker_status() WHERE worker_type = 'maintenance' AND pid IS NOT NULL}),
	'1', 'worker_status shows one running maintenance worker');

my $job = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'q')});
$node->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('silent', NULL, 1, 'q')});
$node->poll_query_until('postgres',
	"SELECT status = 'pending' AND attempts = 1 FROM pgjq.live_jobs WHERE id = $job")
  or die 'the restarted worker did not recover the lease';
pass('the restarted worker recovers expired leases');

# (2) pg_ctl -m immediate under load. Producers and workers are DO blocks that COMMIT each step and
# only then report it with a NOTICE, so every reported enqueue or completion is committed.
my $producer_sql = q{
DO $$
DECLARE id bigint;
BEGIN
  FOR i IN 1..100000 LOOP
    id := pgjq.enqueue('load', jsonb_build_object('i', i), queue_name => 'load');
    COMMIT;
    PERFORM pg_sleep(0.002);
    RAISE NOTICE 'E %', id;
  END LOOP;
END $$;};

# A worker claims batches, "works" a little, completes each job in its own transaction. With
# $drain it stops once the queue is empty (jobs still held by dead workers come back after the lease).
sub worker_sql
{
	my ($name, $drain) = @_;
	my $stop = $drain ? q{IF ids = '{}' AND NOT EXISTS (SELECT 1 FROM pgjq.live_jobs WHERE queue_name = 'load') THEN EXIT; END IF;} : '';
	return qq{
DO \$\$
DECLARE ids bigint[]; id bigint; ok boolean;
BEGIN
  FOR round IN 1..6000 LOOP
    ids := ARRAY(SELECT j.id FROM pgjq.claim_job_batch('$name', NULL, 5, 'load') j);
    COMMIT;
    $stop
    IF ids = '{}' THEN PERFORM pg_sleep(0.02); END IF;
    FOREACH id IN ARRAY ids LOOP
      PERFORM pg_sleep(0.001);
      BEGIN
        PERFORM pgjq.complete(id, '$name');
        ok := true;
      EXCEPTION WHEN OTHERS THEN
        ok := false;
      END;
      COMMIT;
      IF ok THEN RAISE NOTICE 'C %', id; END IF;
    END LOOP;
  END LOOP;
END \$\$;};
}

sub start_psql
{
	my ($sql, $err) = @_;
	my $out = '';
	return IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c', $sql ],
		'<', \undef, '>', \$out, '2>', $err);
}

my @err = map { '' } 1 .. 4;
my @clients = (
	start_psql($producer_sql, \$err[0]),
	start_psql($producer_sql, \$err[1]),
	start_psql(worker_sql('w1', 0), \$err[2]),
	start_psql(worker_sql('w2', 0), \$err[3]));
# Let them get busy, then crash.
$node->poll_query_until('postgres', q{SELECT count(*) >= 200 FROM pgjq.jobs WHERE queue_name = 'load'})
  or die 'the producers did not start';
sleep 1;
$node->stop('immediate');
{
	local $SIG{PIPE} = 'IGNORE';
	eval { $_->finish } for @clients;
}
my %enqueued = map { $_ => 1 } map { @{ ids_from($_, 'E') } } @err[ 0, 1 ];
my @completed = map { @{ ids_from($_, 'C') } } @err[ 2, 3 ];
note(sprintf('before the crash: %d enqueues and %d completions acknowledged',
		scalar(keys %enqueued), scalar(@completed)));
ok(keys(%enqueued) > 50 && @completed > 0, 'producers and workers were busy when the server stopped');

$node->start;
my $in_flight = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'load' AND status <> 'pending'});
note("jobs in flight after the restart: $in_flight");

my $ids = join(',', sort { $a <=> $b } keys %enqueued);
is($node->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{$ids}'::bigint[]) AS e(id) WHERE NOT EXISTS (SELECT 1 FROM pgjq.jobs j WHERE j.id = e.id)"),
	'0', 'every job whose enqueue committed exists after the restart');

# Drain with two fresh workers.
my @drain_err = ('', '');
my @drainers = (start_psql(worker_sql('d1', 1), \$drain_err[0]), start_psql(worker_sql('d2', 1), \$drain_err[1]));
$_->finish for @drainers;
push @completed, map { @{ ids_from($_, 'C') } } @drain_err;

is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'load'}),
	'0', 'no job is left pending, claimed or running');
my $total = $node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'load'});
is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.finished_jobs WHERE queue_name = 'load' AND status = 'completed'}),
	$total, 'every job is completed');
my $lost_acks = $total - keys(%enqueued);
ok($lost_acks >= 0 && $lost_acks <= 2,
	"the jobs are the acknowledged enqueues plus at most one per producer whose acknowledgement the crash lost ($lost_acks)");

my %seen;
my @twice = grep { $seen{$_}++ } @completed;
is(scalar(@twice), 0, 'no job was completed twice');
my $done = join(',', keys %seen);
is($node->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{$done}'::bigint[]) AS c(id) WHERE NOT EXISTS"
		  . " (SELECT 1 FROM pgjq.finished_jobs f WHERE f.id = c.id AND f.status = 'completed')"),
	'0', 'every completion a worker was told of is recorded');
my $unacked = $total - keys(%seen);
ok($unacked >= 0 && $unacked <= 2,
	"each job counted exactly once: completions reported to workers plus at most one per crashed worker ($unacked)");

$node->stop;
done_testing();
