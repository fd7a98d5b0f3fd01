#!/bin/bash
# The veth link between two network namespaces goes down and up while
# kite-initiator (one namespace) streams orders to kite-acceptor (the other):
# both sides see the connection die (heartbeats), the initiator's attempts
# back off while the link is down, the sessions log on again and
# resynchronise when it is up, and every order is answered once.
# SKIPPED (exit 77) where network namespaces cannot be made (not root, no ip).
# usage: veth_test.sh KITE_ACCEPTOR KITE_INITIATOR
set -u
ACCEPTOR=$1
INITIATOR=$2
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
NS_A=kite-veth-a-$$
NS_I=kite-veth-i-$$
DEV_A=kva$$
DEV_I=kvi$$
DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  ip netns del "$NS_A" 2>/dev/null
  ip netns del "$NS_I" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
ip netns add "$NS_A" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$NS_I" || skip "cannot create a second network namespace"
ip link add "$DEV_A" type veth peer name "$DEV_I" 2>/dev/null || skip "cannot create a veth pair"
ip link set "$DEV_A" netns "$NS_A" && ip link set "$DEV_I" netns "$NS_I" || skip "cannot move the veth ends"
ip -n "$NS_A" addr add 10.78.0.1/24 dev "$DEV_A" && ip -n "$NS_A" link set "$DEV_A" up && ip -n "$NS_A" link set lo up
ip -n "$NS_I" addr add 10.78.0.2/24 dev "$DEV_I" && ip -n "$NS_I" link set "$DEV_I" up && ip -n "$NS_I" link set lo up

fail() {
  echo "FAIL: $*"
  echo "--- initiator log"; cat "$DIR/initiator.log"
  echo "--- acceptor log"; cat "$DIR/acceptor.log"
  exit 1
}
# Waits up to $3 seconds for $2 lines matching $1 in file $4.
wait_count() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [ "$(grep -c -- "$1" "$4" 2>/dev/null)" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

cat >"$DIR/acceptor.toml" <<TOML
[engine]
bind = "10.78.0.1"
port = 9878
[defaults]
BeginString = "FIX.4.4"
SenderCompID = "KITE"
HeartBtInt = 1
StoreKind = "file"
FileStorePath = "$DIR/acceptor-store"
[[session]]
TargetCompID = "C1"
[[session]]
TargetCompID = "C2"
TOML
cat >"$DIR/initiator.toml" <<TOML
[engine]
connect_timeout_ms = 500
[orders]
source = "rate"
rate = 100
[defaults]
BeginString = "FIX.4.4"
ConnectionType = "initiator"
TargetCompID = "KITE"
HeartBtInt = 1
StoreKind = "file"
FileStorePath = "$DIR/initiator-store"
SocketConnectHost = "10.78.0.1"
SocketConnectPort = 9878
ReconnectInterval = 1
ReconnectIntervalMax = 2
[[session]]
SenderCompID = "C1"
[[session]]
SenderCompID = "C2"
TOML

ip netns exec "$NS_A" "$ACCEPTOR" --config "$DIR/acceptor.toml" --ready-file "$DIR/ready" 2>"$DIR/acceptor.log" &
PIDS+=($!)
ACC=$!
wait_count "" 1 10 "$DIR/ready" || fail "kite-acceptor did not start"
ip netns exec "$NS_I" "$INITIATOR" --config "$DIR/initiator.toml" 2>"$DIR/initiator.log" &
PIDS+=($!)
INI=$!
wait_count "logged on" 2 10 "$DIR/initiator.log" || fail "the sessions did not log on"
sleep 1
ip -n "$NS_I" link set "$DEV_I" down
# Both sides find the connection dead (no heartbeat), the initiator's attempts fail and back off.
wait_count "disconnected" 2 15 "$DIR/initiator.log" || fail "the initiator did not see the link go"
wait_count "next attempt in 1999 ms" 2 15 "$DIR/initiator.log" || fail "no back-off while the link was down"
wait_count "disconnected" 2 15 "$DIR/acceptor.log" || fail "the acceptor did not see the link go"
ip -n "$NS_I" link set "$DEV_I" up
wait_count "logged on" 4 20 "$DIR/initiator.log" || fail "the sessions did not log on again"
sleep 1
kill -TERM "$INI"
wait "$INI" || fail "kite-initiator exited with $?"
kill -TERM "$ACC"
wait "$ACC" || fail "kite-acceptor exited with $?"
for c in C1 C2; do
  line=$(grep "FIX.4.4:$c->KITE orders sent" "$DIR/initiator.log") || fail "no summary for $c"
  sent=$(sed -E 's/.*orders sent ([0-9]+).*/\1/' <<<"$line")
  reports=$(sed -E 's/.*execution reports ([0-9]+).*/\1/' <<<"$line")
  [ "$sent" -gt 0 ] && [ "$sent" = "$reports" ] || fail "$c: $sent orders sent, $reports execution reports"
done
echo "ok: link down and up, sessions back, every order answered once"
