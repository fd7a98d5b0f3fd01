#!/usr/bin/env bash
# The README's main command: installs what is missing, builds the release
# configuration and runs the default lab sitting on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
# bench-run is built into the build folder's top (lab/CMakeLists.txt), beside bench_roundtrip.
exec build/release/bench-run "$@"
