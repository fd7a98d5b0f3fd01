#!/usr/bin/env bash
# The README's main command: installs what is missing, builds the release
# configuration and runs the default lab sitting on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
if [[ -x build/release/bench-run ]]; then
  exec build/release/bench-run "$@"
fi
# Until the lab exists: the codec demo and the codec benchmark against QuickFIX.
build/release/kite-demo
exec build/release/codec_bench --benchmark_min_time=0.2
