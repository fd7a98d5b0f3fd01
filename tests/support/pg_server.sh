#!/usr/bin/env bash
# A private PostgreSQL server for the postgresql store's tests (ctest fixture).
#
#   pg_server.sh start STATE   initdb into a new folder under $TMPDIR, start a
#                              server on a unix socket in that folder, create
#                              the database kite_test; write STATE (key=value
#                              lines: dir, bindir, port, conninfo). Exit 77
#                              (SKIPPED) with the reason in STATE when no
#                              server can be started here.
#   pg_server.sh stop STATE    stop the server (if running) and remove its folder.
#   pg_server.sh down STATE    stop the server, keep its data (an outage).
#   pg_server.sh up STATE      start it again on the same socket.
#
# Postgres refuses to run as root: as root the server runs as `nobody`
# (KITE_PG_USER to change it), otherwise as the calling user. The binaries
# come from KITE_PG_BINDIR or the newest /usr/lib/postgresql/<ver>/bin.
# KITE_PG_FSYNC=on keeps fsync (benchmarks); tests turn it off for speed
# (a killed server still keeps what it committed: it is in the page cache).
# KITE_PG_LISTEN=ADDRESS also listens on TCP at ADDRESS (same port) and
# trusts clients on the server's own subnets (pg_hba `samenet`): the
# failover tests reach it from other network namespaces. KITE_PG_OPTIONS
# adds server options (`-c name=value ...`). Both are kept in STATE for `up`.
set -uo pipefail

cmd=${1:-}
state=${2:-}
if [[ -z "$cmd" || -z "$state" ]]; then
  echo "usage: $0 start|stop|down|up STATE" >&2
  exit 2
fi

skip() {
  printf 'skip=%s\n' "$1" >"$state"
  echo "SKIPPED: postgresql test server: $1"
  exit 77
}

read_state() {
  [[ -f "$state" ]] || { echo "pg_server: no state file $state" >&2; exit 1; }
  dir=$(sed -n 's/^dir=//p' "$state")
  bindir=$(sed -n 's/^bindir=//p' "$state")
  port=$(sed -n 's/^port=//p' "$state")
  runas=$(sed -n 's/^runas=//p' "$state")
  listen=$(sed -n 's/^listen=//p' "$state")
  extra=$(sed -n 's/^extra=//p' "$state")
}

as_owner() {
  if [[ -n "$runas" ]]; then
    setpriv --reuid="$runas" --regid="$(id -g "$runas")" --clear-groups -- "$@"
  else
    "$@"
  fi
}

server_start() {
  local fsync=off
  [[ "${KITE_PG_FSYNC:-off}" == on ]] && fsync=on
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -s \
    -o "-k $dir -p $port -c listen_addresses=$listen -c fsync=$fsync -c full_page_writes=$fsync $extra" start
}

case "$cmd" in
  start)
    bindir=${KITE_PG_BINDIR:-}
    if [[ -z "$bindir" ]]; then
      bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    fi
    [[ -n "$bindir" && -x "$bindir/initdb" && -x "$bindir/pg_ctl" ]] ||
      skip "no PostgreSQL server binaries (install Debian's postgresql: scripts/install-deps.sh)"
    runas=""
    if [[ $(id -u) -eq 0 ]]; then
      runas=${KITE_PG_USER:-nobody}
      id "$runas" >/dev/null 2>&1 || skip "running as root and there is no user $runas to run the server as"
      command -v setpriv >/dev/null || skip "running as root without setpriv (util-linux) to drop to $runas"
    fi
    dir=$(mktemp -d "${TMPDIR:-/tmp}/kite-pg.XXXXXX") || skip "cannot make a temporary folder"
    chmod 755 "$dir"
    [[ -n "$runas" ]] && chown "$runas" "$dir"
    # The socket is $dir/.s.PGSQL.<port>: any port works, the folder is private.
    port=54329
    listen=${KITE_PG_LISTEN:-}
    extra=${KITE_PG_OPTIONS:-}
    printf 'dir=%s\nbindir=%s\nport=%s\nrunas=%s\nlisten=%s\nextra=%s\n' "$dir" "$bindir" "$port" "$runas" \
      "$listen" "$extra" >"$state"
    if ! as_owner "$bindir/initdb" -D "$dir/data" -U kite -A trust -E UTF8 --locale=C --no-sync \
      >"$dir/initdb.log" 2>&1; then
      cat "$dir/initdb.log" >&2
      rm -rf "$dir"
      skip "initdb failed as ${runas:-$(id -un)} (see above)"
    fi
    [[ -n "$listen" ]] && echo "host all kite samenet trust" >>"$dir/data/pg_hba.conf"
    if ! server_start; then
      cat "$dir/server.log" >&2
      rm -rf "$dir"
      skip "the server did not start (see above)"
    fi
    if ! "$bindir/psql" -h "$dir" -p "$port" -U kite -d postgres -q -c "CREATE DATABASE kite_test" >/dev/null; then
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop
      rm -rf "$dir"
      echo "pg_server: cannot create the database" >&2
      exit 1
    fi
    printf 'conninfo=host=%s port=%s user=kite dbname=kite_test\n' "$dir" "$port" >>"$state"
    echo "postgresql test server: $bindir, socket $dir/.s.PGSQL.$port, run as ${runas:-$(id -un)}"
    ;;
  stop)
    [[ -f "$state" ]] || exit 0
    if grep -q '^skip=' "$state"; then
      rm -f "$state"
      exit 0
    fi
    read_state
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 -s stop || \
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop
    fi
    [[ "$dir" == */kite-pg.* ]] && rm -rf "$dir"
    rm -f "$state"
    ;;
  down)
    read_state
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 -s stop
    ;;
  up)
    read_state
    server_start
    ;;
  *)
    echo "pg_server: unknown command $cmd" >&2
    exit 2
    ;;
esac
