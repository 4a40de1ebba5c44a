# Shared shell helpers for scripts/*.sh: dependency install, the unprivileged re-exec, throwaway clusters.
# Sourced, never run. Everything here is idempotent.

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The Debian release that ships each PostgreSQL major pgjq is tested on (scripts/chroot.sh makes the others).
debian_suite_of_major() {
  case $1 in 15) echo bookworm ;; 17) echo trixie ;; 18) echo forky ;; *) return 1 ;; esac
}
# The PostgreSQL major this machine builds and tests against: the one its Debian release ships (`postgresql`
# depends on it), or PGJQ_PG_MAJOR. Found, not assumed, so that the same commands work on Debian 12 and 13.
pg_major() {
  if [ -n "${PGJQ_PG_MAJOR:-}" ]; then echo "$PGJQ_PG_MAJOR"; return; fi
  local codename m
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  for m in 15 17 18; do
    [ "$(debian_suite_of_major "$m")" = "$codename" ] && { echo "$m"; return; }
  done
  m=$(apt-cache depends postgresql 2>/dev/null | sed -n 's/.*Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n 1)
  [ -n "$m" ] || die "cannot tell which PostgreSQL this system ships: set PGJQ_PG_MAJOR"
  echo "$m"
}
PGJQ_PG_MAJOR=$(pg_major)
export PGJQ_PG_MAJOR
# Every script and make builds against that major (Debian's pg_config would take the newest one installed).
[ -z "${PG_CONFIG:-}" ] && [ -x "/usr/lib/postgresql/$PGJQ_PG_MAJOR/bin/pg_config" ] &&
  export PG_CONFIG=/usr/lib/postgresql/$PGJQ_PG_MAJOR/bin/pg_config

PGJQ_PACKAGES=(make g++ pkg-config perl postgresql-$PGJQ_PG_MAJOR postgresql-server-dev-$PGJQ_PG_MAJOR libpq-dev
               libboost-test-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libipc-run-perl cmake binutils)
# Only the tests need these: the pooler of tests/client/test_pooler.cpp, the fuzzer of scripts/fuzz.sh,
# Prometheus's promtool and postgres_exporter (tests/t/023, 024), psycopg (scripts/examples_tests.sh) and
# PL/Proxy (the cluster tests), zsh and groff (scripts/cli_tests.sh checks the completion and the man
# page). scripts/test.sh installs them before it gives up root; each script also asks
# for its own.
PGJQ_TEST_PACKAGES=(pgbouncer sqlsmith prometheus prometheus-postgres-exporter python3-psycopg
                    postgresql-$PGJQ_PG_MAJOR-plproxy zsh groff-base)
# And these for the suites that run once, on this system only (scripts/test.sh): clang-format
# (scripts/format.sh), and Chromium with chromedriver and Selenium (scripts/web_tests.sh drives the dashboard
# in a real browser).
PGJQ_ONCE_TEST_PACKAGES=(clang-format chromium chromium-driver python3-selenium)


# Installs the Debian packages that are missing: with apt-get as root, with `sudo -n` otherwise.
ensure_packages() {
  local missing=() p
  for p in "${PGJQ_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || die "missing packages: ${missing[*]}; install them as root (apt-get install ${missing[*]}) and run this again"
    sudo=(sudo -n)
  fi
  log "installing ${missing[*]}"
  # One apt at a time: scripts/test.sh runs several scripts at once, and apt-get fails on a held lock.
  "${sudo[@]}" flock -w 1800 /var/lock/pgjq-apt.lock bash -c '
    env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null' apt "${missing[@]}"
}

# PostgreSQL refuses to run as root. When root, copy the source tree to a directory owned by the
# `postgres` user and run the named script there as that user; the caller exits with its status.
# Returns normally (without re-executing) when not root.
reexec_unprivileged() {
  [ "$(id -u)" -eq 0 ] || return 0
  local script=$1; shift
  local src; src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  # one directory per source tree and script, so that e.g. the tests and the demo can run at once;
  # a lock keeps two runs of the same script from replacing the tree under each other
  local work=/var/tmp/pgjq-$(printf '%s' "$src" | md5sum | cut -c1-12)-${script%.sh}
  log "running as user postgres in $work (PostgreSQL refuses to run as root)"
  mkdir -p "$work"
  exec 9>"$work.lock"
  flock -w 3600 9 || die "another run of $script holds $work.lock"
  rm -rf "$work/src.new"
  mkdir -p "$work/src.new"
  tar -C "$src" --exclude=./.git --exclude=./build --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . | tar -C "$work/src.new" -xf -
  # keep the previous build directory so that reruns are incremental; make must then see each file that
  # changed since as newer than what was built from it, which its own mtime (kept by tar) need not be: a
  # file edited during the last run is older than the objects that run built from its earlier content
  if [ -d "$work/src/build" ]; then
    mv "$work/src/build" "$work/src.new/build"
    (cd "$work/src.new" && find . -path ./build -prune -o -type f -print0) |
      while IFS= read -r -d '' f; do
        cmp -s "$work/src.new/$f" "$work/src/$f" 2>/dev/null || touch "$work/src.new/$f"
      done
  fi
  rm -rf "$work/src"; mv "$work/src.new" "$work/src"
  chown -R postgres:postgres "$work"
  exec runuser -u postgres -- env -u HOME HOME=/var/lib/postgresql PGJQ_SOURCE_DIR="$src" \
    bash "$work/src/scripts/$script" "$@"
}

pg_bindir() { "${PG_CONFIG:-pg_config}" --bindir; }

# Stages the extension (scripts/stage.sh; sets and exports STAGE_DIR and STAGE_BIN) and builds build/pgjq,
# for the suites that run the command line against a cluster.
stage_with_cli() {
  STAGE_DIR=${STAGE_DIR:-$PWD/build/stage}
  STAGE_BIN=$STAGE_DIR/runtime$(pg_bindir)
  export STAGE_DIR STAGE_BIN
  bash scripts/stage.sh >/dev/null
  make -s cli
}

# start_cluster DIR [extra postgresql.conf lines...]: a throwaway cluster with its data and socket in DIR.
# Prints nothing; sets PGJQ_CONNINFO. The caller stops it with stop_cluster DIR.
start_cluster() {
  local dir=$1; shift
  local bin=${STAGE_BIN:?stage the install first}
  rm -rf "$dir"; mkdir -p "$dir"
  # unix socket paths are limited to ~100 bytes: keep the socket in a short private directory
  local sock; sock=$(mktemp -d /tmp/pgjq-sock.XXXXXX)
  echo "$sock" > "$dir/socket_dir"
  # UTF8 whatever the caller's locale (a bare CI shell would get SQL_ASCII, which accepts any bytes)
  "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  {
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$sock'"
    echo "port = 5432"
    echo "max_connections = 50"
    printf '%s\n' "$@"
  } >> "$dir/data/postgresql.conf"
  # 8>&- 9>&-: the server must not hold the locks of the script that started it (reexec_unprivileged,
  # scripts/chroot.sh), or one a failed test leaves running would keep the next run waiting.
  "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null 8>&- 9>&- \
    || { cat "$dir/server.log" >&2; die "the throwaway cluster did not start"; }
  PGJQ_CONNINFO="host=$sock port=5432 user=postgres dbname=postgres"
  export PGJQ_CONNINFO
}

# PgBouncer in transaction pooling in front of the cluster in $1 (started by start_cluster), on a unix
# socket beside the server's, trusting the cluster's superuser; extra arguments are pgbouncer.ini lines.
# Sets PGJQ_POOLED_CONNINFO.
start_pgbouncer() {
  local dir=$1; shift
  local sock; sock=$(cat "$dir/socket_dir")
  echo '"postgres" ""' > "$dir/pgbouncer.users"
  {
    echo "[databases]"
    echo "* = host=$sock port=5432"
    echo "[pgbouncer]"
    echo "listen_addr ="
    echo "listen_port = 6432"
    echo "unix_socket_dir = $sock"
    echo "auth_type = trust"
    echo "auth_file = $dir/pgbouncer.users"
    echo "pool_mode = transaction"
    echo "max_client_conn = 200"
    echo "logfile = $dir/pgbouncer.log"
    echo "pidfile = $dir/pgbouncer.pid"
    local line; for line in "$@"; do echo "$line"; done
  } > "$dir/pgbouncer.ini"
  /usr/sbin/pgbouncer -q -d "$dir/pgbouncer.ini" 8>&- 9>&- || die "pgbouncer failed to start (see $dir/pgbouncer.log)"
  export PGJQ_POOLED_CONNINFO="host=$sock port=6432 user=postgres dbname=postgres"
  local i; for i in $(seq 50); do [ -S "$sock/.s.PGSQL.6432" ] && return 0; sleep 0.1; done
  die "pgbouncer did not open its socket (see $dir/pgbouncer.log)"
}

# Whether this PgBouncer tracks prepared statements across server sessions (1.21 and later).
pgbouncer_tracks_prepared_statements() {
  local v; v=$(/usr/sbin/pgbouncer --version 2>/dev/null | sed -n 's/^PgBouncer \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -n 1)
  [ -n "$v" ] || return 1
  set -- $v
  [ "$1" -gt 1 ] || { [ "$1" -eq 1 ] && [ "$2" -ge 21 ]; }
}

stop_pgbouncer() {
  local dir=$1
  [ -f "$dir/pgbouncer.pid" ] && kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null
  rm -f "$dir/pgbouncer.pid"
  return 0
}

stop_cluster() {
  local dir=$1 bin=${STAGE_BIN:?}
  [ -d "$dir/data" ] && "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  [ -f "$dir/socket_dir" ] && rm -rf "$(cat "$dir/socket_dir")"
  return 0
}

# docs_sql_script PAGE CONNECT SUPERUSER_CONNECT: the ```sql blocks of a documentation page, in order, as one
# psql script in which each part runs as the role the page says runs it. Every block begins with a line
# "-- as <who>" and may switch again with another such line (CONTRIBUTING.md, "Documentation"): <who> is
# "a superuser", "a producer", "a worker", "an observer", "an admin" (the roles docs_tests.sh makes, which
# hold that capability for every queue and nothing else), or the name of a role the page creates itself.
# Each switch becomes a psql command: SUPERUSER_CONNECT for "a superuser", else what printf CONNECT gives
# with the role's name (say '\c - %s'), so that a part runs in a session of that role, never as the
# superuser who set the page up. A block that does not say who runs it is an error (exit 1, the block
# named on stderr).
docs_sql_script() {
  local page=$1 connect=$2 superuser_connect=$3
  # through the environment: awk -v would read the commands' backslashes as escapes
  DOCS_CONNECT=$connect DOCS_SUPERUSER_CONNECT=$superuser_connect awk -v page="$page" '
    BEGIN {
      connect = ENVIRON["DOCS_CONNECT"]; superuser_connect = ENVIRON["DOCS_SUPERUSER_CONNECT"]
      fixture["producer"] = "docs_producer"; fixture["worker"] = "docs_worker"
      fixture["observer"] = "docs_observer"; fixture["admin"] = "docs_admin"
    }
    /^```sql[[:space:]]*$/ { inside = 1; said = 0; start = NR; next }
    inside && /^```/ { inside = 0; next }
    !inside { next }
    match($0, /^-- as (a |an |the )?[A-Za-z_][A-Za-z0-9_]*/) {
      n = split(substr($0, 7, RLENGTH - 6), who, " ")
      if (n == 2 && who[2] == "superuser") print superuser_connect
      else if (n == 2 && who[2] in fixture) printf connect "\n", fixture[who[2]]
      else if (n == 1) printf connect "\n", who[1]
      else { printf "%s:%d: \"-- as %s %s\": not a superuser, producer, worker, observer or admin\n", page, NR, who[1], who[2] > "/dev/stderr"; bad = 1 }
      said = 1
    }
    !said && $0 !~ /^[[:space:]]*$/ {
      printf "%s:%d: the ```sql block of line %d does not begin with \"-- as <role>\" (who runs it)\n", page, NR, start > "/dev/stderr"
      bad = 1; said = 1
    }
    { print }
    END { exit bad }
  ' "$page"
}
