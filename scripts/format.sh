#!/usr/bin/env bash
# Formats the C++ with clang-format: src/extension by its own .clang-format (src/router, also code inside
# PostgreSQL, links to it), everything else by the root one.
#   bash scripts/format.sh           rewrite the files in place
#   bash scripts/format.sh --check   change nothing; fail and name the files that differ (run by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages clang-format

mapfile -t files < <(git ls-files 2>/dev/null | grep -E '^(src|tests)/.*\.(cpp|hpp)$' ||
                     find src tests -name '*.cpp' -o -name '*.hpp')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'not formatted (run bash scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "${#files[@]} files formatted as .clang-format says"
else
  clang-format -i "${files[@]}"
fi
