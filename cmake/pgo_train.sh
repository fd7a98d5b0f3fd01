#!/usr/bin/env bash
# The training run of a KITE_PGO build (cmake/KitePgo.cmake): runs the
# instrumented bench_roundtrip of the training build through the lab's cells
# (the cpp server on every transport and model it serves, closed and open;
# raw and quickfix at kernel/mono), so that its .gcda counts describe an
# order's path as the lab runs it. Skipped when the binary is the one
# already trained (the stamp holds its hash): the main build's objects then
# keep their profile and are not rebuilt.
#   cmake/pgo_train.sh BENCH_ROUNDTRIP PROFILE_DIR STAMP
# Fails (and so does the build) only when the core cell, cpp/kernel/mono,
# cannot run: a profile without it would not be the lab's path.
set -euo pipefail
bin=$1 profile=$2 stamp=$3
[[ -x $bin ]] || { echo "pgo_train: no $bin" >&2; exit 1; }
hash=$(sha256sum "$bin" | cut -d' ' -f1)
if [[ -s $stamp ]] && grep -qx "binary $hash" "$stamp"; then
  exit 0
fi
rm -rf "$profile"
mkdir -p "$profile"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One cell: flavour transport model loop; prints nothing on success.
cell() {
  local flavour=$1 transport=$2 model=$3 loop=$4 ready="$work/ready" server sessions=8
  [[ $model == single ]] && sessions=1  # single serves one session
  rm -f "$ready"
  "$bin" server --flavour "$flavour" --transport "$transport" --model "$model" --bind 127.0.0.1 --port 0 \
    --sessions "$sessions" --workers 2 --idle spin --store null --ready-file "$ready" >"$work/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do [[ -s $ready ]] && break; sleep 0.1; done
  local ok=0
  if [[ -s $ready ]]; then
    local args=(--host 127.0.0.1 --port "$(cat "$ready")" --loop "$loop" --sessions "$sessions" --warmup 0.2 --duration 0.5
                --runs 1 --idle spin --cell "$flavour/$transport/$model/$loop")
    [[ $loop == open ]] && args+=(--rate 20000)
    timeout 60 "$bin" client "${args[@]}" >"$work/client.log" 2>&1 && ok=1
  fi
  # The counts are written as the server exits: wait for it (a server that
  # does not stop within 10 s is killed, and its counts are lost).
  kill -TERM "$server" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  if [[ $ok == 0 ]]; then
    echo "pgo_train: $flavour/$transport/$model/$loop did not run: $(tail -1 "$work/server.log") $(tail -1 "$work/client.log" 2>/dev/null)" >&2
    return 1
  fi
}

# Once more before giving up: a loaded build machine may time a logon out.
cell cpp kernel mono closed || cell cpp kernel mono closed || exit 1
trained=("cpp/kernel/mono/closed")
for spec in "cpp kernel mono open" "cpp kernel single closed" "cpp kernel pool closed" "cpp kernel shard closed" \
            "cpp uring mono closed" "cpp uring single closed" "cpp uring pool closed" "cpp uring shard closed" \
            "raw kernel mono closed" "quickfix kernel mono closed"; do
  read -r f t m l <<<"$spec"
  if cell "$f" "$t" "$m" "$l"; then trained+=("$f/$t/$m/$l"); fi
done
n=$(find "$profile" -name '*.gcda' | wc -l)
[[ $n -gt 0 ]] || { echo "pgo_train: no profile written to $profile" >&2; exit 1; }
{
  echo "binary $hash"
  echo "gcda $n"
  printf 'cell %s\n' "${trained[@]}"
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
echo "pgo_train: ${#trained[@]} cells, $n profiles"
