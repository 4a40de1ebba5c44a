#!/usr/bin/env bash
# Runs `pgjq web` against a throwaway cluster and checks it from outside and in a real browser (Debian's
# headless Chromium, driven by scripts/web_browser_test.py through chromedriver):
# - as an observer: the page shows the queue and a failed job, and its retry button is refused;
# - as an admin: no console errors, the payload's <script> shown and not run, the failed attempt's error and
#   worker shown as text in the job's detail, retry makes the job pending;
# - requests a browser could be tricked into: a POST without the page's CSRF token or from another origin,
#   a request naming another Host (DNS rebinding): refused, nothing changed;
# - the access token, on loopback and beyond: one is made and printed when none is given, and only requests
#   carrying it are served (a local user without it is refused);
# - slow clients: 16 connections that trickle their request do not keep the token-holder's request waiting,
#   and a second server on a port in use fails with "address in use";
# - workflows: the list and a workflow's steps as JSON (each step's result cut to a preview), only with the
#   token; an observer reads them and its cancel is refused; an admin's cancel and retry act on the
#   database; in the browser a workflow with a fan-out and a join is drawn with each step in its state and
#   an arrow per dependency, its error shown as text, and cancel asks first (dismissed: nothing changes);
# - without a maintenance worker the overview says so (the page's banner);
# - SIGTERM stops it cleanly.
# - the operator's tasks in the browser: a search by payload, a bulk retry with its count confirmed, the
#   queue's page (its workers, a setting changed; read-only to an observer), rows that stay under the
#   pointer, charts with a legend and time axis, a phone's width; the search, count, bulk and settings
#   calls refuse bad values by name, and an observer's changes;
# The admin's screenshots are kept in build/test-output/web/: dashboard.png (1280x800), workflow.png,
# queue.png, phone.png.
# As root it re-executes itself as the postgres user (see scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages chromium chromium-driver python3-selenium
reexec_unprivileged web_tests.sh "$@"
ensure_packages

stage_with_cli

cluster=$PWD/build/web-tests
artefacts=$PWD/build/test-output/web
mkdir -p "$artefacts"
servers=()
stop_servers() { local s; for s in "${servers[@]}"; do kill "$s" 2>/dev/null || true; done; }
trap 'stop_servers; stop_cluster "$cluster"' EXIT
start_cluster "$cluster" "shared_preload_libraries = 'pgjq'" "log_min_messages = warning"
export PGHOST PGPORT PGUSER PGDATABASE
PGHOST=$(cat "$cluster/socket_dir") PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
psql=("$STAGE_BIN/psql" -X -q -At -v ON_ERROR_STOP=1)
python=/usr/bin/python3 # Debian's, which has python3-selenium (another python3 on PATH may not)
passed=0
fail() { echo "web test failed: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); }
status_of() { "${psql[@]}" -c "SELECT status FROM pgjq.jobs WHERE id = $1"; }

# A job whose payload, error and headers would run scripts if the page ever treated them as markup; its
# traceparent's trace id links to the tracing UI the admin's dashboard names (--trace-url).
"${psql[@]}" >/dev/null <<'SQL'
CREATE EXTENSION pgjq;
-- Queue "bulk5k": 5 000 failed jobs, retried by one confirmed action; the oldest jobs, so that the
-- newest failed ones the page lists first are those of the checks below.
SELECT pgjq.create_queue('bulk5k', max_attempts => 1);
SELECT cardinality(pgjq.enqueue_batch('report', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, 5000) g), 'bulk5k'));
SELECT count(pgjq.fail(id, 'w', 'boom')) FROM pgjq.claim_job_batch('w', NULL, 5000, 'bulk5k');
CREATE ROLE watcher LOGIN;
SELECT pgjq.grant_observer('watcher');
SELECT pgjq.create_queue('mail', max_attempts => 1);
SELECT pgjq.enqueue_batch('email', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, 5) g), 'mail');
SELECT pgjq.complete(id, 'w') FROM pgjq.claim_job_batch('w', NULL, 3, 'mail');
SELECT pgjq.enqueue('email', jsonb_build_object('html',
         '<script>window.pgjqInjected = 1</script><img src=x onerror="window.pgjqInjected = 2">'), 'mail',
         headers => '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "x-note": "<b>raw</b>"}');
SELECT pgjq.fail(id, 'w', '<script>window.pgjqInjected = 3</script> smtp timeout')
  FROM pgjq.claim_job_batch('w', NULL, 10, 'mail') WHERE payload ? 'html';
SQL
failed_job=$("${psql[@]}" -c "SELECT id FROM pgjq.jobs WHERE status = 'failed' AND queue_name = 'mail'")
# Queue "bulk": three failed jobs found by their payloads and retried at once, two held by worker w-bulk.
"${psql[@]}" >/dev/null <<'SQL'
SELECT pgjq.create_queue('bulk', max_attempts => 1);
SELECT pgjq.enqueue_batch('report', (SELECT jsonb_agg(jsonb_build_object('order', g)) FROM generate_series(1, 3) g), 'bulk');
SELECT pgjq.fail(id, 'w', 'boom') FROM pgjq.claim_job_batch('w', NULL, 3, 'bulk');
SELECT pgjq.enqueue_batch('held', '[{}, {}]', 'bulk');
SELECT count(*) FROM pgjq.claim_job_batch('w-bulk', ARRAY['held'], 2, 'bulk');
SQL
[ -n "$failed_job" ] || fail "no failed job to show"

# Workflows: "thumbnails" fans out from fetch to three resizes and joins them in publish; resize c fails for
# good (its error holding markup), so publish is cancelled and the workflow failed. "nightly" has not
# started a step yet: running, to be cancelled.
"${psql[@]}" >/dev/null <<'SQL'
SELECT pgjq.create_queue('media');
SELECT pgjq.start_workflow('thumbnails', '[
    {"name": "fetch", "job_type": "fetch", "queue": "media"},
    {"name": "resize a", "job_type": "resize", "queue": "media", "after": ["fetch"], "payload": {"size": "a"}},
    {"name": "resize b", "job_type": "resize", "queue": "media", "after": ["fetch"], "payload": {"size": "b"}},
    {"name": "resize c", "job_type": "resize", "queue": "media", "after": ["fetch"], "payload": {"size": "c"},
     "max_attempts": 1},
    {"name": "publish", "job_type": "publish", "queue": "media", "after": ["resize a", "resize b", "resize c"]}
  ]', workflow_key => 'batch <b>7</b>');
SELECT pgjq.start_workflow('nightly', '[{"name": "export", "job_type": "export", "queue": "media"},
    {"name": "upload", "job_type": "upload", "queue": "media", "after": ["export"]}]');
SELECT pgjq.complete(id, 'w', jsonb_build_object('html', '<img src=x onerror="window.pgjqInjected = 4">',
                                                 'bytes', repeat('x', 1000)))
  FROM pgjq.claim_job_batch('w', ARRAY['fetch'], 10, 'media');
SQL
"${psql[@]}" >/dev/null <<'SQL'
SELECT CASE WHEN payload->>'size' = 'c'
            THEN pgjq.fail(id, 'w', '<script>window.pgjqInjected = 5</script> out of memory')::text
            ELSE pgjq.complete(id, 'w')::text END
  FROM pgjq.claim_job_batch('w', ARRAY['resize'], 10, 'media');
SQL
thumbnails=$("${psql[@]}" -c "SELECT id FROM pgjq.workflows WHERE workflow_name = 'thumbnails'")
nightly=$("${psql[@]}" -c "SELECT id FROM pgjq.workflows WHERE workflow_name = 'nightly'")
workflow_status() { "${psql[@]}" -c "SELECT status FROM pgjq.workflows WHERE id = $1"; }
step_states() { "${psql[@]}" -c "SELECT string_agg(step_name || '=' || status, ',' ORDER BY step_name) FROM pgjq.workflow_steps($1)"; }
[ "$(step_states "$thumbnails")" = "fetch=completed,publish=cancelled,resize a=completed,resize b=completed,resize c=failed" ] \
  && [ "$(workflow_status "$thumbnails")" = failed ] && [ "$(workflow_status "$nightly")" = running ] \
  || fail "the workflows are not as set up: $(step_states "$thumbnails"); $(workflow_status "$thumbnails"), $(workflow_status "$nightly")"

# start_web LOGFILE ARGS...: starts `pgjq ARGS` (a `web` command), waits for its address, sets $url (as
# printed: with ?token= when the token was made at start), $base (scheme, host and port), $token (when made
# at start) and $server.
start_web() {
  local log=$1; shift
  build/pgjq "$@" 2>"$log" &
  server=$!
  servers+=("$server")
  for _ in $(seq 300); do grep -q 'serving the dashboard at' "$log" && break; sleep 0.1; done
  url=$(grep -o 'http://[^ ]*' "$log") || fail "pgjq web did not start: $(cat "$log")"
  base=$(grep -o '^http://[^/]*' <<<"$url")
  token=$(sed -n 's/.*needs the access token \([0-9a-f]*\) .*/\1/p' "$log")
}
# request METHOD URL [HEADER: VALUE]...: prints the HTTP status, then the body. Sends $auth (a header) too
# unless the arguments name an Authorization or Cookie header.
auth=
request() {
  PGJQ_TEST_AUTH=$auth PGJQ_TEST_BODY=${body:-} "$python" - "$@" <<'PY'
import os, sys, urllib.request, urllib.error
method, url, headers = sys.argv[1], sys.argv[2], dict(h.split(": ", 1) for h in sys.argv[3:])
if os.environ["PGJQ_TEST_AUTH"] and "Authorization" not in headers and "Cookie" not in headers:
    name, value = os.environ["PGJQ_TEST_AUTH"].split(": ", 1)
    headers[name] = value
class Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args): return None
opener = urllib.request.build_opener(Keep)
try:
    data = os.environ["PGJQ_TEST_BODY"].encode() if method == "POST" else None
    response = opener.open(urllib.request.Request(url, method=method, headers=headers, data=data))
except urllib.error.HTTPError as e:
    response = e
print(response.status)
print(response.headers.get("Set-Cookie") or "")
print(response.headers.get("Content-Security-Policy") or "")
print(response.read().decode())
PY
}
status() { head -n 1 <<<"$1"; }
# json_of EXPRESSION: prints the Python expression over d, the JSON body of the last request ($out).
json_of() { "$python" -c "import json, sys; d = json.loads(sys.stdin.read().split(chr(10), 3)[3]); print($1)" <<<"$out"; }

# A sample taken in the database before this `pgjq web` started (as the maintenance worker takes them): the
# charts show it, as they would after a restart, and then go on with the process's own.
"${psql[@]}" -c "SELECT pgjq.sample_queues()" >/dev/null
read -r sampled_at unfinished < <("${psql[@]}" -F ' ' -c "SELECT extract(epoch from sampled_at), unfinished - in_flight
  FROM pgjq.queue_samples WHERE queue_name = 'mail' ORDER BY sampled_at DESC LIMIT 1")
# As an observer: sees everything, may do nothing.
start_web "$cluster/observer.log" -d "user=watcher" web --listen 127.0.0.1:0 --sample-interval 0.5 --refresh 0.5
auth="Authorization: Bearer $token"
for _ in $(seq 50); do   # until the process has taken its first sample
  out=$(request GET "$base/api/history")
  [ "$(json_of "'pending' in d['samples'][-1]['queues'].get('mail', {})")" = True ] && break
  sleep 0.1
done
[ "$(json_of "[s['queues']['mail']['waiting'] for s in d['samples'] if abs(s['t'] - $sampled_at) < 1e-3 and 'pending' not in s['queues']['mail']]")" = "[$unfinished]" ] \
  && [ "$(json_of "'pending' in d['samples'][-1]['queues']['mail']")" = True ] \
  || fail "the charts do not begin with the database's sample, then the process's: $out"; ok
auth=
"$python" scripts/web_browser_test.py observer "$url" "$failed_job" || fail "the observer's page (above)"
[ "$(status_of "$failed_job")" = failed ] || fail "an observer's retry changed the job"; ok
# The observer reads the workflows, and its cancel reaches the database, which refuses it.
auth="Authorization: Bearer $token"
out=$(request GET "$base/api/workflows")
[ "$(status "$out")" = 200 ] && grep -q '"name":"thumbnails"' <<<"$out" && grep -q '"name":"nightly"' <<<"$out" \
  || fail "the observer's list of workflows: $out"; ok
page=$(request GET "$base/")
csrf=$(grep -o 'name="pgjq-csrf" content="[0-9a-f]*"' <<<"$page" | grep -o '[0-9a-f]\{32\}') || fail "no CSRF token in the page"
out=$(request POST "$base/api/workflows/$nightly/cancel" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 403 ] && grep -q 'permission denied' <<<"$out" && [ "$(workflow_status "$nightly")" = running ] \
  || fail "an observer's cancel of a workflow: $out; $(workflow_status "$nightly")"; ok
# It is told it administers nothing, and what it would change is refused.
out=$(request GET "$base/api/overview")
[ "$(json_of "d['administers']['mail']")" = False ] || fail "an observer is said to administer mail: $out"; ok
out=$(body='{"rate_limit": 7}' request POST "$base/api/queues/mail/settings" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 403 ] && [ "$("${psql[@]}" -c "SELECT rate_limit IS NULL FROM pgjq.queues WHERE queue_name = 'mail'")" = t ] \
  || fail "an observer's change of settings: $out"; ok
out=$(request POST "$base/api/jobs/retry?queue=bulk&state=failed" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 403 ] || fail "an observer's bulk retry: $out"; ok
auth=
kill -TERM "$server"; wait "$server" || fail "pgjq web did not stop cleanly on SIGTERM"; ok

# As an admin (the superuser), on loopback with no token given: one is made, printed, and required.
start_web "$cluster/admin.log" web --listen 127.0.0.1:0 --sample-interval 0.5 --refresh 0.5 \
  --trace-url 'https://traces.example/trace/{trace_id}?from="pgjq"&view=<1>' 
[ ${#token} = 32 ] && grep -q "?token=$token" <<<"$url" || fail "no token made and printed: $(cat "$cluster/admin.log")"; ok
out=$(request GET "$base/api/overview")
[ "$(status "$out")" = 401 ] || fail "served on loopback without the token: $out"; ok
auth="Authorization: Bearer $token"
out=$(request GET "$base/api/overview")
[ "$(status "$out")" = 200 ] && grep -q '"maintenance_served":true' <<<"$out" || fail "the overview: $out"; ok
page=$(request GET "$base/")
[ "$(status "$page")" = 200 ] && grep -q "script-src 'self'" <<<"$page" || fail "the page or its policy: $page"; ok
csrf=$(grep -o 'name="pgjq-csrf" content="[0-9a-f]*"' <<<"$page" | grep -o '[0-9a-f]\{32\}') || fail "no CSRF token in the page"
out=$(request POST "$base/api/jobs/$failed_job/retry")
[ "$(status "$out")" = 403 ] && [ "$(status_of "$failed_job")" = failed ] || fail "a POST without the CSRF token: $out"; ok
out=$(request POST "$base/api/jobs/$failed_job/retry" "X-PGJQ-CSRF: $csrf" "Origin: http://evil.example")
[ "$(status "$out")" = 403 ] && [ "$(status_of "$failed_job")" = failed ] || fail "a POST from another origin: $out"; ok
out=$(request GET "$base/api/overview" "Host: evil.example")
[ "$(status "$out")" = 421 ] || fail "a request naming another host: $out"; ok
out=$(request GET "$base/api/jobs/999999")
[ "$(status "$out")" = 404 ] || fail "an unknown job: $out"; ok
out=$(request GET "$base/api/jobs?state=sleeping")
[ "$(status "$out")" = 400 ] && grep -q 'unknown job status' <<<"$out" || fail "a bad state: $out"; ok
out=$(request GET "$base/api/jobs?limit=many")
[ "$(status "$out")" = 400 ] && grep -q 'limit must be a whole number' <<<"$out" || fail "a limit that is no number: $out"; ok
out=$(request GET "$base/api/jobs?limit=0")
[ "$(status "$out")" = 400 ] || fail "a limit out of bounds: $out"; ok
# The search: by payload, by page, counted; each bad value refused with its name.
out=$(request GET "$base/api/jobs?payload=%7B%22order%22%3A%202%7D")
[ "$(json_of "[(j['queue'], j['payload']) for j in d]")" = "[('bulk', {'order': 2})]" ] || fail "a search by payload: $out"; ok
out=$(request GET "$base/api/jobs?payload=%7Border")
[ "$(status "$out")" = 400 ] && grep -q 'payload must be JSON' <<<"$out" || fail "a payload that is no JSON: $out"; ok
newest_mail=$("${psql[@]}" -c "SELECT max(id) FROM pgjq.jobs WHERE queue_name = 'mail'")
out=$(request GET "$base/api/jobs?queue=mail&before=$newest_mail&limit=2")
[ "$(json_of "all(j['id'] < $newest_mail for j in d) and len(d) == 2")" = True ] || fail "a page before a job: $out"; ok
out=$(request GET "$base/api/jobs/count?queue=mail&state=completed")
[ "$(json_of "(d['count'], d['more'])")" = "(3, False)" ] || fail "a count: $out"; ok
out=$(request POST "$base/api/jobs/retry?state=failed" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 400 ] && grep -q 'needs a queue' <<<"$out" || fail "a bulk retry without a queue: $out"; ok
out=$(request POST "$base/api/jobs/delete?queue=bulk&payload=%7B%7D" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 400 ] && grep -q 'not by payload' <<<"$out" || fail "a bulk delete by payload: $out"; ok
# The queue's page: settings, figures, workers; a change of settings checked before it is sent.
out=$(request GET "$base/api/queues/bulk")
[ "$(json_of "(d['settings']['max_attempts'], d['administers'], [(w['worker_id'], w['jobs']) for w in d['workers']])")" \
  = "(1, True, [('w-bulk', 2)])" ] || fail "the queue's page: $out"; ok
out=$(request GET "$base/api/queues/nowhere")
[ "$(status "$out")" = 404 ] || fail "an unknown queue's page: $out"; ok
for bad in '{"rate_limit": "fast"}' '{"colour": 1}' '{"lease_s": -1}' '[]' '{}'; do
  out=$(body=$bad request POST "$base/api/queues/mail/settings" "X-PGJQ-CSRF: $csrf")
  [ "$(status "$out")" = 400 ] || fail "settings $bad were taken: $out"
done; ok
out=$(body='{"max_running": 4, "job_timeout_s": 90}' request POST "$base/api/queues/mail/settings" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 200 ] && [ "$("${psql[@]}" -c "SELECT max_running, job_timeout FROM pgjq.queues WHERE queue_name = 'mail'")" = "4|00:01:30" ] \
  || fail "a change of settings: $out"; ok
out=$(request GET "$base/metrics")
/usr/bin/promtool check metrics <<<"$(tail -n +4 <<<"$out")" >/dev/null 2>&1 || fail "the served metrics: $out"; ok
# Workflows as JSON, only with the token.
out=$(auth= request GET "$base/api/workflows")
[ "$(status "$out")" = 401 ] || fail "the workflows without the token: $out"; ok
out=$(auth= request GET "$base/api/workflows/$thumbnails")
[ "$(status "$out")" = 401 ] || fail "a workflow without the token: $out"; ok
out=$(request GET "$base/api/workflows")
[ "$(status "$out")" = 200 ] || fail "the workflows: $out"
[ "$(json_of "[(w['name'], w['status'], w['steps_finished'], w['steps_total'], w['steps_failed']) for w in d]")" \
  = "[('nightly', 'running', 0, 2, 0), ('thumbnails', 'failed', 5, 5, 2)]" ] || fail "the list of workflows: $out"; ok
[ "$(json_of "d[1]['key'] == 'batch <b>7</b>' and d[1]['finished_at'] is not None and d[0]['finished_at'] is None")" = True ] \
  || fail "a workflow's key or times: $out"; ok
out=$(request GET "$base/api/workflows?limit=1")
[ "$(json_of "[w['name'] for w in d]")" = "['nightly']" ] || fail "the newest workflow alone: $out"; ok
out=$(request GET "$base/api/workflows?limit=0")
[ "$(status "$out")" = 400 ] || fail "a limit of workflows out of bounds: $out"; ok
out=$(request GET "$base/api/workflows/$thumbnails")
[ "$(status "$out")" = 200 ] || fail "the workflow: $out"
steps() { json_of "{s['name']: $1 for s in d['steps']}"; }
[ "$(json_of "d['workflow']['id'] == $thumbnails and len(d['steps'])")" = 5 ] || fail "the workflow's steps: $out"; ok
[ "$(steps "s['depends_on']")" = "{'fetch': [], 'resize a': ['fetch'], 'resize b': ['fetch'], 'resize c': ['fetch'], 'publish': ['resize a', 'resize b', 'resize c']}" ] \
  || fail "the steps' dependencies: $out"; ok
[ "$(json_of "'|'.join(s['name'] + '=' + s['status'] for s in sorted(d['steps'], key=lambda s: s['name']))")" \
  = "$(step_states "$thumbnails" | tr , '|')" ] || fail "the steps' states differ from the database's: $out"; ok
# fetch's result is 1 kB: the page gets the first 200 bytes and an ellipsis.
[ "$(json_of "(lambda r: len(r.encode()) <= 203 and r.endswith(chr(0x2026)) and r.startswith('{'))(d['steps'][0]['result'])")" = True ] \
  && grep -q 'out of memory' <<<"$out" || fail "a step's result preview or error: $out"; ok
out=$(request GET "$base/api/workflows/999999")
[ "$(status "$out")" = 404 ] || fail "an unknown workflow: $out"; ok
out=$(request POST "$base/api/workflows/$nightly/cancel")
[ "$(status "$out")" = 403 ] && [ "$(workflow_status "$nightly")" = running ] || fail "a cancel without the CSRF token: $out"; ok
# An admin's retry sends the failed step back; publish, cancelled after it, waits for it again.
out=$(request POST "$base/api/workflows/$thumbnails/retry" "X-PGJQ-CSRF: $csrf")
[ "$(status "$out")" = 200 ] && grep -q 'pending again' <<<"$out" || fail "the admin's retry of a workflow: $out"; ok
[ "$(step_states "$thumbnails")" = "fetch=completed,publish=waiting,resize a=completed,resize b=completed,resize c=pending" ] \
  && [ "$(workflow_status "$thumbnails")" = running ] || fail "after the retry: $(step_states "$thumbnails"), $(workflow_status "$thumbnails")"; ok
# resize c fails for good again, so the browser sees the failed workflow.
"${psql[@]}" >/dev/null -c "SELECT pgjq.fail(id, 'w', '<script>window.pgjqInjected = 5</script> out of memory')
                              FROM pgjq.claim_job_batch('w', ARRAY['resize'], 10, 'media')"
[ "$(workflow_status "$thumbnails")" = failed ] || fail "the workflow did not fail again: $(step_states "$thumbnails")"
expected_steps=$("${psql[@]}" -c "SELECT jsonb_object_agg(step_name, status) FROM pgjq.workflow_steps($thumbnails)")
expected_edges=$("${psql[@]}" -c "SELECT jsonb_agg(jsonb_build_array(d, step_name)) FROM pgjq.workflow_steps($thumbnails), unnest(depends_on) d")
"$python" scripts/web_browser_test.py admin "$url" "$failed_job" "$artefacts/dashboard.png" || fail "the admin's page (above)"
"$python" scripts/web_browser_test.py workflow "$url" "$thumbnails" "$expected_steps" "$expected_edges" "$nightly" \
  "$artefacts/workflow.png" || fail "the admin's workflow page (above)"
[ "$(workflow_status "$nightly")" = cancelled ] && [ "$(step_states "$nightly")" = "export=cancelled,upload=cancelled" ] \
  || fail "the admin's cancel in the page: $(workflow_status "$nightly"), $(step_states "$nightly")"; ok
[ -s "$artefacts/workflow.png" ] || fail "no screenshot of the workflow"; ok
[ "$(status_of "$failed_job")" = pending ] || fail "the admin's retry did not make the job pending"; ok
"$python" scripts/web_browser_test.py operate "$url" "$STAGE_BIN/psql -X -q -At -v ON_ERROR_STOP=1" "$artefacts" \
  || fail "the admin's search, bulk retry, queue page and phone view (above)"
[ "$("${psql[@]}" -c "SELECT count(*) FROM pgjq.jobs WHERE queue_name = 'bulk' AND job_type = 'report' AND status = 'pending'")" = 3 ] \
  || fail "the page's bulk retry did not retry bulk's 3 failed jobs"; ok
[ "$("${psql[@]}" -c "SELECT rate_limit FROM pgjq.queues WHERE queue_name = 'bulk'")" = 50 ] \
  || fail "the page did not change bulk's rate limit"; ok
[ -s "$artefacts/queue.png" ] && [ -s "$artefacts/phone.png" ] || fail "no screenshot of the queue page or the phone view"; ok
[ -s "$artefacts/dashboard.png" ] || fail "no screenshot"; ok
out=$(request GET "$base/api/history")
[ "$(json_of "len(d['samples']) > 1")" = True ] || fail "the charts' history holds no samples: $out"; ok
# The 3 completed jobs and the failed one were claimed: their wait and run times are in the histograms.
[ "$(json_of "d['samples'][-1]['queues']['mail']['run_jobs']")" = 4 ] || fail "the history has no run times: $out"; ok

# Slow clients: 16 connections sending their request a byte a second hold no handler the token-holder needs;
# those that stop sending are closed. (With a handful of handlers and no read timeout, they held them all.)
"$python" scripts/slow_clients.py "$base" 16 "$token" || fail "slow clients kept the token-holder waiting (above)"; ok
# A second server on the port in use fails instead of sharing it.
port=${base##*:}
code=0; build/pgjq web --listen "127.0.0.1:$port" 2>"$cluster/err" || code=$?
[ "$code" = 1 ] && grep -qi 'address already in use' "$cluster/err" || fail "a second server on port $port: $code $(cat "$cluster/err")"; ok
kill -TERM "$server"; wait "$server" || fail "pgjq web did not stop cleanly on SIGTERM"
auth=

# Beyond loopback, with a token from a file: every request must carry it.
code=0; PGJQ_WEB_TOKEN=short build/pgjq web --listen 0.0.0.0:0 2>"$cluster/err" || code=$?
[ "$code" = 2 ] || fail "a short token was taken"; ok
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$token" >"$cluster/token"
start_web "$cluster/token.log" web --listen 0.0.0.0:0 --token-file "$cluster/token"
[ -z "$token" ] || fail "a token from a file was printed: $(cat "$cluster/token.log")"; ok
token=$(cat "$cluster/token")
base=http://127.0.0.1:${url##*:}; base=${base%/}
out=$(request GET "$base/api/overview")
[ "$(status "$out")" = 401 ] || fail "served without the token: $out"; ok
out=$(request GET "$base/?token=wrong$token")
[ "$(status "$out")" = 401 ] || fail "served with a wrong token: $out"; ok
out=$(request GET "$base/?token=$token")
[ "$(status "$out")" = 302 ] && grep -q "pgjq_token=$token; HttpOnly; SameSite=Strict" <<<"$out" \
  || fail "the token did not become a cookie: $out"; ok
out=$(request GET "$base/api/overview" "Cookie: pgjq_token=$token")
[ "$(status "$out")" = 200 ] || fail "the cookie was refused: $out"; ok
out=$(request GET "$base/api/overview" "Authorization: Bearer $token")
[ "$(status "$out")" = 200 ] && grep -q '"mail"' <<<"$out" || fail "the bearer token was refused: $out"; ok
kill -TERM "$server"; wait "$server" || fail "pgjq web did not stop cleanly on SIGTERM"

expect_usage() { code=0; build/pgjq web "$@" 2>/dev/null || code=$?; [ "$code" = 2 ] || fail "pgjq web $* exited $code"; ok; }
expect_usage --listen nowhere
expect_usage --sample-interval 0
expect_usage --trace-url 'https://traces.example/trace/'
expect_usage --trace-url 'ftp://traces.example/{trace_id}'
expect_usage --trace-url 'https://traces.example/{trace_id} x'
servers=()
echo "pgjq web: $passed passed, 0 failed"
