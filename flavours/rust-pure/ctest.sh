#!/usr/bin/env bash
# ctest's entry to the rust-pure flavour: exit 77 (SKIPPED) where cargo is missing.
#   ctest.sh cargo-test MANIFEST TARGET_DIR     cargo test (release, as measured)
#   ctest.sh check-flavour BENCH_RUN ARGS...    bench-run ARGS... (the flavour's contract)
set -euo pipefail
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is not on PATH: rust-pure is not built (scripts/install-deps.sh installs Debian's)"
  exit 77
fi
mode=$1
shift
case "$mode" in
  cargo-test) exec cargo test --release --quiet --manifest-path "$1" --target-dir "$2" ;;
  check-flavour) exec "$@" ;;
  *) echo "ctest.sh: unknown mode $mode" >&2; exit 2 ;;
esac
