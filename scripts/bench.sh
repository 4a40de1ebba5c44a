#!/usr/bin/env bash
# `make bench`: builds pgjq and build/pgjq-bench, starts a private throwaway cluster with the durability of a
# default install (fsync on, synchronous_commit on) listening on 127.0.0.1 on a free port, runs the peer
# queues (pg-boss, graphile-worker: bench/peers/, whose pinned packages and Node.js come from the npm
# registry; skipped with a message when npm or the registry is missing) and then pgjq-bench (pgjq and the
# recipe of bench/recipe.sql, back to back), and writes build/bench/: results.md, results.csv, *.png,
# machine.txt. Prints the Markdown table. Needs nothing outside the repository. Never part of the tests or CI.
#
#   bash scripts/bench.sh [--quick] [pgjq-bench options...]
#   PEER_JOBS=100000 PEER_RUNS=3 (defaults) set the peers' job count and runs; --quick shrinks everything
#   for a smoke run of a couple of minutes whose numbers are not comparable with a full run.
#
# As root the work continues as the `postgres` user (PostgreSQL refuses to run as root) in a copy of the tree
# of its own (/var/tmp/pgjq-bench-*): not reexec_unprivileged's copy, which scripts/test.sh replaces when it
# starts, and which would pull the staged server from under a bench running at the same time. The results are
# written straight into this tree's build/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

if [ -z "${PGJQ_BENCH_INNER:-}" ]; then
  ensure_packages gnuplot-nox "postgresql-$PGJQ_PG_MAJOR-plproxy"
  PGJQ_BENCH_OUT=${PGJQ_BENCH_OUT:-$PWD/build/bench}
  mkdir -p "$PGJQ_BENCH_OUT"
  export PGJQ_BENCH_OUT PGJQ_BENCH_INNER=1
  if [ "$(id -u)" -eq 0 ]; then
    src=$PWD
    work=/var/tmp/pgjq-bench-$(printf '%s' "$src" | md5sum | cut -c1-12)
    log "running as user postgres in $work (PostgreSQL refuses to run as root)"
    mkdir -p "$work/src"
    # keep the previous build directory so that reruns are incremental, but not the files since deleted or
    # renamed in this tree (a stale source would still be compiled and linked)
    (cd "$work/src" && find . -path ./build -prune -o -type f ! -name '*.o' ! -name '*.so' ! -name '*.bc' ! -name '*.d' -print) |
      while IFS= read -r f; do [ -e "$src/$f" ] || rm -f "$work/src/$f"; done
    tar -C "$src" --exclude=./.git --exclude=./build --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . \
      | tar -C "$work/src" -xf -
    chown -R postgres:postgres "$work"
    chown -R postgres:postgres "$PGJQ_BENCH_OUT"
    rc=0
    runuser -u postgres -- env -u HOME HOME=/var/lib/postgresql bash "$work/src/scripts/bench.sh" "$@" || rc=$?
    chown -R "$(stat -c %u:%g "$src")" "$PGJQ_BENCH_OUT"
    exit $rc
  fi
fi

out=$PGJQ_BENCH_OUT
quick=0
peers_wanted=1   # the peers' figures only appear beside the end-to-end scenario
cluster_wanted=1 # the cluster scenario needs three nodes and a router of their own
for a in "$@"; do
  [ "$a" = --quick ] && quick=1
  case $a in --scenarios=*) [[ ,${a#--scenarios=}, == *,e2e,* ]] || peers_wanted=0
                            [[ ,${a#--scenarios=}, == *,cluster,* ]] || cluster_wanted=0 ;; esac
done
peer_jobs=${PEER_JOBS:-100000}; peer_runs=${PEER_RUNS:-3}
[ $quick -eq 1 ] && { peer_jobs=${PEER_JOBS:-10000}; peer_runs=${PEER_RUNS:-1}; }
started=$(date +%s)

log "building and staging the extension, building pgjq-bench"
export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)
export PATH="$STAGE_BIN:$PATH"
if grep -q 'src/bench/bench.mk' Makefile; then make -s bench-bin; else make -s -f Makefile -f src/bench/bench.mk bench-bin; fi

port=54329
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
cluster=${TMPDIR:-/tmp}/pgjq-bench-$(id -u)
cluster_dirs=("$cluster")
trap 'for d in "${cluster_dirs[@]}"; do stop_cluster "$d"; done' EXIT
log "starting a throwaway cluster in $cluster (127.0.0.1:$port)"
# pgjq as documented for production: preloaded, so that its maintenance worker runs and relays the
# notifications (see docs/sql-api.md, Notifications); everything else stays at the defaults.
start_cluster "$cluster" "listen_addresses = '127.0.0.1'" "port = $port" "shared_preload_libraries = 'pgjq'"
base="host=$(cat "$cluster/socket_dir") port=$port user=postgres"
psql -X -q "$base dbname=postgres" -c "CREATE DATABASE pgjq_bench" -c "CREATE DATABASE recipe_bench"
# The launcher would start the database's maintenance worker (and so the notification relay) only at its
# next look, up to pgjq.launcher_naptime (30 s) later: without it the first scenarios would measure
# direct NOTIFYs and no live_jobs vacuum.
psql -X -q "$base dbname=pgjq_bench" -c "CREATE EXTENSION pgjq" -c "SELECT pgjq.start_worker()" >/dev/null
psql -X -q "$base dbname=recipe_bench" -f bench/recipe.sql >/dev/null

# The cluster scenario: three nodes and a router (pgjq_router), each an instance of its own on this machine,
# with the same settings as the cluster above (docs/scale-out.md).
cluster_args=()
if [ $cluster_wanted -eq 1 ]; then
  log "starting three nodes and a router for the cluster scenario"
  nodes=()
  for n in 0 1 2; do
    cluster_dirs+=("$cluster-node$n")
    start_cluster "$cluster-node$n" "shared_preload_libraries = 'pgjq'"
    psql -X -q -d "$PGJQ_CONNINFO" -c "CREATE EXTENSION pgjq" -c "SELECT pgjq.start_worker()" >/dev/null
    nodes+=("${PGJQ_CONNINFO/ user=postgres/}")   # a node's conninfo names no user: each role connects as itself
  done
  cluster_dirs+=("$cluster-router")
  start_cluster "$cluster-router"
  psql -X -q -d "$PGJQ_CONNINFO" -c "CREATE EXTENSION pgjq_router CASCADE" >/dev/null
  for conninfo in "${nodes[@]}"; do
    psql -X -q -d "$PGJQ_CONNINFO" -v conninfo="$conninfo" <<< "SELECT pgjq_router.add_node(:'conninfo');" >/dev/null
  done
  cluster_args=(--cluster="$PGJQ_CONNINFO")
fi

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "uname: $(uname -a)"
  echo "memory:"; free -h
  echo "server: $(psql -X -At "$base dbname=postgres" -c 'SELECT version()')"
  echo "settings (non-default ones are those of the throwaway cluster: socket, port, listen_addresses, max_connections, shared_preload_libraries):"
  psql -X -At -F ' = ' "$base dbname=postgres" -c "SELECT name, current_setting(name) FROM pg_settings
     WHERE name IN ('fsync','synchronous_commit','wal_sync_method','full_page_writes','shared_buffers','work_mem',
                    'max_wal_size','checkpoint_timeout','autovacuum','max_connections','wal_level','jit')
        OR (source NOT IN ('default','override') AND name NOT LIKE 'lc\_%' AND name <> 'application_name')
     ORDER BY name" | sed 's/^/  /'
} > "$out/machine.txt"
cat "$out/machine.txt"

rm -f "$out/peers.jsonl"
if [ $peers_wanted -eq 0 ]; then
  echo "peers: skipped, the end-to-end scenario (e2e) is not among --scenarios" >&2
elif command -v npm >/dev/null 2>&1; then
  log "peers: pg-boss and graphile-worker, $peer_jobs jobs, $peer_runs runs (log: $out/peers.log); their pinned npm packages and Node.js are installed from the npm registry once, into ~/.cache/pgjq-bench-peers"
  if PEER_TIMEOUT_S=${PEER_TIMEOUT_S:-300} timeout 1800 bash bench/peers/run.sh \
       "postgresql://postgres@127.0.0.1:$port" "$peer_jobs" "$peer_runs" >"$out/peers.jsonl" 2>"$out/peers.log"; then
    cat "$out/peers.jsonl"
  else
    echo "peers: the harness failed (exit $?); see $out/peers.log; the table will have no peer figures" >&2
  fi
  psql -X -q "$base dbname=postgres" -c "DROP DATABASE IF EXISTS peer_pgboss" -c "DROP DATABASE IF EXISTS peer_graphile"
else
  echo "peers: skipped, npm is not installed (apt-get install npm); the table will have no peer figures" >&2
fi

log "pgjq-bench (pgjq and the recipe of bench/recipe.sql)"
build/pgjq-bench --pgjq="$base dbname=pgjq_bench" --recipe="$base dbname=recipe_bench" \
  --recipe-sql=bench/recipe.sql --out="$out" --peers="$out/peers.jsonl" \
  --e2e-jobs="$peer_jobs" "${cluster_args[@]}" "$@" >/dev/null

log "plots"
(cd "$out" && gnuplot plots.gp) || echo "gnuplot failed; the .dat files and plots.gp are in $out" >&2

echo
cat "$out/results.md"
echo
echo "written to $out: results.md results.csv machine.txt $(cd "$out" && ls ./*.png 2>/dev/null | tr '\n' ' ')"
echo "total time: $(( $(date +%s) - started )) s"
