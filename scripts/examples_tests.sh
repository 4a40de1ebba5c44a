#!/usr/bin/env bash
# Runs the any-language examples (examples/python, examples/psql) against a throwaway cluster with pgjq
# preloaded, so that they cannot rot: the Python producer enqueues orders with their jobs, the Python worker
# drains them (a job type it has no handler for is failed and dead-lettered) and does not sleep through a
# notification that arrives during a claim, the psql producer and worker
# do the same, and the queue's totals must say exactly that; the Python workflow's join parks until its
# event is signalled, then reads both results. Debian's python3-psycopg, with the system's
# python3. As root it re-executes itself as the postgres user (see scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages python3-psycopg
reexec_unprivileged examples_tests.sh "$@"

STAGE_DIR=${STAGE_DIR:-$PWD/build/stage}
STAGE_BIN=$STAGE_DIR/runtime$(pg_bindir)
export STAGE_DIR STAGE_BIN
bash scripts/stage.sh >/dev/null
python=/usr/bin/python3   # Debian's, which has python3-psycopg (another python3 on PATH may not)

cluster=$PWD/build/examples-tests
worker=
trap 'if [ -n "$worker" ]; then kill "$worker" 2>/dev/null || true; fi; stop_cluster "$cluster"' EXIT
start_cluster "$cluster" "shared_preload_libraries = 'pgjq'" "log_min_messages = warning"
psql=("$STAGE_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$PGJQ_CONNINFO")
"${psql[@]}" -c "CREATE EXTENSION pgjq" -c "SELECT pgjq.create_queue('examples', max_attempts => 1)" >/dev/null
fail() { echo "examples test failed: $*" >&2; exit 1; }

log "Python: producer.py enqueues 20 orders, worker.py drains them"
"$python" examples/python/producer.py "$PGJQ_CONNINFO" 20 >"$cluster/producer.out" || fail "producer.py"
timeout 120 "$python" examples/python/worker.py "$PGJQ_CONNINFO" --exit-when-idle >"$cluster/worker.out" \
  || fail "worker.py"
got=$("${psql[@]}" -c "SELECT format('%s %s %s %s', (SELECT count(*) FROM example_orders), completed, failed,
                         unfinished) FROM pgjq.queue_metrics WHERE queue_name = 'examples'")
[ "$got" = "20 18 2 0" ] || fail "after the Python worker: orders, completed, failed, unfinished = $got, not 20 18 2 0"
# Each job's trace context reached its worker: the trace the producer printed for it is the one the worker
# printed.
produced=$(sed -n 's/^order [0-9]*: job \([0-9]*\) ([a-z]*) trace \([0-9a-f]\{32\}\)$/\1 \2/p' "$cluster/producer.out" | sort)
consumed=$(sed -n 's/^job \([0-9]*\) .* (trace \([0-9a-f]\{32\}\))$/\1 \2/p' "$cluster/worker.out" | sort)
[ "$(wc -l <<<"$produced")" = 20 ] || fail "the producer did not print 20 traces: $(cat "$cluster/producer.out")"
[ "$produced" = "$consumed" ] || fail "the worker did not see each job's trace: produced
$produced
consumed
$consumed"
grep -q "no handler for job type 'refund'" <("${psql[@]}" -c "SELECT string_agg(last_error, ' ') FROM pgjq.jobs WHERE status = 'failed'") \
  || fail "the failed jobs do not say why"

log "Python: a worker waiting on LISTEN is woken by an enqueue and stops on SIGTERM"
"$python" examples/python/worker.py "$PGJQ_CONNINFO" >"$cluster/listening.out" 2>&1 &
worker=$!
sleep 1
"$python" examples/python/producer.py "$PGJQ_CONNINFO" 1 >/dev/null   # order 1 exists: a second job for it
for _ in $(seq 300); do grep -q completed "$cluster/listening.out" && break; sleep 0.1; done   # 30 s: a busy machine
grep -q completed "$cluster/listening.out" || fail "the listening worker did not take the new job"
kill -TERM "$worker"
for _ in $(seq 100); do kill -0 "$worker" 2>/dev/null || break; sleep 0.1; done
kill -0 "$worker" 2>/dev/null && fail "the worker did not stop on SIGTERM"
wait "$worker" || fail "the worker exited with an error on SIGTERM"

log "Python: the worker's wait does not sleep through a notification that came during a claim"
"$python" tests/python/notified_during_claim.py examples/python "$PGJQ_CONNINFO" \
  || fail "worker.py's wait slept through a notification that came during a claim"

log "psql: producer.sql enqueues 3 orders, worker.sql drains them"
for order in 41 42 43; do "${psql[@]}" -v order=$order -f examples/psql/producer.sql >/dev/null 2>&1; done
turns=0
while [ -n "$("${psql[@]}" -f examples/psql/worker.sql)" ]; do
  turns=$((turns + 1)); [ $turns -lt 10 ] || fail "worker.sql never drained the queue"
done
got=$("${psql[@]}" -c "SELECT format('%s %s %s', completed, failed, unfinished) FROM pgjq.queue_metrics
                       WHERE queue_name = 'examples'")
[ "$got" = "22 2 0" ] || fail "after the psql worker: completed, failed, unfinished = $got, not 22 2 0"
log "Python: workflow.py runs a fan-out and a join that waits for an event"
wf=("$python" examples/python/workflow.py "$PGJQ_CONNINFO")
id=$("${wf[@]}" start 7) || fail "workflow.py start"
[ "$("${wf[@]}" start 7)" = "$id" ] || fail "a second start of order 7 did not return workflow $id"
"${wf[@]}" work >"$cluster/workflow-1.out" || fail "workflow.py work (before the event)"
grep -q "step ship (job [0-9]*) parked" "$cluster/workflow-1.out" || fail "the join did not park: $(cat "$cluster/workflow-1.out")"
got=$("${psql[@]}" -c "SELECT format('%s %s', w.status, s.waiting_for) FROM pgjq.workflows w,
                         pgjq.workflow_steps(w.id) s WHERE w.id = $id AND s.step_name = 'ship'")
[ "$got" = "waiting event paid:7" ] || fail "before the event: workflow status, ship's wait = $got, not waiting event paid:7"
[ "$("${wf[@]}" signal 7)" = "woken: 1" ] || fail "the signal did not wake the join"
"${wf[@]}" work >"$cluster/workflow-2.out" || fail "workflow.py work (after the event)"
got=$("${psql[@]}" -c "SELECT format('%s %s %s', w.status, w.steps_finished, (s.result = '{\"total\": 30, \"reserved\": 3,
                         \"paid_by\": \"card\"}')::text) FROM pgjq.workflows w, pgjq.workflow_steps(w.id) s
                         WHERE w.id = $id AND s.step_name = 'ship'")
[ "$got" = "completed 3 true" ] || fail "after the event: status, steps finished, ship's result = $got, not completed 3 true
$(cat "$cluster/workflow-2.out")"
"${wf[@]}" show "$id" | grep -q "ship after price, stock: completed" || fail "workflow.py show: $("${wf[@]}" show "$id")"
echo "examples: 5 passed, 0 failed"
