#!/usr/bin/env bash
# Runs every SQL example of the documentation, so that the docs cannot drift from the code: the ```sql blocks
# of README.md and docs/*.md, in the order they appear, one database per page (with pgjq created unless the
# page creates it), through psql with ON_ERROR_STOP on a throwaway cluster with pgjq preloaded. An example
# that fails names its page. As root it re-executes itself as the postgres user (scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
reexec_unprivileged docs_tests.sh "$@"
ensure_packages

export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)
cluster=$PWD/build/docs-tests
trap 'stop_cluster "$cluster"' EXIT
start_cluster "$cluster" "shared_preload_libraries = 'pgjq'" "log_min_messages = warning"
mkdir -p build/docs-tests/examples

failed=0; pages=0
for page in README.md docs/*.md; do
  out=build/docs-tests/examples/$(basename "$page" .md).sql
  # the lines between ```sql and the closing ```
  awk '/^```sql[[:space:]]*$/ {inside = 1; next} /^```/ {inside = 0} inside' "$page" > "$out"
  [ -s "$out" ] || continue
  pages=$((pages + 1))
  db=docs_$(basename "$page" .md | tr -c 'a-z0-9\n' '_')
  "$STAGE_BIN/psql" -X -q -d "$PGJQ_CONNINFO" -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" \
    -c "CREATE DATABASE $db"
  conn="${PGJQ_CONNINFO/dbname=postgres/dbname=$db}"
  grep -qi 'CREATE EXTENSION pgjq' "$out" || "$STAGE_BIN/psql" -X -q -d "$conn" -c 'CREATE EXTENSION pgjq'
  if "$STAGE_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$conn" -f "$out" > "build/docs-tests/examples/$db.log" 2>&1; then
    echo "ok: the SQL examples of $page ($(grep -c ';' "$out") statements)"
  else
    echo "FAILED: the SQL examples of $page (extracted to $out):" >&2
    tail -n 5 "build/docs-tests/examples/$db.log" >&2
    failed=$((failed + 1))
  fi
done
echo "documentation examples: $pages pages, $failed failed"
[ "$failed" -eq 0 ]
