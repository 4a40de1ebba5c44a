#!/usr/bin/env bash
# Fuzzing, against a database with pgjq installed, queues and jobs in every state and the maintenance
# worker running, as a role that holds every pgjq capability (so that the functions' own checks pass and
# their arguments are reached):
#  1. sqlsmith sends random queries over everything the role can see;
#  2. tests/fuzz/random_calls.sql calls pgjq's functions with random arguments from per-type pools of
#     interesting values (sqlsmith rarely builds valid calls of them).
# Afterwards the server must still be up, its log must show no crash, and no internal error (XX000) may
# come from pgjq's code.
#   bash scripts/fuzz.sh                             a short run (scripts/test.sh runs it)
#   bash scripts/fuzz.sh --queries 200000 --calls 100000   a long run (about an hour here); --seed N repeats one
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages sqlsmith
reexec_unprivileged fuzz.sh "$@"

queries=5000
calls=5000
seed=$RANDOM
while [ $# -gt 0 ]; do
  case $1 in
    --queries) queries=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) die "unknown argument $1 (use --queries N, --calls N, --seed N)" ;;
  esac
done

export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)
cluster=$PWD/build/fuzz
trap 'stop_cluster "$cluster"' EXIT
# %e: each log line carries its SQLSTATE, so internal errors can be told from the rest; verbose errors
# carry the source location, so PostgreSQL's own (a .c file) can be told from pgjq's (a .cpp file).
start_cluster "$cluster" "shared_preload_libraries = 'pgjq'" "pgjq.naptime = '200ms'" "pgjq.launcher_naptime = '1s'" \
  "log_line_prefix = '%m [%p] %e '" "log_min_messages = warning" "log_min_error_statement = error" \
  "log_error_verbosity = verbose" "track_functions = 'all'"
psql=("$STAGE_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$PGJQ_CONNINFO")
"${psql[@]}" <<'SQL'
CREATE EXTENSION pgjq;
CREATE ROLE fuzzer LOGIN;
SELECT pgjq.grant_producer('fuzzer'), pgjq.grant_worker('fuzzer'), pgjq.grant_admin('fuzzer'),
       pgjq.grant_observer('fuzzer');
SELECT pgjq.create_queue('fifo', fifo => true), pgjq.create_queue('bounded', max_pending => 50),
       pgjq.create_queue('short', lease => '1 second');
SELECT pgjq.alter_queue('bounded', keep_completed => false);
SELECT pgjq.enqueue_batch('t', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, 200) g));
SELECT pgjq.enqueue('later', '{}', run_at => now() + interval '1 hour', unique_key => 'k');
SELECT pgjq.enqueue('t', '{}', 'fifo'), pgjq.enqueue('t', '{}', 'bounded'), pgjq.enqueue('t', '{}', 'short');
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 20);
SELECT pgjq.complete(id, 'w', '{"ok": true}') FROM pgjq.claim_job_batch('w', NULL, 5);
SELECT pgjq.fail(id, 'w', 'broken') FROM pgjq.claim_job_batch('w', NULL, 5);
SELECT pgjq.cancel(id) FROM pgjq.claim_job_batch('w', NULL, 5);
SELECT count(*) FROM pgjq.claim_job_batch('w', NULL, 1, 'short');
SQL

log "sqlsmith: $queries queries, seed $seed"
target="$PGJQ_CONNINFO user=fuzzer"
"$(command -v sqlsmith)" --target="$target" --max-queries="$queries" --seed="$seed" --exclude-catalog \
  >"$cluster/sqlsmith.out" 2>&1 || true
log "pgjq's functions called (successful calls):"
"${psql[@]}" -At -c "SELECT funcname || ' ' || calls FROM pg_stat_user_functions WHERE schemaname = 'pgjq' ORDER BY calls DESC" | paste -sd ' ' || true

fail=0
log "random calls of pgjq's functions: $calls, seed $seed"
if ! PGOPTIONS="-c fuzz.iterations=$calls" "$STAGE_BIN/psql" -X -q -v ON_ERROR_STOP=1 -v seed="$seed" \
     -d "$target" -f tests/fuzz/random_calls.sql 2>&1 | tail -n 20; then
  fail=1   # pipefail: psql's status, not tail's
fi
if ! "$STAGE_BIN/pg_ctl" -D "$cluster/data" status >/dev/null; then
  echo "the server is down after the fuzzing run (seed $seed)" >&2
  fail=1
fi
crashes=$(grep -E "terminated by signal|was terminated by exception|PANIC:|TRAP:|exited with exit code [^01]" "$cluster/server.log" || true)
if [ -n "$crashes" ]; then
  echo "crashes in the server log (seed $seed):" >&2
  echo "$crashes" >&2
  fail=1
fi
# An internal error raised in pgjq's code, or naming pgjq in its message. Not one that merely has pgjq in
# the statement: sqlsmith's queries over pgjq's tables reach PostgreSQL's own internal errors too (such as
# "invalid INTERVAL typmod" from a direct call of interval(interval, integer)).
internal_error=' XX000 (ERROR|FATAL|PANIC): .*pgjq| XX000 LOCATION: .*\.cpp:[0-9]+'
internal=$(grep -E "$internal_error" "$cluster/server.log" || true)
if [ -n "$internal" ]; then
  echo "internal errors from pgjq's code (seed $seed):" >&2
  grep -B1 -A2 -E "$internal_error" "$cluster/server.log" >&2 || true
  fail=1
fi
[ $fail -eq 0 ] && echo "fuzzing: $queries queries and $calls calls (seed $seed): no crash, no internal error from pgjq"
exit $fail
