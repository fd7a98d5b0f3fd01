#!/usr/bin/env bash
# ctest dotnet_example_test: the .NET example that docs/bindings.md shows is
# the file the build compiled, and the program answers the lab's client.
# usage: run-example.sh KITE_EXAMPLE BENCH_ROUNDTRIP EXAMPLE_SOURCE DOCS_DIR
set -euo pipefail
example=$1 client=$2 source=$3 docs=$4
tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# 1. The document shows this very file, in the csharp block after the marker.
marker='<!-- example: bindings/dotnet/Kite.Example/Program.cs -->'
doc=""
for f in "$docs/bindings.md"; do
  if [ -f "$f" ] && grep -qF -- "$marker" "$f"; then doc=$f; break; fi
done
if [ -z "$doc" ]; then echo "FAIL: no document in $docs carries the line $marker"; exit 1; fi
awk -v m="$marker" '$0 == m { f = 1; next } f && /^```csharp$/ { p = 1; next } p && /^```$/ { exit } p' "$doc" > "$tmp/shown.cs"
if ! diff -u "$source" "$tmp/shown.cs"; then echo "FAIL: $doc shows another example than $source"; exit 1; fi
echo "ok   $doc shows $source"

# 2. It runs: an acceptor on a free port; the lab's client logs on and sends orders.
cat > "$tmp/example.toml" <<'EOF'
[engine]
model = "single"
transport = "kernel"
bind = "127.0.0.1"
port = 0
idle = "block"

[defaults]
BeginString = "FIX.4.4"
SenderCompID = "KITE"
ResetOnLogon = true
UseDataDictionary = false
StoreKind = "null"

[[session]]
TargetCompID = "BENCH0"
EOF
"$example" "$tmp/example.toml" > "$tmp/out" 2> "$tmp/err" &
pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$tmp/out")
  [ -n "$port" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$port" ]; then echo "FAIL: the example did not start:"; cat "$tmp/out" "$tmp/err"; exit 1; fi
echo "ok   the example listens on port $port"
if ! "$client" client --port "$port" --loop closed --sessions 1 --runs 1 --warmup 0.1 --duration 0.3 --idle block \
    > "$tmp/client" 2>&1; then
  echo "FAIL: the lab's client against the example:"; cat "$tmp/client" "$tmp/err"; exit 1
fi
run=$(grep '^run 1/1:' "$tmp/client" || true)
case "$run" in
  *" errors=0 "*) ;;
  *) echo "FAIL: the client saw errors or no run: $run"; cat "$tmp/client"; exit 1 ;;
esac
count=$(sed -n 's/^run 1\/1: count=\([0-9]*\).*/\1/p' "$tmp/client")
if [ "${count:-0}" -eq 0 ]; then echo "FAIL: no order answered: $run"; exit 1; fi
echo "ok   $count orders answered by the C# callback ($run)"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
if [ "$rc" -ne 0 ]; then echo "FAIL: the example exited $rc on SIGTERM:"; cat "$tmp/err"; exit 1; fi
echo "ok   the example exits 0 on SIGTERM"
