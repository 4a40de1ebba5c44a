# Claims start from their queue's floor (core/claim_floor.hpp): the first job the queue's last claim took.
# The entries before it are those of jobs claimed since vacuum last ran, which a snapshot held open keeps
# from being removed, so a claim from the start would read them all. Every way a job can become pending
# again before the floor must move the floor back: each case below claims the job a claim from the start
# would claim, and fails if the floor had passed it. Shared memory holds the floors: preloaded here, as in
# production (the regression suites run without it and so without floors).
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

# autovacuum off and the worker's vacuum made pointless by the held snapshot: nothing removes the entries.
my $node = new_node('floor', conf => "autovacuum = off\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pgjq');
wait_for_maintenance($node, 'postgres');

sub sql { return $node->safe_psql('postgres', $_[0]); }
sub enqueue
{
	my ($queue, %opt) = @_;
	my $type = $opt{type} // 't';
	my $extra = '';
	$extra .= ", priority => $opt{priority}" if defined $opt{priority};
	$extra .= ", run_at => now() + interval '$opt{delay}'" if defined $opt{delay};
	return sql(qq{SELECT pgjq.enqueue('$type', '{}', queue_name => '$queue' $extra)});
}
sub claim
{
	my ($queue, $types) = @_;
	$types = defined $types ? "'{$types}'" : 'NULL';
	return sql(qq{SELECT coalesce(string_agg(id::text, ','), 'none') FROM pgjq.claim_job_batch('w', $types, 1, '$queue')});
}

# The point: a snapshot held open while 2 000 jobs are claimed and completed.
sql(q{SELECT pgjq.create_queue('held')});
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM pgjq.queues');
sql(q{SELECT count(*) FROM (SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 100) g), 'held')
                              FROM generate_series(1, 20)) AS b});
sql(q{
	DO $$
	DECLARE ids bigint[];
	BEGIN
	  LOOP
	    SELECT array_agg(id) INTO ids FROM pgjq.claim_job_batch('w', NULL, 100, 'held');
	    EXIT WHEN ids IS NULL;
	    PERFORM pgjq.complete_batch(ids, 'w');
	  END LOOP;
	END $$;
});
sql(q{SELECT pgjq.enqueue_batch('t', '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]', 'held')});
# The index entries each claim read, for claims made one after another in one session, each in its own
# transaction: [isolation, types, setting] per claim. One session, because a floor lapses a second after
# the claim from the start that set it, and on a loaded machine separate psql runs can be that far apart.
# The counts a backend has not yet reported cover its earlier transactions too: each claim's are a difference.
sub entries_read
{
	my @claims = @_;
	my $script = '';
	for my $c (@claims)
	{
		my ($isolation, $types, $setting) = @$c;
		$types //= 'NULL';
		$setting = defined $setting ? "SET LOCAL $setting;" : '';
		$script .= qq{
			BEGIN ISOLATION LEVEL $isolation; $setting
			SELECT pg_stat_get_xact_tuples_returned('pgjq.live_jobs_claim_idx'::regclass);
			SELECT count(*) FROM pgjq.claim_job_batch('w', $types, 1, 'held');
			SELECT pg_stat_get_xact_tuples_returned('pgjq.live_jobs_claim_idx'::regclass);
			COMMIT;};
	}
	my @lines = split /\n/, sql($script);
	return map { $lines[3 * $_ + 2] - $lines[3 * $_] } 0 .. $#claims;
}
# A floor lapses a second after a claim from the start set it: on a slow machine the drain above may have
# taken longer, so one claim sets it again first.
my (undef, $from_floor) = entries_read(['READ COMMITTED'], ['READ COMMITTED']);
cmp_ok($from_floor, '<', 300, "a claim from the floor reads few of the 2 000 dead entries ($from_floor)");
my ($from_start) = entries_read(['REPEATABLE READ']);
cmp_ok($from_start, '>=', 2000,
	"the same claim at REPEATABLE READ, which reads from the start, reads them all ($from_start)");
# pgjq.claim_floors (a developer setting, for comparisons) off: the session's claims read from the start.
my ($floors_off) = entries_read(['READ COMMITTED', undef, 'pgjq.claim_floors = off']);
cmp_ok($floors_off, '>=', 2000, "with pgjq.claim_floors = off it reads them all too ($floors_off)");
my (undef, $floors_on) = entries_read(['READ COMMITTED'], ['READ COMMITTED']);
cmp_ok($floors_on, '<', 300, "and the floor still serves the claims that use it ($floors_on)");
# Workers claim the types they handle: those claims have a floor of their own, set by their first claim.
my ($first_of_type, $next_of_type) = entries_read(['READ COMMITTED', q{'{t}'}], ['READ COMMITTED', q{'{t}'}]);
cmp_ok($first_of_type, '>=', 2000, "the first claim of type t reads from the start ($first_of_type)");
cmp_ok($next_of_type, '<', 300, "the next claim of type t reads from its floor ($next_of_type)");
# A claim moves the floor past every job it took, not only its first: the next claim of a batch reads the
# entry of the job at the floor and its own, not the previous batch's again. Both claims in one call, so
# that the floor the first sets from the start has not lapsed when the second reads.
sql(q{SELECT pgjq.create_queue('batches')});
sql(q{SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 500) g), 'batches')});
# The counts a backend has not yet reported cover its earlier transactions too: the claim's are a difference.
my @batch_reads = split /\n/, sql(q{
	SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 100, 'batches');
	BEGIN;
	SELECT pg_stat_get_xact_tuples_returned('pgjq.live_jobs_claim_idx'::regclass);
	SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 100, 'batches');
	SELECT pg_stat_get_xact_tuples_returned('pgjq.live_jobs_claim_idx'::regclass);
	COMMIT;
});
my $second_read = $batch_reads[3] - $batch_reads[1];
is($batch_reads[2], 100, 'the second claim of the batch queue takes 100 jobs');
cmp_ok($second_read, '<', 150, "and reads from the last job the first took, not again its 100 ($second_read entries)");
$holder->query_safe('COMMIT');
$holder->quit;

# A claim rolled back: its job is pending again and the next claim takes it, although another claim
# moved the floor past it meanwhile.
sql(q{SELECT pgjq.create_queue('rolled_back')});
my @jobs = map { enqueue('rolled_back') } 1 .. 3;
my $s1 = $node->background_psql('postgres');
$s1->query_safe('BEGIN');
is($s1->query_safe(q{SELECT id FROM pgjq.claim_job_batch('s1', NULL, 1, 'rolled_back')}), $jobs[0], 'claimed in a transaction');
is(claim('rolled_back'), $jobs[1], 'another claim passes over the locked job');
$s1->query_safe('ROLLBACK');
is(claim('rolled_back'), $jobs[0], 'the rolled-back claim\'s job is taken next');

# ... and the same for a savepoint rolled back while its transaction goes on.
sql(q{SELECT pgjq.create_queue('savepoint')});
@jobs = map { enqueue('savepoint') } 1 .. 3;
$s1->query_safe('BEGIN');
$s1->query_safe('SAVEPOINT a');
is($s1->query_safe(q{SELECT id FROM pgjq.claim_job_batch('s1', NULL, 1, 'savepoint')}), $jobs[0], 'claimed in a savepoint');
is(claim('savepoint'), $jobs[1], 'another claim passes over it');
$s1->query_safe('ROLLBACK TO a');
is(claim('savepoint'), $jobs[0], 'once the savepoint rolls back, its job is taken next');
$s1->query_safe('COMMIT');

# A job whose enqueue commits after a later job was claimed (ids are drawn when enqueuing, not committing).
sql(q{SELECT pgjq.create_queue('late')});
$s1->query_safe('BEGIN');
my $late = $s1->query_safe(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'late')});
my $early = enqueue('late');
is(claim('late'), $early, 'the committed job is claimed');
my $after = enqueue('late');
$s1->query_safe('COMMIT');
is(claim('late'), $late, 'the job committed late is taken before a later one');
is(claim('late'), $after, 'and then the later one');

# ... and one that lies between the first and the last job a batch claim took: the floor is the last one.
sql(q{SELECT pgjq.create_queue('late_in_batch')});
my $before_it = enqueue('late_in_batch');
$s1->query_safe('BEGIN');
my $in_between = $s1->query_safe(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'late_in_batch')});
my $after_it = enqueue('late_in_batch');
is(sql(q{SELECT string_agg(id::text, ',' ORDER BY id) FROM pgjq.claim_job_batch('w', NULL, 2, 'late_in_batch')}),
	"$before_it,$after_it", 'a batch claim takes the committed jobs on either side of the uncommitted one');
my $last_one = enqueue('late_in_batch');
$s1->query_safe('COMMIT');
is(claim('late_in_batch'), $in_between, 'the job committed late is taken next, although the floor had passed it');
is(claim('late_in_batch'), $last_one, 'and then the later one');

# A job of a higher priority enqueued after the floor was set.
sql(q{SELECT pgjq.create_queue('priorities')});
@jobs = map { enqueue('priorities') } 1 .. 3;
is(claim('priorities'), $jobs[0], 'claim in order');
my $urgent = enqueue('priorities', priority => 200);
is(claim('priorities'), $urgent, 'a job of a higher priority goes first');
is(claim('priorities'), $jobs[1], 'then the floor\'s priority again');

# A failure retried at once: the job is pending again before the floor.
sql(q{SELECT pgjq.create_queue('retried')});
@jobs = map { enqueue('retried') } 1 .. 3;
is(claim('retried'), $jobs[0], 'claimed');
is(claim('retried'), $jobs[1], 'claimed the next');
is(sql(qq{SELECT pgjq.fail($jobs[0], 'w', 'boom', retry_in => '0')}), 'pending', 'the first fails and is retried at once');
is(claim('retried'), $jobs[0], 'the retried job is taken next');

# A job claimed in a transaction (claim_in_transaction) that the transaction leaves unfinished.
sql(q{SELECT pgjq.create_queue('held_in_transaction')});
@jobs = map { enqueue('held_in_transaction') } 1 .. 3;
$s1->query_safe('BEGIN');
is($s1->query_safe(q{SELECT id FROM pgjq.claim_in_transaction('s1', NULL, 1, 'held_in_transaction')}), $jobs[0],
	'held by a transaction');
is(claim('held_in_transaction'), $jobs[1], 'another claim passes over it');
$s1->query_safe('COMMIT');
is(claim('held_in_transaction'), $jobs[0], 'left pending by its transaction, it is taken next');
$s1->quit;

# A claim of some types passes over jobs of the others: its floor is not theirs.
sql(q{SELECT pgjq.create_queue('types')});
my $x = enqueue('types', type => 'x');
my $y1 = enqueue('types', type => 'y');
my $y2 = enqueue('types', type => 'y');
is(claim('types', 'y'), $y1, 'a claim of type y');
is(claim('types'), $x, 'a claim of any type still finds the job of type x first');

# A delayed job the floor passed while it was not due is claimed once due.
sql(q{SELECT pgjq.create_queue('delayed')});
my $delayed = enqueue('delayed', delay => '1 second');
my $due = enqueue('delayed');
is(claim('delayed'), $due, 'the due job is claimed');
my $later = enqueue('delayed');
ok($node->poll_query_until('postgres',
		qq{SELECT count(*) = 1 FROM pgjq.jobs WHERE id = $delayed AND run_at <= now()}), 'the delayed job falls due');
is(claim('delayed'), $delayed, 'and is then claimed before the job enqueued after it');

# A job enqueued after a claim's transaction began (its run_at is the producer's now(), later than the
# claim's): the claim must count it as due, or it would set the floor past it.
sql(q{SELECT pgjq.create_queue('began_earlier')});
my $ordinary = enqueue('began_earlier');
my $w = $node->background_psql('postgres');
$w->query_safe('BEGIN');
$w->query_safe('SELECT now()');
my $urgent_later = enqueue('began_earlier', priority => 200);
is($w->query_safe(q{SELECT id FROM pgjq.claim_job_batch('w', NULL, 1, 'began_earlier')}), $urgent_later,
	'a claim whose transaction began before the job was enqueued still takes it first');
$w->query_safe('COMMIT');
is(claim('began_earlier'), $ordinary, 'then the other');

# A pending job locked by a transaction that is not a claim (here a plain row lock, as a cancel or a
# heartbeat takes one) is passed over, and nothing reports it when that transaction ends: it is claimed
# once the floor lapses, a second after a claim from the start set it, although claims from the floor keep
# finding other jobs meanwhile.
sql(q{SELECT pgjq.create_queue('lapse')});
my $hidden = enqueue('lapse');
sql(q{SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 200) g), 'lapse')});
$w->query_safe('BEGIN');
$w->query_safe(qq{SELECT id FROM pgjq.live_jobs WHERE id = $hidden FOR UPDATE});
isnt(claim('lapse'), $hidden, 'a claim passes over the locked job');
$w->query_safe('ROLLBACK');
my ($taken_at, $started) = (undef, time);
for my $i (1 .. 100)
{
	if (claim('lapse') eq $hidden) { $taken_at = time - $started; last; }
	select(undef, undef, undef, 0.05);
}
ok(defined $taken_at && $taken_at <= 3, 'the job passed over is claimed within about a second of the floor being set'
	. (defined $taken_at ? " ($taken_at s)" : ' (never)'));
$w->quit;

$node->stop;
done_testing();
