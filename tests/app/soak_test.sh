#!/bin/bash
# Soak: kite-initiator drives 32 sessions into kite-acceptor at the lab's
# open-loop rate (the `rate` of the matrix file: orders/s over all sessions)
# for DURATION seconds. Prints the initiator's figures per interval (orders,
# latency from the planned send time), and fails when either process's
# resident memory at the end exceeds its size after the warm-up by more than
# 5% + 2 MiB, when an order is not answered exactly once, or when less than
# 95% of the planned orders went out. The stores are null: a store keeps
# every message for resends and so grows by design; the soak looks for
# growth anywhere else (engine, sessions, application, logging).
# usage: soak_test.sh KITE_ACCEPTOR KITE_INITIATOR MATRIX_TOML DURATION_S WARMUP_S INTERVAL_S
set -u
ACCEPTOR=$1
INITIATOR=$2
MATRIX=$3
DURATION=$4
WARMUP=$5
INTERVAL=$6
SESSIONS=32
RATE=$(sed -nE 's/^rate *= *([0-9]+).*/\1/p' "$MATRIX" | head -1)
[ -n "$RATE" ] || { echo "FAIL: no rate in $MATRIX"; exit 1; }
DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- initiator log (tail)"; tail -20 "$DIR/initiator.log"
  echo "--- acceptor log (tail)"; tail -20 "$DIR/acceptor.log"
  exit 1
}
rss_kb() { sed -nE 's/^VmRSS:[[:space:]]+([0-9]+) kB/\1/p' "/proc/$1/status"; }

{
  printf '[engine]\nport = 0\nmax_connections = 64\n[defaults]\nBeginString = "FIX.4.4"\nSenderCompID = "KITE"\n'
  printf 'HeartBtInt = 30\nStoreKind = "null"\n'
  for ((i = 1; i <= SESSIONS; i++)); do printf '[[session]]\nTargetCompID = "C%d"\n' "$i"; done
} >"$DIR/acceptor.toml"
"$ACCEPTOR" --config "$DIR/acceptor.toml" --ready-file "$DIR/port" 2>"$DIR/acceptor.log" &
ACC=$!
PIDS+=($ACC)
for ((i = 0; i < 100; i++)); do [ -s "$DIR/port" ] && break; sleep 0.1; done
[ -s "$DIR/port" ] || fail "kite-acceptor did not start"
PORT=$(cat "$DIR/port")
PER_SESSION=$(awk -v r="$RATE" -v n="$SESSIONS" 'BEGIN { printf "%.3f", r / n }')
{
  printf '[orders]\nsource = "rate"\nrate = %s\nreport_interval_s = %d\n' "$PER_SESSION" "$INTERVAL"
  printf '[defaults]\nBeginString = "FIX.4.4"\nConnectionType = "initiator"\nTargetCompID = "KITE"\nHeartBtInt = 30\n'
  printf 'StoreKind = "null"\n'
  printf 'SocketConnectHost = "127.0.0.1"\nSocketConnectPort = %d\n' "$PORT"
  for ((i = 1; i <= SESSIONS; i++)); do printf '[[session]]\nSenderCompID = "C%d"\n' "$i"; done
} >"$DIR/initiator.toml"
"$INITIATOR" --config "$DIR/initiator.toml" 2>"$DIR/initiator.log" &
INI=$!
PIDS+=($INI)
echo "soak: $SESSIONS sessions, $RATE orders/s in all ($PER_SESSION each), ${DURATION} s, warm-up ${WARMUP} s"
sleep "$WARMUP"
kill -0 "$ACC" "$INI" 2>/dev/null || fail "a process died during the warm-up"
ACC_WARM=$(rss_kb "$ACC")
INI_WARM=$(rss_kb "$INI")
sleep $((DURATION - WARMUP))
kill -0 "$ACC" "$INI" 2>/dev/null || fail "a process died"
ACC_END=$(rss_kb "$ACC")
INI_END=$(rss_kb "$INI")
kill -TERM "$INI"
wait "$INI" || fail "kite-initiator exited with $?"
kill -TERM "$ACC"
wait "$ACC" || fail "kite-acceptor exited with $?"

echo "per interval (kite-initiator):"
grep -E "kite-initiator sent [0-9]+" "$DIR/initiator.log" | sed -E 's/^[^ ]+ INFO  kite-initiator /  /'
echo "resident memory kB: kite-acceptor $ACC_WARM after warm-up, $ACC_END at the end;" \
  "kite-initiator $INI_WARM, $INI_END"
status=0
for pair in "kite-acceptor $ACC_WARM $ACC_END" "kite-initiator $INI_WARM $INI_END"; do
  set -- $pair
  limit=$(($2 + $2 / 20 + 2048))
  if [ "$3" -gt "$limit" ]; then
    echo "FAIL: $1 grew from $2 kB to $3 kB (tolerance: 5% + 2 MiB, up to $limit kB)"
    status=1
  fi
done
total_sent=0
while read -r line; do
  sent=$(sed -E 's/.*orders sent ([0-9]+).*/\1/' <<<"$line")
  reports=$(sed -E 's/.*execution reports ([0-9]+).*/\1/' <<<"$line")
  [ "$sent" = "$reports" ] || { echo "FAIL: $line"; status=1; }
  total_sent=$((total_sent + sent))
done < <(grep "orders sent" "$DIR/initiator.log")
planned=$((RATE * DURATION))
echo "orders sent $total_sent of about $planned planned"
[ "$total_sent" -ge $((planned * 95 / 100)) ] || { echo "FAIL: less than 95% of the planned orders went out"; status=1; }
[ "$status" = 0 ] && echo "ok"
exit "$status"
