#!/usr/bin/env bash
# Data lines a mono server touches per pass over its sessions, under
# valgrind's lackey (every load and store traced): the cpp flavour's server
# (bench_roundtrip, idle block, null store) driven by `engine_cost client
# --peer bench`, as flavours/rust-pure/measure_cost.sh drives it.
#   bench/engine/measure_lines.sh [BUILD_DIR] [ORDERS]
# It runs 32 sessions with ORDERS and 2 x ORDERS orders each, and 16
# sessions with 2 x ORDERS and 4 x ORDERS (the same extra orders), and
# counts the 64-byte lines accessed more often in the longer run: those the
# orders touch, not start-up's. A line counts when the extra orders gave it
# at least 0.8 accesses per order of one session. With L(n) such lines for n
# sessions, per-session lines = (L(32) - L(16)) / 16 and shared lines =
# L(32) - 32 x per-session. When 32 x per-session + shared passes 512 (the
# simulated 32 KiB L1d of measure_cost.sh's cachegrind run), each session's
# lines are evicted before its next order.
# About two minutes; needs python3.
set -euo pipefail
build=${1:-build/release}
orders=${2:-50}
client="$build/bench/engine/engine_cost"
cpp="$build/bench_roundtrip"
for f in "$client" "$cpp"; do
  [[ -x "$f" ]] || { echo "no $f: build engine_cost and bench_roundtrip first" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
export KITE_CODEC_LEVEL=${KITE_CODEC_LEVEL:-avx2}  # valgrind stops on AVX-512
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Accesses per 64-byte line of one traced run: "line count" rows.
trace() {  # sessions orders out
  rm -f "$work/ready"
  valgrind --tool=lackey --trace-mem=yes --log-file="$work/trace" \
    "$cpp" server --flavour cpp --model mono --sessions "$1" --idle block --ready-file "$work/ready" >"$work/server.log" 2>&1 &
  local server=$!
  for _ in $(seq 1200); do [[ -s "$work/ready" ]] && break; sleep 0.1; done
  "$client" client --peer bench --protocol fix --sessions "$1" --port "$(cat "$work/ready")" --orders "$2" --timeout 600 >/dev/null
  kill -TERM "$server"
  wait "$server" || true
  python3 - "$work/trace" >"$3" <<'PY'
import collections, sys
n = collections.Counter()
with open(sys.argv[1]) as f:
    for line in f:
        if len(line) > 3 and line[0] == ' ' and line[1] in 'LSM':
            n[int(line[3:].split(',')[0], 16) >> 6] += 1
for k, v in n.items():
    print(k, v)
PY
}

trace 32 "$orders" "$work/a32"
trace 32 $((2 * orders)) "$work/b32"
trace 16 $((2 * orders)) "$work/a16"
trace 16 $((4 * orders)) "$work/b16"
python3 - "$work" "$orders" <<'PY'
import sys
work, orders = sys.argv[1], int(sys.argv[2])
def lines(lo, hi, extra_per_session):
    a = dict(map(int, l.split()) for l in open(f"{work}/{lo}"))
    b = dict(map(int, l.split()) for l in open(f"{work}/{hi}"))
    return sum(1 for k in set(a) | set(b) if b.get(k, 0) - a.get(k, 0) >= 0.8 * extra_per_session)
l32 = lines("a32", "b32", orders)
l16 = lines("a16", "b16", 2 * orders)
per = (l32 - l16) / 16
shared = l32 - 32 * per
print(f"lines per order pass: 32 sessions {l32}, 16 sessions {l16}")
print(f"per session {per:.1f} lines, shared {shared:.0f} lines; 32 sessions need {l32} of the 512 lines of a 32 KiB L1d")
PY
