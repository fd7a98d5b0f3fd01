#!/usr/bin/env bash
# Instructions per order of the rust-pure and cpp servers, under callgrind, as
# bench/engine/measure_cost.sh counts its bench rows: model mono, 32 sessions,
# idle block, null store, driven by `engine_cost client --peer bench` with
# ORDERS_LOW and then ORDERS_HIGH orders per session. The whole server process
# is counted; the marginal figure, (Ir_high - Ir_low) / (orders_high -
# orders_low), leaves out start-up, logons and logouts.
#   flavours/rust-pure/measure_cost.sh [BUILD_DIR] [ORDERS_LOW] [ORDERS_HIGH]
# BUILD_DIR needs engine_cost, bench_roundtrip and rust-pure/release/rust_pure.
set -euo pipefail
build=${1:-build/release}
low=${2:-100}
high=${3:-300}
client="$build/bench/engine/engine_cost"
cpp="$build/bench_roundtrip"
rust="$build/rust-pure/release/rust_pure"
for f in "$client" "$cpp" "$rust"; do
  [[ -x "$f" ]] || { echo "no $f: build engine_cost, bench_roundtrip and rust_pure first" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # flavour orders -> "orders Ir"
  local flavour=$1 orders=$2 out="$work/cg.$1.$2"
  rm -f "$work/ready"
  local cmd
  if [[ $flavour == rust-pure ]]; then
    cmd=("$rust" --model mono --sessions 32 --idle block --ready-file "$work/ready")
  else
    cmd=("$cpp" server --flavour cpp --model mono --sessions 32 --idle block --ready-file "$work/ready")
  fi
  valgrind --tool=callgrind --callgrind-out-file="$out" "${cmd[@]}" >"$work/server.log" 2>&1 &
  local server=$!
  for _ in $(seq 600); do [[ -s "$work/ready" ]] && break; sleep 0.1; done
  "$client" client --peer bench --protocol fix --port "$(cat "$work/ready")" --orders "$orders" --timeout 300 >/dev/null
  kill -TERM "$server"
  wait "$server" || true
  local ir
  ir=$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  echo "$((32 * orders)) $ir"
}

printf '%-10s %10s %14s %10s %14s %10s %10s\n' flavour orders_low Ir_low orders_high Ir_high avg/order marginal
for flavour in cpp rust-pure; do
  read -r o1 i1 < <(run "$flavour" "$low")
  read -r o2 i2 < <(run "$flavour" "$high")
  awk -v p="$flavour" -v o1="$o1" -v i1="$i1" -v o2="$o2" -v i2="$i2" \
    'BEGIN { printf "%-10s %10d %14d %10d %14d %10.0f %10.0f\n", p, o1, i1, o2, i2, i2 / o2, (i2 - i1) / (o2 - o1) }'
done
