#!/usr/bin/env bash
# Runs a command of this tree inside a Debian system whose PostgreSQL is MAJOR, so that one machine tests
# every major pgjq supports: the Debian release that ships MAJOR (15 bookworm, 17 trixie, 18 forky) is made
# with debootstrap into $PGJQ_CHROOTS (default /var/cache/pgjq/chroots) the first time, with the packages
# the tests need, and kept for later runs; one left half-made is made again. Each run copies this tree to
# /src inside it, mounts /proc, /dev and /dev/shm for the command's time, and runs the command as root
# there (scripts/test.sh then continues as the postgres user, as on any machine).
#   bash scripts/chroot.sh 17 bash scripts/test.sh
#   bash scripts/chroot.sh 18 --prepare      # make the system only
#   bash scripts/chroot.sh 17 --clean --with build/deb bash -c 'apt-get install /with/*.deb'
# --clean: a fresh copy of the release as debootstrap made it (no build or test package), deleted afterwards;
# --with DIR: a copy of DIR at /with.
# Needs root (debootstrap, chroot, mount): run as a user with `sudo -n`, it re-runs itself with sudo.
# The whole script is read before it runs: editing it meanwhile cannot change a run under way.
{
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

major=${1:?usage: chroot.sh MAJOR [--clean] [--with DIR] COMMAND... | MAJOR --prepare}; shift
clean=0; with=
while [ $# -gt 0 ]; do
  case $1 in
    --clean) clean=1; shift ;;
    --with) with=$(cd "$2" && pwd); shift 2 ;;
    *) break ;;
  esac
done
suite=$(debian_suite_of_major "$major") || die "no Debian release that pgjq tests on ships PostgreSQL $major"
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || die "making a Debian $suite system for PostgreSQL $major needs root (or sudo -n)"
  args=("$major"); [ "$clean" = 1 ] && args+=(--clean); [ -n "$with" ] && args+=(--with "$with")
  exec sudo -n env "PGJQ_CHROOTS=${PGJQ_CHROOTS:-}" bash "$0" "${args[@]}" "$@"
fi
chroots=${PGJQ_CHROOTS:-/var/cache/pgjq/chroots}
root=$chroots/$suite
mkdir -p "$chroots"
# One run at a time per system: a second would unpack or mount over the first.
exec 8>"$root.lock"
flock -w 7200 8 || die "another run holds $root.lock"

mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  mounted=()
}
trap unmount_all EXIT
mount_into() {
  local what=$1 where=$root$2; shift 2
  mkdir -p "$where"
  mount "$@" "$what" "$where"
  mounted+=("$where")
}
# Deletes a system copy, unless something is still mounted in it (a bind of /dev, say, which rm would empty).
remove_unmounted() {
  if awk -v root="$1/" 'index($2, root) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    log "left $1 in place: something is still mounted in it"
  else
    rm -rf "$1"
  fi
}
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ${CI:+CI=$CI} "$@"
}
copy_tree() {
  rm -rf "$root/src"
  mkdir -p "$root/src"
  tar --exclude=./.git --exclude=./build --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude='*.d' -cf - . \
    | tar -C "$root/src" -xf -
}

if [ ! -e "$root/.pgjq-ready" ] || [ ! -e "$chroots/$suite.base.tar" ]; then
  ensure_packages debootstrap
  log "making a Debian $suite system for PostgreSQL $major in $root (once; later runs reuse it)"
  rm -rf "$root" "$root.new"
  # Debian 12's debootstrap has no script for releases after trixie: theirs is sid's.
  script=/usr/share/debootstrap/scripts/$suite
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  debootstrap --variant=minbase --include=ca-certificates "$suite" "$root.new" http://deb.debian.org/debian \
    "$script" > "$chroots/$suite.debootstrap.log" 2>&1 \
    || { tail -n 20 "$chroots/$suite.debootstrap.log" >&2; die "debootstrap $suite failed"; }
  # A testing release's Release file may outlive its Valid-Until while a mirror catches up.
  echo 'Acquire::Check-Valid-Until "false";' > "$root.new/etc/apt/apt.conf.d/99pgjq"
  # The release as debootstrap made it, for --clean runs.
  tar -C "$root.new" -cf "$chroots/$suite.base.tar" .
  mv "$root.new" "$root"
fi
if [ "$clean" = 1 ]; then
  # The system made above stays locked for the copy's lifetime: nothing else needs it meanwhile.
  root=$chroots/$suite.clean.$$
  rm -rf "$root"; mkdir -p "$root"
  tar -C "$root" -xf "$chroots/$suite.base.tar"
  trap 'unmount_all; remove_unmounted "$root"' EXIT
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount_into proc /proc -t proc
mount_into /dev /dev --bind
mount_into /dev/shm /dev/shm --bind
mount_into /dev/pts /dev/pts --bind
copy_tree
if [ -n "$with" ]; then
  rm -rf "$root/with"; cp -r "$with" "$root/with"
fi
if [ "$clean" = 0 ] && [ ! -e "$root/.pgjq-ready" ]; then
  # Every package the tests install, once, so that later runs start at once.
  in_root bash -c 'cd /src && source scripts/lib.sh && ensure_packages "${PGJQ_TEST_PACKAGES[@]}"' 8>&-
  touch "$root/.pgjq-ready"
fi
[ "${1:-}" = --prepare ] && exit 0
status=0
in_root bash -c 'cd /src && "$@"' chroot-command "$@" 8>&- || status=$?  # the lock is this script's alone
exit "$status"
exit
}
