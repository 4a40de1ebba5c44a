#!/usr/bin/env bash
# Runs the C++ client tests (build/tests/test_client) against a throwaway cluster built from the staged
# tree, with CREATE EXTENSION pgjq done, and a PgBouncer in transaction mode in front of it (for
# tests/client/test_pooler.cpp). Extra arguments go to Boost.Test (e.g. --run_test=errors).
# As root it re-executes itself as the postgres user on a copy of the tree (PostgreSQL refuses root).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages pgbouncer
reexec_unprivileged client_tests.sh "$@"

STAGE_DIR=${STAGE_DIR:-$PWD/build/stage}
export STAGE_DIR
STAGE_BIN=$STAGE_DIR/runtime$(pg_bindir)
export STAGE_BIN

log "staging the extension and building the client"
bash scripts/stage.sh >/dev/null
make -s client client-tests

cluster=$PWD/build/client-tests
trap 'stop_pgbouncer "$cluster"; stop_cluster "$cluster"' EXIT
# track_functions lets a test count the worker's complete/complete_batch calls; the maintenance worker
# is not preloaded so that no background pass changes job states under the tests (as in regress.conf).
start_cluster "$cluster" "track_functions = 'all'" "log_min_messages = warning"
log "cluster up: $PGJQ_CONNINFO"
"$STAGE_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$PGJQ_CONNINFO" -c 'CREATE EXTENSION pgjq'
# One server session per database and user: every pooled client of a test shares it, as on a busy pool.
# PgBouncer 1.21 and later track protocol-level prepared statements by default, which PgBouncer 1.18
# (Debian 12) cannot: tests/client/test_pooler.cpp means the plain shared pool that every version offers.
pooler_settings=("default_pool_size = 1")
pgbouncer_tracks_prepared_statements && pooler_settings+=("max_prepared_statements = 0")
start_pgbouncer "$cluster" "${pooler_settings[@]}"
log "PgBouncer (transaction pooling) up: $PGJQ_POOLED_CONNINFO"

export PGJQ_TEST_PGCTL=$STAGE_BIN/pg_ctl
export PGJQ_TEST_PGDATA=$cluster/data
export PGJQ_TEST_PGLOG=$cluster/server.log
log "running build/tests/test_client"
status=0
build/tests/test_client --report_level=short "$@" || status=$?
if [ "$status" -ne 0 ]; then
  log "server log tail ($cluster/server.log):"
  tail -n 40 "$cluster/server.log" >&2 || true
  log "PgBouncer log tail ($cluster/pgbouncer.log):"
  tail -n 20 "$cluster/pgbouncer.log" >&2 || true
fi
exit "$status"
