#!/bin/bash
# Active/standby failover over the postgresql store (issue 37, docs/store.md
# "Failover"), across network namespaces on one bridge:
#
#   db (10.79.0.254)   the bridge and a private PostgreSQL server on TCP
#   active (.1)        kite-acceptor, StoreKind postgresql, sync, RefreshOnLogon
#   standby (.2)       the same configuration, the same database
#   initiator (.3)     kite-initiator, SocketConnectHost = the active,
#                      SocketConnectHost1 = the standby, orders at a rate
#
# The server runs in its own namespace and is reached over TCP from the two
# acceptors: a unix socket would be shared across namespaces and would not
# see a host go away, and a namespace of its own keeps the root namespace
# untouched (no bridge, route or address left behind by a failed run).
#
# Mid-stream, the active is lost:
#   kill   SIGKILL: its kernel closes its database sockets, the server frees
#          its session locks at once;
#   kill-async  the same under PostgreSQLStoreCommit "async": just before the
#          kill the sessions' rows are held by another transaction, so the
#          active answers (at once, within its window) but commits nothing;
#          its blocked transactions are ended with it. The standby must
#          not reuse the numbers it sent (it skips its window; the
#          initiator's ResendRequest gets a GapFill), the orders it
#          answered uncommitted are asked for again and answered twice
#          (counted), and no side sees "MsgSeqNum too low".
#   link   its link goes down (`ip link set dev ... down` in its namespace):
#          nothing closes its database sockets, the server must find them
#          dead by TCP keepalive; the locks must be free within the keepalive
#          bound the stores set (PostgreSQLStoreKeepaliveIdle + Interval x
#          Count, Linux's timers up to an eighth late), read from the
#          server's log. Then its link comes back while
#          the standby has let the sessions go: the old active must not
#          write its stale queue over the standby's work.
# The initiator reconnects, reaches the standby, which takes each session
# from the database (RefreshOnLogon). Asserted: every order is answered
# exactly once (the initiator's counts; the ExecutionReports stored in the
# database, by ClOrdID), both sides' sequence numbers agree with each other
# and with the database, the standby sent nothing before the loss. Printed:
# the time from the loss to the standby's first ExecutionReport beside the
# initiator's ReconnectInterval, and (link) when the locks were freed.
#
# SKIPPED (exit 77) where namespaces, a bridge or the server cannot be made.
# usage: pg_failover_test.sh kill|kill-async|link KITE_ACCEPTOR KITE_INITIATOR PG_SERVER_SH
set -u
MODE=${1:-}
ACCEPTOR=${2:-}
INITIATOR=${3:-}
PG=${4:-}
COMMIT=sync
case "$MODE" in
  kill | link) ;;
  kill-async) COMMIT=async ;;
  *)
    echo "usage: $0 kill|kill-async|link KITE_ACCEPTOR KITE_INITIATOR PG_SERVER_SH" >&2
    exit 2
    ;;
esac
skip() {
  echo "SKIP: $*"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"

# The stores' keepalive settings: the bound is IDLE + INTERVAL x COUNT after
# the last packet from the lost host, each of those timers fired up to an
# eighth of its length late by Linux's timer wheel (docs/store.md).
KA_IDLE=3
KA_INTERVAL=1
KA_COUNT=2
BOUND_MS=$(((KA_IDLE + KA_INTERVAL * KA_COUNT) * 1000))
BOUND_LATE_MS=$((BOUND_MS + BOUND_MS / 8))
RECONNECT_S=1

N=$$
NS_D=kite-pgf-d-$N
NS_A=kite-pgf-a-$N
NS_S=kite-pgf-s-$N
NS_I=kite-pgf-i-$N
DEV_A=kfa$N
DIR=$(mktemp -d)
PG_STATE=$DIR/pg.env
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -f "$PG_STATE" ] && "$PG" stop "$PG_STATE" >/dev/null 2>&1
  for ns in "$NS_A" "$NS_S" "$NS_I" "$NS_D"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' TERM INT

for ns in "$NS_D" "$NS_A" "$NS_S" "$NS_I"; do
  ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
  ip -n "$ns" link set lo up
done
ip -n "$NS_D" link add kbr type bridge 2>/dev/null || skip "cannot create a bridge"
ip -n "$NS_D" addr add 10.79.0.254/24 dev kbr && ip -n "$NS_D" link set kbr up || skip "cannot set up the bridge"
# A veth pair from namespace $1 (address $2, device $3) to the bridge.
attach() {
  ip link add "$3" type veth peer name "${3}b" 2>/dev/null &&
    ip link set "$3" netns "$1" && ip link set "${3}b" netns "$NS_D" &&
    ip -n "$NS_D" link set "${3}b" master kbr && ip -n "$NS_D" link set "${3}b" up &&
    ip -n "$1" addr add "$2/24" dev "$3" && ip -n "$1" link set "$3" up
}
attach "$NS_A" 10.79.0.1 "$DEV_A" || skip "cannot create a veth pair"
attach "$NS_S" 10.79.0.2 "kfs$N" || skip "cannot create a veth pair"
attach "$NS_I" 10.79.0.3 "kfi$N" || skip "cannot create a veth pair"

# The server in the db namespace; its log says when each connection ended
# (after its locks were freed), in UTC with milliseconds.
KITE_PG_LISTEN=10.79.0.254 KITE_PG_OPTIONS="-c log_connections=on -c log_disconnections=on -c log_timezone=UTC" \
  ip netns exec "$NS_D" "$PG" start "$PG_STATE" >"$DIR/pg-start.log" 2>&1
rc=$?
[ "$rc" = 77 ] && skip "postgresql: $(sed -n 's/^skip=//p' "$PG_STATE")"
if [ "$rc" != 0 ]; then
  cat "$DIR/pg-start.log"
  echo "FAIL: the postgresql server did not start"
  exit 1
fi
PG_DIR=$(sed -n 's/^dir=//p' "$PG_STATE")
PG_BIN=$(sed -n 's/^bindir=//p' "$PG_STATE")
PG_PORT=$(sed -n 's/^port=//p' "$PG_STATE")
sql() { "$PG_BIN/psql" -h "$PG_DIR" -p "$PG_PORT" -U kite -d kite_test -qAt -F ' ' -c "$1"; }

fail() {
  echo "FAIL: $*"
  for f in initiator active standby; do
    echo "--- $f log"
    cat "$DIR/$f.log"
  done
  echo "--- server log (tail)"
  tail -n 40 "$PG_DIR/server.log"
  exit 1
}
# Waits up to $3 seconds for $2 lines matching $1 in file $4.
wait_count() {
  local i n
  for ((i = 0; i < $3 * 10; i++)); do
    n=$(grep -ac -- "$1" "$4" 2>/dev/null)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}
now_ms() { date +%s%3N; }
# Milliseconds since the epoch of a UTC stamp "2026-12-05T08:00:06.123456Z" or "2026-12-05 08:00:06.123".
stamp_ms() {
  local s=${1%Z}
  date -u -d "${s/T/ }" +%s%3N
}
# "OUT IN": the last numbers file $2 logged for session $1 ("next seq out X, in Y").
last_numbers() {
  grep -a -- "$1 .*next seq out" "$2" | tail -n 1 | sed -E 's/.*next seq out ([0-9]+), in ([0-9]+).*/\1 \2/'
}

acceptor_toml() {
  mkdir -p "$DIR/$1-messages"
  cat >"$DIR/$1.toml" <<TOML
[engine]
bind = "$2"
port = 9878
[message_log]
dir = "$DIR/$1-messages"
sessions = ["*"]
[defaults]
BeginString = "FIX.4.4"
SenderCompID = "KITE"
HeartBtInt = 1
StoreKind = "postgresql"
StoreCapacity = 4194304
PostgreSQLStoreHost = "10.79.0.254"
PostgreSQLStorePort = $PG_PORT
PostgreSQLStoreUser = "kite"
PostgreSQLStoreDatabase = "kite_test"
PostgreSQLStoreCommit = "$COMMIT"
PostgreSQLStoreKeepaliveIdle = $KA_IDLE
PostgreSQLStoreKeepaliveInterval = $KA_INTERVAL
PostgreSQLStoreKeepaliveCount = $KA_COUNT
RefreshOnLogon = true
[[session]]
TargetCompID = "C1"
[[session]]
TargetCompID = "C2"
TOML
}
acceptor_toml active 10.79.0.1
acceptor_toml standby 10.79.0.2
cat >"$DIR/initiator.toml" <<TOML
[engine]
connect_timeout_ms = 500
[orders]
source = "rate"
rate = 100
[app]
shutdown_wait_ms = 3000
[defaults]
BeginString = "FIX.4.4"
ConnectionType = "initiator"
TargetCompID = "KITE"
HeartBtInt = 1
StoreKind = "file"
FileStorePath = "$DIR/initiator-store"
SocketConnectHost = "10.79.0.1"
SocketConnectPort = 9878
SocketConnectHost1 = "10.79.0.2"
SocketConnectPort1 = 9878
ReconnectInterval = $RECONNECT_S
ReconnectIntervalMax = $RECONNECT_S
[[session]]
SenderCompID = "C1"
[[session]]
SenderCompID = "C2"
TOML

ip netns exec "$NS_A" "$ACCEPTOR" --config "$DIR/active.toml" --ready-file "$DIR/active.ready" 2>"$DIR/active.log" &
ACT=$!
PIDS+=("$ACT")
ip netns exec "$NS_S" "$ACCEPTOR" --config "$DIR/standby.toml" --ready-file "$DIR/standby.ready" \
  2>"$DIR/standby.log" &
STB=$!
PIDS+=("$STB")
wait_count "" 1 10 "$DIR/active.ready" || fail "the active kite-acceptor did not start"
wait_count "" 1 10 "$DIR/standby.ready" || fail "the standby kite-acceptor did not start"
ip netns exec "$NS_I" "$INITIATOR" --config "$DIR/initiator.toml" 2>"$DIR/initiator.log" &
INI=$!
PIDS+=("$INI")
wait_count "logged on" 2 10 "$DIR/initiator.log" || fail "the sessions did not log on"
wait_count "taken at Logon" 2 5 "$DIR/active.log" || fail "the active did not take both sessions"
sleep 1
# The active's database connections open now (one per session's store).
A_CONNECTIONS=$(($(grep -c "connection received: host=10.79.0.1 " "$PG_DIR/server.log") -
  $(grep -c "disconnection: .* host=10.79.0.1 " "$PG_DIR/server.log")))

# The loss, mid-stream.
if [ "$MODE" = kill-async ]; then
  # Nothing the active does from here on commits: its answers go out
  # uncommitted (async), up to its window.
  sql "BEGIN; SELECT 1 FROM sessions WHERE sendercompid = 'KITE' FOR UPDATE; SELECT pg_sleep(1.5); COMMIT;" \
    >/dev/null 2>&1 &
  BLOCKER=$!
  sleep 0.5
fi
T0=$(now_ms)
if [ "$MODE" = kill ]; then
  kill -9 "$ACT"
elif [ "$MODE" = kill-async ]; then
  kill -9 "$ACT"
  # Its transactions wait on the rows with their COMMIT already sent: a
  # dead active's last group would commit once the rows are free. Ended
  # now, as a crash of its host, or a commit that had not reached the
  # server, would leave it.
  sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE client_addr = '10.79.0.1'" >/dev/null
  wait "$BLOCKER"
else
  ip -n "$NS_A" link set dev "$DEV_A" down || fail "cannot take the active's link down"
fi
wait_count "logged on" 4 30 "$DIR/initiator.log" || fail "the sessions did not log on again"
wait_count "reloaded from the store" 2 5 "$DIR/standby.log" || fail "the standby did not take both sessions"
[ "$(grep -c "connected to 10.79.0.2:9878" "$DIR/initiator.log")" -ge 2 ] ||
  fail "the initiator did not reconnect to the standby"
sleep 1
kill -TERM "$INI"
wait "$INI" || fail "kite-initiator exited with $?"
# The standby lets each session go once what is queued is written.
wait_count "released (disconnected)" 2 10 "$DIR/standby.log" || fail "the standby did not release the sessions"

if [ "$MODE" = link ]; then
  T_UP=$(now_ms)
  # The old active comes back with its stale queue (heartbeats and test
  # requests stored after the link went down) and finds the locks free.
  ip -n "$NS_A" link set dev "$DEV_A" up || fail "cannot bring the active's link up"
  wait_count "reconnected" 2 15 "$DIR/active.log" || fail "the old active did not reconnect to the database"
  kill -TERM "$ACT"
  wait "$ACT"
fi
kill -TERM "$STB"
wait "$STB" || fail "the standby kite-acceptor exited with $?"

# Every order answered exactly once: the initiator's counts, and the
# ExecutionReports in the database (written by either acceptor), by ClOrdID.
SOH=$(printf '\001')
for c in C1 C2; do
  line=$(grep "FIX.4.4:$c->KITE orders sent" "$DIR/initiator.log") || fail "no summary for $c"
  sent=$(sed -E 's/.*orders sent ([0-9]+).*/\1/' <<<"$line")
  reports=$(sed -E 's/.*execution reports ([0-9]+).*/\1/' <<<"$line")
  if [ "$COMMIT" = sync ]; then
    [ "$sent" -gt 0 ] && [ "$sent" = "$reports" ] || fail "$c: $sent orders sent, $reports execution reports received"
  else
    # async: every order answered, some twice (answered by the active, not committed, asked for again).
    [ "$sent" -gt 0 ] && [ "$reports" -ge "$sent" ] || fail "$c: $sent orders sent, $reports execution reports received"
    twice=$((reports - sent))
    TWICE=$((${TWICE:-0} + twice))
    grep -aq "FIX.4.4:$c->KITE SequenceReset-GapFill" "$DIR/initiator.log" ||
      fail "$c: the initiator got no GapFill over the numbers the standby skipped"
  fi
  read -r rows ids < <(sql "SELECT count(*), count(DISTINCT substring(message from chr(1) || '11=([^' || chr(1) || ']*)'))
    FROM messages WHERE sendercompid = 'KITE' AND targetcompid = '$c' AND position(chr(1) || '35=8' || chr(1) in message) > 0")
  [ "$rows" = "$sent" ] && [ "$ids" = "$sent" ] ||
    fail "$c: $sent orders sent, the database holds $rows ExecutionReports for $ids ClOrdIDs"
  loaded=$(grep -a "session FIX.4.4:KITE->$c taken at Logon" "$DIR/standby.log" | head -n 1 | sed -E 's/.*, ([0-9]+) messages.*/\1/')
  [ "${loaded:-0}" -gt 0 ] || fail "$c: the standby loaded none of the active's messages"
  # Both sides' numbers agree, and the database holds them.
  read -r i_out i_in < <(last_numbers "FIX.4.4:$c->KITE" "$DIR/initiator.log")
  read -r s_out s_in < <(last_numbers "FIX.4.4:KITE->$c" "$DIR/standby.log")
  read -r d_in d_out < <(sql "SELECT incoming_seqnum, outgoing_seqnum FROM sessions
    WHERE sendercompid = 'KITE' AND targetcompid = '$c'")
  [ "$i_out" = "$s_in" ] && [ "$i_in" = "$s_out" ] ||
    fail "$c: initiator next out $i_out, in $i_in; standby next out $s_out, in $s_in"
  [ "$d_in" = "$s_in" ] && [ "$d_out" = "$s_out" ] ||
    fail "$c: the database says next in $d_in, out $d_out; the standby ended at in $s_in, out $s_out"
  if [ "$COMMIT" = sync ]; then
    echo "$c: $sent orders, $sent answered once each (initiator and database); the standby loaded $loaded messages;" \
      "numbers out $i_out / in $i_in on both sides and in the database"
  else
    skipped=$(grep -a "FIX.4.4:KITE->$c taken over from a store" "$DIR/standby.log" | head -n 1 |
      sed -E 's/.*next seq out ([0-9]+) instead of ([0-9]+).*/\2 -> \1/')
    [ -n "$skipped" ] || fail "$c: the standby did not skip the numbers the active may have sent"
    echo "$c: $sent orders, $reports ExecutionReports at the initiator ($twice orders answered twice), one per order" \
      "in the database; the standby loaded $loaded messages and moved its next number out $skipped;" \
      "numbers out $i_out / in $i_in on both sides and in the database"
  fi
done
if [ "$COMMIT" = async ]; then
  ! grep -aq "MsgSeqNum too low" "$DIR/initiator.log" "$DIR/standby.log" || fail "a side saw MsgSeqNum too low"
  [ "$TWICE" -gt 0 ] || fail "no order was answered uncommitted: the test did not catch the active mid-stream"
fi

# The standby sent nothing before the loss; its first ExecutionReport.
first_out=$(cat "$DIR"/standby-messages/*.messages | grep -a "Z OUT " | sort | head -n 1 | cut -d' ' -f1)
[ -n "$first_out" ] || fail "the standby sent nothing"
[ "$(stamp_ms "$first_out")" -ge "$T0" ] || fail "the standby sent a message at $first_out, before the loss"
first_er=$(cat "$DIR"/standby-messages/*.messages | grep -a "Z OUT .*${SOH}35=8${SOH}" | sort | head -n 1 | cut -d' ' -f1)
[ -n "$first_er" ] || fail "the standby sent no ExecutionReport"
answer_ms=$(($(stamp_ms "$first_er") - T0))
gone=$(grep -a "disconnected" "$DIR/initiator.log" | while read -r t _; do
  m=$(stamp_ms "$t")
  [ "$m" -ge "$T0" ] && echo $((m - T0)) && break
done)
back=$(grep -a "connected to 10.79.0.2:9878" "$DIR/initiator.log" | head -n 1 | cut -d' ' -f1)
echo "$MODE: the standby's first ExecutionReport $answer_ms ms after the loss (ReconnectInterval $((RECONNECT_S * 1000)) ms;" \
  "the initiator saw the disconnect at +${gone:-?} ms, reached the standby at +$(($(stamp_ms "$back") - T0)) ms)"

# When the active's database connections ended (the server logs the end
# after the backend has freed its locks): at once after a kill; after a
# link loss, within the keepalive bound.
[ "$MODE" != link ] && T_UP=$(now_ms)
freed=-1
ended=0
while read -r d t _; do
  m=$(stamp_ms "$d $t")
  [ "$m" -ge "$T0" ] && [ "$m" -lt "$T_UP" ] || continue
  ended=$((ended + 1))
  [ $((m - T0)) -gt "$freed" ] && freed=$((m - T0))
done < <(grep -a "disconnection: .* host=10.79.0.1 " "$PG_DIR/server.log")
[ "$ended" = "$A_CONNECTIONS" ] ||
  fail "the active had $A_CONNECTIONS database connections; $ended of them ended after the loss"
taken=$(grep -a "KITE->C[12] reloaded from the store" "$DIR/standby.log" | head -n 1 | cut -d' ' -f1)
refused=$(grep -ac "Logon refused: the store could not take the session" "$DIR/standby.log")
echo "$MODE: the active's $ended database connections ended (locks freed) within $freed ms of the loss;" \
  "the standby refused $refused Logon(s) (the lock held) and took the first session at +$(($(stamp_ms "$taken") - T0)) ms"
if [ "$MODE" = link ]; then
  [ "$freed" -le "$BOUND_LATE_MS" ] ||
    fail "the active's locks were freed $freed ms after its link went down: over the keepalive bound" \
      "$BOUND_MS ms (+ an eighth for the kernel's timers: $BOUND_LATE_MS ms)"
  echo "link: the keepalive bound is ${KA_IDLE} + ${KA_INTERVAL} x ${KA_COUNT} s = $BOUND_MS ms" \
    "($BOUND_LATE_MS ms with the kernel's timer slack)"
  # Back, the old active found the sessions written by another holder and stopped.
  [ "$(grep -ac "another holder wrote the session meanwhile" "$DIR/active.log")" = 2 ] ||
    fail "the old active did not stop writing when it came back"
fi
if [ "$COMMIT" = sync ]; then
  echo "ok: $MODE failover, every order answered once, numbers agree"
else
  echo "ok: $MODE failover, every order answered ($TWICE twice, counted), no MsgSeqNum too low, numbers agree"
fi
