#!/usr/bin/env bash
# Follows docs/getting-started.md as a new user would, on a cluster made the Debian way: pg_createcluster
# (postgresql-common) with its pg_hba.conf (peer on the socket, passwords over TCP), its conf.d and
# pg_ctlcluster. The page's SQL runs as the roles it names, over TCP with the passwords of its ~/.pgpass
# lines; its Python and C++ programs are taken from the page as they are, built with its commands and run
# as the roles their first lines name; and the jobs each step enqueues must be processed by the next.
#
# What differs from the page, because this runs unprivileged and must leave the system alone: the cluster's
# configuration lives under PG_CLUSTER_CONF_ROOT (not /etc/postgresql), its data, socket and port are
# private (-d, -s, -p), the page's `sudo make install-extension` goes into the private tree of
# scripts/stage.sh, whose server pg_ctlcluster runs (--bindir), `sudo make install-client` into a private
# PREFIX, and ~/.pgpass is PGPASSFILE. Every command of the page run that way is checked to be on the page.
# As root it re-executes itself as the postgres user (scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages python3-psycopg
reexec_unprivileged getting_started_tests.sh "$@"

page=docs/getting-started.md
major=$PGJQ_PG_MAJOR
python=/usr/bin/python3 # Debian's, which has python3-psycopg
work=$PWD/build/getting-started
fail() { echo "getting started test failed: $*" >&2; exit 1; }
# A command of the page that this test runs its own way (see above) must still be on the page.
on_page() { grep -qF -- "$1" "$page" || fail "$page no longer says: $1"; }
# The page's program NAME (the code block whose first line is "# NAME: run as ROLE, ..." or "// NAME: ...").
page_program() {
  awk -v name="$1" '/^```/ { if (inside) { inside = 0; if (found) exit; next }
                             getline first; inside = 1; found = index(first, "# " name ":") == 1 || index(first, "// " name ":") == 1
                             if (found) print first; next }
                    inside && found' "$page"
}
role_of() { sed -n '1s/.*: run as \([a-z_]*\).*/\1/p' "$1"; }

export PG_CLUSTER_CONF_ROOT=$work/etc
pids=()
cleanup() {
  local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -d "$PG_CLUSTER_CONF_ROOT/$major/main" ] && pg_dropcluster --stop "$major" main >/dev/null 2>&1
  rm -rf "${sock:-}"
  return 0
}
trap cleanup EXIT
if [ -d "$PG_CLUSTER_CONF_ROOT/$major/main" ]; then pg_dropcluster --stop "$major" main >/dev/null 2>&1 || true; fi
rm -rf "$work"; mkdir -p "$work"

log "1. build and install the extension"
on_page "make -j2 extension"
on_page "sudo make install-extension"
export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)

log "a cluster the Debian way: pg_createcluster $major main"
sock=$(mktemp -d /tmp/pgjq-gs.XXXXXX) # socket paths are limited to ~100 bytes
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# an external PID file, where a postgresql-common writes one, in /var/run/postgresql would be the system's
# own cluster main's
pg_createcluster "$major" main -d "$work/data" -s "$sock" -p "$port" -l "$work/server.log" \
  -o "external_pid_file=$work/external.pid" >"$work/createcluster.log" \
  || { cat "$work/createcluster.log" >&2; fail "pg_createcluster"; }
grep -q '^host.*127.0.0.1/32.*scram-sha-256' "$PG_CLUSTER_CONF_ROOT/$major/main/pg_hba.conf" \
  || fail "the cluster's pg_hba.conf is not Debian's (no scram-sha-256 for 127.0.0.1)"

log "2. load it when the server starts"
preload=$(grep -F "| sudo tee /etc/postgresql/15/main/conf.d/pgjq.conf" "$page") || fail "the page has no preload line"
bash -c "${preload/sudo tee \/etc\/postgresql\/15\/main/tee $PG_CLUSTER_CONF_ROOT/$major/main}" >/dev/null
on_page "sudo systemctl restart postgresql@15-main"
pg_ctlcluster --bindir "$STAGE_BIN" "$major" main start || { tail -n 20 "$work/server.log" >&2; fail "the cluster did not start"; }
su_psql=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$sock" -p "$port") # the page's `sudo -u postgres psql`: peer on the socket
[ "$("${su_psql[@]}" -d postgres -c 'SHOW shared_preload_libraries')" = pgjq ] || fail "pgjq is not preloaded"

log "3. a database, pgjq and the roles (as the superuser, over the socket)"
on_page "sudo -u postgres createdb shop"
createdb -h "$sock" -p "$port" shop
log "4. the roles connect to localhost with the passwords of ~/.pgpass"
export PGPASSFILE=$work/pgpass
sed -n "/^cat >> ~\/.pgpass <<'EOF'$/,/^EOF$/p" "$page" | sed '1d;$d' | sed "s/^localhost:5432:/localhost:$port:/" > "$PGPASSFILE"
chmod 600 "$PGPASSFILE"
[ "$(wc -l < "$PGPASSFILE")" -eq 4 ] || fail "the page's ~/.pgpass lines: $(cat "$PGPASSFILE")"
log "5. the page's SQL, each part as its role"
docs_sql_script "$page" "\\c \"host=localhost port=$port dbname=shop user=%s\"" \
  "\\c \"host=$sock port=$port dbname=shop user=postgres\"" > "$work/page.sql" || fail "the page's SQL does not say who runs it"
"${su_psql[@]}" -d shop -f "$work/page.sql" > "$work/page.log" 2>&1 || { tail -n 5 "$work/page.log" >&2; fail "the page's SQL"; }
as_role() { local role=$1; shift; psql -X -q -At -v ON_ERROR_STOP=1 "host=localhost port=$port dbname=shop user=$role" "$@"; }
watch() { as_role shop_watch -c "SELECT string_agg(job_type || ':' || status, ' ' ORDER BY id) FROM pgjq.jobs"; }
[ "$(watch)" = "receipt:completed survey:pending" ] || fail "after the psql producer and worker: $(watch)"
refusal=$(as_role shop_app -c "SELECT pgjq.enqueue('receipt', '{}')" 2>&1) && fail "shop_app enqueued into default"
quoted='permission denied: role "shop_app" does not hold the producer capability for queue "default"'
[[ "$refusal" == *"$quoted"* ]] || fail "the refusal is not the page's: $refusal"
on_page "$(printf '%s' "$quoted" | cut -c1-60)"

wait_for() { # wait_for WHAT EXPECTED: until the observer sees EXPECTED (a busy machine gets a minute)
  local i; for i in $(seq 600); do [ "$(watch)" = "$2" ] && return 0; sleep 0.1; done
  fail "$1: the observer sees $(watch), not $2"
}
stop_program() { # SIGTERM, as the page says, and it must exit by itself with status 0
  kill -TERM "$1"
  local i; for i in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && fail "$2 did not stop on SIGTERM"
  wait "$1" || fail "$2 exited with an error on SIGTERM"
}

log "6. Python: worker.py and producer.py from the page"
for program in producer.py worker.py; do
  page_program "$program" > "$work/$program"
  [ -s "$work/$program" ] || fail "the page has no $program"
done
[ "$(role_of "$work/producer.py")" = shop_app ] && [ "$(role_of "$work/worker.py")" = shop_worker ] \
  || fail "the Python programs' first lines do not name shop_app and shop_worker"
on_page "PGHOST=localhost PGDATABASE=shop PGUSER=shop_worker python3 worker.py"
on_page "PGHOST=localhost PGDATABASE=shop PGUSER=shop_app python3 producer.py 2"
(cd "$work" && env PGHOST=localhost PGPORT="$port" PGDATABASE=shop PGUSER=shop_worker "$python" worker.py) > "$work/worker.py.out" 2>&1 &
pids+=($!)
(cd "$work" && env PGHOST=localhost PGPORT="$port" PGDATABASE=shop PGUSER=shop_app "$python" producer.py 2) > "$work/producer.py.out" 2>&1 \
  || { cat "$work/producer.py.out" >&2; fail "producer.py"; }
wait_for "the Python worker" "receipt:completed survey:completed receipt:completed"
grep -q "(survey) completed" "$work/worker.py.out" && grep -q "(receipt) completed" "$work/worker.py.out" \
  || fail "worker.py did not say what it did: $(cat "$work/worker.py.out")"
stop_program "${pids[-1]}" worker.py

log "6. Python: the worker's wait does not sleep through a notification that came during a claim"
env PGHOST=localhost PGPORT="$port" PGDATABASE=shop PGUSER=shop_worker "$python" tests/python/notified_during_claim.py "$work" \
  || fail "the Python worker's wait slept through a notification that came during a claim"

log "7. C++: make client, make install-client, producer.cpp and worker.cpp from the page"
on_page "make -j2 client"
on_page "sudo make install-client"
make -s client
make -s install-client PREFIX="$work/prefix" >/dev/null
for program in pgjq pgjq-demo; do [ -x "$work/prefix/bin/$program" ] || fail "install-client did not install $program"; done
builds=$(grep '^g++ -std=c++17 -o .* $(pkg-config --cflags --libs pgjq)$' "$page") || fail "the page has no g++ command"
[ "$(wc -l <<<"$builds")" -eq 2 ] || fail "the page should build producer and worker: $builds"
for program in producer.cpp worker.cpp; do
  page_program "$program" > "$work/$program"
  [ -s "$work/$program" ] || fail "the page has no $program"
done
(cd "$work" && PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" bash -e -c "$builds") || fail "the page's g++ commands"
on_page "PGHOST=localhost PGDATABASE=shop PGUSER=shop_worker ./worker"
on_page "PGHOST=localhost PGDATABASE=shop PGUSER=shop_app ./producer 3"
[ "$(role_of "$work/producer.cpp")" = shop_app ] && [ "$(role_of "$work/worker.cpp")" = shop_worker ] \
  || fail "the C++ programs' first lines do not name shop_app and shop_worker"
env PGHOST=localhost PGPORT="$port" PGDATABASE=shop PGUSER=shop_worker "$work/worker" > "$work/worker.out" 2>&1 &
pids+=($!)
env PGHOST=localhost PGPORT="$port" PGDATABASE=shop PGUSER=shop_app "$work/producer" 3 > "$work/producer.out" 2>&1 \
  || { cat "$work/producer.out" >&2; fail "the C++ producer"; }
wait_for "the C++ worker" "receipt:completed survey:completed receipt:completed receipt:completed"
grep -q "receipt of order 3" "$work/worker.out" || fail "the C++ worker did not say what it did: $(cat "$work/worker.out")"
stop_program "${pids[-1]}" "the C++ worker"

echo "getting started: every step of $page ran as its role on a pg_createcluster cluster (PostgreSQL $major)"
