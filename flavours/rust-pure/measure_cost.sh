#!/usr/bin/env bash
# Instructions per order of the rust-pure and cpp servers, under callgrind, as
# bench/engine/measure_cost.sh counts its bench rows: model mono, 32 sessions,
# idle block, null store, driven by `engine_cost client --peer bench` with
# ORDERS_LOW and then ORDERS_HIGH orders per session. The whole server process
# is counted; the marginal figure, (Ir_high - Ir_low) / (orders_high -
# orders_low), leaves out start-up, logons and logouts.
#   flavours/rust-pure/measure_cost.sh [BUILD_DIR] [ORDERS_LOW] [ORDERS_HIGH]
# BUILD_DIR needs engine_cost, bench_roundtrip and rust-pure/release/rust_pure.
#
# KITE_COST_CACHE=1 runs cachegrind instead and adds the marginal D1 and LL
# misses per order (reads + writes) of a SIMULATED cache, by default the
# host's per-core L1d and L2 (KITE_COST_D1, KITE_COST_LL: cachegrind's
# size,assoc,line), the misses of a simulated I1 (KITE_COST_I1, default
# 32768,8,64; 16384,8,64 stands in for sharing the core's L1i with the client
# and the kernel) and the mispredicted conditional branches of its simple
# predictor (Bcm). Its Ir equals callgrind's. Valgrind cannot run AVX-512:
# the codec is held at avx2 (KITE_CODEC_LEVEL) whatever the CPU has.
set -euo pipefail
build=${1:-build/release}
low=${2:-100}
high=${3:-300}
cache=${KITE_COST_CACHE:-0}
d1=${KITE_COST_D1:-32768,8,64}
ll=${KITE_COST_LL:-524288,8,64}
icache=${KITE_COST_I1:-32768,8,64}
export KITE_CODEC_LEVEL=${KITE_CODEC_LEVEL:-avx2}
client="$build/bench/engine/engine_cost"
cpp="$build/bench_roundtrip"
rust="$build/rust-pure/release/rust_pure"
for f in "$client" "$cpp" "$rust"; do
  [[ -x "$f" ]] || { echo "no $f: build engine_cost, bench_roundtrip and rust_pure first" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The PROGRAM TOTALS line of a callgrind or cachegrind file:
# "Ir D1miss LLmiss I1miss Bcm" (0 under callgrind).
totals() {
  if [[ $cache == 1 ]]; then
    cg_annotate "$1" 2>/dev/null | awk '
      /^ *Ir +I1mr/ { for (i = 1; i <= NF; ++i) col[$i] = i }
      /PROGRAM TOTALS/ { gsub(/\([^)]*\)|,/, ""); $0 = $0; print $col["Ir"], $col["D1mr"] + $col["D1mw"], $col["DLmr"] + $col["DLmw"], $col["I1mr"], $col["Bcm"]; exit }'
  else
    callgrind_annotate "$1" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1 0 0 0 0/p' | tr -d ,
  fi
}

source "$(dirname "$0")/../../bench/engine/valgrind_mono.sh"
run() {  # flavour orders -> "orders Ir D1 LL I1 Bcm"
  local flavour=$1 orders=$2 out="$work/cg.$1.$2"
  local cmd tool
  if [[ $flavour == rust-pure ]]; then
    cmd=("$rust")
  else
    cmd=("$cpp" server --flavour cpp)
  fi
  if [[ $cache == 1 ]]; then
    tool=(--tool=cachegrind --cache-sim=yes --branch-sim=yes --I1="$icache" --D1="$d1" --LL="$ll" --cachegrind-out-file="$out")
  else
    tool=(--tool=callgrind --callgrind-out-file="$out")
  fi
  valgrind_mono "$client" "$orders" "$work" "${tool[@]}" -- "${cmd[@]}"
  echo "$((32 * orders)) $(totals "$out")"
}

printf '%-10s %10s %14s %10s %14s %10s %10s' flavour orders_low Ir_low orders_high Ir_high avg/order marginal
[[ $cache == 1 ]] && printf ' %9s %9s %9s %9s   (I1 %s, D1 %s, LL %s: simulated)' D1miss/o LLmiss/o I1miss/o Bcm/o "$icache" "$d1" "$ll"
printf '\n'
for flavour in cpp rust-pure; do
  read -r o1 i1 d1a l1a ia ba < <(run "$flavour" "$low")
  read -r o2 i2 d1b l1b ib bb < <(run "$flavour" "$high")
  awk -v p="$flavour" -v o1="$o1" -v i1="$i1" -v o2="$o2" -v i2="$i2" \
    'BEGIN { printf "%-10s %10d %14d %10d %14d %10.0f %10.0f", p, o1, i1, o2, i2, i2 / o2, (i2 - i1) / (o2 - o1) }'
  [[ $cache == 1 ]] && awk -v o1="$o1" -v o2="$o2" -v a="$d1a" -v b="$d1b" -v c="$l1a" -v d="$l1b" \
    -v e="$ia" -v f="$ib" -v g="$ba" -v h="$bb" \
    'BEGIN { printf " %9.2f %9.2f %9.2f %9.2f", (b - a) / (o2 - o1), (d - c) / (o2 - o1), (f - e) / (o2 - o1), (h - g) / (o2 - o1) }'
  printf '\n'
done
