#!/usr/bin/env bash
# Runs the background-worker TAP tests (tests/t/*.pl) with prove against the staged install; each test
# makes its own throwaway clusters with PostgreSQL::Test::Cluster. PostgreSQL refuses to run as root,
# so as root this re-executes itself as the postgres user in a copy of the tree (scripts/lib.sh).
#   PROVE_TESTS="tests/t/002_crash_restart.pl" bash scripts/tap_tests.sh    one test
#   PROVE_FLAGS="--verbose" bash scripts/tap_tests.sh                        more output
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
reexec_unprivileged tap_tests.sh "$@"
ensure_packages

bin=$(bash scripts/stage.sh | tail -n 1)
pgxs_src=$(dirname "$(dirname "$(pg_config --pgxs)")")      # .../lib/pgxs/src
out=$PWD/build/tap
rm -rf "$out/tmp_check"
mkdir -p "$out"

# A worker that only LISTENs (never polls), for the due-job tests.
cc -O2 -Wall -o "$out/pgjq_listen" tests/t/helpers/pgjq_listen.c \
   -I"$(pg_config --includedir)" -L"$(pg_config --libdir)" -lpq

export PATH="$bin:$PATH"
export PERL5LIB="$pgxs_src/test/perl:$PWD/tests/t${PERL5LIB:+:$PERL5LIB}"
export PG_REGRESS="$pgxs_src/test/regress/pg_regress"
export TESTDIR=$out
export PGJQ_LISTEN=$out/pgjq_listen
unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE

# shellcheck disable=SC2086
if ! prove ${PROVE_FLAGS:---timer} ${PROVE_TESTS:-tests/t/*.pl}; then
  log "TAP tests failed; server and test logs are in $out/tmp_check/log"
  exit 1
fi
