# Workflows across crashes (pg_ctl -m immediate). (1) A workflow fetch -> a fan-out over the lists fetch
# returns (chunk-1..3) -> a join that sums every chunk's result read through pgjq.step_results. A chunk
# records each part it has done as a checkpoint, in the transaction that does the part; the server is
# killed while chunk-2 holds two recorded parts and is in the middle of its third, before its completion.
# After the restart the lease is recovered, chunk-2 is claimed again, pgjq.checkpoints returns the two
# recorded parts, so the run skips them: every part ran exactly once, and the workflow finishes as written.
# (2) A step in a durable sleep and a step parked by wait_for_event stay so across a restart: the sleeper
# becomes claimable once its time passes (announced by the maintenance worker) and sleep_until then returns
# true; the waiter stays parked until a signal after the restart wakes it with the signal's payload.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PgjqTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

# Worker commits wait for their WAL flush, as checkpoints always do: by default a crash may undo a worker's
# last completion or claim (docs/guarantees.md), and this test counts what ran before the crash.
my $node = new_node('wf_crash', conf => "pgjq.synchronous_worker_commit = on\n");
my $sql = sub { $node->safe_psql('postgres', $_[0]) };
$sql->(q{
	CREATE EXTENSION pgjq;
	SELECT pgjq.create_queue('wf', lease => '2 seconds', max_attempts => 5);
	-- what the handlers did: one row per part of a chunk done, and per run of the join; a part's row
	-- commits with its checkpoint
	CREATE TABLE effects (step_name text NOT NULL, part text NOT NULL);
	-- A chunk's handler: the list its index names in fetch's result, one part per number, each part its
	-- own transaction (the effect and its checkpoint); the parts already recorded are skipped. With
	-- pause_at, it hangs in that part, after its effect and before its checkpoint.
	CREATE PROCEDURE work_chunk(job bigint, worker text, pause_at integer DEFAULT NULL) LANGUAGE plpgsql AS $$
	DECLARE
	  step text;
	  n integer;
	  total bigint;
	BEGIN
	  SELECT s.step_name INTO step FROM pgjq.workflow_run_steps s WHERE s.job_id = job;
	  FOR n IN
	    SELECT jsonb_array_elements_text(r.result -> 'lists' -> ((j.payload ->> 'index')::integer))::integer
	      FROM pgjq.step_results(job) r, pgjq.jobs j WHERE j.id = job AND r.step_name = 'fetch'
	  LOOP
	    CONTINUE WHEN pgjq.checkpoints(job) ? ('n' || n);
	    INSERT INTO effects VALUES (step, 'n' || n);
	    IF n = pause_at THEN
	      PERFORM pg_sleep(3600);
	    END IF;
	    PERFORM pgjq.checkpoint(job, worker, 'n' || n, to_jsonb(n * n));
	    COMMIT;
	  END LOOP;
	  SELECT sum(value::text::bigint) INTO total FROM jsonb_each(pgjq.checkpoints(job));
	  PERFORM pgjq.complete(job, worker, jsonb_build_object('sum', total));
	  COMMIT;
	END $$;
	CREATE PROCEDURE work_join(job bigint, worker text) LANGUAGE plpgsql AS $$
	BEGIN
	  INSERT INTO effects VALUES ('join', 'run');
	  PERFORM pgjq.complete(job, worker,
	            (SELECT jsonb_build_object('total', sum((r.result ->> 'sum')::bigint), 'chunks', count(*),
	                                       'all_completed', bool_and(r.status = 'completed'))
	               FROM pgjq.step_results(job) r));
	  COMMIT;
	END $$;
	-- the job of step s of workflow w, and its state
	CREATE FUNCTION step_id(w bigint, s text) RETURNS bigint LANGUAGE sql AS
	  $$ SELECT job_id FROM pgjq.workflow_steps(w) WHERE step_name = s $$;
});
wait_for_maintenance($node, 'postgres');

# claims one job of the type; returns its id ('' for none)
my $claim = sub {
	my ($type, $worker) = @_;
	return $sql->("SELECT id FROM pgjq.claim_job_batch('$worker', ARRAY['$type'], 1, 'wf')");
};

# --- (1) a crash between a checkpoint and the completion -------------------------------------------------
my @lists = ([ 1, 2, 3 ], [ 4, 5, 6 ], [ 7, 8, 9 ]);
my $expected_total = 0;
$expected_total += $_ * $_ for map { @$_ } @lists;
my $lists_json = '[' . join(', ', map { '[' . join(', ', @$_) . ']' } @lists) . ']';
my $chunks = join(', ',
	map { sprintf('{"name": "chunk-%d", "job_type": "chunk", "queue": "wf", "payload": {"index": %d}, "after": ["fetch"]}', $_, $_ - 1) }
	  1 .. @lists);
my $wf = $sql->(qq{SELECT pgjq.start_workflow('squares', '[
	{"name": "fetch", "job_type": "fetch", "queue": "wf"}, $chunks,
	{"name": "join", "job_type": "join", "queue": "wf", "after": ["chunk-1", "chunk-2", "chunk-3"]}]')});
like($wf, qr/^\d+$/, 'the workflow starts');
my %step = map { $_ => $sql->("SELECT step_id($wf, '$_')") } qw(fetch chunk-1 chunk-2 chunk-3 join);

is($claim->('fetch', 'w1'), $step{fetch}, 'fetch is claimed');
$sql->("SELECT pgjq.complete($step{fetch}, 'w1', '{\"lists\": $lists_json}')");
is($claim->('chunk', 'w1'), $step{'chunk-1'}, 'chunk-1 is claimed');
$sql->("CALL work_chunk($step{'chunk-1'}, 'w1')");
is($claim->('chunk', 'w1'), $step{'chunk-2'}, 'chunk-2 is claimed');

# chunk-2 does 4 and 5, then hangs in 6 (its effect written, its checkpoint not) until the crash
my ($out, $err) = ('', '');
my $worker = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c', "CALL work_chunk($step{'chunk-2'}, 'w1', pause_at => 6)" ],
	'<', \undef, '>', \$out, '2>', \$err);
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'CALL work_chunk%'})
  or die "chunk-2 did not reach its third part: $err";
is($sql->("SELECT pgjq.checkpoints($step{'chunk-2'}) = '{\"n4\": 16, \"n5\": 25}'"), 't',
	'before the crash chunk-2 recorded two parts');
is($sql->("SELECT status FROM pgjq.jobs WHERE id = $step{'chunk-2'}"), 'claimed', 'and is not completed');
$node->stop('immediate');
{
	local $SIG{PIPE} = 'IGNORE';
	eval { $worker->finish };
}
$node->start;

is($sql->("SELECT pgjq.checkpoints($step{'chunk-2'}) = '{\"n4\": 16, \"n5\": 25}'"), 't',
	'after the restart pgjq.checkpoints shows the two recorded parts');
is($sql->(q{SELECT string_agg(part, ',' ORDER BY part) FROM effects WHERE step_name = 'chunk-2'}), 'n4,n5',
	'the part in progress at the crash left no effect');
is($sql->(q{SELECT status || ' ' || steps_finished || '/' || steps_total FROM pgjq.workflows WHERE id = } . $wf),
	'running 2/5', 'the workflow is where the crash left it');
$node->poll_query_until('postgres',
	"SELECT status = 'pending' AND worker_id IS NULL AND attempts = 1 FROM pgjq.jobs WHERE id = $step{'chunk-2'}")
  or die 'the lease of chunk-2 was not recovered';
pass('the lease of chunk-2 is recovered');
is($sql->(q{SELECT jobs_recovered >= 1 FROM pgjq.worker_status() WHERE datname = 'postgres'}), 't',
	'by the maintenance worker');
is($sql->("SELECT step_name || ' ' || status || ' waiting for ' || waiting_for FROM pgjq.workflow_steps($wf) WHERE step_name = 'join'"),
	'join waiting waiting for steps', 'the join still waits for its steps');

is($claim->('chunk', 'w2'), $step{'chunk-2'}, 'chunk-2 is claimed again');
is($sql->("SELECT attempts FROM pgjq.jobs WHERE id = $step{'chunk-2'}"), '2', 'its second attempt');
$sql->("CALL work_chunk($step{'chunk-2'}, 'w2')");
is($sql->("SELECT status || ' ' || (result ->> 'sum') FROM pgjq.workflow_steps($wf) WHERE step_name = 'chunk-2'"),
	'completed ' . (16 + 25 + 36), 'chunk-2 completes with the sum of its recorded and its new parts');
is($claim->('chunk', 'w2'), $step{'chunk-3'}, 'chunk-3 is claimed');
$sql->("CALL work_chunk($step{'chunk-3'}, 'w2')");

is($claim->('join', 'w2'), $step{join}, 'the join is claimed');
is($claim->('join', 'w3'), '', 'once');
$sql->("CALL work_join($step{join}, 'w2')");

# every part ran exactly once, and the join once
my $parts = join(',', sort map { my $i = $_; map { "chunk-$i n$_" } @{ $lists[ $i - 1 ] } } 1 .. @lists);
is($sql->(q{SELECT string_agg(step_name || ' ' || part, ',' ORDER BY step_name || ' ' || part) FROM effects WHERE step_name <> 'join'}),
	$parts, 'every part of every chunk has an effect');
is($sql->(q{SELECT count(*) FROM (SELECT FROM effects GROUP BY step_name, part HAVING count(*) > 1) twice}), '0',
	'and ran exactly once, the parts recorded before the crash included');
is($sql->(q{SELECT count(*) FROM effects WHERE step_name = 'join'}), '1', 'the join ran once');
is($sql->("SELECT result FROM pgjq.workflow_steps($wf) WHERE step_name = 'join'"),
	qq{{"total": $expected_total, "chunks": 3, "all_completed": true}},
	"the join read every chunk's result: the sum of the squares ($expected_total)");
is($sql->("SELECT status || ' ' || steps_finished || '/' || steps_total || ' failed ' || steps_failed || ' ' || (finished_at IS NOT NULL) FROM pgjq.workflows WHERE id = $wf"),
	'completed 5/5 failed 0 true', 'the workflow is completed');
is($sql->("SELECT string_agg(step_name || ' ' || status, ', ' ORDER BY step_name) FROM pgjq.workflow_steps($wf)"),
	'chunk-1 completed, chunk-2 completed, chunk-3 completed, fetch completed, join completed',
	'every step is completed');
is($sql->("SELECT string_agg(step_name || ' ' || attempts, ', ' ORDER BY step_name) FROM pgjq.workflow_steps($wf)"),
	'chunk-1 1, chunk-2 2, chunk-3 1, fetch 1, join 1', 'chunk-2 alone ran twice');

# --- (2) a restart during a durable sleep and during a wait for an event ----------------------------------
my $naps = $sql->(q{SELECT pgjq.start_workflow('napping', '[{"name": "nap", "job_type": "nap", "queue": "wf"},
	{"name": "after-nap", "job_type": "after_nap", "queue": "wf", "after": ["nap"]}]')});
my $asks = $sql->(q{SELECT pgjq.start_workflow('approval', '[{"name": "ask", "job_type": "ask", "queue": "wf"},
	{"name": "act", "job_type": "act", "queue": "wf", "after": ["ask"]}]')});
my $nap = $claim->('nap', 'w1');
is($nap, $sql->("SELECT step_id($naps, 'nap')"), 'the sleeper is claimed');
is($sql->("SELECT pgjq.sleep_until($nap, 'w1', 'nap', now() + interval '8 seconds')"), 'f',
	'sleep_until parks it a few seconds');
my ($wake_at, $wake_epoch) = split /\|/, $sql->("SELECT run_at, extract(epoch FROM run_at) FROM pgjq.jobs WHERE id = $nap");
is($sql->("SELECT waiting_for || ' ' || status FROM pgjq.workflow_steps($naps) WHERE step_name = 'nap'"), 'sleep pending',
	'the step sleeps');
my $ask = $claim->('ask', 'w1');
is($ask, $sql->("SELECT step_id($asks, 'ask')"), 'the waiter is claimed');
is($sql->("SELECT pgjq.wait_for_event($ask, 'w1', 'approved:7') IS NULL"), 't', 'wait_for_event parks it');
is($sql->("SELECT status FROM pgjq.workflows WHERE id = $asks"), 'waiting', 'its workflow waits');

$node->stop('immediate');
$node->start;

# the waiter is still parked: no lease, due only at its deadline a week ahead, waiting for its event
is($sql->("SELECT status || ' ' || (worker_id IS NULL) || ' ' || (run_at > now() + interval '6 days') FROM pgjq.jobs WHERE id = $ask"),
	'pending true true', 'after the restart the waiter is still parked');
is($sql->("SELECT waiting_for FROM pgjq.workflow_steps($asks) WHERE step_name = 'ask'"), 'event approved:7',
	'waiting for its event');
is($sql->("SELECT status || ' ' || (run_at = '$wake_at') FROM pgjq.jobs WHERE id = $nap"), 'pending true',
	'and the sleeper still sleeps until its time');

# A worker that only listens hears of the sleeper once it is due, if it listened before then.
wait_for_maintenance($node, 'postgres');
my ($lout, $lerr) = ('', '');
my $listener = listen_for_jobs($node, 'wf', 1, 180, \$lout, \$lerr);
my $listened_before = $sql->("SELECT clock_timestamp() < '$wake_at'");

# (poll_query_until's deadline is PostgreSQL::Test::Utils' timeout_default, 180 s)
$node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM pgjq.claim_job_batch('w2', ARRAY['nap'], 1, 'wf')})
  or die 'the sleeper did not become claimable after its time';
is($sql->("SELECT worker_id FROM pgjq.jobs WHERE id = $nap"), 'w2', 'once its time passed the sleeper is claimed');
is($sql->("SELECT pgjq.sleep_until($nap, 'w2', 'nap', now() + interval '1 hour')"), 't',
	'sleep_until returns true: the first call\'s time holds, and it passed');
is($sql->(q{SELECT jobs_notified >= 1 FROM pgjq.worker_status() WHERE datname = 'postgres'}), 't',
	'the maintenance worker announced it when it fell due');
if ($listened_before eq 't')
{
	my $heard = eval { $listener->finish };
	my ($arrived) = $lout =~ /^(\d+\.\d+) wf$/m;
	ok($heard && defined $arrived, 'a worker that only listens was told') or diag($lerr);
	ok(defined $arrived && $arrived >= $wake_epoch, 'when the sleeper fell due, not before');
}
else
{
	$listener->kill_kill;
	note('the restart took longer than the sleep: the listener came too late to hear of it');
}
$sql->("SELECT pgjq.complete($nap, 'w2', '{\"rested\": true}')");
my $after = $claim->('after_nap', 'w2');
is($sql->("SELECT result FROM pgjq.step_results($after)"), '{"rested": true}', 'the next step reads its result');
$sql->("SELECT pgjq.complete($after, 'w2')");
is($sql->("SELECT status FROM pgjq.workflows WHERE id = $naps"), 'completed', 'the sleeping workflow finishes');

# the signal after the restart wakes the waiter
is($claim->('ask', 'w2'), '', 'the waiter is not claimable before its event');
is($sql->(q{SELECT pgjq.signal('approved:7', '{"by": "ann"}', 'wf')}), '1', 'the signal wakes the parked waiter');
is($claim->('ask', 'w2'), $ask, 'which is claimed again');
is($sql->("SELECT attempts FROM pgjq.jobs WHERE id = $ask"), '1', 'the parked run counted no attempt');
is($sql->("SELECT pgjq.wait_for_event($ask, 'w2', 'approved:7')"), '{"by": "ann"}',
	'wait_for_event returns the payload');
$sql->("SELECT pgjq.complete($ask, 'w2', pgjq.wait_for_event($ask, 'w2', 'approved:7'))");
my $act = $claim->('act', 'w2');
is($sql->("SELECT result FROM pgjq.step_results($act)"), '{"by": "ann"}', 'the next step reads the payload');
$sql->("SELECT pgjq.complete($act, 'w2')");
is($sql->("SELECT status || ' ' || steps_finished || '/' || steps_total FROM pgjq.workflows WHERE id = $asks"),
	'completed 2/2', 'the waiting workflow finishes');
is($sql->(q{SELECT errors FROM pgjq.worker_status() WHERE datname = 'postgres'}), '0',
	'the maintenance worker met no error');

$node->stop;
done_testing();
