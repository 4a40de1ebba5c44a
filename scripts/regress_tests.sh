#!/usr/bin/env bash
# Runs the pg_regress suite (sql/, expected/) and the isolation specs (tests/isolation/) against the staged
# install, in temporary instances; scripts/test.sh runs the same through its suites. As root it re-executes
# itself as the postgres user in a copy of the tree (PostgreSQL refuses root; see scripts/lib.sh).
#   bash scripts/regress_tests.sh                                  both suites
#   REGRESS="02_enqueue 03_claim" ISOLATION= bash scripts/regress_tests.sh   two regression files only
#   REGRESS= ISOLATION="fifo_concurrent" bash scripts/regress_tests.sh       one isolation spec only
# Diffs are printed on failure; the outputs are in build/test-output/{regress,isolation}.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
reexec_unprivileged regress_tests.sh "$@"
ensure_packages

bash scripts/stage.sh >/dev/null
mkdir -p build/test-output
args=(PGJQ_EXTENSION_ONLY=1 TAP_TESTS=)
[ -n "${REGRESS+set}" ] && args+=("REGRESS=$REGRESS")
[ -n "${ISOLATION+set}" ] && args+=("ISOLATION=$ISOLATION")
status=0
make -s installcheck "${args[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  for f in build/test-output/regress/regression.diffs build/test-output/isolation/regression.diffs; do
    [ -s "$f" ] && head -n 300 "$f"
  done
fi
exit "$status"
