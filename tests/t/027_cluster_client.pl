# The C++ cluster client (pgjq::cluster, run through tests/t/helpers/pgjq_cluster.cpp) against three nodes
# and a router: its producer enqueues straight into a queue's node, through the router into a partitioned
# queue, and follows a queue that moved; its worker learns the placement from the router, runs the jobs of
# every node that holds its queue, keeps running the other node's jobs while one node is stopped with
# -m immediate, takes up that node again after its restart, and follows a partition that moves.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $client = $ENV{PGJQ_CLUSTER} or plan skip_all => 'PGJQ_CLUSTER (the cluster client helper) is not built';
my ($cluster, $router) = new_cluster(3);
my @nodes = @$cluster;
my $rconn = $router->connstr('postgres');

$router->safe_psql('postgres', q{
	SELECT pgjq_router.place_queue('spread', ARRAY[0, 1]);
	SELECT pgjq.create_queue('spread', lease => '2 seconds', max_attempts => 100);
	SELECT pgjq_router.place_queue('single', ARRAY[1]);
	SELECT pgjq.create_queue('single');
});

sub enqueued { my ($text) = @_; return [ $text =~ /^enqueued (\d+)$/mg ]; }

# --- the producer ---
my ($out, $err) = ('', '');
IPC::Run::run([ $client, 'produce', $rconn, 'single', '20' ], '>', \$out, '2>', \$err) or die "produce: $err";
my $single = enqueued($out);
is(scalar(grep { $_ % 1024 == 1 } @$single), 20, 'the producer enqueues a single-node queue\'s jobs on its node');

IPC::Run::run([ $client, 'produce', $rconn, 'spread', '300' ], '>', \$out, '2>', \$err) or die "produce: $err";
my $spread = enqueued($out);
is(scalar(@$spread), 300, 'the producer enqueues a partitioned queue\'s jobs through the router');
my %per_node;
$per_node{ $_ % 1024 }++ for @$spread;
is(join(',', sort keys %per_node), '0,1', 'and they spread over its two nodes');

# A queue that moves while the producer holds the old placement: its next enqueue finds the new node.
sub produce_around
{
	my ($queue, $meanwhile) = @_;
	my ($in, $pout, $perr) = ('', '', '');
	my $h = IPC::Run::start([ $client, 'produce-around', $rconn, $queue ], '<', \$in, '>', \$pout, '2>', \$perr);
	$h->pump until $pout =~ /enqueued/;
	$meanwhile->();
	$in .= "go\n";
	$h->finish;
	diag($perr) if $perr;
	return [ map { /^enqueued (\d+)$/ ? $1 : 'refused' } grep { /^(enqueued|refused)/ } split /\n/, $pout ];
}
my $moved = produce_around('single', sub {
	$router->safe_psql('postgres', q{SELECT pgjq_router.move_queue('single', 2); SELECT pgjq.cancel_jobs('single')});
	is($router->safe_psql('postgres', q{SELECT pgjq_router.finish_move('single')}), 't', 'the queue moved from node 1 to node 2');
});
is(scalar(@$moved), 4, 'the producer enqueued before and after the move');
is(scalar(grep { $_ ne 'refused' && $_ % 1024 == 2 } @$moved[1 .. 3]), 3,
	'after the move, on the new node (the old one refused the queue, and it read the placement again)');

# The queue's node restarts under the producer: the call that meets the dead session is refused (its
# outcome is the caller's to judge), and the next ones reopen the session.
my $restarted = produce_around('single', sub { $nodes[2]->restart; });
is($restarted->[3] =~ /^\d+$/ ? $restarted->[3] % 1024 : 'refused', 2, 'after its node restarts, the producer reconnects and enqueues');
$router->safe_psql('postgres', q{SELECT pgjq.cancel_jobs('single')});

# --- the worker ---
my ($wout, $werr) = ('', '');
my $worker = IPC::Run::start([ $client, 'work', $rconn, 'spread' ], '>', \$wout, '2>', \$werr);
sub ran { my %r; $r{$_}++ for $wout =~ /^ran (\d+)$/mg; return \%r; }
sub wait_for
{
	my ($what, $cond) = @_;
	for (1 .. 600) { $worker->pump_nb; return 1 if $cond->(); select(undef, undef, undef, 0.1); }
	diag("timed out: $what; worker said: $werr");
	return 0;
}
ok(wait_for('the first jobs run', sub { scalar(keys %{ ran() }) == 300 }),
	'the cluster worker runs the jobs of both nodes of its queue');

# Node 0 stops abruptly once the worker holds nothing there (a batch it ran but had not reported yet
# would run again after the restart, as at-least-once allows, and spoil the count below).
$nodes[0]->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pgjq.live_jobs WHERE status IN ('claimed', 'running')})
  or die 'the worker still holds jobs on node 0';
$nodes[0]->stop('immediate');
IPC::Run::run([ $client, 'produce', $rconn, 'spread', '300' ], '>', \$out, '2>', \$err);
my $during = enqueued($out);
cmp_ok(scalar(@$during), '>', 50, 'producers reach the node that is up (the enqueues the router sends to node 0 fail)');
ok(wait_for('node 1 drains', sub { my $r = ran(); !grep { !$r->{$_} } @$during }),
	'while node 0 is down, the worker runs every job of node 1');

$nodes[0]->start;
wait_for_server($nodes[0]);
my $after = enqueued(do { IPC::Run::run([ $client, 'produce', $rconn, 'spread', '60' ], '>', \$out, '2>', \$err); $out });
ok(wait_for('node 0 comes back', sub { my $r = ran(); !grep { !$r->{$_} } @$after }),
	'after its restart, the worker runs node 0\'s jobs again');

# A partition moves to another node: the worker follows the placement.
$router->safe_psql('postgres', q{SELECT pgjq_router.move_queue('spread', 2, partition => 1)});
ok(wait_for('the move finishes', sub { $router->safe_psql('postgres', q{SELECT pgjq_router.finish_move('spread', 1)}) eq 't' }),
	'a partition of the queue moves from node 1 to node 2 while the worker runs');
my $last = enqueued(do { IPC::Run::run([ $client, 'produce', $rconn, 'spread', '60' ], '>', \$out, '2>', \$err); $out });
is(join(',', sort keys %{ { map { ($_ % 1024) => 1 } @$last } }), '0,2', 'new jobs go to nodes 0 and 2');
ok(wait_for('the jobs after the move run', sub { my $r = ran(); !grep { !$r->{$_} } @$last }),
	'the worker runs the jobs enqueued after the move');

$worker->signal('TERM');
$worker->finish;
like($werr, qr/connection|reconnect/i, 'the worker reported node 0\'s outage') or diag($werr);

my $ran = ran();
my @all = (@$spread, @$during, @$after, @$last);
is(scalar(grep { !$ran->{$_} } @all), 0, 'every job enqueued into the queue ran');
is(scalar(grep { $ran->{$_} > 1 } keys %$ran), 0, 'none ran twice');
is(join(',', map { $_->safe_psql('postgres', q{SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = 'spread'}) } @nodes),
	'0,0,0', 'and the queue is empty on every node');

done_testing();
