#!/usr/bin/env bash
# Runs every test of pgjq, on every PostgreSQL major it supports: the pg_regress suite, the isolation specs,
# the TAP crash/process tests, the client's Boost.Test suite, the documentation's SQL examples (each as the role
# its page names), the Python and psql examples, docs/getting-started.md followed on a pg_createcluster
# cluster, the command line, the dashboard in a headless browser, fuzzing and the package tests, each against
# its own throwaway cluster.
# - First against this system's PostgreSQL (the one its Debian release ships, scripts/lib.sh).
# - Then, for each other major of PGJQ_TEST_MAJORS (default: 15 17 18), in a Debian system that ships it,
#   which scripts/chroot.sh makes once and keeps: the suites whose outcome depends on the server's major;
#   then its Debian packages, built there and installed into a clean copy of that release
#   (scripts/deb_tests.sh). Formatting and the browser test run once, here. PGJQ_TEST_MAJORS=15 (say)
#   tests one major only.
# Installs missing Debian packages first (apt-get when root). PostgreSQL refuses to run as root, so as root
# the work continues as the `postgres` user in a copy of the tree (see reexec_unprivileged in
# scripts/lib.sh). Idempotent.
# The whole script is read before it runs: editing it meanwhile cannot change a run under way.
{
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# PGJQ_TEST_SCOPE: unset for the whole run; "here" for this system's major alone; "major" for the suites that
# depend on the major (what runs inside each other major's system).
if [ -z "${PGJQ_TEST_SCOPE:-}" ]; then
  majors=${PGJQ_TEST_MAJORS:-15 17 18}
  lanes=$PWD/build/test-lanes
  rm -rf "$lanes"; mkdir -p "$lanes"
  # Each other major is a lane of its own, run beside this system's: its suites in its Debian system, then its
  # packages. The suites mostly wait (for leases to end, workers to start, servers to stop), so lanes side by
  # side take little longer than the longest of them; each lane's output is kept and shown when it is done.
  other_major() {
    local major=$1 status=0
    log "PostgreSQL $major, in a Debian $(debian_suite_of_major "$major") system (scripts/chroot.sh)"
    if bash scripts/chroot.sh "$major" env PGJQ_TEST_SCOPE=major bash scripts/test.sh; then
      echo "PostgreSQL $major: passed" >> "$lanes/$major.results"
    else
      echo "PostgreSQL $major: FAILED" >> "$lanes/$major.results"; status=1
    fi
    if bash scripts/deb_tests.sh "$major"; then
      echo "Debian packages for PostgreSQL $major: passed" >> "$lanes/$major.results"
    else
      echo "Debian packages for PostgreSQL $major: FAILED" >> "$lanes/$major.results"; status=1
    fi
    return "$status"
  }
  pids=(); others=()
  # A lane is a process group of its own (setsid), so that an interrupted run stops every lane's servers too.
  trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done' INT TERM
  export -f other_major log die debian_suite_of_major
  for major in $majors; do
    [ "$major" = "$PGJQ_PG_MAJOR" ] && continue
    lanes=$lanes setsid bash -c 'other_major "$1"' lane "$major" > "$lanes/$major.log" 2>&1 &
    pids+=($!); others+=("$major")
  done
  status=0
  if [[ " $majors " == *" $PGJQ_PG_MAJOR "* ]]; then
    if PGJQ_TEST_SCOPE=here bash "$0" "$@"; then
      echo "PostgreSQL $PGJQ_PG_MAJOR: passed" > "$lanes/$PGJQ_PG_MAJOR.results"
    else
      echo "PostgreSQL $PGJQ_PG_MAJOR: FAILED" > "$lanes/$PGJQ_PG_MAJOR.results"; status=1
    fi
  fi
  for i in "${!others[@]}"; do
    wait "${pids[i]}" || status=1
    echo
    log "the lane of PostgreSQL ${others[i]} ($lanes/${others[i]}.log):"
    cat "$lanes/${others[i]}.log"
  done
  echo
  for major in $majors; do cat "$lanes/$major.results" 2>/dev/null || echo "PostgreSQL $major: FAILED (no result)"; done
  exit "$status"
fi

ensure_packages "${PGJQ_TEST_PACKAGES[@]}"
[ "$PGJQ_TEST_SCOPE" = here ] && ensure_packages "${PGJQ_ONCE_TEST_PACKAGES[@]}"
reexec_unprivileged test.sh "$@"

log "building and staging the extension for PostgreSQL $PGJQ_PG_MAJOR"
export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)
export PATH="$STAGE_BIN:$PATH"
mkdir -p build/test-output

passed=0; failed=0; failures=()
run_suite() {
  local name=$1; shift
  log "suite: $name (PostgreSQL $PGJQ_PG_MAJOR)"
  local started=$SECONDS
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
  log "suite: $name took $((SECONDS - started)) s"
}
# Suites that read no server, or drive one the same way on every major, run once: on this system.
once() { [ "$PGJQ_TEST_SCOPE" = here ]; }
once && run_suite "formatting (clang-format)" bash scripts/format.sh --check
run_suite "regression (pg_regress)" \
  bash -c 'make -s installcheck PGJQ_EXTENSION_ONLY=1 ISOLATION= TAP_TESTS= || { for f in build/test-output/regress/regression.diffs; do [ -s "$f" ] && head -n 300 "$f"; done; exit 1; }'
run_suite "isolation (concurrency specs)" \
  bash -c 'make -s installcheck PGJQ_EXTENSION_ONLY=1 REGRESS= TAP_TESTS= || { for f in build/test-output/isolation/regression.diffs; do [ -s "$f" ] && head -n 300 "$f"; done; exit 1; }'
run_suite "TAP (maintenance worker, crashes, upgrades)" bash scripts/tap_tests.sh
run_suite "client (Boost.Test)" bash scripts/client_tests.sh
run_suite "documentation examples" bash scripts/docs_tests.sh
run_suite "examples (a worker in any language: Python, psql)" bash scripts/examples_tests.sh
run_suite "getting started (docs/getting-started.md, on a pg_createcluster cluster)" bash scripts/getting_started_tests.sh
run_suite "the pgjq command line" bash scripts/cli_tests.sh
once && run_suite "the dashboard (pgjq web, in headless Chromium)" bash scripts/web_tests.sh
run_suite "fuzzing (sqlsmith, random calls)" bash scripts/fuzz.sh
once && run_suite "release metadata and client package (pkg-config, CMake, exports)" bash scripts/package_tests.sh

echo
for failure in "${failures[@]}"; do printf 'failed suite (PostgreSQL %s): %s\n' "$PGJQ_PG_MAJOR" "$failure"; done
echo "suites on PostgreSQL $PGJQ_PG_MAJOR: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
exit
}
