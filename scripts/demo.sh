#!/usr/bin/env bash
# Builds pgjq, installs it, starts a private throwaway cluster and runs the demo (bin: build/pgjq-demo)
# against it. As root the extension is also installed system-wide, so CREATE EXTENSION pgjq works in
# your own clusters; as another user it is installed only into the private tree under build/stage.
# Installs missing Debian packages first (apt-get when root). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages
if [ "$(id -u)" -eq 0 ]; then
  log "building and installing pgjq system-wide"
  make -s PGJQ_EXTENSION_ONLY=1 all
  make -s PGJQ_EXTENSION_ONLY=1 install >/dev/null
fi
reexec_unprivileged demo.sh "$@"

log "building the extension, client and demo"
export STAGE_BIN; STAGE_BIN=$(bash scripts/stage.sh | tail -n 1)
make -s client >/dev/null
cluster=${TMPDIR:-/tmp}/pgjq-demo-$(id -u)
trap 'stop_cluster "$cluster"' EXIT
log "starting a throwaway cluster in $cluster"
start_cluster "$cluster"
psql -X -q "$PGJQ_CONNINFO" -c 'CREATE EXTENSION IF NOT EXISTS pgjq'
echo
build/pgjq-demo "$PGJQ_CONNINFO"
