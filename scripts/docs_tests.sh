#!/usr/bin/env bash
# Runs every SQL example of the documentation, so that the docs cannot drift from the code: the ```sql blocks
# of README.md and docs/*.md, in the order they appear, one database per page (with pgjq created unless the
# page creates it), through psql with ON_ERROR_STOP on a throwaway cluster with pgjq preloaded. Each part
# runs in a session of the role the page says runs it ("-- as a producer", "-- as app", ...: see
# docs_sql_script in scripts/lib.sh), never as the superuser unless the page says so, so an example that
# needs more rights than its role holds fails here as it would for a user. An example that fails names its
# page. As root it re-executes itself as the postgres user (scripts/lib.sh).
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
psql=("$STAGE_BIN/psql" -X -q -v ON_ERROR_STOP=1)

# The roles "-- as a producer" (and a worker, an observer, an admin) name: each holds its capability for
# every queue, granted below in each page's database, and nothing else (no superuser, no table privilege).
fixtures=(producer worker observer admin)
for cap in "${fixtures[@]}"; do
  "${psql[@]}" -d "$PGJQ_CONNINFO" -c "CREATE ROLE docs_$cap LOGIN"
done

failed=0; pages=0
for page in README.md docs/*.md; do
  grep -q '^```sql' "$page" || continue
  pages=$((pages + 1))
  name=$(basename "$page" .md)
  out=build/docs-tests/examples/$name.sql
  log=build/docs-tests/examples/$name.log
  db=docs_$(printf '%s' "$name" | tr -c 'a-z0-9' '_')
  conn="${PGJQ_CONNINFO/dbname=postgres/dbname=$db}"
  if ! docs_sql_script "$page" '\c - %s' '\c - postgres' > "$out" 2> "$log"; then
    echo "FAILED: $page does not say who runs each SQL example:" >&2; cat "$log" >&2
    failed=$((failed + 1)); continue
  fi
  "${psql[@]}" -d "$PGJQ_CONNINFO" -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" \
    -c "CREATE DATABASE $db"
  if grep -qi 'CREATE EXTENSION pgjq' "$out"; then
    # The page sets pgjq up itself, so it also makes and names the roles it runs its examples as.
    if grep -q '^\\c - docs_' "$out"; then
      echo "FAILED: $page creates pgjq itself, so it must name the roles it creates, not \"a producer\" (...)" >&2
      failed=$((failed + 1)); continue
    fi
  else
    grants=(-c 'CREATE EXTENSION pgjq')
    for cap in "${fixtures[@]}"; do grants+=(-c "SELECT pgjq.grant_$cap('docs_$cap')"); done
    "${psql[@]}" -d "$conn" "${grants[@]}" >/dev/null
  fi
  if "${psql[@]}" -d "$conn" -f "$out" > "$log" 2>&1; then
    # a role the page names must not be a superuser: its part would prove nothing about the role's rights
    roles=$(sed -n 's/^\\c - \([A-Za-z0-9_]*\)$/\1/p' "$out" | sort -u | { grep -vx postgres || true; } | paste -sd, -)
    supers=$("${psql[@]}" -At -d "$PGJQ_CONNINFO" -c "SELECT string_agg(rolname, ', ') FROM pg_roles
               WHERE rolsuper AND rolname = ANY (string_to_array('$roles', ','))")
    who=${roles//,/, }
    grep -q '^\\c - postgres$' "$out" && who="${who:+$who and }the superuser"
    if [ -n "$supers" ]; then
      echo "FAILED: $page runs examples as $supers, which are superusers" >&2
      failed=$((failed + 1))
    else
      echo "ok: the SQL examples of $page ($(grep -c ';' "$out") statements, as $who)"
    fi
  else
    echo "FAILED: the SQL examples of $page (as psql ran them: $out):" >&2
    tail -n 5 "$log" >&2
    failed=$((failed + 1))
  fi
done
echo "documentation examples: $pages pages, $failed failed"
[ "$failed" -eq 0 ]
