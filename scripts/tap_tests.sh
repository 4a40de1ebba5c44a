#!/usr/bin/env bash
# Runs the TAP tests (tests/t/*.pl: the maintenance worker, crashes, upgrades, dump and restore) with
# `make installcheck` against the staged install; each test makes its own throwaway clusters with
# PostgreSQL::Test::Cluster. PostgreSQL refuses to run as root, so as root this re-executes itself as the
# postgres user in a copy of the tree (scripts/lib.sh).
#   PROVE_TESTS="tests/t/002_crash_restart.pl" bash scripts/tap_tests.sh    one test
#   PROVE_FLAGS="--verbose" bash scripts/tap_tests.sh                        more output
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages prometheus prometheus-postgres-exporter "postgresql-$PGJQ_PG_MAJOR-plproxy"   # while root may still install them
reexec_unprivileged tap_tests.sh "$@"
ensure_packages

bash scripts/stage.sh >/dev/null
make -s build/tap/pgjq_drain build/tap/pgjq_cluster build/pgjq   # the client's worker (failover), cluster client, command line
unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE
args=(PGJQ_EXTENSION_ONLY=1 REGRESS= ISOLATION= "PROVE_FLAGS=${PROVE_FLAGS:---timer}" "PGJQ_DRAIN=$PWD/build/tap/pgjq_drain" "PGJQ_CLUSTER=$PWD/build/tap/pgjq_cluster" "PGJQ_CLI=$PWD/build/pgjq")
[ -n "${PROVE_TESTS:-}" ] && args+=("PROVE_TESTS=$PROVE_TESTS")
if ! make -s installcheck "${args[@]}"; then
  log "TAP tests failed; server and test logs are in $PWD/tmp_check/log"
  exit 1
fi
