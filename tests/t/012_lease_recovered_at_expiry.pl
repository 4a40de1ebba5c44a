# A lease is recovered when it expires, not at the maintenance worker's next planned pass: with
# pgjq.naptime at 60 s, a job claimed with a 2-second lease and abandoned is back to pending within a
# second or so of its expiry (the claim's commit tells the worker when the lease ends). The same with
# complete_and_claim, and with a lease shorter than one already held.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = new_node('lease', conf => "pgjq.naptime = '60s'\npgjq.prune_interval = '1h'\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('long', lease => '10 minutes');
	SELECT pgjq.create_queue('short', lease => '2 seconds');
});
wait_for_maintenance($node, 'postgres');
# A held job with a long lease: the worker's next planned wake is far away.
$node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'long'); SELECT id FROM pgjq.claim_job_batch('w', NULL, 1, 'long')});
sleep 1;
is($node->safe_psql('postgres', q{SELECT next_wake > now() + interval '30 seconds' FROM pgjq.worker_status() WHERE datname = 'postgres'}),
	't', 'the worker plans to sleep for pgjq.naptime');

# How late after its expiry the job is back to pending (seconds).
sub recovered_late
{
	my ($claim_sql) = @_;
	my $job = $node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'short')});
	my $expires = $node->safe_psql('postgres', "$claim_sql; SELECT extract(epoch FROM lease_expires_at) FROM pgjq.live_jobs WHERE id = $job");
	$expires = (split /\n/, $expires)[-1];
	die "job $job was not claimed" unless $expires =~ /^\d+(\.\d+)?$/;
	$node->poll_query_until('postgres', "SELECT status = 'pending' FROM pgjq.live_jobs WHERE id = $job", 't')
	  or die "job $job was not recovered";
	my $late = time - $expires;
	$node->safe_psql('postgres', "SELECT pgjq.cancel($job)");    # out of the next claim's way
	return $late;
}

my $late = recovered_late(q{SELECT count(*) FROM pgjq.claim_job_batch('gone', NULL, 1, 'short')});
note(sprintf('claim_job_batch: recovered %.3f s after the lease expired', $late));
ok($late < 1.0, 'a lease taken by claim_job_batch is recovered at its expiry (within a second), not at the next naptime (60 s)');

$late = recovered_late(q{SELECT count(*) FROM pgjq.complete_and_claim('gone', NULL, NULL, 1, 'short')});
note(sprintf('complete_and_claim: recovered %.3f s after the lease expired', $late));
ok($late < 1.0, 'so is one taken by complete_and_claim');

$node->stop;
done_testing();
