#!/usr/bin/env bash
# Builds pgjq's Debian packages for the PostgreSQL majors installed here that debian/pgversions allows (15 and
# later): postgresql-NN-pgjq for each (pg_buildext), and pgjq-client (the C++ client library, its headers,
# pkg-config and CMake files, the `pgjq` command line and `pgjq-demo`). The packages land in build/deb/.
# debian/changelog and debian/control are written in a copy of the tree, from pgjq.control's version and
# debian/control.in, so that neither becomes a second home of the version or of the majors. Installs the
# build dependencies first (apt-get when root).
#   bash scripts/deb.sh && sudo apt install ./build/deb/postgresql-*-pgjq_*.deb ./build/deb/pgjq-client_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_packages build-essential debhelper dpkg-dev postgresql-server-dev-all libpq-dev pkg-config nlohmann-json3-dev \
  libcli11-dev libcpp-httplib-dev
version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" pgjq.control)
out=$PWD/build/deb
rm -rf "$out"
mkdir -p "$out/pgjq-$version"
tar --exclude=./.git --exclude=./build --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude='*.d' -cf - . \
  | tar -C "$out/pgjq-$version" -xf -
cd "$out/pgjq-$version"
cat > debian/changelog <<CHANGES
pgjq ($version) unstable; urgency=medium

  * pgjq $version: see CHANGELOG.md.

 -- pgjq maintainers <maintainers@users.noreply.a-seed-460175a7.example>  $(date -R)
CHANGES
pg_buildext updatecontrol
log "building the Debian packages of pgjq $version for PostgreSQL $(pg_buildext supported-versions | tr '\n' ' ')"
dpkg-buildpackage -us -uc -b > "$out/build.log" 2>&1 || { tail -n 40 "$out/build.log" >&2; die "dpkg-buildpackage failed (see $out/build.log)"; }
cd "$out"
ls -1 "$out"/*.deb
