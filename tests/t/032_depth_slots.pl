# Each backend that writes a queue's counter rows takes a slot of its own (core/depth_slots.hpp), so that
# producers do not wait for each other's commit on one row. A slot chosen from the backend number would not
# keep that promise: the 1st and the 17th of a row of sessions opened one after another have numbers 16
# apart on every PostgreSQL major (15 and 16 hand the lowest free number out, 17 and later the one released
# longest ago, and in a fresh server both are the next unused), and would share a slot.
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

# The slot a session's enqueue into a queue with max_pending wrote (its own uncommitted row version).
sub slot_written
{
	my ($session) = @_;
	$session->query_safe('BEGIN');
	$session->query_safe(q{SELECT pgjq.enqueue('t', '{}', queue_name => 'capped')});
	return $session->query_safe(
		q{SELECT slot FROM pgjq.queue_depth WHERE queue_name = 'capped' AND xmin = pg_current_xact_id()::xid});
}

my @sessions = map { $node->background_psql('postgres') } 1 .. 17;
my ($first, $seventeenth) = (slot_written($sessions[0]), slot_written($sessions[16]));
like($first, qr/^\d+$/, "the 1st session writes a counter row (slot $first)");
isnt($seventeenth, $first, "the 17th session writes another one (slot $seventeenth)");
my $second = slot_written($sessions[1]);
ok($second ne $first && $second ne $seventeenth, "and the 2nd a third one (slot $second)");
$_->query_safe('ROLLBACK') for @sessions[0, 1, 16];

# A slot is the backend's until it exits, then free for the next producer.
$sessions[0]->quit;
my $late = $node->background_psql('postgres');
is(slot_written($late), $first, 'a backend that exits leaves its slot to the next one');
$late->query_safe('ROLLBACK');
$late->quit;
$_->quit for @sessions[1 .. 16];

# The counts stay exact: every job that committed is counted once, whichever slot holds it.
$node->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', queue_name => 'capped') FROM generate_series(1, 5)});
is($node->safe_psql('postgres', q{SELECT sum(unfinished) FROM pgjq.queue_depth WHERE queue_name = 'capped'}), '5',
	'the counter rows hold the five committed jobs');

done_testing();
