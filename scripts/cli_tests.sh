#!/usr/bin/env bash
# Runs the `pgjq` command line (build/pgjq) against a throwaway cluster and checks what it prints and the exit
# codes scripts branch on: status, jobs with filters and paging, show, retry and cancel of one job and by
# queue, queue create/alter/pause/resume/drop, schedules, maintenance, top, metrics (printed, and served over HTTP, checked by
# promtool), --json everywhere (parsed by python3), --help, bad usage, unknown ids, and a role refused.
# As root it re-executes itself as the postgres user (see scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages prometheus
reexec_unprivileged cli_tests.sh "$@"
ensure_packages

stage_with_cli

cluster=$PWD/build/cli-tests
server=''
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; stop_cluster "$cluster"' EXIT
start_cluster "$cluster" "shared_preload_libraries = 'pgjq'" "log_min_messages = warning"
export PGHOST PGPORT PGUSER PGDATABASE
PGHOST=$(cat "$cluster/socket_dir") PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
psql=("$STAGE_BIN/psql" -X -q -At -v ON_ERROR_STOP=1)
pgjq=build/pgjq
passed=0
fail() { echo "cli test failed: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); }
# expect CODE CMD...: runs the command, which must exit with CODE; its stdout is in $out, stderr in $err.
expect() {
  local want=$1; shift
  local code=0
  out=$("$@" 2>"$cluster/stderr") || code=$?
  err=$(cat "$cluster/stderr")
  [ "$code" -eq "$want" ] || fail "'$*' exited with $code, not $want: $err"
}
json() { /usr/bin/python3 -c "import json, sys; data = json.load(sys.stdin); print($1)"; }

"${psql[@]}" -c "CREATE EXTENSION pgjq" -c "CREATE ROLE nobody LOGIN" >/dev/null

expect 0 "$pgjq" queue create mail --max-attempts 1 --lease 30s; ok
expect 0 "$pgjq" queue alter mail --max-running 5 --job-timeout 2min
[ "$("${psql[@]}" -c "SELECT max_running, job_timeout FROM pgjq.queues WHERE queue_name = 'mail'")" = "5|00:02:00" ] \
  || fail "queue alter did not change the settings"; ok
expect 2 "$pgjq" queue create mail --lease soon; ok                     # a duration it cannot read
expect 1 "$pgjq" queue create mail; ok                                  # exists already: the server says so
"${psql[@]}" -c "SELECT pgjq.enqueue_batch('email', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, 12) g), 'mail')" \
  -c "SELECT pgjq.fail(id, 'w', 'smtp timeout') FROM pgjq.claim_job_batch('w', NULL, 3, 'mail')" \
  -c "SELECT pgjq.complete(id, 'w', '{\"sent\": true}') FROM pgjq.claim_job_batch('w', NULL, 2, 'mail')" >/dev/null

expect 0 "$pgjq" status
grep -Eq '^mail +7 +0 +0 +0 +0 +2 +3 +0 ' <<<"$out" || fail "status: $out"; ok
expect 0 "$pgjq" --json status
[ "$(json "[q['failed'] for q in data if q['queue'] == 'mail'][0]" <<<"$out")" = 3 ] || fail "status --json: $out"; ok

expect 0 "$pgjq" jobs --queue mail --state failed
[ "$(grep -c 'smtp timeout' <<<"$out")" = 3 ] || fail "jobs --state failed: $out"; ok
expect 0 "$pgjq" --json jobs --queue mail --limit 5
[ "$(json "len(data)" <<<"$out")" = 5 ] || fail "jobs --limit 5 listed $(json "len(data)" <<<"$out")"; ok
newest=$(json "data[0]['id']" <<<"$out")
expect 0 "$pgjq" --json jobs --queue mail --limit 5 --offset 5
[ "$(json "data[0]['id']" <<<"$out")" -lt "$newest" ] || fail "jobs --offset does not page"; ok
expect 0 "$pgjq" --json jobs --type nothing-like-this
[ "$(json "len(data)" <<<"$out")" = 0 ] || fail "jobs --type filters nothing"; ok
expect 0 "$pgjq" --json jobs --older-than 1h
[ "$(json "len(data)" <<<"$out")" = 0 ] || fail "jobs --older-than 1h lists new jobs"; ok
expect 2 "$pgjq" jobs --state sleeping; ok
expect 2 "$pgjq" jobs --limit 0; ok

done_job=$("${psql[@]}" -c "SELECT id FROM pgjq.jobs WHERE status = 'completed' LIMIT 1")
expect 0 "$pgjq" show "$done_job"
grep -q '"sent": true' <<<"$out" && grep -q '^job '"$done_job"'  completed' <<<"$out" || fail "show: $out"; ok
expect 0 "$pgjq" --json show "$done_job"
[ "$(json "data['result']['sent']" <<<"$out")" = True ] || fail "show --json: $out"; ok
expect 3 "$pgjq" show 999999; ok

failed_job=$("${psql[@]}" -c "SELECT id FROM pgjq.jobs WHERE status = 'failed' ORDER BY id LIMIT 1")
expect 0 "$pgjq" retry "$failed_job"
[ "$("${psql[@]}" -c "SELECT status FROM pgjq.jobs WHERE id = $failed_job")" = pending ] || fail "retry of one job"; ok
expect 3 "$pgjq" retry 999999; ok
expect 2 "$pgjq" retry --queue mail </dev/null; ok                      # no terminal to confirm: refused
expect 0 "$pgjq" --json retry --queue mail --yes
[ "$(json "data['jobs']" <<<"$out")" = 2 ] || fail "retry --queue: $out"; ok
expect 0 "$pgjq" cancel --queue mail --type email --yes
grep -q 'cancelled 10 jobs of queue mail' <<<"$out" || fail "cancel --queue: $out"; ok
expect 1 "$pgjq" cancel "$done_job"; ok                                 # already finished
expect 2 "$pgjq" cancel 5 --queue mail; ok                              # one job or a queue, not both

expect 0 "$pgjq" queue pause mail
[ "$("${psql[@]}" -c "SELECT paused FROM pgjq.queues WHERE queue_name = 'mail'")" = t ] || fail "pause"; ok
expect 0 "$pgjq" queue resume mail; ok
expect 3 "$pgjq" queue pause nowhere; ok

"${psql[@]}" -c "SELECT pgjq.schedule('nightly', '0 3 * * *', 'report', queue_name => 'mail', time_zone => 'Europe/Paris')" >/dev/null
expect 0 "$pgjq" schedules
grep -Eq '^nightly +0 3 \* \* \* +Europe/Paris +mail +report ' <<<"$out" || fail "schedules: $out"; ok
expect 0 "$pgjq" --json schedules
[ "$(json "data[0]['time_zone']" <<<"$out")" = Europe/Paris ] || fail "schedules --json"; ok

"${psql[@]}" -c "SELECT pgjq.start_worker()" >/dev/null
for _ in $(seq 50); do
  [ "$("${psql[@]}" -c "SELECT count(*) FROM pgjq.maintenance_duties() WHERE runs > 0")" -gt 0 ] && break; sleep 0.1
done
expect 0 "$pgjq" maintenance
grep -Eq '^postgres +running +lease_recovery +[1-9]' <<<"$out" || fail "maintenance: $out"; ok
expect 0 "$pgjq" --json maintenance
[ "$(json "sorted(set(d['duty'] for d in data if d['database'] == 'postgres'))[0]" <<<"$out")" = count_fold ] \
  || fail "maintenance --json: $out"; ok
expect 4 env PGUSER=nobody "$pgjq" maintenance; ok

# top: two refreshes; between them a job completes, which the second one shows as a rate
"${psql[@]}" -c "SELECT pgjq.enqueue('email', '{}', 'mail')" >/dev/null
( sleep 0.5; "${psql[@]}" -c "SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 1, 'mail')" >/dev/null ) &
expect 0 "$pgjq" --json top --interval 1.5 --iterations 2
wait
[ "$(wc -l <<<"$out")" = 2 ] || fail "top --iterations 2 printed: $out"
[ "$(tail -n 1 <<<"$out" | json "[q for q in data['queues'] if q['queue'] == 'mail'][0]['completed_per_second'] > 0")" = True ] \
  || fail "top shows no completion rate: $out"; ok
expect 0 "$pgjq" top --interval 0.2 --iterations 1
grep -Eq '^mail +0 +0 +0 +- +- ' <<<"$out" || fail "top: $out"; ok
expect 2 "$pgjq" top --interval 0; ok

expect 0 "$pgjq" metrics
/usr/bin/promtool check metrics <<<"$out" >/dev/null 2>&1 || fail "promtool refuses the printed metrics"
grep -q '^pgjq_jobs_finished_total{queue="mail",status="cancelled"} 10$' <<<"$out" || fail "metrics: $out"; ok
"$pgjq" metrics --listen 127.0.0.1:0 2>"$cluster/serving" &
server=$!
for _ in $(seq 50); do grep -q 'serving metrics at' "$cluster/serving" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$cluster/serving") || fail "metrics --listen did not start: $(cat "$cluster/serving")"
scraped=$(/usr/bin/python3 -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode(), end='')" "$url")
/usr/bin/promtool check metrics <<<"$scraped" >/dev/null 2>&1 || fail "promtool refuses the served metrics"
grep -q '^pgjq_jobs_unfinished{queue="mail"}' <<<"$scraped" || fail "served metrics: $scraped"; ok
kill -TERM "$server"; wait "$server" || fail "metrics --listen did not stop cleanly on SIGTERM"; server=''; ok
expect 2 "$pgjq" metrics --listen nowhere; ok

expect 4 env PGUSER=nobody "$pgjq" queue create spam; ok                # a role without a capability
expect 0 "$pgjq" queue drop mail --force; ok
expect 0 "$pgjq" --help
grep -q 'Exit codes' <<<"$out" || fail "--help"; ok
expect 0 "$pgjq" jobs --help; ok
expect 2 "$pgjq"; ok                                                    # a command is required
expect 2 "$pgjq" frobnicate; ok
expect 1 "$pgjq" -d "host=/nonexistent" status; ok                      # cannot connect
echo "pgjq command line: $passed passed, 0 failed"
