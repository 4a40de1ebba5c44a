# Wait and run time histograms (pgjq.queue_latency, core/latency.hpp): a job's times land in the right
# buckets when its report commits, and only then: a rolled-back report, a rolled-back savepoint and a
# never-claimed cancelled job count nothing; in-transaction claims and a statement finishing jobs of several
# queues are counted per queue; each role sees only the queues it may read; the histograms are kept in
# shared memory, so a restart starts them again at zero, while the worker's samples of them are rows that
# stay; without preload there are none.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('latency');
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.stop_worker();
	CREATE ROLE monitoring LOGIN; CREATE ROLE mailer LOGIN;
	SELECT pgjq.create_queue('mail'); SELECT pgjq.create_queue('reports');
	SELECT pgjq.grant_observer('monitoring'); SELECT pgjq.grant_producer('mailer', 'mail');
});

# One row of the view: "jobs|bucket counts (cumulative)|sum".
sub histogram
{
	my ($queue, $measure, $role) = @_;
	$role //= 'postgres';
	return $node->safe_psql('postgres', qq{
		SET ROLE $role;
		SELECT jobs || '|' || array_to_string(buckets, ',') FROM pgjq.queue_latency
		 WHERE queue_name = '$queue' AND measure = '$measure'});
}
sub jobs_counted
{
	my ($queue, $measure) = @_;
	my $row = histogram($queue, $measure);
	return $row eq '' ? 0 : (split /\|/, $row)[0];
}

# Waited about 2 s (due 2 s before the claim), ran about 0.3 s: wait in (1, 2.5], run in (0.25, 0.5].
$node->safe_psql('postgres', q{
	SELECT pgjq.enqueue('t', '{}', 'mail', run_at => now() - interval '2 seconds');
});
$node->safe_psql('postgres', q{
	SELECT id FROM pgjq.claim_job_batch('w', NULL, 1, 'mail') \gset
	SELECT pg_sleep(0.3);
	SELECT pgjq.complete(:id, 'w');
});
my @le = split /,/, $node->safe_psql('postgres',
	q{SELECT array_to_string(le, ',') FROM pgjq.queue_latency WHERE queue_name = 'mail' AND measure = 'run'});
is($le[-1], 'Infinity', 'the last bucket is unbounded');
sub bucket_of { my ($seconds) = @_; for my $i (0 .. $#le) { return $i if $le[$i] eq 'Infinity' || $seconds <= $le[$i] } }
my @wait = split /,/, (split /\|/, histogram('mail', 'wait'))[1];
my @run = split /,/, (split /\|/, histogram('mail', 'run'))[1];
my ($w, $r) = (bucket_of(2.05), bucket_of(0.35));
is($wait[$w] - ($w > 0 ? $wait[$w - 1] : 0), 1, "the wait of about 2 s is in the bucket up to $le[$w] s");
is($wait[-1], 1, 'and counted once');
is($run[$r] - ($r > 0 ? $run[$r - 1] : 0), 1, "the run of about 0.3 s is in the bucket up to $le[$r] s");
my $p50 = $node->safe_psql('postgres',
	q{SELECT p50_seconds FROM pgjq.queue_latency WHERE queue_name = 'mail' AND measure = 'run'});
ok($p50 > $le[$r - 1] && $p50 <= $le[$r], "its median is estimated within that bucket ($p50 s)");

# Reports that do not commit count nothing.
$node->safe_psql('postgres', q{
	SELECT pgjq.enqueue_batch('t', '[1, 2, 3]', 'mail');
	SELECT pgjq.enqueue('t', '{}', 'reports');
});
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 1, 'mail');
	ROLLBACK;
});
is(jobs_counted('mail', 'run'), 1, 'a rolled-back claim and report count nothing');
$node->safe_psql('postgres', q{
	SELECT array_agg(id) AS held FROM pgjq.claim_job_batch('w', NULL, 3, 'mail') \gset
	BEGIN;
	SAVEPOINT s;
	SELECT pgjq.complete((:'held'::bigint[])[1], 'w');
	ROLLBACK TO SAVEPOINT s;
	SELECT pgjq.complete((:'held'::bigint[])[2], 'w');
	COMMIT;
});
is(jobs_counted('mail', 'run'), 2, 'of a transaction, only what its rolled-back savepoint did not report counts');

# One statement finishing jobs of two queues counts each in its own queue; a job cancelled before any claim
# has no wait or run.
$node->safe_psql('postgres', q{
	SELECT pgjq.claim_job_batch('w', NULL, 1, 'reports');
	SELECT pgjq.complete_batch(array_agg(id), 'w') FROM pgjq.jobs WHERE status = 'claimed';
	SELECT pgjq.enqueue('t', '{}', 'reports');
	SELECT pgjq.cancel(max(id)) FROM pgjq.jobs WHERE queue_name = 'reports';
});
is(jobs_counted('mail', 'run'), 4, 'a statement finishing two queues\' jobs counts the mail ones in mail');
is(jobs_counted('reports', 'run'), 1, 'and the reports one in reports');
is(jobs_counted('reports', 'wait'), 1, 'a job cancelled before its claim adds no wait');

# A claim inside the report's transaction is counted too.
$node->safe_psql('postgres', q{
	SELECT pgjq.enqueue('t', '{}', 'reports');
	BEGIN;
	SELECT array_agg(id) AS held FROM pgjq.claim_in_transaction('w', NULL, 1, 'reports') \gset
	SELECT pgjq.complete_in_transaction(:'held', 'w');
	COMMIT;
});
is(jobs_counted('reports', 'run'), 2, 'a job claimed in the transaction that completes it is counted');

# Each role sees the queues it may read.
isnt(histogram('reports', 'run', 'monitoring'), '', 'an observer sees every queue');
is(histogram('reports', 'run', 'mailer'), '', 'a producer of mail does not see reports');
isnt(histogram('mail', 'run', 'mailer'), '', 'but sees mail');
is($node->safe_psql('postgres', q{SET ROLE mailer; SELECT string_agg(DISTINCT queue_name, ',') FROM pgjq.latency_histograms()}),
	'mail', 'nor do the raw histograms show it');
my ($ret, $out, $err);
is($node->safe_psql('postgres', q{SELECT pgjq.histogram_quantile(0.5, '{1, 2, Infinity}', '{0, 10, 10}')}),
	'1.5', 'a quantile is interpolated within its bucket');
($ret, $out, $err) = $node->psql('postgres', q{SELECT pgjq.histogram_quantile(1.5, '{1}', '{1}')});
like($err, qr/q must be between 0 and 1/, 'a quantile outside 0-1 is refused');
($ret, $out, $err) = $node->psql('postgres', q{SELECT pgjq.histogram_quantile(0.5, '{1, Infinity}', '{1}')});
like($err, qr/le and buckets must be non-empty arrays of the same length/, 'and so are bounds and counts that do not match');

# The maintenance worker samples every queue each pgjq.queue_sample_interval, the histograms' totals with
# its figures; the samples are rows, which a restart keeps.
$node->safe_psql('postgres', q{ALTER SYSTEM SET pgjq.queue_sample_interval = '1s'; SELECT pg_reload_conf()});
$node->safe_psql('postgres', q{SELECT pgjq.start_worker()});
my $mail_runs = jobs_counted('mail', 'run');
ok($node->poll_query_until('postgres', qq{SELECT count(*) >= 2 FROM pgjq.queue_history
                                           WHERE queue_name = 'mail' AND run_jobs = $mail_runs AND completed = 4}),
	'the maintenance worker samples the queues, with their histograms\' totals');
my $samples = $node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queue_samples});

# Shared memory: a restart starts the histograms again (the totals of queue_metrics stay exact).
$node->restart;
cmp_ok($node->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queue_samples}), '>=', $samples,
	'the samples outlive the restart');
is(jobs_counted('mail', 'run'), 0, 'after a restart the histograms start again from zero');
is($node->safe_psql('postgres', q{SELECT completed FROM pgjq.queue_metrics WHERE queue_name = 'mail'}),
	'4', 'while the totals are kept');
$node->stop;

my $plain = new_node('latency_plain', preload => 0);
$plain->safe_psql('postgres', q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.enqueue('t');
	SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w');
});
is($plain->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queue_latency}), '0',
	'without preload there are no histograms, and reports still work');
$plain->stop;
done_testing();
