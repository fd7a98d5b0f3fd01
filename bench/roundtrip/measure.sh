#!/usr/bin/env bash
# The issue-5 measurement in one invocation: raw, quickfix and cpp on
# kernel/single closed and open (20,000/s) and kernel/mono closed with 32
# sessions; server pinned to SERVER_CORE, client to CLIENT_CORE, both
# spinning. Results (one JSON per cell) go to OUT.
#   usage: bench/roundtrip/measure.sh [BUILD_DIR] [OUT]
#   env: WARMUP (1) DURATION (3) RUNS (3) RATE (20000) SERVER_CORE (0) CLIENT_CORE (1) IDLE (spin) FLAVOURS
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

cell() {  # flavour model loop sessions
  local f=$1 m=$2 loop=$3 n=$4 ready="$out/.ready" name="$1-kernel-$2-$3-$4"
  rm -f "$ready"
  "${prefix[@]}" "$bin" server --flavour "$f" --transport kernel --model "$m" --port 0 --sessions "$n" --cores "$sc" \
    --idle "$idle" --ready-file "$ready" 2>"$out/$name.server.log" &
  local spid=$!
  for _ in $(seq 100); do [[ -s $ready ]] && break; sleep 0.05; done
  if [[ ! -s $ready ]]; then echo "$name: server did not start" >&2; kill "$spid" 2>/dev/null || true; return; fi
  local extra=()
  [[ $loop == open ]] && extra=(--rate "$rate")
  "${prefix[@]}" "$bin" client --port "$(cat "$ready")" --loop "$loop" --sessions "$n" --warmup "$warmup" --duration "$duration" \
    --runs "$runs" --cores "$cc" --idle "$idle" --cell "$f/kernel/$m/$loop" --json "$out/$name.json" "${extra[@]}" \
    >"$out/$name.txt" 2>"$out/$name.err" || echo "$name: client failed: $(tail -1 "$out/$name.err")" >&2
  kill -TERM "$spid"; wait "$spid" || true
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); idle=$idle prefix=${PREFIX:-none}" | tee "$out/load.txt"
for f in $flavours; do
  cell "$f" single closed 1
  cell "$f" single open 1
  cell "$f" mono closed 32
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"

python3 - "$out" <<'PY'
import json, glob, os, sys
rows = []
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    j = json.load(open(p)); s = j["summary"]; c = j["cell"]
    view = s.get("response", s["service"])
    rows.append(("/".join([c["flavour"], c["transport"], c["model"], c["loop"]]), j["sessions"], s["achieved_rate"],
                 s["service"]["p50"], s["service"]["p99"], s["service"]["p999"], view["p50"], view["p99"], view["p999"],
                 j["verdict"]))
print(f'{"cell":28} {"sess":>4} {"rate/s":>9} {"svc p50":>8} {"svc p99":>8} {"svc p99.9":>9} {"view p50":>8} {"view p99":>8} {"view p99.9":>10}  verdict')
for r in rows:
    print(f"{r[0]:28} {r[1]:>4} {r[2]:>9.0f} {r[3]:>8.2f} {r[4]:>8.2f} {r[5]:>9.2f} {r[6]:>8.2f} {r[7]:>8.2f} {r[8]:>10.2f}  {r[9]}")
PY
