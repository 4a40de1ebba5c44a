#!/usr/bin/env bash
# Runs every test of pgjq: the pg_regress suite, the isolation specs, the TAP crash/process tests, the
# client's Boost.Test suite, the documentation's SQL examples, the Python and psql examples, the command line, the
# dashboard in a headless browser, fuzzing and the client package test, each
# against its own throwaway cluster. Installs
# missing Debian packages first (apt-get when root). PostgreSQL refuses to run as root, so as root the work
# continues as the `postgres` user in a copy of the tree (see reexec_unprivileged in scripts/lib.sh).
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages "${PGJQ_TEST_PACKAGES[@]}"
reexec_unprivileged test.sh "$@"

log "building and staging the extension"
export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)
export PATH="$STAGE_BIN:$PATH"
mkdir -p build/test-output

passed=0; failed=0; failures=()
run_suite() {
  local name=$1; shift
  log "suite: $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}
run_suite "formatting (clang-format)" bash scripts/format.sh --check
run_suite "regression (pg_regress)" \
  bash -c 'make -s installcheck PGJQ_EXTENSION_ONLY=1 ISOLATION= TAP_TESTS= || { for f in build/test-output/regress/regression.diffs; do [ -s "$f" ] && head -n 300 "$f"; done; exit 1; }'
run_suite "isolation (concurrency specs)" \
  bash -c 'make -s installcheck PGJQ_EXTENSION_ONLY=1 REGRESS= TAP_TESTS= || { for f in build/test-output/isolation/regression.diffs; do [ -s "$f" ] && head -n 300 "$f"; done; exit 1; }'
run_suite "TAP (maintenance worker, crashes, upgrades)" bash scripts/tap_tests.sh
run_suite "client (Boost.Test)" bash scripts/client_tests.sh
run_suite "documentation examples" bash scripts/docs_tests.sh
run_suite "examples (a worker in any language: Python, psql)" bash scripts/examples_tests.sh
run_suite "the pgjq command line" bash scripts/cli_tests.sh
run_suite "the dashboard (pgjq web, in headless Chromium)" bash scripts/web_tests.sh
run_suite "fuzzing (sqlsmith, random calls)" bash scripts/fuzz.sh
run_suite "release metadata and client package (pkg-config, CMake, exports)" bash scripts/package_tests.sh

echo
[ ${#failures[@]} -eq 0 ] || printf 'failed suite: %s\n' "${failures[@]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
