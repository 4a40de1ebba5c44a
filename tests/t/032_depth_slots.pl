# Each backend that writes a queue's counter rows takes a slot of its own (core/depth_slots.hpp), so that
# producers do not wait for each other's commit on one row. A slot chosen from the backend number would not
# keep that promise: sessions opened one after another get consecutive numbers on every PostgreSQL major (15
# and 16 hand the lowest free number out, 17 and later the one released longest ago, and in a fresh server
# both are the next unused, unless another process takes one meanwhile), and those 16 apart would share one.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('slots', conf => "autovacuum = off\n");
$node->safe_psql('postgres', q{CREATE EXTENSION pgjq; SELECT pgjq.create_queue('capped', max_pending => 1000)});
wait_for_maintenance($node, 'postgres');

# The slot a session's enqueue into a queue with max_pending wrote (its own uncommitted row version). A slot
# another open transaction holds would make the enqueue wait for its row lock: lock_timeout makes that wait
# an error, which fails the test at once.
sub slot_written
{
	my ($session) = @_;
	$session->query_safe("SET lock_timeout = '5s'");
	$session->query_safe('BEGIN');
	$session->query_safe(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'capped')});
	return $session->query_safe(
		q{SELECT slot FROM pgjq.queue_depth WHERE queue_name = 'capped' AND xmin = pg_current_xact_id()::xid});
}

# Sessions opened in a row get consecutive backend numbers, unless another process takes one meanwhile: the
# producers at positions 16 apart, in three places, would share slots under a rule by number.
my @sessions = map { $node->background_psql('postgres') } 1 .. 34;
my @producers = (0, 1, 16, 17, 32, 33);
my %holder;
for my $i (@producers)
{
	my $slot = slot_written($sessions[$i]);
	like($slot, qr/^\d+$/, "session " . ($i + 1) . " writes a counter row (slot $slot)");
	ok(!exists $holder{$slot}, "a slot no other producer holds") or diag("slot $slot is session $holder{$slot}'s too");
	$holder{$slot} = $i + 1;
}
my ($first) = grep { $holder{$_} == 1 } keys %holder;
$_->query_safe('ROLLBACK') for @sessions[@producers];

# A slot is the backend's until it exits, then free for the next producer: with the other producers' slots
# still held (for their backends' lifetime), the next one takes the first session's.
$sessions[0]->quit;
my $late = $node->background_psql('postgres');
is(slot_written($late), $first, 'a backend that exits leaves its slot to the next one');
$late->query_safe('ROLLBACK');
$late->quit;
$_->quit for @sessions[1 .. $#sessions];

# The counts stay exact: every job that committed is counted once, whichever slot holds it.
$node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'capped') FROM generate_series(1, 5)});
is($node->safe_psql('postgres', q{SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'capped'}), '5',
	'the counter rows hold the five committed jobs');

done_testing();
