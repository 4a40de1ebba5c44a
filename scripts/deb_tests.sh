#!/usr/bin/env bash
# pgjq's Debian packages as a user takes them, for PostgreSQL MAJOR: built in that major's Debian system
# (scripts/chroot.sh, scripts/deb.sh), then installed with apt into a clean copy of the same release, where
# the cluster that installing postgresql-MAJOR made (the Debian way, pg_createcluster) preloads pgjq, gets
# CREATE EXTENSION pgjq, runs the demo, and shows its maintenance worker.
#   bash scripts/deb_tests.sh 17
# The whole script is read before it runs: editing it meanwhile cannot change a run under way.
{
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
major=${1:?usage: deb_tests.sh MAJOR}
suite=$(debian_suite_of_major "$major") || die "no Debian release that pgjq tests on ships PostgreSQL $major"
debs=$(mktemp -d /tmp/pgjq-debs.XXXXXX)
trap 'rm -rf "$debs"' EXIT

log "building the Debian packages for PostgreSQL $major (Debian $suite)"
bash scripts/chroot.sh "$major" bash -c 'bash scripts/deb.sh && rm -rf /with-out && mkdir /with-out && cp build/deb/*.deb /with-out/'
chroots=${PGJQ_CHROOTS:-/var/cache/pgjq/chroots}
cp "$chroots/$suite/with-out/"*.deb "$debs/" 2>/dev/null || die "no package was built"
ls "$debs"

log "installing them with apt into a clean Debian $suite, and using them there"
bash scripts/chroot.sh "$major" --clean --with "$debs" bash -c '
  set -euo pipefail
  major=$1
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends /with/postgresql-$major-pgjq_*.deb /with/pgjq-client_*.deb >/dev/null
  pg_lsclusters
  pg_conftool "$major" main set shared_preload_libraries pgjq
  # Unix socket only: the chroots share the network of the host, where the lane of another major (or
  # anything else) may hold localhost:5432.
  echo "listen_addresses = '"'"''"'"'" > "/etc/postgresql/$major/main/conf.d/pgjq-tests.conf"
  pg_ctlcluster "$major" main restart
  runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pgjq" \
    -c "SELECT pgjq.enqueue(job_type => '"'"'packaged'"'"', payload => '"'"'{}'"'"')"
  runuser -u postgres -- pgjq-demo "dbname=postgres"
  # The command line of pgjq-client, against the packaged server.
  runuser -u postgres -- pgjq -d "dbname=postgres" status
  # with its manual page and completion scripts, where man, bash-completion and zsh look
  for f in /usr/share/man/man1/pgjq.1.gz /usr/share/bash-completion/completions/pgjq /usr/share/zsh/vendor-completions/_pgjq; do
    [ -s "$f" ] || { echo "pgjq-client lacks $f" >&2; exit 1; }
  done
  zcat /usr/share/man/man1/pgjq.1.gz | grep -q "^.SS \"pgjq delete" || { echo "the packaged man page lacks pgjq delete" >&2; exit 1; }
  # With preload the launcher serves the database; start_worker() asks it for the worker now.
  runuser -u postgres -- psql -X -At -c "SELECT pgjq.start_worker() > 0" | grep -qx t \
    || { echo "no maintenance worker serves the database" >&2; exit 1; }
  pg_ctlcluster "$major" main stop
' debs-in-clean-system "$major"
echo "Debian packages for PostgreSQL $major: built, installed and used"
exit
}
