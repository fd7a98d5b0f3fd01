# Sourced by the cost scripts (bench/engine/measure_cost.sh,
# bench/engine/measure_code_lines.sh, flavours/rust-pure/measure_cost.sh):
# one mono server under valgrind, driven by `engine_cost client --peer bench`.
#   valgrind_mono CLIENT ORDERS WORK_DIR VALGRIND_OPTION... -- SERVER_COMMAND...
# The server runs with --model mono --sessions 32 --idle block and a ready
# file in WORK_DIR; CLIENT sends ORDERS orders per session; then the server
# gets SIGTERM, and valgrind writes its output file as it exits.
valgrind_mono() {
  local client=$1 orders=$2 work=$3
  shift 3
  local tool=()
  while [[ $1 != -- ]]; do tool+=("$1"); shift; done
  shift
  rm -f "$work/ready"
  valgrind "${tool[@]}" "$@" --model mono --sessions 32 --idle block --ready-file "$work/ready" \
    >"$work/server.log" 2>&1 &
  local server=$!
  for _ in $(seq 600); do [[ -s $work/ready ]] && break; sleep 0.1; done
  if [[ ! -s $work/ready ]]; then
    echo "the server did not start: $(tail -1 "$work/server.log")" >&2
    kill "$server"
    return 1
  fi
  "$client" client --peer bench --protocol fix --port "$(cat "$work/ready")" --orders "$orders" --timeout 300 >/dev/null
  kill -TERM "$server"
  wait "$server" || true
}
