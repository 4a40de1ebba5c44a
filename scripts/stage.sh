#!/usr/bin/env bash
# Builds a runnable PostgreSQL tree under build/stage/runtime that sees pgjq as installed, without touching
# the system: PostgreSQL finds its share/ and lib/ directories relative to its own binary, so the server
# binaries are copied (PG15 resolves symlinks) and everything else is linked to the system installation.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
stage=${STAGE_DIR:-$PWD/build/stage}
pg_config=${PG_CONFIG:-pg_config}
bindir=$($pg_config --bindir); libdir=$($pg_config --pkglibdir); sharedir=$($pg_config --sharedir)

# what docs/getting-started.md has a user run, into a private directory instead of the system's
make -s extension
rm -rf "$stage/dest"
make -s install-extension DESTDIR="$stage/dest" >/dev/null

rt=$stage/runtime
rm -rf "$rt"
mkdir -p "$rt$bindir" "$rt$libdir" "$rt$sharedir/extension"
for b in "$bindir"/*; do
  case "$(basename "$b")" in
    postgres|initdb|pg_ctl) cp "$b" "$rt$bindir/" ;;
    *) ln -s "$b" "$rt$bindir/" ;;
  esac
done
for f in "$libdir"/*; do ln -s "$f" "$rt$libdir/"; done
for f in "$sharedir"/*; do [ "$(basename "$f")" = extension ] || ln -s "$f" "$rt$sharedir/"; done
for f in "$sharedir"/extension/*; do ln -s "$f" "$rt$sharedir/extension/"; done
for f in "$stage/dest$libdir"/*; do ln -sf "$f" "$rt$libdir/"; done
for f in "$stage/dest$sharedir"/extension/*; do ln -sf "$f" "$rt$sharedir/extension/"; done
echo "$rt$bindir"
