#!/usr/bin/env bash
# The README's test command: installs what is missing, builds the release,
# sanitizer and fuzz configurations, and runs every test of the default run.
#   KITE_TEST_FAST=1   skip the sanitizer and fuzz builds (for quick iterations)
#   KITE_FUZZ_SECONDS_EACH  seconds each fuzz target runs (default: tests/fuzz/CMakeLists.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh

jobs=$(nproc)
step() { printf '\n== %s ==\n' "$*"; }

step "release build"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"

if [[ "${KITE_TEST_FAST:-0}" != 1 ]]; then
  step "sanitizer build (ASan + UBSan): unit tests, the lab's aside"
  cmake --preset debug >/dev/null
  cmake --build --preset debug -j "$jobs" --target kite_unit_tests
  ctest --test-dir build/debug -L unit -LE 'long|tool' --no-tests=error --output-on-failure -j "$jobs"

  step "fuzz build (clang, libFuzzer): short runs"
  cmake --preset fuzz ${KITE_FUZZ_SECONDS_EACH:+-DKITE_FUZZ_SECONDS_EACH=$KITE_FUZZ_SECONDS_EACH} >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  ctest --test-dir build/fuzz -L fuzz --no-tests=error --output-on-failure -j "$jobs"
fi

# Unit and integration tests use their own ports and folders: they run side
# by side. Interop, lab and site tests measure or serve: one at a time.
step "release: unit and integration tests"
ctest --test-dir build/release -L 'unit|integration' -LE 'long|interop|lab|site' --no-tests=error --output-on-failure -j "$jobs"
step "release: interop, lab and site tests"
ctest --test-dir build/release -L 'interop|lab|site' -LE long --no-tests=error --output-on-failure
step "every test passed"
