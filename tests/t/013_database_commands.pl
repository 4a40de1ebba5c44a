# A database the maintenance worker serves can be dropped, renamed and used as a template with the plain
# commands: the worker leaves before the command (it holds a connection, which would make PostgreSQL refuse
# with "being accessed by other users"), is not restarted for a dropped database, and serves a renamed one
# and a template again afterwards.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('dbcmd');
for my $db (qw(doomed renamed_from template_src))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{CREATE EXTENSION pgjq; SELECT pgjq.enqueue('t', '{}');});
	wait_for_maintenance($node, $db);
}

my ($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE doomed');
is($ret, 0, 'a plain DROP DATABASE of a served database succeeds') or diag($err);
sleep 3;    # pgjq.launcher_naptime is 1 s, pgjq.restart_delay 1 s
is(maintenance_pids($node, 'doomed'), '', 'and no worker is started for it again');

($ret, $out, $err) = $node->psql('postgres', 'ALTER DATABASE renamed_from RENAME TO renamed_to');
is($ret, 0, 'ALTER DATABASE ... RENAME of a served database succeeds') or diag($err);
wait_for_maintenance($node, 'renamed_to');
pass('and the renamed database is served again');

($ret, $out, $err) = $node->psql('postgres', 'CREATE DATABASE copy_of TEMPLATE template_src');
is($ret, 0, 'CREATE DATABASE ... TEMPLATE a served database succeeds') or diag($err);
wait_for_maintenance($node, 'template_src');
pass('and the template is served again');
is($node->safe_psql('copy_of', q{SELECT count(*) FROM pgjq.jobs}), '1', 'the copy has the template\'s jobs');
wait_for_maintenance($node, 'copy_of');
pass('and is served itself');

# A role that may not run the command cannot use it to make the worker leave: PostgreSQL refuses the
# command, and the database's worker is the one that served it before (not a restarted one).
$node->safe_psql('postgres', 'CREATE ROLE intruder LOGIN');
my $guarded_pid = wait_for_maintenance($node, 'template_src');
for my $command ('DROP DATABASE template_src', 'ALTER DATABASE template_src RENAME TO stolen',
	'CREATE DATABASE stolen_copy TEMPLATE template_src')
{
	($ret, $out, $err) = $node->psql('postgres', $command, extra_params => [ '-U', 'intruder' ]);
	isnt($ret, 0, "$command by a role without the right is refused");
	like($err, qr/must be owner|permission denied/, 'by PostgreSQL\'s own privilege check');
}
is(maintenance_pids($node, 'template_src'), $guarded_pid, 'and the database\'s worker never left');

# A DROP DATABASE that fails for another reason leaves the database served.
my $holder = $node->background_psql('template_src');
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE template_src');
isnt($ret, 0, 'a DROP DATABASE refused because a client is connected fails as before');
like($err, qr/being accessed by other users/, 'with PostgreSQL\'s own reason');
$holder->quit;
wait_for_maintenance($node, 'template_src');
pass('and the database is served again');

# The worker leaves quietly (no FATAL of a terminated worker), and the only errors are the refused commands.
my @errors =
  grep { !/being accessed by other users|must be owner|permission denied|STATEMENT:\s+(DROP|ALTER|CREATE) DATABASE/ }
  grep { /\b(ERROR|FATAL|PANIC):/ } split /\n/, slurp_file($node->logfile);
is(scalar(@errors), 0, 'no other error in the server log') or diag(join("\n", @errors));

$node->stop;
done_testing();
