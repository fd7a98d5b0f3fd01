#!/usr/bin/env bash
# Instructions per order of the mono server thread, under callgrind.
#   bench/engine/measure_cost.sh [BUILD_DIR] [ORDERS_LOW] [ORDERS_HIGH]
# BUILD_DIR must be a build WITHOUT -march=native (the release preset is).
# For each protocol (fix: session layer over the engine; echo: the engine
# alone) it runs the server under callgrind twice, with 32 sessions sending
# ORDERS_LOW and ORDERS_HIGH orders each, counting only the server thread's
# duty cycles (--toggle-collect on SessionAgent::do_work/block), and prints
# the average and the marginal instructions per order:
#   marginal = (Ir_high - Ir_low) / (orders_high - orders_low)
# which leaves out connection set-up, logon and logout. The fix-dict row is
# the fix row with UseDataDictionary=Y (dictionaries/FIX44.xml, or
# $KITE_DICTIONARY_DIR), for reference: the lab measures without one.
#
# Then, when BUILD_DIR has bench_roundtrip, the same for its measured servers
# (flavours cpp and quickfix, model mono, idle block, null store), driven by
# `engine_cost client --peer bench` with exact order counts. These count the
# WHOLE server process (QuickFIX's threads are its own, so no per-function
# toggle); the marginal figure removes start-up, logon and logout, and the
# main thread only sleeps.
set -euo pipefail
build=${1:-build/release}
low=${2:-100}
high=${3:-300}
bin="$build/bench/engine/engine_cost"
[[ -x "$bin" ]] || { echo "no $bin: build the engine_cost target first" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # protocol[-dict] orders -> "orders Ir"
  local proto=${1%-dict} orders=$2 out="$work/cg.$1.$2" extra=()
  [[ $1 == *-dict ]] && extra=(--dictionary "$dict")
  rm -f "$work/port"
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect='kite::engine::detail::SessionAgent::do_work*' \
    --toggle-collect='kite::engine::detail::SessionAgent::block*' \
    "$bin" serve --protocol "$proto" "${extra[@]}" --port-file "$work/port" --timeout 300 >"$work/serve.log" 2>&1 &
  local server=$!
  for _ in $(seq 600); do [[ -f "$work/port" ]] && break; sleep 0.1; done
  "$bin" client --protocol "$proto" --port "$(cat "$work/port")" --orders "$orders" --timeout 300 >/dev/null
  wait "$server"
  local served ir
  served=$(sed -n 's/.*orders=\([0-9]*\).*/\1/p' "$work/serve.log")
  ir=$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  echo "$served $ir"
}

source "$(dirname "$0")/valgrind_mono.sh"
run_bench() {  # flavour orders -> "orders Ir"
  local flavour=$1 orders=$2 out="$work/cg.bench.$1.$2"
  valgrind_mono "$bin" "$orders" "$work" --tool=callgrind --callgrind-out-file="$out" -- \
    "$bench" server --flavour "$flavour"
  local ir
  ir=$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  echo "$((32 * orders)) $ir"
}

row() {  # name runner arg: the runner at ORDERS_LOW and ORDERS_HIGH, one line
  local o1 i1 o2 i2
  read -r o1 i1 < <("$2" "$3" "$low")
  read -r o2 i2 < <("$2" "$3" "$high")
  awk -v p="$1" -v o1="$o1" -v i1="$i1" -v o2="$o2" -v i2="$i2" \
    'BEGIN { printf "%-15s %10d %14d %10d %14d %10.0f %10.0f\n", p, o1, i1, o2, i2, i2 / o2, (i2 - i1) / (o2 - o1) }'
}

printf '%-15s %10s %14s %10s %14s %10s %10s\n' protocol orders_low Ir_low orders_high Ir_high avg/order marginal
# fix-dict: the fix row with UseDataDictionary=Y (FIX44.xml), for reference;
# the lab's cells run without a dictionary.
dict=${KITE_DICTIONARY_DIR:-$(dirname "$0")/../../dictionaries}
for proto in echo fix fix-dict; do row "$proto" run "$proto"; done

bench="$build/bench_roundtrip"
if [[ -x "$bench" ]]; then
  for flavour in cpp quickfix; do row "bench-$flavour" run_bench "$flavour"; done
fi
