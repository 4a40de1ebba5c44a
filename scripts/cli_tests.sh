#!/usr/bin/env bash
# Runs the `pgjq` command line (build/pgjq) against a throwaway cluster and checks what it prints and the exit
# codes scripts branch on: status, jobs with filters and paging, show, retry and cancel of one job and by
# queue, workflow list/show/cancel/retry (a fan-out and a join, a step failed, its tree and confirmations),
# queue create/alter (every setting)/pause/resume/drop, schedules and schedule pause/resume/remove, enqueue
# (payload as an argument or on stdin), maintenance, top, metrics (printed, and served over HTTP, checked by
# promtool, only with the access token, beside slow clients, and not on a port in use), --json everywhere
# (parsed by python3), --help, bad usage, unknown ids, a role refused, global options after the command,
# control characters escaped in every table, a database without pgjq named, and the warning of a database no
# maintenance worker serves.
# As root it re-executes itself as the postgres user (see scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages prometheus zsh groff-base
reexec_unprivileged cli_tests.sh "$@"
ensure_packages

stage_with_cli

cluster=$PWD/build/cli-tests
server=''
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; stop_cluster "$cluster"; stop_cluster "$cluster-unserved"' EXIT
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

"${psql[@]}" -c "CREATE EXTENSION pgjq" -c "CREATE ROLE nobody LOGIN" -c "CREATE ROLE watcher LOGIN" \
  -c "SELECT pgjq.grant_observer('watcher')" >/dev/null

expect 0 "$pgjq" queue create mail --max-attempts 1 --lease 30s; ok
expect 0 "$pgjq" queue alter mail --max-running 5 --job-timeout 2min
[ "$("${psql[@]}" -c "SELECT max_running, job_timeout FROM pgjq.queues WHERE queue_name = 'mail'")" = "5|00:02:00" ] \
  || fail "queue alter did not change the settings"; ok
expect 2 "$pgjq" queue create mail --lease soon; ok                     # a duration it cannot read
expect 2 "$pgjq" queue alter mail --retention -1d; ok                   # or out of range
expect 2 "$pgjq" queue alter mail --keep-completed maybe; ok
expect 0 "$pgjq" queue create tuned --retry-base 2s --retry-cap 10min --retention 2d --keep-completed false \
  --group-concurrency 3 --rate-limit 50 --rate-interval 10s
[ "$("${psql[@]}" -c "SELECT retry_base, retry_cap, retention, keep_completed, group_concurrency, rate_limit, rate_interval FROM pgjq.queues WHERE queue_name = 'tuned'")" \
  = "00:00:02|00:10:00|48:00:00|f|3|50|00:00:10" ] || fail "queue create with every setting: $("${psql[@]}" -c "SELECT * FROM pgjq.queues WHERE queue_name = 'tuned'")"; ok
expect 0 "$pgjq" queue show tuned
grep -q '^rate limit         50 per 10.0s$' <<<"$out" && grep -q '^keep completed     no$' <<<"$out" \
  && grep -q '^retry base, cap    2.0s, 10m0s$' <<<"$out" && grep -q '^max running        no cap$' <<<"$out" \
  || fail "queue show: $out"; ok
expect 0 "$pgjq" --json queue show tuned
[ "$(json "(data['retention_s'], data['group_concurrency'], data['rate_limit'], data['job_timeout_s'])" <<<"$out")" \
  = "(172800.0, 3, 50, None)" ] || fail "queue show --json: $out"; ok
expect 3 "$pgjq" queue show nowhere; ok
expect 0 "$pgjq" queue alter tuned --rate-limit 0 --keep-completed true
[ "$("${psql[@]}" -c "SELECT rate_limit IS NULL, keep_completed FROM pgjq.queues WHERE queue_name = 'tuned'")" = "t|t" ] \
  || fail "queue alter --rate-limit 0 --keep-completed true"; ok
expect 2 "$pgjq" queue alter tuned --rate-interval 2d; ok               # the server's bound, named
grep -q 'rate_interval' <<<"$err" || fail "queue alter --rate-interval 2d: $err"; ok
expect 0 "$pgjq" queue drop tuned
expect 1 "$pgjq" queue create mail; ok                                  # exists already: the server says so
"${psql[@]}" -c "SELECT pgjq.enqueue_batch('email', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, 12) g), 'mail')" \
  -c "SELECT pgjq.fail(id, 'w', 'smtp timeout') FROM pgjq.claim_job_batch('w', NULL, 3, 'mail')" \
  -c "SELECT pgjq.complete(id, 'w', '{\"sent\": true}') FROM pgjq.claim_job_batch('w', NULL, 2, 'mail')" >/dev/null

expect 0 "$pgjq" status
grep -Eq '^mail +7 +0 +0 +0 +0 +2 +3 \(3\) +0 ' <<<"$out" || fail "status: $out"; ok
[ -z "$err" ] || fail "status warned on a served database: $err"; ok
expect 0 "$pgjq" --json status
[ "$(json "[(q['failed'], q['failed_now']) for q in data if q['queue'] == 'mail'][0]" <<<"$out")" = "(3, 3)" ] \
  || fail "status --json: $out"; ok
# Global options after the command, as psql users type them.
expect 0 "$pgjq" status --json -d "dbname=postgres"
[ "$(json "[q['failed'] for q in data if q['queue'] == 'mail'][0]" <<<"$out")" = 3 ] || fail "status --json -d: $out"; ok
expect 0 "$pgjq" queue pause mail --json
[ "$(json "data['done']" <<<"$out")" = "queue mail paused" ] || fail "queue pause --json: $out"
expect 0 "$pgjq" queue resume mail; ok

# What producers and workers write reaches the operator's terminal escaped: no ESC, BEL or C1 control.
"${psql[@]}" >/dev/null <<'SQL'
SELECT pgjq.create_queue('hostile', max_attempts => 1);
SELECT pgjq.enqueue(E'evil\x1b]0;owned\x07type', '{"k": "\u001b[2J"}', 'hostile', unique_key => E'key\x1b[31m');
SELECT pgjq.fail(id, E'worker\x1b[1A', E'boom\x1b[2K\r\u009b31m\nline')
  FROM pgjq.claim_job_batch(E'worker\x1b[1A', NULL, 1, 'hostile');
SQL
hostile=$("${psql[@]}" -c "SELECT id FROM pgjq.jobs WHERE queue_name = 'hostile'")
no_controls() { LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]' <<<"$1" && fail "$2 printed a control character: $(od -c <<<"$1" | head -20)"; return 0; }
expect 0 "$pgjq" jobs --queue hostile
no_controls "$out" "jobs"; grep -qF 'evil\x1b]0;owned\x07type' <<<"$out" && grep -qF 'boom\x1b[2K\r\u009b31m\nline' <<<"$out" \
  || fail "jobs does not show the escaped type and error: $out"; ok
expect 0 "$pgjq" show "$hostile"
no_controls "$out" "show"; grep -qF 'unique key  key\x1b[31m' <<<"$out" && grep -qF 'worker\x1b[1A' <<<"$out" \
  || fail "show does not show the escaped key and worker: $out"; ok
grep -qF '    boom\x1b[2K\r\u009b31m\nline' <<<"$out" && grep -Eq '^  #1 attempt 1  .*  worker\\x1b\[1A  ran ' <<<"$out" \
  || fail "show does not list the failed attempt, escaped: $out"; ok
expect 0 "$pgjq" status
no_controls "$out" "status"; ok
expect 0 "$pgjq" queue drop hostile --force

expect 0 "$pgjq" jobs --queue mail --state failed
[ "$(grep -c 'smtp timeout' <<<"$out")" = 3 ] || fail "jobs --state failed: $out"; ok
expect 0 "$pgjq" --json jobs --queue mail --limit 5
[ "$(json "len(data)" <<<"$out")" = 5 ] || fail "jobs --limit 5 listed $(json "len(data)" <<<"$out")"; ok
newest=$(json "data[0]['id']" <<<"$out")
expect 0 "$pgjq" --json jobs --queue mail --limit 5 --offset 5
[ "$(json "data[0]['id']" <<<"$out")" -lt "$newest" ] || fail "jobs --offset does not page"; ok
expect 0 "$pgjq" --json jobs --queue mail --limit 5 --before "$newest"
[ "$(json "[j['id'] for j in data]" <<<"$out")" = "$("${psql[@]}" -c "SELECT array_agg(id ORDER BY id DESC) FROM (SELECT id FROM pgjq.jobs WHERE queue_name = 'mail' AND id < $newest ORDER BY id DESC LIMIT 5) s" | tr -d '{}' | sed 's/^/[/; s/$/]/; s/,/, /g')" ] \
  || fail "jobs --before does not page by id: $out"; ok
expect 2 "$pgjq" jobs --before 5 --offset 5; ok
expect 0 "$pgjq" --json jobs --payload '{"n": 4}'
[ "$(json "[(j['queue'], j['payload']) for j in data]" <<<"$out")" = "[('mail', {'n': 4})]" ] || fail "jobs --payload: $out"; ok
expect 2 "$pgjq" jobs --payload '{"n":'; ok
expect 3 "$pgjq" jobs --queue nowhere
grep -q 'queue nowhere does not exist' <<<"$err" || fail "jobs --queue of no queue: $err"; ok
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
failed_mail=$("${psql[@]}" -c "SELECT id FROM pgjq.jobs WHERE queue_name = 'mail' AND status = 'failed' LIMIT 1")
expect 0 "$pgjq" --json show "$failed_mail"
[ "$(json "[(e['failure'], e['attempt'], e['worker_id'], e['error']) for e in data['errors']]" <<<"$out")" \
  = "[(1, 1, 'w', 'smtp timeout')]" ] || fail "show --json does not list the failed attempt: $out"; ok
expect 3 "$pgjq" show 999999; ok

failed_job=$("${psql[@]}" -c "SELECT id FROM pgjq.jobs WHERE status = 'failed' ORDER BY id LIMIT 1")
expect 0 "$pgjq" retry "$failed_job"
[ "$("${psql[@]}" -c "SELECT status FROM pgjq.jobs WHERE id = $failed_job")" = pending ] || fail "retry of one job"; ok
expect 3 "$pgjq" retry 999999; ok
expect 2 "$pgjq" retry --queue mail </dev/null; ok                      # no terminal to confirm: refused
# The question says what and how many; no answer but y does it.
out=$(echo n | script -qec "$pgjq retry --queue mail" /dev/null) && code=0 || code=$?
grep -qF 'Retry 2 failed jobs of queue mail? [y/N]' <<<"$out" && [ "$code" = 2 ] || fail "retry --queue's question ($code): $out"; ok
out=$(echo y | script -qec "$pgjq retry --queue mail --type sms" /dev/null) && code=0 || code=$?
grep -qF 'no failed jobs of type sms of queue mail' <<<"$out" && [ "$code" = 0 ] || fail "retry --queue of none ($code): $out"; ok
expect 3 "$pgjq" retry --queue nowhere --yes; ok
expect 0 "$pgjq" --json retry --queue mail --yes
[ "$(json "data['jobs']" <<<"$out")" = 2 ] || fail "retry --queue: $out"; ok
expect 0 "$pgjq" cancel --queue mail --type email --yes
grep -q 'cancelled 10 jobs of queue mail' <<<"$out" || fail "cancel --queue: $out"; ok
# delete: finished jobs only, by state, type and age, after a question with the count
out=$(echo n | script -qec "$pgjq delete --queue mail --state cancelled" /dev/null) && code=0 || code=$?
grep -qF 'Delete 10 cancelled jobs of queue mail? [y/N]' <<<"$out" && [ "$code" = 2 ] || fail "delete's question ($code): $out"; ok
expect 0 "$pgjq" delete --queue mail --state cancelled --older-than 1h --yes
[ "$out" = "no cancelled jobs of queue mail" ] || fail "delete --older-than 1h deleted new jobs: $out"; ok
out=$(echo y | script -qec "$pgjq delete --queue mail --state cancelled --type email" /dev/null) && code=0 || code=$?
grep -qF 'deleted 10 jobs of queue mail' <<<"$out" && [ "$code" = 0 ] || fail "delete confirmed ($code): $out"; ok
[ "$("${psql[@]}" -c "SELECT count(*) FILTER (WHERE status = 'cancelled'), count(*) FROM pgjq.jobs WHERE queue_name = 'mail'")" = "0|2" ] \
  || fail "delete left: $("${psql[@]}" -c "SELECT status, count(*) FROM pgjq.jobs WHERE queue_name = 'mail' GROUP BY 1")"; ok
expect 2 "$pgjq" delete --queue mail --state pending --yes; ok           # not a final state
expect 2 "$pgjq" delete --yes; ok                                       # which queue?
expect 3 "$pgjq" delete --queue nowhere --yes; ok
expect 3 env PGUSER=nobody "$pgjq" delete --queue mail --yes; ok          # a queue this role may not see
expect 4 env PGUSER=watcher "$pgjq" delete --queue mail --state completed --yes; ok  # may see, not delete
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
schedule_paused() { "${psql[@]}" -c "SELECT paused FROM pgjq.schedules WHERE schedule_name = '$1'"; }
expect 0 "$pgjq" schedule pause nightly
[ "$out" = "schedule nightly paused" ] && [ "$(schedule_paused nightly)" = t ] || fail "schedule pause: $out"; ok
expect 0 "$pgjq" --json schedule resume nightly
[ "$(json "data['done']" <<<"$out")" = "schedule nightly resumed" ] && [ "$(schedule_paused nightly)" = f ] \
  || fail "schedule resume: $out"; ok
expect 3 "$pgjq" schedule pause nowhere
grep -q 'schedule nowhere does not exist' <<<"$err" || fail "schedule pause of no schedule: $err"; ok
"${psql[@]}" -c "SELECT pgjq.schedule('hourly', '0 * * * *', 'report', queue_name => 'mail')" >/dev/null
expect 0 "$pgjq" schedule remove hourly
[ "$out" = "schedule hourly removed" ] && [ "$("${psql[@]}" -c "SELECT count(*) FROM pgjq.schedules WHERE schedule_name = 'hourly'")" = 0 ] \
  || fail "schedule remove: $out"; ok
expect 3 "$pgjq" schedule remove hourly; ok

# enqueue: the payload as an argument or on stdin, with the queue, priority, delay, key and attempts
expect 0 "$pgjq" enqueue report '{"day": "2026-12-01"}' --queue mail --priority 7 --max-attempts 2
queued=$out
[ "$("${psql[@]}" -c "SELECT job_type, payload->>'day', queue_name, priority, max_attempts, status FROM pgjq.jobs WHERE id = $queued")" \
  = "report|2026-12-01|mail|7|2|pending" ] || fail "enqueue with an argument: $out"; ok
expect 0 "$pgjq" --json enqueue report - --queue mail --delay 1h --unique-key day-2 <<<'{"day": 2}'
queued=$(json "data['id']" <<<"$out")
[ "$("${psql[@]}" -c "SELECT payload->>'day', unique_key, run_at > now() + interval '50 minutes' FROM pgjq.jobs WHERE id = $queued")" \
  = "2|day-2|t" ] || fail "enqueue from stdin with a delay and a key: $out"; ok
expect 0 "$pgjq" enqueue report - --queue mail --unique-key day-2 <<<'{"day": 2}'
[ "$out" = "$queued" ] || fail "enqueue with a held key returned $out, not the job holding it ($queued)"; ok
# jobs --state takes what status counts: pending (due now) and scheduled (due later) apart
expect 0 "$pgjq" --json jobs --queue mail --type report --state scheduled
[ "$(json "[j['id'] for j in data]" <<<"$out")" = "[$queued]" ] || fail "jobs --state scheduled: $out"; ok
expect 0 "$pgjq" --json jobs --queue mail --type report --state pending
[ "$(json "$queued not in [j['id'] for j in data] and len(data) == 1" <<<"$out")" = True ] \
  || fail "jobs --state pending lists a job due later, or not the one due now: $out"; ok
# --header: handed to the worker (the claim returns it), shown by show; refused when malformed
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
expect 0 "$pgjq" enqueue traced '{}' --queue mail --header "traceparent=$tp" --header 'x-note=a=b'
traced=$out
[ "$("${psql[@]}" -c "SELECT headers FROM pgjq.claim_job_batch('cli', ARRAY['traced'], 1, 'mail')")" \
  = "{\"x-note\": \"a=b\", \"traceparent\": \"$tp\"}" ] || fail "enqueue --header: the claim's headers"; ok
expect 0 "$pgjq" show "$traced"
grep -qx "header      traceparent: $tp" <<<"$out" && grep -qx 'header      x-note: a=b' <<<"$out" \
  || fail "show does not list the headers: $out"; ok
expect 0 "$pgjq" --json show "$traced"
[ "$(json "data['headers']['traceparent']" <<<"$out")" = "$tp" ] || fail "show --json headers: $out"; ok
"${psql[@]}" -c "SELECT pgjq.complete($traced, 'cli')" >/dev/null
expect 2 "$pgjq" enqueue traced '{}' --queue mail --header novalue; ok
expect 2 "$pgjq" enqueue traced '{}' --queue mail --header a=1 --header a=2; ok
expect 2 "$pgjq" enqueue traced '{}' --queue mail --header traceparent=00-bad
grep -q 'is not a W3C traceparent' <<<"$err" || fail "enqueue of a malformed traceparent: $err"; ok
[ "$("${psql[@]}" -c "SELECT count(*) FROM pgjq.jobs WHERE job_type = 'traced'")" = 1 ] \
  || fail "a refused enqueue wrote a job"; ok
expect 2 "$pgjq" enqueue report '[1, 2]' --queue mail
grep -q 'the payload must be a JSON object' <<<"$err" || fail "enqueue of an array: $err"; ok
expect 2 "$pgjq" enqueue report '{"day":' --queue mail; ok
expect 3 "$pgjq" enqueue report '{}' --queue nowhere; ok
expect 2 "$pgjq" enqueue report '{}' --delay nan; ok
expect 2 "$pgjq" enqueue report '{}' --delay 1e30; ok
"${psql[@]}" -c "DELETE FROM pgjq.live_jobs WHERE job_type = 'report'" \
  -c "UPDATE pgjq.queue_depth SET unfinished = 0 WHERE queue_name = 'mail' AND unfinished < 0" >/dev/null

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
# scrape URL [TOKEN]: prints the HTTP status, then the body.
scrape() {
  /usr/bin/python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
headers = {"Authorization": "Bearer " + sys.argv[2]} if len(sys.argv) > 2 else {}
try:
    response = urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers=headers), timeout=20)
except urllib.error.HTTPError as e:
    response = e
print(response.status)
print(response.read().decode(), end="")
PY
}
# serve_metrics LOG ARGS...: starts `pgjq metrics --listen ARGS`, sets $server and $url.
serve_metrics() {
  local log=$1; shift
  "$pgjq" metrics --listen "$@" 2>"$log" &
  server=$!
  for _ in $(seq 300); do grep -q 'serving metrics at' "$log" && break; sleep 0.1; done
  url=$(grep -o 'http://[^ ]*' "$log") || fail "metrics --listen did not start: $(cat "$log")"
}
# With no token given, one is made and printed, and a scrape without it is refused.
serve_metrics "$cluster/serving" 127.0.0.1:0
token=$(sed -n 's/.*needs the access token \([0-9a-f]*\) .*/\1/p' "$cluster/serving")
[ ${#token} = 32 ] || fail "metrics --listen made no token: $(cat "$cluster/serving")"; ok
[ "$(scrape "$url" | sed -n 1p)" = 401 ] || fail "metrics served without the token"; ok
[ "$(scrape "$url" "x$token" | sed -n 1p)" = 401 ] || fail "metrics served with a wrong token"; ok
scraped=$(scrape "$url" "$token")
[ "$(head -n 1 <<<"$scraped")" = 200 ] || fail "metrics refused the token: $scraped"
/usr/bin/promtool check metrics <<<"$(tail -n +2 <<<"$scraped")" >/dev/null 2>&1 || fail "promtool refuses the served metrics"
grep -q '^pgjq_jobs_unfinished{queue="mail"}' <<<"$scraped" || fail "served metrics: $scraped"; ok
port=$(grep -o ':[0-9]*/metrics' <<<"$url" | tr -dc 0-9)
code=0; "$pgjq" metrics --listen "127.0.0.1:$port" 2>"$cluster/err" || code=$?
[ "$code" = 1 ] && grep -qi 'address already in use' "$cluster/err" || fail "a second metrics server on port $port: $code $(cat "$cluster/err")"; ok
/usr/bin/python3 scripts/slow_clients.py "${url%/metrics}" 16 "$token" /metrics || fail "slow clients kept a scrape waiting (above)"; ok
kill -TERM "$server"; wait "$server" || fail "metrics --listen did not stop cleanly on SIGTERM"; server=''; ok
# With a token from a file (Prometheus: authorization: {credentials_file: ...}), beyond loopback too.
printf '%s\n' "metrics-token-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$cluster/token"
serve_metrics "$cluster/serving" 0.0.0.0:0 --token-file "$cluster/token"
! grep -q 'needs the access token' "$cluster/serving" || fail "a token from a file was printed"; ok
url=http://127.0.0.1:$(grep -o ':[0-9]*/metrics' <<<"$url" | tr -dc 0-9)/metrics
[ "$(scrape "$url" | sed -n 1p)" = 401 ] || fail "metrics served beyond loopback without the token"; ok
[ "$(scrape "$url" "$(cat "$cluster/token")" | sed -n 1p)" = 200 ] || fail "metrics refused the file's token"; ok
kill -TERM "$server"; wait "$server" || fail "metrics --listen did not stop cleanly on SIGTERM"; server=''
expect 2 "$pgjq" metrics --listen nowhere; ok

# Workflows: a fan-out (fetch -> parse-a, parse-b and a step with a hostile name) and a join after all three.
# parse-b fails for good, so the join is cancelled and the workflow fails; then retry and cancel.
"${psql[@]}" -c "SELECT pgjq.create_queue('flows')" >/dev/null
etl=$("${psql[@]}" <<'SQL'
SELECT pgjq.start_workflow('etl', '[
  {"name": "fetch", "job_type": "fetch", "queue": "flows"},
  {"name": "parse-a", "job_type": "parse-a", "queue": "flows", "after": ["fetch"]},
  {"name": "parse-b", "job_type": "parse-b", "queue": "flows", "after": ["fetch"], "max_attempts": 1},
  {"name": "evil\u001b]0;owned\u0007step", "job_type": "hostile", "queue": "flows", "after": ["fetch"]},
  {"name": "join", "job_type": "join", "queue": "flows",
   "after": ["parse-a", "parse-b", "evil\u001b]0;owned\u0007step"]}]', 'etl-key')
SQL
)
# step_status NAME: the status of the etl step of that name, as pgjq.workflow_steps says.
step_status() { "${psql[@]}" -c "SELECT status FROM pgjq.workflow_steps($etl) WHERE step_name = '$1'"; }
# run_step TYPE [ERROR]: claims the flows job of that type and completes it (or fails it with ERROR).
run_step() {
  local report="pgjq.complete(id, 'w')"
  [ $# -gt 1 ] && report="pgjq.fail(id, 'w', E'$2')"
  [ "$("${psql[@]}" -c "SELECT count($report) FROM pgjq.claim_job_batch('w', ARRAY['$1'], 1, 'flows')")" = 1 ] \
    || fail "no $1 step to claim"
}
expect 0 "$pgjq" workflow show "$etl"
grep -q '^│  └─ join  waiting for steps  attempts 0/' <<<"$out" || fail "workflow show before any step ran: $out"; ok
run_step fetch; run_step parse-a; run_step hostile; run_step parse-b 'disk full\x1b[2K\nretry later'
[ "$(step_status join)" = cancelled ] || fail "the join was not cancelled after parse-b failed: $(step_status join)"
"${psql[@]}" -c "SELECT pgjq.start_workflow(E'tiny\x1b[31m', '[{\"name\": \"only\", \"job_type\": \"only\", \"queue\": \"flows\"}]')" >/dev/null
run_step only
tiny=$("${psql[@]}" -c "SELECT max(id) FROM pgjq.workflows")

# figures: the etl workflow's steps finished, failed (or cancelled) and in all, as pgjq.workflows counts them.
figures() { "${psql[@]}" -c "SELECT steps_finished, steps_failed, steps_total FROM pgjq.workflows WHERE id = $etl"; }
IFS='|' read -r finished failed total <<<"$(figures)"
[ "$total" = 5 ] && [ "$failed" -ge 1 ] || fail "pgjq.workflows counts $(figures) for etl"
expect 0 "$pgjq" workflow list
no_controls "$out" "workflow list"
grep -Eq "^$etl +etl +etl-key +failed +$finished/5 +$failed " <<<"$out" || fail "workflow list does not show the failed etl: $out"; ok
grep -Fq 'tiny\x1b[31m' <<<"$out" && [ "$(sed -n 2p <<<"$out" | cut -d' ' -f1)" = "$tiny" ] \
  || fail "workflow list is not newest first, or does not escape the name: $out"; ok
expect 0 "$pgjq" --json workflow list --status failed
[ "$(json "[w['id'] for w in data]" <<<"$out")" = "[$etl]" ] || fail "workflow list --status failed: $out"; ok
[ "$(json "data[0]['steps_failed'], data[0]['key'], data[0]['on_failure']" <<<"$out")" = "$failed etl-key fail" ] \
  || fail "workflow list --json: $out"; ok
expect 0 "$pgjq" --json workflow list --limit 1
[ "$(json "[w['id'] for w in data]" <<<"$out")" = "[$tiny]" ] || fail "workflow list --limit 1: $out"; ok
expect 2 "$pgjq" workflow list --status sleeping; ok
# The statuses it knows are the server's: those a workflow's row may hold, and the view's 'waiting'.
server_statuses=$("${psql[@]}" -c "SELECT string_agg(s, ' ' ORDER BY s) FROM (
  SELECT (regexp_matches(pg_get_constraintdef(oid), '''([a-z_]+)''', 'g'))[1] FROM pg_constraint
   WHERE conname = 'workflow_status' AND conrelid = 'pgjq.workflow_runs'::regclass
  UNION SELECT 'waiting' WHERE pg_get_viewdef('pgjq.workflows') LIKE '%''waiting''%') AS known(s)")
cli_statuses=$(sed -n 's/.*(one of \(.*\)).*/\1/p' <<<"$err" | tr -d ',' | tr ' ' '\n' | sort | paste -sd' ')
[ "$cli_statuses" = "$server_statuses" ] && [ "$(wc -w <<<"$server_statuses")" = 5 ] \
  || fail "workflow list --status knows \"$cli_statuses\", the server \"$server_statuses\""; ok
expect 2 "$pgjq" workflow list --limit 0; ok
expect 2 "$pgjq" workflow list --limit 10001; ok
expect 2 "$pgjq" workflow; ok                                           # a workflow command is required

expect 0 "$pgjq" workflow show "$etl"
no_controls "$out" "workflow show"
grep -q "^workflow $etl  failed  name etl  on failure fail$" <<<"$out" && grep -q '^key         etl-key$' <<<"$out" \
  && grep -q "^steps       5: $finished finished, $failed failed or cancelled$" <<<"$out" || fail "workflow show's header: $out"; ok
# The tree: fetch at the top, the three of the fan-out under it, the join drawn once under parse-a (the
# first of its parents) naming the other two.
tree=$(sed -n '/^fetch /,$p' <<<"$out")
[ "$(grep -c 'join' <<<"$tree")" = 1 ] && grep -q '^fetch  completed  attempts 1/' <<<"$tree" \
  && grep -q '^├─ parse-a  completed  attempts 1/' <<<"$tree" \
  && grep -q '^│  └─ join  cancelled  attempts 0/.*(also after .*parse-b' <<<"$tree" \
  && grep -qF 'join  cancelled' <<<"$tree" && grep -F 'join  cancelled' <<<"$tree" | grep -qF 'evil\x1b]0;owned\x07step' \
  && grep -q '^├─ parse-b  failed  attempts 1/1$' <<<"$tree" \
  && grep -qF '│     last error: disk full\x1b[2K\nretry later' <<<"$tree" \
  && grep -qF '└─ evil\x1b]0;owned\x07step  completed' <<<"$tree" || fail "workflow show's tree: $out"; ok
expect 0 "$pgjq" --json workflow show "$etl"
[ "$(json "data['workflow']['status'], len(data['steps'])" <<<"$out")" = "failed 5" ] \
  || fail "workflow show --json: $out"; ok
[ "$(json "[s['depends_on'] for s in data['steps'] if s['name'] == 'join'][0] == sorted(['parse-a', 'parse-b', 'evil\x1b]0;owned\x07step'])" <<<"$out")" = True ] \
  && [ "$(json "[s['last_error'] for s in data['steps'] if s['name'] == 'parse-b'][0]" <<<"$out")" = $'disk full\x1b[2K\nretry later' ] \
  || fail "workflow show --json's steps: $out"; ok
expect 3 "$pgjq" workflow show 999999
grep -q 'workflow 999999 does not exist' <<<"$err" || fail "workflow show of an unknown id: $err"; ok
expect 3 "$pgjq" workflow cancel 999999 --yes; ok
expect 3 "$pgjq" workflow retry 999999 --yes; ok

# retry and cancel say what and how many before they act, and act only when confirmed.
out=$(echo n | script -qec "$pgjq workflow retry $etl" /dev/null) && code=0 || code=$?
grep -qF "Retry workflow $etl \"etl\", its 1 failed and 1 cancelled of 5 steps" <<<"$out" && [ "$code" = 2 ] \
  || fail "workflow retry's question ($code): $out"; ok
expect 2 "$pgjq" workflow retry "$etl" </dev/null                      # no terminal to confirm: refused
[ "$(step_status parse-b)" = failed ] || fail "an unconfirmed workflow retry retried"; ok
expect 0 "$pgjq" --json workflow retry "$etl" --yes
[ "$(json "data['workflow'], data['steps']" <<<"$out")" = "$etl 2" ] || fail "workflow retry --json: $out"; ok
[ "$(step_status parse-b)|$(step_status join)" = "pending|waiting" ] \
  && [ "$("${psql[@]}" -c "SELECT status FROM pgjq.workflows WHERE id = $etl")" = running ] \
  || fail "workflow retry left parse-b $(step_status parse-b), join $(step_status join)"; ok
expect 0 "$pgjq" workflow show "$etl"
grep -q '^│  └─ join  waiting for steps  attempts 0/' <<<"$out" || fail "workflow show after retry: $out"; ok
expect 1 "$pgjq" workflow retry "$etl" --yes; ok                       # nothing failed or cancelled now
out=$(echo n | script -qec "$pgjq workflow cancel $etl" /dev/null) && code=0 || code=$?
grep -qF "Cancel workflow $etl \"etl\", its 2 unfinished of 5 steps?" <<<"$out" && [ "$code" = 2 ] \
  || fail "workflow cancel's question ($code): $out"; ok
expect 2 "$pgjq" workflow cancel "$etl" </dev/null; ok
expect 0 "$pgjq" workflow cancel "$etl" --yes
[ "$out" = "workflow $etl: 2 steps cancelled" ] || fail "workflow cancel: $out"
[ "$(step_status parse-b)|$(step_status join)" = "cancelled|cancelled" ] \
  && [ "$("${psql[@]}" -c "SELECT status FROM pgjq.workflows WHERE id = $etl")" = cancelled ] \
  || fail "workflow cancel left parse-b $(step_status parse-b), join $(step_status join)"; ok
expect 1 "$pgjq" workflow cancel "$etl" --yes; ok                      # nothing unfinished any more
expect 0 "$pgjq" --json workflow list --status cancelled
[ "$(json "[w['id'] for w in data]" <<<"$out")" = "[$etl]" ] || fail "workflow list --status cancelled: $out"; ok
expect 3 env PGUSER=nobody "$pgjq" workflow show "$etl"; ok             # another role's workflow
expect 0 "$pgjq" queue drop flows --force

expect 4 env PGUSER=nobody "$pgjq" queue create spam; ok                # a role without a capability
expect 0 "$pgjq" queue drop mail --force; ok
expect 0 "$pgjq" --help
grep -q 'Exit codes' <<<"$out" || fail "--help"; ok
expect 0 "$pgjq" jobs --help; ok

# The manual page and the completion scripts come from the same command tree as --help: every command and
# option is in each, with no database needed.
PGHOST=/nonexistent expect 0 "$pgjq" manpage
man_page=$out
groff -man -Tutf8 -ww -z <<<"$man_page" 2>"$cluster/groff" && [ ! -s "$cluster/groff" ] \
  || fail "groff warns about the man page: $(cat "$cluster/groff")"; ok
# -P-cbou: plain text, no overstrikes for bold and underline (no col(1) needed)
rendered=$(groff -man -Tutf8 -P-cbou <<<"$man_page" 2>/dev/null)
for command in "jobs" "delete" "queue alter" "workflow retry" "schedule remove" "completion shell"; do
  grep -q "^ *pgjq $command" <<<"$rendered" || fail "the man page has no section for pgjq $command: $(head -c 2000 <<<"$rendered")"
done; ok
grep -A1 -- '--rate-interval DURATION' <<<"$rendered" | grep -q "the rate limit's interval" \
  || fail "the man page lacks queue alter's --rate-interval and its help"; ok
expect 0 "$pgjq" completion bash
bash_completion=$out
# complete LINE: what bash completes at the end of LINE (a trailing space starts a new word).
complete_bash() {
  bash -c 'source /dev/stdin; read -ra COMP_WORDS <<<"$1"; [[ "$1" == *" " ]] && COMP_WORDS+=("")
           COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _pgjq; echo "${COMPREPLY[*]}"' complete "$1" <<<"$bash_completion"
}
[ "$(complete_bash "pgjq que")" = queue ] && [ "$(complete_bash "pgjq queue al")" = alter ] \
  && [ "$(complete_bash "pgjq -d app --json jobs --be")" = --before ] \
  && [ "$(complete_bash "pgjq queue alter mail --rate-limit 5 --rate-i")" = --rate-interval ] \
  && [ -z "$(complete_bash "pgjq jobs --queue ")" ] \
  || fail "bash completion: $(complete_bash "pgjq que") / $(complete_bash "pgjq queue al") / $(complete_bash "pgjq -d app --json jobs --be")"; ok
grep -qw delete <<<"$(complete_bash "pgjq ")" && grep -qw -- --yes <<<"$(complete_bash "pgjq delete --queue mail ")" \
  || fail "bash completion of pgjq and of delete: $(complete_bash "pgjq ")"; ok
expect 0 "$pgjq" completion zsh
zsh -n <<<"$out" || fail "the zsh completion does not parse"; ok
# zsh's _describe is replaced by one printing what it would offer (name:description).
complete_zsh() {
  zsh -f -c 'compdef() { :; }; _describe() { print -rl -- "${(@P)4}"; }; source /dev/stdin
             words=(${=1}); CURRENT=$(( ${#words} + 1 )); _pgjq' complete "$1" <<<"$out"
}
grep -qx "alter:change a queue's settings" <<<"$(complete_zsh "pgjq queue")" \
  && grep -qx -- "--before:.*keyset paging)" <<<"$(complete_zsh "pgjq --json jobs")" \
  || fail "zsh completion: $(complete_zsh "pgjq queue")"; ok
expect 2 "$pgjq" completion fish; ok
expect 2 "$pgjq"; ok                                                    # a command is required
expect 2 "$pgjq" frobnicate; ok
expect 1 "$pgjq" -d "host=/nonexistent" status; ok                      # cannot connect
# A database still at 0.2.0 keeps no failed attempts: show still shows the job, without them.
"${psql[@]}" -c "CREATE DATABASE older" >/dev/null
older_job=$("${psql[@]}" -d older -c "CREATE EXTENSION pgjq VERSION '0.2.0'" -c "SELECT pgjq.enqueue('t', '{}')")
expect 0 "$pgjq" -d "dbname=older" show "$older_job"
grep -q "^job $older_job  pending" <<<"$out" && ! grep -q 'failed attempts' <<<"$out" || fail "show in a 0.2.0 database: $out $err"; ok
expect 1 "$pgjq" -d "dbname=older" enqueue t '{}' --header x=1
grep -q 'older than 0.3.0' <<<"$err" || fail "enqueue --header in a 0.2.0 database: $err"; ok
"${psql[@]}" -c "CREATE DATABASE plain" >/dev/null
for command in status "jobs" "show 1" "enqueue t {}"; do
  # shellcheck disable=SC2086 # the command's words
  expect 1 "$pgjq" -d "dbname=plain" $command
  [ "$err" = "pgjq: pgjq is not installed in database plain (CREATE EXTENSION pgjq)" ] \
    || fail "$command in a database without pgjq: $err"; ok
done

# A database no maintenance worker serves (pgjq not preloaded, no start_worker()): status warns, and so does
# the dashboard's overview (the page shows it as a banner).
start_cluster "$cluster-unserved" "log_min_messages = warning"
unserved="host=$(cat "$cluster-unserved/socket_dir") port=5432 user=postgres dbname=postgres"
"$STAGE_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$unserved" -c "CREATE EXTENSION pgjq" >/dev/null
expect 0 "$pgjq" -d "$unserved" status
grep -q 'no maintenance worker serves this database' <<<"$err" || fail "status did not warn: $err"; ok
expect 0 "$pgjq" -d "$unserved" --json status
grep -q 'no maintenance worker serves this database' <<<"$err" && json "len(data)" <<<"$out" >/dev/null \
  || fail "status --json did not warn, or its output is no JSON: $err $out"; ok
PGJQ_WEB_TOKEN=unserved-token-0123456789 "$pgjq" -d "$unserved" web --listen 127.0.0.1:0 2>"$cluster/web" &
server=$!
for _ in $(seq 300); do grep -q 'serving the dashboard at' "$cluster/web" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$cluster/web") || fail "pgjq web did not start: $(cat "$cluster/web")"
overview=$(scrape "${url%/}/api/overview" unserved-token-0123456789)
grep -q '"maintenance_served":false' <<<"$overview" || fail "the overview does not say the database is unserved: $overview"; ok
kill -TERM "$server"; wait "$server" || fail "pgjq web did not stop cleanly on SIGTERM"; server=''
echo "pgjq command line: $passed passed, 0 failed"
