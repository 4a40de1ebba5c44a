# PgjqTest.pm: shared helpers of pgjq's TAP tests (tests/t/*.pl): a throwaway cluster with pgjq, and
# the maintenance workers as pg_stat_activity shows them.
package PgjqTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

our @EXPORT =
  qw(new_node new_cluster new_synchronous_pair wait_for_server maintenance_pids wait_for_maintenance wait_for_no_maintenance ids_from schedule_fired_once listen_for_jobs);

# new_node(NAME, preload => 1, conf => "extra lines"): an initialized, started cluster. Fast naptimes
# keep the tests short; each test overrides what it measures.
sub new_node
{
	my ($name, %opt) = @_;
	my $preload = exists $opt{preload} ? $opt{preload} : 1;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	my $conf = "max_worker_processes = 16\n"
	  . "pgjq.naptime = '500ms'\n"
	  . "pgjq.launcher_naptime = '1s'\n"
	  . "pgjq.restart_delay = '1s'\n"
	  . "restart_after_crash = on\n"
	  # Workers stay while their database has the extension, so that the tests can watch them; how the
	  # launcher serves databases in turn with few workers is 016_many_databases.pl's subject.
	  . "pgjq.max_maintenance_workers = 8\n"
	  . "pgjq.maintenance_idle_timeout = '1h'\n";
	$conf .= "shared_preload_libraries = 'pgjq'\n" if $preload;
	$conf .= $opt{conf} if defined $opt{conf};
	$node->append_conf('postgresql.conf', $conf);
	$node->start;
	return $node;
}

# new_synchronous_pair(PREFIX, conf => "extra lines", setup => SQL): a primary with pgjq preloaded (PREFIX_primary),
# SETUP run there, and a streaming standby (PREFIX_standby) it waits for at every commit, so that nothing a
# client was told about is lost when the standby is promoted. Returns (primary, standby).
sub new_synchronous_pair
{
	my ($prefix, %opt) = @_;
	my $primary = PostgreSQL::Test::Cluster->new("${prefix}_primary");
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf',
		"shared_preload_libraries = 'pgjq'\npgjq.naptime = '500ms'\npgjq.launcher_naptime = '1s'\n"
		  . ($opt{conf} // ''));
	$primary->start;
	$primary->safe_psql('postgres', $opt{setup} // 'CREATE EXTENSION pgjq');
	$primary->backup('base');
	my $standby = PostgreSQL::Test::Cluster->new("${prefix}_standby");
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->append_conf('postgresql.conf', "cluster_name = '${prefix}_standby'\n");
	$standby->start;
	$primary->safe_psql('postgres',
		"ALTER SYSTEM SET synchronous_standby_names = '${prefix}_standby'; SELECT pg_reload_conf();");
	$primary->poll_query_until('postgres', q{SELECT sync_state = 'sync' FROM pg_stat_replication})
	  or die 'the standby is not synchronous';
	return ($primary, $standby);
}

# new_cluster(N): N nodes with pgjq and a router database with pgjq_router (each its own instance), the
# nodes added as node numbers 0..N-1. Completions wait for their WAL flush (with the default asynchronous
# worker commits a node's crash may undo the last completions, and those jobs run again, as
# docs/guarantees.md says), so that the tests can count every job's completion exactly once.
sub new_cluster
{
	my ($count) = @_;
	my @nodes = map { new_node("node$_", conf => "pgjq.synchronous_worker_commit = on\n") } 0 .. $count - 1;
	$_->safe_psql('postgres', 'CREATE EXTENSION pgjq') for @nodes;
	my $router = new_node('router', preload => 0);
	$router->safe_psql('postgres', 'CREATE EXTENSION pgjq_router CASCADE');
	$router->safe_psql('postgres', "SELECT pgjq_router.add_node(\$\$" . $_->connstr('postgres') . "\$\$)") for @nodes;
	return (\@nodes, $router);
}

# Waits until the server accepts connections again (after crash recovery).
sub wait_for_server
{
	my ($node) = @_;
	local $SIG{PIPE} = 'IGNORE';
	for (my $i = 0; $i < 600; $i++)
	{
		my $ok = eval { $node->safe_psql('postgres', 'SELECT 1') eq '1' };
		return 1 if $ok;
		select(undef, undef, undef, 0.1);
	}
	die "node " . $node->name . " did not accept connections again";
}

# The pids (sorted, comma-separated; '' for none) of the maintenance workers connected to $db.
sub maintenance_pids
{
	my ($node, $db) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(pid::text, ',' ORDER BY pid), '') FROM pg_stat_activity"
		  . " WHERE backend_type = 'pgjq maintenance' AND datname = '$db'");
}

# Waits until exactly one maintenance worker serves $db (and its first pass is done); returns its pid.
sub wait_for_maintenance
{
	my ($node, $db, $not_pid) = @_;
	my $other = defined $not_pid ? " AND pid <> $not_pid" : '';
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'pgjq maintenance'"
		  . " AND datname = '$db'$other")
	  or die "no maintenance worker for database $db";
	$node->poll_query_until($db,
		"SELECT count(*) = 1 FROM pgjq.worker_status() WHERE datname = '$db' AND pid IS NOT NULL AND last_run IS NOT NULL"
	) or die "the maintenance worker of $db did not run";
	return maintenance_pids($node, $db);
}

sub wait_for_no_maintenance
{
	my ($node, $db) = @_;
	return $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'pgjq maintenance' AND datname = '$db'");
}

# listen_for_jobs(NODE, QUEUE, COUNT, TIMEOUT, \$out, \$err): a worker that only LISTENs (tests/t/helpers/
# pgjq_listen.c) for COUNT notifications of QUEUE within TIMEOUT seconds, started and listening; its
# output (a line "<epoch seconds> QUEUE" per notification) goes to $out. Returns its IPC::Run handle.
sub listen_for_jobs
{
	my ($node, $queue, $count, $timeout, $out, $err) = @_;
	my $h = IPC::Run::start([ $ENV{PGJQ_LISTEN}, $node->connstr('postgres'), $queue, $count, $timeout ],
		'>', $out, '2>', $err);
	my $t = time;
	IPC::Run::pump($h) until $$out =~ /ready/ || time - $t > 60;
	die "the listener did not start: $$err" unless $$out =~ /ready/;
	return $h;
}

# The job ids in lines "NOTICE:  <tag> <id>" of a psql stderr.
sub ids_from
{
	my ($text, $tag) = @_;
	return [ $text =~ /NOTICE:\s+$tag (\d+)/g ];
}

# Whether every firing of schedule $name between its first and its last job was handled once: one job
# each, or counted as missed (coalesced into a later job), and no firing has two jobs (their run_at is the
# firing they stand for). Returns (ok, jobs).
sub schedule_fired_once
{
	my ($node, $name) = @_;
	my $row = $node->safe_psql('postgres', qq{
		SELECT count(*) = count(DISTINCT j.run_at) AND count(*) = s.jobs_enqueued
		       AND s.jobs_enqueued + s.firings_missed
		           = (SELECT count(*)
		                FROM pgjq.next_firings(s.cron, s.time_zone, min(j.run_at) - interval '1 microsecond', 1000) f
		               WHERE f <= max(j.run_at)),
		       count(*)
		  FROM pgjq.jobs j JOIN pgjq.schedules s ON s.job_type = j.job_type AND s.schedule_name = '$name'
		 GROUP BY s.jobs_enqueued, s.firings_missed, s.cron, s.time_zone});
	my ($ok, $jobs) = split /\|/, $row;
	return (($ok // '') eq 't', $jobs // 0);
}

1;
