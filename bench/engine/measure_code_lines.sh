#!/usr/bin/env bash
# The code an order runs through in a mono server: the distinct 64-byte
# lines (and bytes) holding an instruction that runs at least once per
# order, marginal between ORDERS_LOW and ORDERS_HIGH orders per session
# (callgrind --dump-instr=yes; 32 sessions, idle block, null store, driven
# by `engine_cost client --peer bench`, as flavours/rust-pure/measure_cost.sh
# runs them). Per function: its lines, its bytes, the lines those bytes would
# take packed, and its instructions per order.
#   bench/engine/measure_code_lines.sh [BUILD_DIR] [FLAVOUR] [ORDERS_LOW] [ORDERS_HIGH] [TOP]
# FLAVOUR: cpp (default), raw is not driven this way; rust-pure runs
# BUILD_DIR/rust-pure/release/rust_pure. The codec is held at avx2 (valgrind
# cannot run AVX-512).
set -euo pipefail
build=${1:-build/release}
flavour=${2:-cpp}
low=${3:-100}
high=${4:-300}
top=${5:-12}
export KITE_CODEC_LEVEL=${KITE_CODEC_LEVEL:-avx2}
client="$build/bench/engine/engine_cost"
if [[ $flavour == rust-pure ]]; then
  server=("$build/rust-pure/release/rust_pure")
else
  server=("$build/bench_roundtrip" server --flavour "$flavour")
fi
for f in "$client" "${server[0]}"; do
  [[ -x $f ]] || { echo "no $f: build engine_cost and the server first" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$(dirname "$0")/valgrind_mono.sh"
run() {  # orders -> callgrind file $work/cg.<orders>
  valgrind_mono "$client" "$1" "$work" --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
    --callgrind-out-file="$work/cg.$1" -- "${server[@]}"
}
run "$low"
run "$high"

python3 - "$work/cg.$low" "$work/cg.$high" "$((32 * (high - low)))" "$top" <<'EOF'
import collections, sys

def load(path):
    """Instructions run per (object, address), and each address's function."""
    counts, func = collections.Counter(), {}
    obj = fn = None
    after_call = False
    for line in open(path):
        if line.startswith("ob="):
            obj = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line.startswith("calls="):
            after_call = True  # the next line is the call's inclusive cost
        elif line.startswith("0x"):
            if after_call:
                after_call = False
                continue
            parts = line.split()
            key = (obj, int(parts[0], 16))
            counts[key] += int(parts[2]) if len(parts) > 2 else 0
            func[key] = fn
    return counts, func

low, _ = load(sys.argv[1])
high, func = load(sys.argv[2])
orders, top = float(sys.argv[3]), int(sys.argv[4])
per_order = {k: (v - low.get(k, 0)) / orders for k, v in high.items()}
hot = {k for k, v in per_order.items() if v >= 0.5}  # run on at least every other order
# An instruction's size: up to the next address seen in its object (at most 15).
size = {}
by_object = collections.defaultdict(list)
for obj, addr in high:
    by_object[obj].append(addr)
for obj, addrs in by_object.items():
    addrs.sort()
    for a, b in zip(addrs, addrs[1:]):
        size[(obj, a)] = min(b - a, 15)
lines, fn_lines = set(), collections.defaultdict(set)
fn_bytes, fn_ir = collections.Counter(), collections.Counter()
for k in hot:
    line = (k[0], k[1] >> 6)
    lines.add(line)
    fn_lines[func[k]].add(line)
    fn_bytes[func[k]] += size.get(k, 4)
    fn_ir[func[k]] += per_order[k]
total_bytes = sum(fn_bytes.values())
print("code lines per order %d, bytes %d (%d lines packed), instructions per order %.0f"
      % (len(lines), total_bytes, (total_bytes + 63) // 64, sum(fn_ir.values())))
for f in sorted(fn_lines, key=lambda f: -len(fn_lines[f]))[:top]:
    print("%5d lines %6d B (%3d packed) %7.0f Ir  %s"
          % (len(fn_lines[f]), fn_bytes[f], (fn_bytes[f] + 63) // 64, fn_ir[f], f[:90]))
EOF
