# Databases whose own work never pauses do not keep the others from their maintenance. With the default
# settings (two maintenance workers, a launcher that looks every 30 s), two databases each get a job due every
# 100 ms for two minutes, which would keep a worker busy there for good; a third database's expired lease is
# recovered and its every-second schedule fires all the same, within a turn or two of the busy databases'
# workers (docs/maintenance-worker.md states the bound).
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# The defaults of everything that decides who is served when (new_node shortens some for other tests).
my $node = new_node('turns',
	conf => "pgjq.max_maintenance_workers = 2\n"
	  . "pgjq.launcher_naptime = '30s'\n"
	  . "pgjq.naptime = '5s'\n"
	  . "pgjq.maintenance_idle_timeout = '10s'\n"
	  . "pgjq.restart_delay = '1s'\n");

for my $db (qw(busy_a busy_b quiet))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION pgjq');
}
# A plain producer's stream of jobs due 100 ms apart: there is always a job due within 250 ms.
for my $db (qw(busy_a busy_b))
{
	$node->safe_psql($db, q{SELECT pgjq.enqueue('t', '{}', run_at => now() + g * interval '100 ms')
	                          FROM generate_series(1, 1200) g});
	$node->safe_psql($db, 'SELECT pgjq.start_worker()');
}
$node->poll_query_until('postgres',
	q{SELECT count(DISTINCT datname) = 2 FROM pg_stat_activity
	   WHERE backend_type = 'pgjq maintenance' AND datname IN ('busy_a', 'busy_b')})
  or die 'the busy databases are not both served';

# The quiet database: an abandoned claim whose 1 s lease runs out, and a schedule that fires every second
# (missed firings dropped: only what is fired in time counts).
$node->safe_psql('quiet', q{
	SELECT pgjq.create_queue('q', lease => '1 second');
	SELECT pgjq.enqueue('abandoned', '{}', queue_name => 'q');
	SELECT pgjq.schedule('tick', '* * * * * *', 'tick', queue_name => 'q', missed => 'skip');
});
my $claimed_at = time;
$node->safe_psql('quiet', q{SELECT id FROM pgjq.claim_job_batch('gone', ARRAY['abandoned'], 1, 'q')});

my $recovered = 0;
while (time - $claimed_at < 60)
{
	$recovered = $node->safe_psql('quiet',
		q{SELECT count(*) FROM pgjq.live_jobs WHERE job_type = 'abandoned' AND status = 'pending' AND attempts = 1});
	last if $recovered;
	select(undef, undef, undef, 0.2);
}
my $waited = time - $claimed_at;
diag(sprintf('the expired lease was recovered %.1f s after the claim (the lease: 1 s)', $waited));
ok($recovered, 'the quiet database\'s expired lease is recovered while the busy databases keep their workers busy');
# Generous for a shared machine; before the launcher bounded each database's turn, it was never recovered.
cmp_ok($waited, '<', 10, 'and within seconds, not at the end of the busy databases\' streams');

# Over the next 10 s its every-second schedule keeps firing (a turn, not one visit).
my $fired_before = $node->safe_psql('quiet', q{SELECT jobs_enqueued FROM pgjq.schedules WHERE schedule_name = 'tick'});
sleep 10;
my $fired = $node->safe_psql('quiet', q{SELECT jobs_enqueued FROM pgjq.schedules WHERE schedule_name = 'tick'})
  - $fired_before;
diag("the every-second schedule fired $fired times in 10 s");
cmp_ok($fired, '>=', 3, 'its every-second schedule keeps firing beside the busy databases');

# And the busy databases are served meanwhile, in their turns.
for my $db (qw(busy_a busy_b))
{
	is($node->safe_psql($db,
			"SELECT last_run > now() - interval '10 seconds' FROM pgjq.worker_status() WHERE datname = '$db'"),
		't', "$db is still served in its turns");
}

$node->stop;
done_testing();
