# Workers that claim the same part of the queue at once (core/direct_claim.cpp): a claim passes over jobs
# another claim is updating and follows jobs another claim updated after its snapshot to their latest
# version, reading what became of each from the row's header before it tries to update it. Those moments
# exist only under real contention, so this drives four workers through pgbench (claims and completions in
# one call, batches of 10, one in ten claims rolled back) and checks what they leave: every job taken
# exactly once by a claim that committed, none passed over for good, none lost.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('contention');
$node->safe_psql('postgres', 'CREATE EXTENSION pgjq');
wait_for_maintenance($node, 'postgres');
sub sql { return $node->safe_psql('postgres', $_[0]); }

my $jobs = 20000;
sql(q{SELECT pgjq.create_queue('busy')});
sql(qq{SELECT count(*) FROM (SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 1000) g), 'busy')
                               FROM generate_series(1, $jobs / 1000)) AS b});

# Each worker completes the jobs of its last claim and claims the next ones in one call; :ids carries them.
# A claim rolled back returns its jobs to pending, and its worker's earlier jobs stay its own.
my $drain = q{SELECT coalesce(array_agg(id)::text, '{}') AS ids
  FROM pgjq.complete_and_claim('w' || :client_id, :ids::bigint[], NULL, 10, 'busy') \gset
};
my $rolled_back = q{BEGIN;
SELECT count(*) FROM pgjq.claim_job_batch('r' || :client_id, NULL, 10, 'busy');
ROLLBACK;
};
# 20 000 jobs in batches of 10 over 4 workers is 500 claims each; nine in ten take jobs for good.
$node->pgbench(
	'--no-vacuum --protocol=prepared --client=4 --jobs=2 --transactions=700 --define=ids={}',
	0, [qr{processed: 2800/2800}], [qr{^$}],
	'four workers claim, complete and roll back claims at once',
	{ 'drain_busy@9' => $drain, 'rolled_back_busy@1' => $rolled_back });

my ($finished, $distinct, $most_attempts) =
  split /\|/, sql(q{SELECT count(*), count(DISTINCT id), max(attempts) FROM pgjq.finished_jobs WHERE queue_name = 'busy'});
my ($live, $pending, $claimed, $live_attempts) =
  split /\|/, sql(q{SELECT count(*), count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'claimed'),
                           coalesce(max(attempts), 1) FROM pgjq.live_jobs WHERE queue_name = 'busy'});
is($finished + $live, $jobs, "no job lost ($finished finished, $live live)");
is($distinct, $finished, 'no job finished twice');
is($most_attempts, 1, 'each finished job was claimed once: no claim took a job another claim held');
is($live_attempts, 1, 'and so was each job still held');
is($pending, 0, 'no job was passed over for good');
cmp_ok($claimed, '<=', 40, "what is left is the last claim of each worker ($claimed jobs)");
is(sql(q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'busy' AND status = 'claimed' AND worker_id LIKE 'r%'}),
	0, 'no job is held by a claim that rolled back');

$node->stop;
done_testing();
