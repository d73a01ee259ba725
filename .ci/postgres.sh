# shellcheck shell=bash
# Sourced by .ci/run before `npm test` (and by developers: `source .ci/postgres.sh`): makes sure
# REWIND_PG_URL names a PostgreSQL server the PostgreSQL adapter's tests can use.
#
# - REWIND_PG_URL already set and answering: nothing to do (sourcing twice is a no-op).
# - Otherwise: finds PostgreSQL's server binaries (installing Debian's `postgresql` package when
#   they are missing and we are root), creates a throwaway cluster in a temp dir (owned by the
#   `postgres` user when we are root: initdb refuses to run as root), trust auth, listening only on
#   127.0.0.1 on a free port, starts it, creates a throwaway database and exports REWIND_PG_URL.
#   The cluster is stopped and its directory removed when the sourcing shell exits (EXIT trap,
#   chained after any trap already set).
# - If any step fails, it says why on stderr, leaves REWIND_PG_URL unset and returns 0: the
#   PostgreSQL tests then skip (printing the reason) and the rest of the suite still runs.
#
# Everything runs inside functions called from `||` lists, so a failing command never trips the
# caller's `set -e`; each step checks its own result.

_rewind_pg_log() { echo "postgres.sh: $*" >&2; }

# True when the URL answers a query (psql when available, else pg_isready, else assume yes).
_rewind_pg_usable() {
  local url=$1
  if command -v psql >/dev/null 2>&1; then
    PGCONNECT_TIMEOUT=3 psql "$url" -XtAq -c 'select 1' >/dev/null 2>&1
  elif command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -t 3 -d "$url" >/dev/null 2>&1
  else
    return 0
  fi
}

_rewind_pg_bindir() {
  local dir
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v initdb)")"
    return 0
  fi
  # Debian keeps the server binaries off PATH, one directory per major version: take the newest.
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
    echo "$dir"
    return 0
  fi
  return 1
}

_rewind_pg_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    _rewind_pg_log "PostgreSQL server binaries not found and cannot install them (not root, or no apt-get)"
    return 1
  fi
  _rewind_pg_log "installing PostgreSQL from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || return 1
}

_rewind_pg_free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Runs a server binary as the cluster's owner.
_rewind_pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

_rewind_pg_cleanup() {
  if [ -n "${_REWIND_PG_DIR:-}" ] && [ -d "$_REWIND_PG_DIR" ]; then
    _rewind_pg_as_owner "$_REWIND_PG_BIN/pg_ctl" -D "$_REWIND_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$_REWIND_PG_DIR"
  fi
  _REWIND_PG_DIR=""
}

_rewind_pg_setup() {
  if [ -n "${REWIND_PG_URL:-}" ]; then
    if _rewind_pg_usable "$REWIND_PG_URL"; then
      return 0
    fi
    _rewind_pg_log "REWIND_PG_URL is set but does not answer; starting a throwaway server instead"
    unset REWIND_PG_URL
  fi

  local bin
  bin=$(_rewind_pg_bindir) || { _rewind_pg_install && bin=$(_rewind_pg_bindir); } || {
    _rewind_pg_log "no PostgreSQL server binaries"
    return 1
  }
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    _rewind_pg_log "running as root but there is no 'postgres' user to own the cluster"
    return 1
  fi

  local dir port
  dir=$(mktemp -d "${TMPDIR:-/tmp}/rewind-pg.XXXXXX") || return 1
  _REWIND_PG_DIR=$dir
  _REWIND_PG_BIN=$bin
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir" || return 1
  fi
  port=$(_rewind_pg_free_port) || return 1

  _rewind_pg_as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
    >"$dir/initdb.log" 2>&1 || {
    _rewind_pg_log "initdb failed: $(tail -n 3 "$dir/initdb.log" 2>/dev/null)"
    return 1
  }
  # A throwaway cluster: no fsync, sockets only in its own directory, TCP only on loopback.
  _rewind_pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null 2>&1 || {
    _rewind_pg_log "the server did not start: $(tail -n 3 "$dir/server.log" 2>/dev/null)"
    return 1
  }
  _rewind_pg_as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres rewind_test >/dev/null 2>&1 || {
    _rewind_pg_log "could not create the test database"
    return 1
  }
  export REWIND_PG_URL="postgres://postgres@127.0.0.1:$port/rewind_test"
  _rewind_pg_log "PostgreSQL $("$bin/pg_ctl" --version | sed -E 's/.*\(PostgreSQL\) ([0-9.]+).*/\1/') at $REWIND_PG_URL (removed at exit)"
}

if [ -z "${_REWIND_PG_TRAP:-}" ]; then
  _REWIND_PG_TRAP=1
  # Keep whatever EXIT trap the caller had, and run ours after it.
  _rewind_pg_previous_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
  # shellcheck disable=SC2064
  trap "${_rewind_pg_previous_trap:+$_rewind_pg_previous_trap; }_rewind_pg_cleanup" EXIT
fi

_rewind_pg_setup || {
  _rewind_pg_cleanup
  unset REWIND_PG_URL
  _rewind_pg_log "no PostgreSQL server for the tests: the PostgreSQL adapter's tests will skip"
}
true
