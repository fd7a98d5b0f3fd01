#!/usr/bin/env bash
# The README's main command: installs what is missing, builds what a sitting
# runs (the target kite_sitting: bench-run, bench_roundtrip, the flavours'
# servers; cmake/KiteSitting.cmake) and runs the default lab sitting on this
# machine. The tests build in scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target kite_sitting
# bench-run is built into the build folder's top (lab/CMakeLists.txt), beside bench_roundtrip.
exec build/release/bench-run "$@"
