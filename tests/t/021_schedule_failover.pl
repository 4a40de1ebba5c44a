# A schedule across a failover. pgjq is preloaded on a primary and its synchronous standby; a schedule
# fires every second on the primary. The standby fires nothing while it replays (its launcher does not run),
# the primary is stopped abruptly and the standby promoted: the new primary's maintenance worker goes on
# from the replicated schedule row, and every firing is handled once: the firing transaction's job and its
# schedule's advance replicate together, so a firing the standby received is never fired again, and one it
# did not receive (with its job) is fired by the new primary.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($primary, $standby) =
  new_synchronous_pair('schedule', setup => q{CREATE EXTENSION pgjq; SELECT pgjq.create_queue('ha');});

$primary->safe_psql('postgres', q{SELECT pgjq.schedule('tick', '* * * * * *', 'tick', '{}', 'ha')});
$primary->poll_query_until('postgres', q{SELECT count(*) >= 4 FROM pgjq.jobs WHERE job_type = 'tick'})
  or die 'the schedule did not fire on the primary';
$standby->poll_query_until('postgres', q{SELECT count(*) >= 4 FROM pgjq.jobs WHERE job_type = 'tick'})
  or die 'the jobs did not reach the standby';
is($standby->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'pgjq%'}), '0',
	'the standby runs no launcher and no maintenance worker');

$primary->stop('immediate');
my $replicated = $standby->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type = 'tick'});
$standby->promote;
$standby->poll_query_until('postgres',
	qq{SELECT count(*) >= $replicated + 3 FROM pgjq.jobs WHERE job_type = 'tick'})
  or die 'the promoted standby did not go on firing';
pass('the promoted standby goes on firing the schedule');
my ($ok, $jobs) = schedule_fired_once($standby, 'tick');
ok($ok, "every firing before and after the failover handled once ($jobs jobs)");

$standby->stop;
done_testing();
