#!/usr/bin/env bash
# Release metadata (version, frozen install scripts) and the client as a package: installs it into a private prefix (make install-client), checks what its
# shared library exports and its soname, builds tests/package/app.cpp against the installed files through
# pkg-config and through CMake's find_package(pgjq) (shared and static), and runs each build against a
# throwaway cluster. As root it re-executes itself as the postgres user (see scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
reexec_unprivileged package_tests.sh "$@"
ensure_packages

STAGE_DIR=${STAGE_DIR:-$PWD/build/stage}
export STAGE_DIR
STAGE_BIN=$STAGE_DIR/runtime$(pg_bindir)
export STAGE_BIN
bash scripts/stage.sh >/dev/null
make -s client

out=$PWD/build/package
prefix=$out/prefix
rm -rf "$out"
mkdir -p "$out"
make -s install-client PREFIX="$prefix" >/dev/null
version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" pgjq.control)
sover=${version%.*}   # 0.x: major.minor
[ "${version%%.*}" = 0 ] || sover=${version%%.*}
lib=$prefix/lib/libpgjq_client.so.$version
fail() { echo "package test failed: $*" >&2; exit 1; }

log "release metadata"
# pgjq.control's default_version is the one home of the version; META.json and CHANGELOG.md follow it.
meta=$(perl -MJSON::PP -e 'local $/; my $m = decode_json(<STDIN>); print "$m->{version} $m->{provides}{pgjq}{version} $m->{license}"' < META.json)
[ "$meta" = "$version $version postgresql" ] || fail "META.json says '$meta', pgjq.control says $version"
grep -qE "^## \[$version\]" CHANGELOG.md || fail "CHANGELOG.md has no section for $version (## [$version] ...)"
# Released scripts are frozen byte for byte: a database made by one, or updated by one, must meet the objects
# the steps after it expect. A schema change goes into the upgrade script of the next version
# (pgjq--0.2.0--0.3.0.sql, with default_version raised to 0.3.0; see CONTRIBUTING.md), never into these.
released_scripts='src/extension/pgjq--0.1.0.sql 670e9ce9053d221bf0bf416b02fd70b86078126284bfb8f5790c3e7cad3eeed7
src/extension/pgjq--0.1.0--0.2.0.sql 2472749766f2f7a6fdbff0ed8d5d58139ce94a16e1174eeebff73739c77403e9
src/router/pgjq_router--0.2.0.sql 5e2a05f59126535b677722c6e68f538ad8613356549f28653c7e74baa7dc6a3f'
while read -r script sum; do
  [ "$(sha256sum "$script" | cut -d' ' -f1)" = "$sum" ] \
    || fail "$script differs from the released one: put the change into the next version's upgrade script"
done <<<"$released_scripts"
# Every script in the tree is released or a step to the version being built (default_version, once raised
# above the last release): a new script cannot slip in beside the released ones unchecked.
for script in src/extension/pgjq--*.sql src/router/pgjq_router--*.sql; do
  grep -q "^$script " <<<"$released_scripts" || case $script in
    *--"$version".sql) ;;
    *) fail "$script is neither released (listed in scripts/package_tests.sh) nor a step to $version" ;;
  esac
done
[ -f "src/extension/pgjq--$version.sql" ] || ls src/extension/pgjq--*--"$version".sql >/dev/null 2>&1 \
  || fail "no install or upgrade script reaches $version"

log "the shared library's soname and exports"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libpgjq_client.so.$sover" ] || fail "soname is '$soname', expected libpgjq_client.so.$sover"
[ "$(readlink "$prefix/lib/libpgjq_client.so")" = "libpgjq_client.so.$sover" ] || fail "libpgjq_client.so does not point at the soname"
# Every strong symbol (functions, data) must be public API: pgjq::, not pgjq::detail::. Weak and unique
# symbols are template instantiations of the standard library that every C++ library shares.
strong=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { $1 = ""; $2 = ""; print }' | c++filt | sed 's/^ *//')
[ -n "$strong" ] || fail "the library exports nothing"
leaked=$(printf '%s\n' "$strong" | grep -Ev '^(pgjq::|(typeinfo|typeinfo name|vtable) for pgjq::)' || true)
[ -z "$leaked" ] || fail "symbols outside the public API are exported: $leaked"
internal=$(printf '%s\n' "$strong" | grep -E '^(pgjq::detail::|(typeinfo|typeinfo name|vtable) for pgjq::detail::)' || true)
[ -z "$internal" ] || fail "internal symbols are exported: $internal"
echo "$(printf '%s\n' "$strong" | wc -l) public symbols, soname $soname"

log "building the example through pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
g++ -std=c++17 -Wall -o "$out/app_pkgconfig" tests/package/app.cpp $(pkg-config --cflags --libs pgjq)
readelf -d "$out/app_pkgconfig" | grep -q "NEEDED.*\[libpgjq_client.so.$sover\]" || fail "the pkg-config build does not use the shared library"
[ "$(pkg-config --modversion pgjq)" = "$version" ] || fail "pkg-config reports version $(pkg-config --modversion pgjq)"

log "building the example through CMake's find_package(pgjq)"
cmake -S tests/package -B "$out/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 \
  || { cat "$out/cmake.log" >&2; fail "cmake could not configure the example"; }
cmake --build "$out/cmake" >>"$out/cmake.log" 2>&1 || { cat "$out/cmake.log" >&2; fail "cmake could not build the example"; }
readelf -d "$out/cmake/app_shared" | grep -q "NEEDED.*\[libpgjq_client.so.$sover\]" || fail "pgjq::client does not link the shared library"
if readelf -d "$out/cmake/app_static" | grep -q "NEEDED.*libpgjq_client"; then fail "pgjq::client_static links the shared library"; fi
# A request for another minor version of 0.x must not be satisfied.
mkdir -p "$out/cmake-wrong"
sed 's/find_package(pgjq 0.3 REQUIRED)/find_package(pgjq 0.2 QUIET)\nif(pgjq_FOUND)\n  message(FATAL_ERROR "0.2 accepted")\nendif()\nreturn()/' \
  tests/package/CMakeLists.txt > "$out/cmake-wrong/CMakeLists.txt"
cp tests/package/app.cpp "$out/cmake-wrong/"
cmake -S "$out/cmake-wrong" -B "$out/cmake-wrong/build" -DCMAKE_PREFIX_PATH="$prefix" >>"$out/cmake.log" 2>&1 \
  || fail "the package claims to satisfy a request for version 0.2"

cluster=$out/cluster
trap 'stop_cluster "$cluster"' EXIT
start_cluster "$cluster" "log_min_messages = warning"
"$STAGE_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$PGJQ_CONNINFO" -c 'CREATE EXTENSION pgjq'
for app in "$out/app_pkgconfig" "$out/cmake/app_shared" "$out/cmake/app_static"; do
  log "running ${app#$PWD/}"
  result=$("$app" "$PGJQ_CONNINFO") || fail "${app#$PWD/} failed"
  [[ "$result" =~ ^job\ [0-9]+\ completed$ ]] || fail "${app#$PWD/} printed '$result'"
done
echo "package tests passed"
