# enqueue_batch draws each batch's ids as one run even while other batches are enqueued at the same
# time: a claim walks jobs in id order, and interleaved batches would send it to another heap page for
# nearly every job.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = new_node('batch_ids', preload => 0);
$node->safe_psql('postgres', q{CREATE EXTENSION pgjq; SELECT pgjq.create_queue('b');});

# Each producer commits 150 batches of 200 jobs, each job tagged with its producer and batch.
sub producer
{
	my ($name, $err) = @_;
	my $sql = qq{DO \$\$ BEGIN
		FOR i IN 1..150 LOOP
			PERFORM pgjq.enqueue_batch('t',
				(SELECT jsonb_agg(jsonb_build_object('batch', '$name-' || i)) FROM generate_series(1, 200)), 'b');
			COMMIT;
		END LOOP;
	END \$\$;};
	return IPC::Run::start([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
		'<', \undef, '>', \my $out, '2>', $err);
}

my ($err_a, $err_b) = ('', '');
my @producers = (producer('a', \$err_a), producer('b', \$err_b));
$_->finish for @producers;
is($err_a . $err_b, '', 'both producers enqueued without error');

is($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'b'}), '60000',
	'every job is there');
# Otherwise the check below would prove nothing.
is($node->safe_psql('postgres', q{
	SELECT min(id) FILTER (WHERE payload->>'batch' LIKE 'a-%') < max(id) FILTER (WHERE payload->>'batch' LIKE 'b-%')
	   AND min(id) FILTER (WHERE payload->>'batch' LIKE 'b-%') < max(id) FILTER (WHERE payload->>'batch' LIKE 'a-%')
	  FROM pgjq.live_jobs WHERE queue_name = 'b'}), 't', 'the two producers ran at the same time');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT payload->>'batch' FROM pgjq.live_jobs WHERE queue_name = 'b'
	                       GROUP BY 1 HAVING max(id) - min(id) + 1 <> count(*)) AS broken}), '0',
	'each batch holds one unbroken run of ids');

done_testing();
