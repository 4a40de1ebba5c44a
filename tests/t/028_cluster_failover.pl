# A node of a cluster fails over to its streaming standby, as docs/scale-out.md says a node stays available:
# PostgreSQL's own replication, and a router conninfo that names both servers (target_session_attrs). The
# promoted standby is the same node (its job ids still name it), the router reaches it with no change, and
# no job whose enqueue committed through the router is lost.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($primary, $standby) = new_synchronous_pair('node');

my $other = new_node('node_other');
$other->safe_psql('postgres', 'CREATE EXTENSION pgjq');

my $router = new_node('router', preload => 0);
$router->safe_psql('postgres', 'CREATE EXTENSION pgjq_router CASCADE');
$router->safe_psql('postgres', "SELECT pgjq_router.add_node(\$\$" . $other->connstr('postgres') . "\$\$)");
my $both = sprintf('host=%s,%s port=%d,%d dbname=postgres target_session_attrs=read-write connect_timeout=2',
	$primary->host, $standby->host, $primary->port, $standby->port);
is($router->safe_psql('postgres', "SELECT pgjq_router.add_node('$both')"), '1',
	'the node with a standby joins through a conninfo naming both servers');
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('ha', ARRAY[1]); SELECT pgjq.create_queue('ha');
	SELECT pgjq_router.place_queue('calm', ARRAY[0]); SELECT pgjq.create_queue('calm');});

my @before = split /\n/, $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', jsonb_build_object('n', g), 'ha')
	FROM generate_series(1, 50) g});
is(scalar(grep { $_ % 1024 == 1 } @before), 50, 'jobs enqueued through the router before the failover name node 1');

$primary->stop('immediate');
my ($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'ha')});
isnt($ret, 0, 'while node 1 has no primary, its queue refuses jobs');
is($router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'calm')}) % 1024, '0', 'and the other node takes its own');

$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the standby was not promoted';
is($standby->safe_psql('postgres', 'SELECT pgjq.cluster_node()'), '1', 'the promoted standby is node 1 still');
my @after = split /\n/, $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', jsonb_build_object('n', g), 'ha')
	FROM generate_series(51, 60) g});
is(scalar(grep { $_ % 1024 == 1 } @after), 10, 'through the same router conninfo, the new primary takes node 1\'s jobs');
is($router->safe_psql('postgres', q{SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 100, 'ha')}), '60',
	'every job enqueued through the router, before and after the failover, is there to claim');
my %ids;
$ids{$_}++ for @before, @after;
is(scalar(grep { $ids{$_} > 1 } keys %ids), 0, 'and no id was drawn twice across the failover');

$standby->stop;
done_testing();
