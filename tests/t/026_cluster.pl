# A pgjq cluster: three nodes and a router database (pgjq_router, PL/Proxy), each its own instance. Twelve
# queues over the three nodes; producers and workers through the router; job ids that name their node; the
# two transactional patterns (on the node: atomic with the producer's data; through the router: not); a
# partitioned queue; a queue moved between nodes under load; a node stopped with -m immediate mid-run while
# the other nodes' queues keep draining. At the end every job the producers were told about has been
# completed, and none twice.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use HTTP::Tiny;

my ($cluster, $router) = new_cluster(3);
my @nodes = @$cluster;

# --- nodes and placement ---
is($router->safe_psql('postgres', q{SELECT string_agg(node::text, ',' ORDER BY node) FROM pgjq_router.nodes()}),
	'0,1,2', 'the nodes joined as node numbers 0, 1, 2');
is($nodes[$_]->safe_psql('postgres', 'SELECT pgjq.cluster_node()'), $_, "node $_ knows its number") for 0 .. 2;
my ($ret, $out, $err);

# The SQLSTATE of the error a statement raises ('' when it succeeds): psql with VERBOSITY verbose.
sub sqlstate_of
{
	my ($node, $sql, @opts) = @_;
	my ($r, $o, $e) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", @opts);
	return $e =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : '';
}
sub server_options { return $router->safe_psql('postgres', q{SELECT srvoptions::text FROM pg_foreign_server WHERE srvname = 'pgjq_nodes'}); }

# --- a node's conninfo: read as libpq reads it, and only the keywords docs/scale-out.md lists ---
# A spare database that could join, so that a conninfo the router wrongly takes would really be added.
$nodes[0]->safe_psql('postgres', 'CREATE DATABASE spare');
$nodes[0]->safe_psql('spare', 'CREATE EXTENSION pgjq');
my $spare = $nodes[0]->connstr('spare');    # ends in dbname='spare'
my $options_before = server_options();
for my $bad (
	"${spare}user=postgres",        # no blank after a quoted value: libpq reads user=postgres
	"${spare}password=hunter2",     # and a password everyone could read through nodes()
	"$spare user=postgres", "$spare password=secret", "$spare sslpassword=s", "$spare service=prod",
	"$spare passfile=/tmp/pgpass", "$spare sslkey=/etc/ssl/private/node.key", "$spare sslcert=/tmp/node.crt",
	"$spare options='-c role=postgres'", "$spare replication=database", "$spare client_encoding=SQL_ASCII",
	"$spare application_name=user=postgres",    # PL/Proxy leaves out the caller's user when it sees "user="
	'postgresql://u:secret@x/db', 'postgres://x/db', "$spare connect_timeout='5", "$spare bogus=1", '')
{
	is(sqlstate_of($router, "SELECT pgjq_router.add_node(\$pgjq\$$bad\$pgjq\$)"), '22023', "add_node refuses the conninfo: $bad");
}
for my $bad ("${spare}user=postgres", "$spare password=secret", "$spare service=prod")
{
	is(sqlstate_of($router, "ALTER SERVER pgjq_nodes OPTIONS (SET p1 \$pgjq\$$bad\$pgjq\$)"), '22023',
		"ALTER SERVER pgjq_nodes (the failover procedure) refuses it too: $bad");
	is(sqlstate_of($router, "ALTER SERVER pgjq_nodes OPTIONS (ADD p3 \$pgjq\$$bad\$pgjq\$)"), '22023',
		"and so does a node option added by hand: $bad");
}
is(server_options(), $options_before, 'nothing was written: the nodes\' conninfos are as they were');
is($router->safe_psql('postgres', q{SELECT count(*) FROM pgjq_router.nodes() WHERE conninfo ~ '(user|password)'}), '0',
	'and none names a user or a password');
# What the list allows still works: a timeout and a name for the router's sessions on node 1.
my $p1 = $router->safe_psql('postgres', q{SELECT conninfo FROM pgjq_router.nodes() WHERE node = 1});
$router->safe_psql('postgres', "ALTER SERVER pgjq_nodes OPTIONS (SET p1 \$pgjq\$$p1 connect_timeout=10 application_name=pgjq_router\$pgjq\$)");
is($router->safe_psql('postgres', q{SELECT pgjq_router.queue_exists_on(1, 'default')}), 't',
	'a conninfo of allowed keywords is taken, and the router reaches its node');
$options_before = server_options();
$nodes[0]->safe_psql('postgres', 'DROP DATABASE spare WITH (FORCE)');

# The default queue: every node has one (CREATE EXTENSION pgjq); the router places it on node 0, so that
# a routed call that leaves queue_name at its default works as on one server.
is($router->safe_psql('postgres', q{SELECT string_agg(node::text, ',') FROM pgjq_router.placements WHERE queue_name = 'default'}),
	'0', 'the default queue is placed on node 0');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.enqueue('t')});
is($ret == 0 ? $out % 1024 : $err, 0, 'an enqueue through the router without a queue name reaches node 0\'s default queue');
($ret, $out, $err) = $router->psql('postgres', q{SELECT count(*) FROM pgjq.claim_job_batch('w') c, LATERAL pgjq.complete(c.id, 'w') d});
is($ret == 0 ? $out : $err, '1', 'and so does a claim');

# The router spells the nodes' rules as they do: the job statuses, in their order, and what a queue name is.
is($router->safe_psql('postgres', q{SELECT enum_range(NULL::pgjq.job_status)::text}),
	$nodes[0]->safe_psql('postgres', q{SELECT enum_range(NULL::pgjq.job_status)::text}),
	'the router has the job statuses of the nodes, in their order');
for my $name ('a' x 48, 'a' x 49, 'Upper', 'q.ok-1_x')
{
	my ($node_ret) = $nodes[0]->psql('postgres', "BEGIN; SELECT pgjq.create_queue('$name'); ROLLBACK");
	my ($router_ret) = $router->psql('postgres', "BEGIN; SELECT pgjq_router.place_queue('$name', ARRAY[0]); ROLLBACK");
	is($router_ret == 0, $node_ret == 0, "the router takes a queue name as the nodes do: '$name' (" . ($node_ret == 0 ? 'taken' : 'refused') . ')');
}

# q1..q12: q1-q4 on node 0, q5-q8 on node 1, q9-q12 on node 2.
my @queues = map { "q$_" } 1 .. 12;
sub node_of { my ($q) = @_; return int((substr($q, 1) - 1) / 4); }
$router->safe_psql('postgres', join '', map {
	"SELECT pgjq_router.place_queue('$_', ARRAY[" . node_of($_) . "]);"
	  . "SELECT pgjq.create_queue('$_', lease => '2 seconds', max_attempts => 100);"
} @queues);
for my $i (0 .. 2)
{
	is($nodes[$i]->safe_psql('postgres', q{SELECT string_agg(queue_name, ',' ORDER BY length(queue_name), queue_name)
		FROM pgjq.queues WHERE queue_name <> 'default'}),
		join(',', grep { node_of($_) == $i } @queues), "node $i holds exactly its four queues");
}
$router->safe_psql('postgres', q{SELECT pgjq.create_queue('by_hash')});
my $hashed = $router->safe_psql('postgres', q{SELECT node FROM pgjq_router.placements WHERE queue_name = 'by_hash'});
is($nodes[$hashed]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queues WHERE queue_name = 'by_hash'}), '1',
	'a queue created without a placement lives on the node its name hashes to, as recorded');

# --- ids name their node; calls by id reach it ---
my $ids = $router->safe_psql('postgres', join ' UNION ALL ',
	map { "SELECT '$_', pgjq.enqueue('t', '{}', '$_')" } @queues);
my @rows = map { [ split /\|/ ] } split /\n/, $ids;
is(scalar(grep { $_->[1] % 1024 == node_of($_->[0]) } @rows), 12, 'every job id names the node of its queue');
my $q5 = (grep { $_->[0] eq 'q5' } @rows)[0][1];
is($router->safe_psql('postgres', qq{SELECT pgjq.cancel($q5)}), 't', 'cancel through the router reaches the job\'s node');
is($nodes[1]->safe_psql('postgres', qq{SELECT status FROM pgjq.jobs WHERE id = $q5}), 'cancelled', 'and cancels it there');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.cancel(1027)});
like($err, qr/job 1027 does not exist/, 'an id that names no node of the cluster is an unknown job');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'nowhere')});
like($err, qr/queue "nowhere" does not exist/, 'an unplaced queue is an unknown queue');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.claim_in_transaction('w', NULL, 1, 'q1')});
like($err, qr/cannot run through the router/, 'in-transaction claims are refused through the router');
$router->safe_psql('postgres', q{SELECT pgjq.cancel_jobs(queue_name) FROM pgjq_router.placements});

# --- privileges: the router routes, each node decides, and only the router's owner shapes the cluster ---
$_->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE ROLE stranger LOGIN') for ($router, @nodes);
$router->safe_psql('postgres', q{SELECT pgjq.grant_producer('app', 'q2'); SELECT pgjq.grant_worker('app', 'q2')});
is($nodes[0]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.grants WHERE grantee = 'app'::regrole}), '2',
	'a grant through the router reaches the queue\'s node');
my $as_app = $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'q2')}, extra_params => [ '-U', 'app' ]);
is($as_app % 1024, 0, 'a producer enqueues through the router as itself');
is($nodes[0]->safe_psql('postgres', qq{SELECT enqueued_by FROM pgjq.jobs WHERE id = $as_app}), 'app',
	'and the node records the job as that role\'s');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'q2')}, extra_params => [ '-U', 'stranger' ]);
like($err, qr/stranger.*producer|producer.*stranger/s, 'a role without the capability is refused by the node, through the router');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'q3')}, extra_params => [ '-U', 'app' ]);
like($err, qr/producer/, 'and so is a producer of another queue');
for my $call (q{SELECT pgjq_router.add_node('host=/tmp')}, q{SELECT pgjq_router.place_queue('x', ARRAY[0])},
	q{SELECT pgjq_router.move_queue('q2', 1)}, q{SELECT pgjq_router.finish_move('q2')},
	q{SELECT pgjq.create_queue('mine')}, q{DELETE FROM pgjq_router.placements},
	q{INSERT INTO pgjq_router.placements (queue_name, partition, node) VALUES ('mine', 0, 1)},
	q{SELECT pgjq_router.record_placement('nothere', 0)}, q{SELECT pgjq_router.record_placement('default', 2)},
	q{SELECT pgjq_router.forget_placement('q2')},
	q{CREATE USER MAPPING FOR CURRENT_USER SERVER pgjq_nodes OPTIONS (user 'postgres')},
	q{ALTER SERVER pgjq_nodes OPTIONS (SET p1 'host=/tmp dbname=postgres')})
{
	($ret, $out, $err) = $router->psql('postgres', $call, extra_params => [ '-U', 'app' ]);
	like($err, qr/permission denied|lacks|does not exist|not held by node|placement of queue .* stays|only the owner of server|must be owner|only the router's owner places/,
		"a role that is not the router's owner is refused: $call");
}
is($router->safe_psql('postgres', q{SELECT string_agg(queue_name || ':' || node, ',' ORDER BY queue_name) FROM pgjq_router.placements
	WHERE queue_name IN ('q2', 'x', 'mine', 'default')}), 'default:0,q2:0', 'the placement is unchanged');
is($router->safe_psql('postgres', q{SELECT count(*) FROM pg_user_mappings WHERE srvname = 'pgjq_nodes'}), '1',
	'and so are the user mappings');
is(server_options(), $options_before, 'and the nodes\' conninfos');
# Placing a queue is the router owner's, through place_queue or a create_queue of an unplaced queue: a role
# that may create queues on every node (admin for every queue there) creates a placed queue through the
# router, but neither places a new one nor records a queue made on a node, which would probe the nodes
# with the owner's rights and take the owner's place_queue.
$_->safe_psql('postgres', 'CREATE ROLE tenant_admin LOGIN') for ($router, @nodes);
$router->safe_psql('postgres', q{SELECT pgjq.grant_admin('tenant_admin')});
is(sqlstate_of($router, q{SELECT pgjq.create_queue('tenantq')}, extra_params => [ '-U', 'tenant_admin' ]), '42501',
	'an admin of the nodes does not place a new queue through create_queue');
is(join(',', map { $_->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queues WHERE queue_name = 'tenantq'}) } @nodes), '0,0,0',
	'and no node got it');
$nodes[1]->safe_psql('postgres', q{SELECT pgjq.create_queue('made_on_node')});
for my $role ('app', 'tenant_admin')
{
	$router->psql('postgres', q{SELECT pgjq_router.record_placement('made_on_node', 1)}, extra_params => [ '-U', $role ]);
	$router->psql('postgres', q{SELECT pgjq.create_queue('made_on_node')}, extra_params => [ '-U', $role ]);
}
is($router->safe_psql('postgres', q{SELECT count(*) FROM pgjq_router.placements WHERE queue_name IN ('tenantq', 'made_on_node')}), '0',
	'no role but the owner records the placement of a queue made on a node');
is(sqlstate_of($router, q{SELECT pgjq.create_queue('made_on_node')}), '42710',
	'and the owner\'s create_queue of it is refused: place_queue registers it where it is');
is(join(',', map { $_->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queues WHERE queue_name = 'made_on_node'}) } @nodes), '0,1,0',
	'so that no second copy is made on another node');
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('tenantq', ARRAY[2])});
$router->safe_psql('postgres', q{SELECT pgjq.create_queue('tenantq')}, extra_params => [ '-U', 'tenant_admin' ]);
is($nodes[2]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queues WHERE queue_name = 'tenantq'}), '1',
	'once the owner placed it, the nodes\' admin creates it through the router');
$router->safe_psql('postgres', q{SELECT pgjq.drop_queue('tenantq')}, extra_params => [ '-U', 'tenant_admin' ]);
$nodes[1]->safe_psql('postgres', q{SELECT pgjq.drop_queue('made_on_node')});
$router->safe_psql('postgres', q{SELECT pgjq.revoke_admin('tenant_admin')});
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('later', ARRAY[1])});
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq_router.forget_placement('later')}, extra_params => [ '-U', 'app' ]);
like($err, qr/stays/, 'a placement made before its queue exists cannot be forgotten by anyone');
$router->safe_psql('postgres', q{SELECT pgjq.create_queue('later'); SELECT pgjq.create_queue('later')});
pass('create_queue through the router again finds the queue made, and succeeds');
$router->safe_psql('postgres', q{SELECT pgjq.drop_queue('later')});
is($router->safe_psql('postgres', q{SELECT count(*) FROM pgjq_router.placements WHERE queue_name = 'later'}), '0',
	'drop_queue through the router drops the queue and then its placement');
$router->safe_psql('postgres', q{SELECT pgjq.cancel_jobs('q2')});

# --- the two transactional patterns ---
# On the node: the job commits or rolls back with the producer's own data.
$nodes[0]->safe_psql('postgres', q{CREATE TABLE orders (id int PRIMARY KEY)});
$nodes[0]->safe_psql('postgres', q{BEGIN; INSERT INTO orders VALUES (1);
	SELECT pgjq.enqueue('ship', '{"order": 1}', 'q1'); ROLLBACK;});
$nodes[0]->safe_psql('postgres', q{BEGIN; INSERT INTO orders VALUES (2);
	SELECT pgjq.enqueue('ship', '{"order": 2}', 'q1'); COMMIT;});
is($nodes[0]->safe_psql('postgres', q{SELECT string_agg(payload->>'order', ',') FROM pgjq.jobs WHERE job_type = 'ship'}),
	'2', 'enqueued on the node, the job rolls back with the order and commits with it');
# Through the router: the enqueue commits on the node at once, whatever the router's transaction does.
$router->safe_psql('postgres', q{CREATE TABLE orders (id int PRIMARY KEY)});
$router->safe_psql('postgres', q{BEGIN; INSERT INTO orders VALUES (3);
	SELECT pgjq.enqueue('ship', '{"order": 3}', 'q1'); ROLLBACK;});
is($router->safe_psql('postgres', q{SELECT count(*) FROM orders}), '0', 'the router\'s own data rolled back');
is($nodes[0]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE payload->>'order' = '3'}), '1',
	'but the job enqueued through the router stays: it committed on its node on its own');
$nodes[0]->safe_psql('postgres', q{SELECT pgjq.cancel_jobs('q1')});

# --- a partitioned queue: keys keep their partition ---
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('hot', ARRAY[0, 1, 2]);
	SELECT pgjq.create_queue('hot', group_concurrency => 1000)});
is($router->safe_psql('postgres', q{SELECT count(DISTINCT pgjq.enqueue('t', '{}', 'hot', group_key => 'k' || g % 5) % 1024)
	FROM generate_series(1, 200) g GROUP BY g % 5 ORDER BY 1 DESC LIMIT 1}), '1',
	'each group key of a partitioned queue stays on one node');
is($router->safe_psql('postgres', q{SELECT count(DISTINCT id % 1024) FROM unnest(pgjq.enqueue_batch('t',
	(SELECT jsonb_agg(g) FROM generate_series(1, 60) g), 'hot')) id}), '3', 'a batch without keys spreads over the partitions');
my $parent = $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'hot', group_key => 'k1')});
is($router->safe_psql('postgres', qq{SELECT bool_and(id % 1024 = $parent % 1024) FROM unnest(ARRAY[pgjq.enqueue('t', '{}', 'hot', depends_on => ARRAY[$parent]),
	pgjq.enqueue('t', '{}', 'hot', depends_on => ARRAY[$parent]), pgjq.enqueue('t', '{}', 'hot', depends_on => ARRAY[$parent])]) id}),
	't', 'a job that depends on another goes to that job\'s node');
is($router->safe_psql('postgres', qq{SELECT bool_and(id % 1024 = $parent % 1024) FROM unnest(pgjq.enqueue_batch('t', '[1, 2, 3, 4]', 'hot',
	depends_on => ARRAY[$parent])) id}), 't', 'and so does a batch of them');
$router->safe_psql('postgres', qq{SELECT pgjq.cancel($parent)});    # its dependents are cancelled with it
is($router->safe_psql('postgres', q{SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 1000, 'hot')}), '260',
	'a claim through the router drains every partition');
is($router->safe_psql('postgres', q{SELECT claimed FROM pgjq.queue_stats WHERE queue_name = 'hot'}), '260',
	'queue_stats adds the partitions up');
is($router->safe_psql('postgres', q{SELECT pgjq.complete_batch(array(SELECT id FROM pgjq.jobs WHERE queue_name = 'hot' AND status = 'claimed'), 'w')}),
	'260', 'complete_batch through the router completes jobs of every partition');
is($router->safe_psql('postgres', q{SELECT count(*) || ':' || sum(jobs) FROM pgjq.queue_latency WHERE queue_name = 'hot' AND measure = 'wait'}),
	'1:260', 'queue_latency adds a partitioned queue\'s histograms into one row');
is($router->safe_psql('postgres', q{SELECT count(*) FROM pgjq_router.all_latency() WHERE queue_name = 'hot' AND measure = 'wait'}),
	'3', 'from its three nodes');

# --- load: producers and workers through the router ---
$router->safe_psql('postgres', q{
	CREATE TABLE produced (id bigint NOT NULL, queue_name text NOT NULL);
	CREATE TABLE completed (id bigint NOT NULL, worker text NOT NULL);
	-- One job into each of the twelve queues; a node that cannot be reached refuses its queues' jobs.
	CREATE FUNCTION produce() RETURNS integer LANGUAGE plpgsql AS $$
	DECLARE q text; n integer := 0;
	BEGIN
		FOR q IN SELECT 'q' || g FROM generate_series(1, 12) g LOOP
			BEGIN
				INSERT INTO produced VALUES (pgjq.enqueue('load', '{}', q), q);
				n := n + 1;
			EXCEPTION WHEN OTHERS THEN NULL;
			END;
		END LOOP;
		RETURN n;
	END $$;
	-- A batch from each queue, completed; what a node's failure interrupts is recovered by its leases.
	-- A claim that fails (its node is down, or a move dropped the queue from the node it was read on)
	-- skips that queue alone: failing the whole call would roll back the records of completions the
	-- nodes already acknowledged, and a moved queue's history leaves its old node with the move.
	CREATE FUNCTION drain(worker text) RETURNS integer LANGUAGE plpgsql AS $$
	DECLARE q text; job bigint; claimed bigint[]; total integer := 0;
	BEGIN
		FOR q IN SELECT 'q' || g FROM generate_series(1, 12) g ORDER BY random() LOOP
			BEGIN
				claimed := array(SELECT id FROM pgjq.claim_job_batch(worker, ARRAY['load', 'held'], 20, q));
			EXCEPTION WHEN OTHERS THEN
				CONTINUE;
			END;
			FOREACH job IN ARRAY claimed LOOP
				BEGIN
					PERFORM pgjq.complete(job, worker);
				EXCEPTION WHEN OTHERS THEN
					CONTINUE;  -- not acknowledged: the lease was lost, or the node went away
				END;
				INSERT INTO completed VALUES (job, worker);
				total := total + 1;
			END LOOP;
		END LOOP;
		RETURN total;
	END $$;
});
my $rconn = $router->connstr('postgres');
sub loop_of
{
	my ($sql) = @_;
	my $h = IPC::Run::start(['bash', '-c', qq{while true; do psql -X -q -At -d "\$0" -c "$sql" >/dev/null 2>&1; sleep 0.02; done}, $rconn]);
	return $h;
}
sub stop_loop { my ($h) = @_; $h->signal('TERM'); $h->finish; }
sub completed_on { my ($i) = @_; return $nodes[$i]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type = 'load' AND status = 'completed'}); }
sub wait_until { my ($what, $cond) = @_; for (1 .. 600) { return 1 if $cond->(); select(undef, undef, undef, 0.1); } diag("timed out: $what"); return 0; }

my @loops = (loop_of('SELECT produce()'), loop_of('SELECT produce()'), loop_of(q{SELECT drain('w1')}), loop_of(q{SELECT drain('w2')}));
ok(wait_until('jobs completed on every node', sub { !grep { completed_on($_) < 20 } 0 .. 2 }),
	'producers and workers through the router: jobs complete on every node');

# --- a queue moved between nodes under load ---
$router->safe_psql('postgres', q{SELECT pgjq_router.move_queue('q1', 1)});
my $moved_id = $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'q1')});
is($moved_id % 1024, 1, 'after the move starts, q1\'s new jobs go to node 1');
$router->safe_psql('postgres', qq{SELECT pgjq.cancel($moved_id)});
ok(wait_until('the move finishes', sub { $router->safe_psql('postgres', q{SELECT pgjq_router.finish_move('q1')}) eq 't' }),
	'the move finishes once node 0 has no unfinished job of q1');
is($nodes[0]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.queues WHERE queue_name = 'q1'}), '0',
	'q1 is gone from node 0');
is($router->safe_psql('postgres', q{SELECT node || ',' || coalesce(draining_node::text, '-') FROM pgjq_router.placements WHERE queue_name = 'q1'}),
	'1,-', 'and placed on node 1 alone');
# What a move must not lose: the capabilities granted for the queue, its schedules, its dead letters.
$router->safe_psql('postgres', q{SELECT pgjq.grant_producer('app', 'q3')});
$router->safe_psql('postgres', q{SELECT pgjq.schedule('tick', '@every 1h', 't', queue_name => 'q3', paused => true)});
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq_router.move_queue('q3', 2)});
like($err, qr/has 1 schedules on node 0/, 'a queue with schedules is not moved (they would go with the old node\'s queue)');
$router->safe_psql('postgres', q{SELECT pgjq.unschedule('tick')});
my $dead = $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'q3', max_attempts => 1)});
$nodes[0]->safe_psql('postgres', qq{SELECT pgjq.fail(c.id, 'w', 'boom') FROM pgjq.claim_job_batch('w', ARRAY['t'], 10, 'q3') c});
$router->safe_psql('postgres', q{SELECT pgjq_router.move_queue('q3', 2)});
my $granted = $router->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'q3')}, extra_params => [ '-U', 'app' ]);
is($granted % 1024, 2, 'the producer granted q3 enqueues into it on its new node');
$router->safe_psql('postgres', qq{SELECT pgjq.cancel($granted)});
my ($fret, $fout, $ferr) = $router->psql('postgres', q{SELECT pgjq_router.finish_move('q3')});
is($fout, 'f', 'a move does not finish while the old node holds failed jobs of the queue');
like($ferr, qr/failed jobs on node 0/, 'and says so');
$nodes[0]->safe_psql('postgres', q{SELECT pgjq.delete_jobs('q3', status => 'failed')});
ok(wait_until('q3 leaves node 0', sub { $router->safe_psql('postgres', q{SELECT pgjq_router.finish_move('q3')}) eq 't' }),
	'once they are dealt with, it finishes');
# The instant finish_move has dropped the queue on the old node, before its transaction on the router
# commits: a claim still sees the old node in the placement, which answers "unknown queue", and passes it
# over (the queue has left it).
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('instant', ARRAY[0]); SELECT pgjq.create_queue('instant');
	SELECT pgjq_router.move_queue('instant', 1); SELECT pgjq.enqueue('t', '{}', 'instant') FROM generate_series(1, 3)});
my $finisher = $router->background_psql('postgres');
$finisher->query_safe('BEGIN');
is($finisher->query_safe(q{SELECT pgjq_router.finish_move('instant')}), 't', 'finish_move drops the queue on node 0 (not committed on the router yet)');
($ret, $out, $err) = $router->psql('postgres', q{SELECT count(*) FROM pgjq.claim_job_batch('w-instant', NULL, 10, 'instant')});
is($ret == 0 ? $out : $err, '3', 'a claim at that instant passes over node 0 and claims node 1\'s jobs');
like($err, qr/node 0 passed over/, 'with a NOTICE');
$finisher->query_safe('COMMIT');
$finisher->quit;
$router->safe_psql('postgres', q{SELECT pgjq.cancel_jobs('instant')});

($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq_router.move_queue('hot', 1, partition => 0)});
like($err, qr/holds \(or is leaving\) another partition/, 'a partition does not move onto a node holding another one');

my $q1_before = $nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'q1' AND status = 'completed'});
ok(wait_until('q1 drains on node 1', sub { $nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'q1' AND status = 'completed'}) > $q1_before + 5 }),
	'q1 keeps going on node 1');

# --- a node stopped abruptly mid-run ---
# Jobs held by a worker that dies with the node (in a queue the drain loops leave alone): their leases
# bring them back after the restart.
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('held', ARRAY[2]);
	SELECT pgjq.create_queue('held', lease => '1 second'); SELECT pgjq.enqueue('t', '{}', 'held') FROM generate_series(1, 3)});
my @ghost = split /\n/, $router->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('ghost', NULL, 3, 'held')});
is(scalar(@ghost), 3, 'a worker holds jobs of node 2 when it stops');
# Queues an outage of node 2 must not stop on node 1: one partitioned over nodes 1 and 2, one moving from
# node 1 to node 2 (held paused on node 2 until the move ends, drained on node 1), each with ten jobs on
# node 1; and a job of node 2 that a worker holds when the node stops.
$router->safe_psql('postgres', q{
	SELECT pgjq_router.place_queue('split', ARRAY[1, 2]); SELECT pgjq.create_queue('split', lease => '2 seconds');
	SELECT pgjq_router.place_queue('leaving', ARRAY[1]); SELECT pgjq.create_queue('leaving', lease => '2 seconds');});
$nodes[$_]->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'split') FROM generate_series(1, 10)}) for 1, 2;
$nodes[1]->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'leaving') FROM generate_series(1, 10)});
$router->safe_psql('postgres', q{SELECT pgjq_router.move_queue('leaving', 2)});
my $held_on_2 = $nodes[2]->safe_psql('postgres', q{SELECT id FROM pgjq.claim_job_batch('w-down', NULL, 1, 'split')});
sub claimed_on_1
{
	my ($queue) = @_;
	return join ',', sort split /\n/, $nodes[1]->safe_psql('postgres',
		qq{SELECT id FROM pgjq.jobs WHERE queue_name = '$queue' AND worker_id = 'w-down' AND status = 'claimed'});
}

$nodes[2]->stop('immediate');

# Each claim asks for more than node 1 holds, so that it visits node 2 too, whatever the order.
my %got;
for my $queue ('split', 'leaving')
{
	($ret, $out, $err) = $router->psql('postgres', qq{SELECT id FROM pgjq.claim_job_batch('w-down', NULL, 100, '$queue')});
	is($ret, 0, "with node 2 down, a claim on $queue (node 1 and node 2) succeeds") or diag($err);
	like($err, qr/node 2 passed over/, 'passing over node 2 with a NOTICE');
	$got{$queue} = [ sort split /\n/, $out ];
	is(scalar(@{ $got{$queue} }), 10, "it returns node 1's ten jobs of $queue");
	is(join(',', @{ $got{$queue} }), claimed_on_1($queue), 'exactly the jobs it claimed there: none is stranded');
}
($ret, $out, $err) = $router->psql('postgres',
	"SELECT pgjq.complete_batch(ARRAY[" . join(',', @{ $got{split} }, $held_on_2) . "], 'w-down')");
isnt($ret, 0, 'complete_batch of jobs of nodes 1 and 2 fails while node 2 is down');
like($err, qr/node 2/, 'and names node 2');
is($nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'split' AND status = 'completed'}), '10',
	'but completes node 1\'s jobs: one call per node, each committed on its own');
($ret, $out, $err) = $router->psql('postgres',
	"SELECT count(*) FROM pgjq.complete_and_claim('w-down', ARRAY[" . join(',', @{ $got{leaving} }) . "]::bigint[], NULL, 100, 'leaving')");
is($ret == 0 ? $out : $err, '0', 'complete_and_claim on the moving queue completes on node 1 and claims past node 2');
is($nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'leaving' AND status = 'completed'}), '10',
	'node 1\'s jobs of the moving queue are completed');
my $split_on_1 = $nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'split'});
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(g) FROM generate_series(1, 40) g), 'split')});
isnt($ret, 0, 'a batch into the partitioned queue fails while one of its nodes is down');
my ($partial) = $err =~ /(\d+) of the batch's 40 jobs were enqueued/;
is($partial, $nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'split'}) - $split_on_1,
	'and says how many of its jobs the partitions before the error enqueued') or diag($err);
($ret, $out, $err) = $router->psql('postgres', q{SELECT count(*) FROM pgjq.queue_stats WHERE queue_name IN ('split', 'leaving')});
is($ret == 0 ? $out : $err, '2', 'queue_stats through the router answers while node 2 is down');
like($err, qr/node 2 left out/, 'leaving node 2 out with a NOTICE');
my $metrics = $router->safe_psql('postgres', q{SELECT pgjq.metrics()});
ok($metrics =~ /node="1"/ && $metrics !~ /node="2"/, 'and so does metrics(), with the samples of the nodes that answer');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.recover_stale()});
like($err, qr/node 2|connect/i, 'a call for every node (recover_stale) fails while one is down, as documented');

my @before = map { completed_on($_) } 0 .. 1;
ok(wait_until('nodes 0 and 1 keep draining', sub { completed_on(0) > $before[0] + 20 && completed_on(1) > $before[1] + 20 }),
	'with node 2 down, the queues of nodes 0 and 1 keep draining through the router');
$nodes[2]->start;
wait_for_server($nodes[2]);
my $n2 = completed_on(2);
ok(wait_until('node 2 drains again', sub { completed_on(2) > $n2 + 20 }), 'node 2 is drained again after its restart');
my @rescued;
wait_until('the held jobs come back', sub {
	# claimed and completed in one statement on the node (no lease can run out in between)
	push @rescued, split /\n/, $nodes[2]->safe_psql('postgres', q{SELECT c.id FROM pgjq.claim_job_batch('rescuer', NULL, 3, 'held') c,
		LATERAL pgjq.complete(c.id, 'rescuer') d});
	return @rescued >= 3;
});
is(join(',', sort @rescued), join(',', sort @ghost), 'the jobs held when node 2 stopped come back after their lease');
is($nodes[2]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'held' AND status = 'completed'}), '3',
	'and complete');

stop_loop($_) for @loops[0 .. 1];    # producers first, then let the workers finish
ok(wait_until('everything completes', sub {
	$router->safe_psql('postgres', q{SELECT coalesce(sum(pending + claimed + running + waiting), 0) FROM pgjq.queue_stats WHERE queue_name ~ '^q[0-9]+$'}) eq '0' }),
	'every job is finished in the end (claims cut by the crash were recovered by their leases)');
stop_loop($_) for @loops[2 .. 3];

# --- a statement timeout that fires in the middle of a claim strands nothing ---
# A queue on nodes 0 and 1, node 1's jobs table locked: a claim that visits node 0 first claims there
# (committed on node 0), then waits on node 1 until its statement_timeout fires. The jobs node 0 gave
# must come back to the caller; node 1's cancelled claim must leave nothing claimed there.
$router->safe_psql('postgres', q{SELECT pgjq_router.place_queue('slow', ARRAY[0, 1]); SELECT pgjq.create_queue('slow')});
$nodes[$_]->safe_psql('postgres', q{SELECT pgjq.enqueue('t', '{}', 'slow') FROM generate_series(1, 3)}) for 0, 1;
my $locker = $nodes[1]->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE pgjq.live_jobs IN ACCESS EXCLUSIVE MODE');
my ($node_0_first, $stranded, $timeouts) = (0, 0, 0);
for my $try (1 .. 20)
{
	($ret, $out, $err) = $router->psql('postgres',
		qq{SET statement_timeout = '3s'; SELECT id FROM pgjq.claim_job_batch('tw$try', NULL, 100, 'slow')});
	$timeouts++ if $err =~ /statement timeout/;
	my %returned = map { $_ => 1 } split /\n/, $out;
	my @held = split /\n/, $nodes[0]->safe_psql('postgres',
		qq{SELECT id FROM pgjq.jobs WHERE queue_name = 'slow' AND worker_id = 'tw$try' AND status = 'claimed'});
	$stranded += grep { !$returned{$_} } @held;
	if (@held)
	{
		$node_0_first = $try;
		last;
	}
}
ok($node_0_first, 'a claim visited node 0 before it waited on node 1 (the order is random)');
is($timeouts, $node_0_first, 'the statement timeout fired in every try');
is($stranded, 0, 'the jobs node 0 gave before the timeout came back to the caller, none stranded');
$locker->query_safe('ROLLBACK');
$locker->quit;
$nodes[1]->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE query ~ 'claim_job_batch' AND pid <> pg_backend_pid()})
  or diag('a claim still runs on node 1');
is($nodes[1]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'slow' AND status <> 'pending'}), '0',
	'node 1\'s claim, cancelled, claimed nothing');

# --- the command line and the dashboard show the whole cluster through the router ---
my $cli = $ENV{PGJQ_CLI} or die 'PGJQ_CLI (the pgjq command line) is not set';
my ($cout, $cerr) = ('', '');
IPC::Run::run([ $cli, '-d', $rconn, 'status' ], '>', \$cout, '2>', \$cerr) or diag($cerr);
is(scalar(grep { $cout =~ /^$_\s/m } @queues, 'hot'), 13, 'pgjq status through the router lists the queues of every node');
IPC::Run::run([ $cli, '-d', $rconn, 'maintenance' ], '>', \$cout, '2>', \$cerr) or diag($cerr);
is(scalar(grep { $cout =~ /node $_: postgres/ } 0 .. 2), 3, 'pgjq maintenance shows each node\'s worker');
is($router->safe_psql('postgres', q{SELECT count(DISTINCT datname) FROM pgjq.worker_status() WHERE worker_type = 'maintenance'}),
	'3', 'worker_status through the router shows each node\'s maintenance worker');
$router->safe_psql('postgres', q{SELECT pgjq.schedule('nightly', '0 3 * * *', 't', queue_name => 'q5', paused => true)});
is($router->safe_psql('postgres', q{SELECT string_agg(schedule_name || '@' || queue_name, ',') FROM pgjq.schedules}), 'nightly@q5',
	'schedules through the router lists the nodes\' schedules');
($ret, $out, $err) = $router->psql('postgres', q{SELECT pgjq.schedule('nightly', '0 3 * * *', 't', queue_name => 'q9')});
like($err, qr/schedule "nightly" exists on node 1/, 'a schedule name that lives on another node is refused (both would fire)');
$router->safe_psql('postgres', q{SELECT pgjq.unschedule('nightly')});
IPC::Run::run([ $cli, '-d', $rconn, 'metrics' ], '>', \$cout, '2>', \$cerr) or diag($cerr);
is(scalar(grep { $cout =~ /^pgjq_jobs\{node="$_",/m } 0 .. 2), 3, 'pgjq metrics labels every node\'s samples with its node');
my ($pout, $perr) = ('', '');
IPC::Run::run([ 'promtool', 'check', 'metrics' ], '<', \$cout, '>', \$pout, '2>', \$perr);
is($? >> 8, 0, 'and promtool accepts the merged exposition') or diag("$pout$perr");
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $web_token = 'router-dashboard-token-0123';
my $web = IPC::Run::start([ 'env', "PGJQ_WEB_TOKEN=$web_token", $cli, '-d', $rconn, 'web', '--listen', "127.0.0.1:$port" ],
	'>', \my $wout, '2>', \my $werr);
my $overview = '';
for (1 .. 100)
{
	$overview = HTTP::Tiny->new->get("http://127.0.0.1:$port/api/overview",
		{ headers => { Authorization => "Bearer $web_token" } })->{content} // '';
	last if $overview =~ /queues/;
	select(undef, undef, undef, 0.1);
}
$web->signal('TERM');
$web->finish;
is(scalar(grep { $overview =~ /"queue":"$_"/ } 'q1', 'q5', 'q9', 'hot'), 4,
	'the dashboard\'s overview through the router holds queues of every node') or diag("$overview $werr");

# Every job a producer was told about was completed, and none twice: node 0's q1 history went with the
# move, so a job counts as completed if its node says so or a worker's completion was acknowledged.
my %done;
for my $i (0 .. 2)
{
	$done{$_} = 1 for split /\n/, $nodes[$i]->safe_psql('postgres', q{SELECT id FROM pgjq.jobs WHERE job_type = 'load' AND status = 'completed'});
	is($nodes[$i]->safe_psql('postgres', q{SELECT count(*) FROM pgjq.jobs WHERE job_type = 'load' AND status <> 'completed'}), '0',
		"node $i holds no load job that did not complete");
}
$done{$_} = 1 for split /\n/, $router->safe_psql('postgres', q{SELECT id FROM completed});
my @produced = split /\n/, $router->safe_psql('postgres', q{SELECT id FROM produced});
cmp_ok(scalar(@produced), '>', 200, 'the producers enqueued hundreds of jobs through the router');
is(scalar(grep { !$done{$_} } @produced), 0, 'every job a producer was told about was completed');
# Not true by construction: with asynchronous worker commits (the default) a node's crash can undo an
# acknowledged completion, and the job is then run and acknowledged again (this failed before new_cluster
# set pgjq.synchronous_worker_commit).
is($router->safe_psql('postgres', q{SELECT count(*) - count(DISTINCT id) FROM completed}), '0',
	'no job\'s completion was acknowledged twice');
is($router->safe_psql('postgres', q{SELECT count(*) - count(DISTINCT id) FROM produced}), '0',
	'job ids are unique across the cluster');

done_testing();
