#!/usr/bin/env bash
# Where a server's time goes per order, kernel included, in paired rounds:
# each round runs every flavour once (rotated order) on MODEL closed with
# SESSIONS sessions, server on SERVER_CORE and client on CLIENT_CORE, both
# spinning, and samples the server with `perf record -e cpu-clock` (a
# software clock: no hardware counters needed) for SAMPLE_S seconds in the
# middle of the run. Each sample is put in one bucket by its kernel call
# chain: the server's own code (user), libc (mostly the system calls' entry
# and return: a sample taken as the kernel hands back lands there), recvfrom, sendto up to the loopback
# device (send), the softirq that sendto runs to deliver the reply into the
# client's socket (deliver), epoll_wait, or other. The table gives each
# bucket's median over the rounds in us per order, the rate, and the
# flavour's median ratio to the first flavour in the same round.
# Sampling slows every server by a few percent; the buckets are compared
# between flavours, not against the lab's figures.
#   usage: bench/roundtrip/profile.sh [BUILD_DIR] [OUT]
# A flavour written NAME@DIR runs NAME from the build folder DIR instead (two
# builds of one flavour side by side: FLAVOURS="cpp cpp@/tmp/before").
# TOP=N also lists each flavour's N costliest functions of its own code (us
# per order over all its rounds' samples, by the sampled leaf function).
#   env: FLAVOURS ("cpp raw rust-pure") MODEL (mono) SESSIONS (32) ROUNDS (6)
#        WARMUP (1) SAMPLE_S (2) FREQ (4000) SERVER_CORE (0) CLIENT_CORE (1)
# Needs perf (Debian's linux-perf) and, for rust-pure, BUILD_DIR/rust-pure/release/rust_pure.
set -euo pipefail
build=${1:-build/release}
out=${2:-results/profile-$(date -u +%Y%m%dT%H%M%SZ)}
read -r -a flavours <<<"${FLAVOURS:-cpp raw rust-pure}"
model=${MODEL:-mono} sessions=${SESSIONS:-32} rounds=${ROUNDS:-6}
warmup=${WARMUP:-1} sample=${SAMPLE_S:-2} freq=${FREQ:-4000}
sc=${SERVER_CORE:-0} cc=${CLIENT_CORE:-1}
command -v perf >/dev/null || { echo "profile.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
server_bin() {  # flavour token -> the server binary
  local name=${1%%@*} dir=$build
  [[ $1 == *@* ]] && dir=${1#*@}
  if [[ $name == rust-pure ]]; then echo "$dir/rust-pure/release/rust_pure"; else echo "$dir/bench_roundtrip"; fi
}
for f in "${flavours[@]}"; do
  bin=$(server_bin "$f")
  [[ -x $bin ]] || { echo "profile.sh: no $bin: build it first" >&2; exit 1; }
done
mkdir -p "$out"

run() {  # flavour round
  local f=$1 r=$2 dir="$out/${1//\//_}.$2" name=${1%%@*} bin spid cpid
  bin=$(server_bin "$f")
  mkdir -p "$dir"; rm -f "$dir/ready"
  local args=(--transport kernel --model "$model" --bind 127.0.0.1 --port 0 --sessions "$sessions" --workers 1
              --cores "$sc" --coordinator-core "$sc" --busy-poll-usecs 0 --idle spin --store null --ready-file "$dir/ready")
  if [[ $name == rust-pure ]]; then
    "$bin" "${args[@]}" 2>"$dir/server.err" &
  else
    "$bin" server --flavour "$name" "${args[@]}" 2>"$dir/server.err" &
  fi
  spid=$!
  for _ in $(seq 100); do [[ -s $dir/ready ]] && break; sleep 0.1; done
  [[ -s $dir/ready ]] || { echo "profile.sh: $f did not start: $(tail -1 "$dir/server.err")" >&2; kill "$spid"; return 1; }
  # The client's measured run spans the sampled window with half a second either side.
  "$build/bench_roundtrip" client --host 127.0.0.1 --port "$(cat "$dir/ready")" --loop closed --sessions "$sessions" \
    --think-us 0 --warmup "$warmup" --duration "$(awk -v s="$sample" 'BEGIN { print s + 1 }')" --runs 1 --cores "$cc" \
    --idle spin --json "$dir/client.json" --cell "$name/kernel/$model/closed" >"$dir/client.out" 2>&1 &
  cpid=$!
  sleep "$(awk -v w="$warmup" 'BEGIN { print w + 0.5 }')"
  perf record -q -e cpu-clock -F "$freq" -g -p "$spid" -o "$dir/perf.data" -- sleep "$sample" >"$dir/perf.err" 2>&1 ||
    echo "profile.sh: perf record failed for $f: $(tail -1 "$dir/perf.err")" >&2
  wait "$cpid" || { echo "profile.sh: $f client failed: $(tail -1 "$dir/client.out")" >&2; kill "$spid"; return 1; }
  kill -TERM "$spid"; wait "$spid" || true
  [[ -s $dir/perf.data ]] || { echo "profile.sh: no samples of $f (is perf allowed here? kernel.perf_event_paranoid)" >&2; return 1; }
  perf script -i "$dir/perf.data" -F ip,sym,dso >"$dir/samples.txt" 2>/dev/null
  rm -f "$dir/perf.data"
}

n=${#flavours[@]}
for ((r = 0; r < rounds; ++r)); do
  for ((k = 0; k < n; ++k)); do
    f=${flavours[$(((k + r) % n))]}
    run "$f" "$r" || true
    echo "round $((r + 1))/$rounds $f done" >&2
  done
done

python3 - "$out" "$freq" "$sample" "${TOP:-0}" "${flavours[@]}" <<'PY'
import collections, json, os, re, statistics, sys
out, freq, window, top, flavours = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
BUCKETS = ["user", "libc", "recvfrom", "send", "deliver", "epoll_wait", "other"]

FRAME = re.compile(r"\s*\S+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\(([^()]*)\)$")  # "ip symbol+offset (object)"

def frame(line):  # -> (symbol, object); a symbol may hold spaces
    m = FRAME.match(line)
    return (m.group(1), m.group(2)) if m else (line.strip(), "")

def bucket(stack):  # stack: (symbol, object) frames, the leaf first
    syms = [s for s, _ in stack]
    if "__x64_sys_sendto" in syms:
        return "deliver" if "net_rx_action" in syms else "send"
    if "__x64_sys_recvfrom" in syms: return "recvfrom"
    if "__x64_sys_epoll_wait" in syms: return "epoll_wait"
    if any(s.startswith(("__x64_sys_", "asm_", "entry_SYSCALL")) for s in syms): return "other"
    return "libc" if "libc.so" in stack[0][1] else "user"

per = {}  # (flavour, round) -> {bucket: us/order, "rate": orders/s}
own = collections.defaultdict(collections.Counter)  # flavour -> {function: samples}
own_orders = collections.Counter()                  # flavour -> orders in its sampled windows
for f in flavours:
    r = 0
    folder = f.replace("/", "_")
    while os.path.isdir(os.path.join(out, f"{folder}.{r}")):
        d = os.path.join(out, f"{folder}.{r}")
        try:
            rate = json.load(open(os.path.join(d, "client.json")))["summary"]["achieved_rate"]
            text = open(os.path.join(d, "samples.txt")).read()
        except (OSError, ValueError, KeyError):
            r += 1; continue
        counts = dict.fromkeys(BUCKETS, 0)
        for block in text.split("\n\n"):
            stack = [frame(l) for l in block.strip().splitlines() if len(l.split()) > 1]
            if not stack: continue
            b = bucket(stack)
            counts[b] += 1
            if b == "user": own[f][stack[0][0]] += 1
        orders = rate * window
        own_orders[f] += orders
        row = {b: c / freq / orders * 1e6 for b, c in counts.items()}
        row["total"] = sum(row[b] for b in BUCKETS); row["rate"] = rate
        per[(f, r)] = row
        r += 1

ref = flavours[0]
print(f"us of server time per order, median of the rounds (perf cpu-clock at {freq:.0f} Hz, {window:g} s per run)")
print(f"{'flavour':14s} {'rounds':>6s} {'rate/s':>9s} " + " ".join(f"{b:>10s}" for b in BUCKETS + ["total"]) + f"  rate/{ref}")
for f in flavours:
    rows = [v for (g, _), v in per.items() if g == f]
    if not rows: print(f"{f:14s} no run succeeded"); continue
    med = {k: statistics.median(v[k] for v in rows) for k in rows[0]}
    ratios = [per[(f, r)]["rate"] / per[(ref, r)]["rate"] for (g, r) in per if g == f and (ref, r) in per]
    print(f"{f:14s} {len(rows):6d} {med['rate']:9.0f} " + " ".join(f"{med[b]:10.3f}" for b in BUCKETS + ["total"]) +
          f"  {statistics.median(ratios):.3f}")
if top > 0:
    for f in flavours:
        if not own_orders[f]: continue
        print(f"\n{f}: its own code's costliest functions, us per order")
        for name, c in own[f].most_common(top):
            print(f"  {c / freq / own_orders[f] * 1e6:7.3f}  {name[:120]}")
PY
