#!/usr/bin/env bash
# The issue-5 measurement in one invocation: raw, quickfix and cpp on
# kernel/single closed and open (20,000/s) and kernel/mono closed with 32
# sessions, then cpp on uring/mono closed with 32 sessions; server pinned to
# SERVER_CORE, client to CLIENT_CORE, both spinning. Results (one JSON per
# cell, the server's stderr with its 'server load' line) go to OUT; the table
# adds how busy the client was and the server's load line, then the ratios.
#   usage: bench/roundtrip/measure.sh [BUILD_DIR] [OUT]
#   env: WARMUP (1) DURATION (3) RUNS (3) RATE (20000) SERVER_CORE (0) CLIENT_CORE (1) IDLE (spin) FLAVOURS
#        URING (1: the cpp/uring/mono cell too; 0: not)
#        PREFIX: a command put before server and client, e.g. "chrt -f 20" on a machine shared with builds
set -euo pipefail
build=${1:-build/release}
out=${2:-results/roundtrip-$(date -u +%Y%m%dT%H%M%SZ)}
bin=$build/bench_roundtrip
warmup=${WARMUP:-1} duration=${DURATION:-3} runs=${RUNS:-3} rate=${RATE:-20000}
sc=${SERVER_CORE:-0} cc=${CLIENT_CORE:-1} idle=${IDLE:-spin}
flavours=${FLAVOURS:-"raw quickfix cpp"}
read -r -a prefix <<<"${PREFIX:-}"
mkdir -p "$out"

cell() {  # flavour model loop sessions [transport]
  local f=$1 m=$2 loop=$3 n=$4 t=${5:-kernel} ready="$out/.ready" name="$1-${5:-kernel}-$2-$3-$4"
  rm -f "$ready"
  "${prefix[@]}" "$bin" server --flavour "$f" --transport "$t" --model "$m" --port 0 --sessions "$n" --cores "$sc" \
    --idle "$idle" --ready-file "$ready" 2>"$out/$name.server.log" &
  local spid=$!
  for _ in $(seq 100); do [[ -s $ready ]] && break; sleep 0.05; done
  if [[ ! -s $ready ]]; then echo "$name: server did not start" >&2; kill "$spid" 2>/dev/null || true; return; fi
  local extra=()
  [[ $loop == open ]] && extra=(--rate "$rate")
  "${prefix[@]}" "$bin" client --port "$(cat "$ready")" --loop "$loop" --sessions "$n" --warmup "$warmup" --duration "$duration" \
    --runs "$runs" --cores "$cc" --idle "$idle" --cell "$f/$t/$m/$loop" --json "$out/$name.json" "${extra[@]}" \
    >"$out/$name.txt" 2>"$out/$name.err" || echo "$name: client failed: $(tail -1 "$out/$name.err")" >&2
  kill -TERM "$spid"; wait "$spid" || true
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); idle=$idle prefix=${PREFIX:-none}" | tee "$out/load.txt"
for f in $flavours; do
  cell "$f" single closed 1
  cell "$f" single open 1
  cell "$f" mono closed 32
done
if [[ ${URING:-1} == 1 && " $flavours " == *" cpp "* ]]; then cell cpp mono closed 32 uring; fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"

python3 - "$out" <<'PY'
import json, glob, os, re, sys
rows = {}
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    j = json.load(open(p)); s = j["summary"]; c = j["cell"]
    view = s.get("response", s["service"])
    cl = s.get("client", {})
    log = p[:-5] + ".server.log"
    m = re.search(r"server load: \S+ polls=\d+ empty=([\d.]+)% busy=([\d.]+)% busy/order=([\d.]+) us", open(log).read()) \
        if os.path.exists(log) else None
    name = "/".join([c["flavour"], c["transport"], c["model"], c["loop"]])
    rows[name] = (name, j["sessions"], s["achieved_rate"],
                  s["service"]["p50"], s["service"]["p99"], s["service"]["p999"], view["p50"], view["p99"], view["p999"],
                  100 * cl.get("busy_share", 0), cl.get("busy_us_per_order", 0),
                  f"{float(m.group(2)):.0f}%/{float(m.group(3)):.2f}" if m else "-", j["verdict"])
print(f'{"cell":28} {"sess":>4} {"rate/s":>9} {"svc p50":>8} {"svc p99":>8} {"svc p99.9":>9} {"view p50":>8} {"view p99":>8} '
      f'{"view p99.9":>10} {"cli busy":>8} {"cli us/o":>8} {"srv busy/us/o":>13}  verdict')
for r in rows.values():
    print(f"{r[0]:28} {r[1]:>4} {r[2]:>9.0f} {r[3]:>8.2f} {r[4]:>8.2f} {r[5]:>9.2f} {r[6]:>8.2f} {r[7]:>8.2f} {r[8]:>10.2f} "
          f"{r[9]:>7.1f}% {r[10]:>8.2f} {r[11]:>13}  {r[12]}")
def get(name, i):
    return rows[name][i] if name in rows else None
q = get("quickfix/kernel/mono/closed", 2)
for f in ("cpp", "raw"):
    v = get(f"{f}/kernel/mono/closed", 2)
    if q and v: print(f"mono 32 closed: {f}/quickfix = {v / q:.2f}x ({v:.0f} / {q:.0f} orders/s)")
u, k = get("cpp/uring/mono/closed", 2), get("cpp/kernel/mono/closed", 2)
if u and k: print(f"mono 32 closed: cpp uring/kernel = {u / k:.2f} ({u:.0f} / {k:.0f} orders/s)")
r, c, qs = (get(f"{f}/kernel/single/closed", 3) for f in ("raw", "cpp", "quickfix"))
if r and c: print(f"single closed p50: cpp/raw = {c / r:.2f}" + (f", overhead ratio (cpp-raw)/(quickfix-raw) = {(c - r) / (qs - r):.2f}" if qs else ""))
PY
