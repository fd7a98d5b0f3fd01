#!/usr/bin/env bash
# A KITE_PGO build used its training's counts (cmake/KitePgo.cmake): the
# training ran the core cell with the current training binary, every object
# of the engine's hot path has its .gcda under the name the main build looks
# for (a wrong name would pass unseen: missing counts are not an error), and
# bench_roundtrip's units were compiled with -fprofile-use.
#   tests/tools/pgo_test.sh BUILD_DIR
set -euo pipefail
build=$1
profile=$build/pgo/profile stamp=$build/pgo/trained train=$build/pgo/train/bench_roundtrip
fail() { echo "pgo_test: $*" >&2; exit 1; }

[[ -s $stamp ]] || fail "no training stamp $stamp"
grep -qx "cell cpp/kernel/mono/closed" "$stamp" || fail "the training did not run cpp/kernel/mono/closed: $(cat "$stamp")"
[[ -x $train ]] || fail "no training binary $train"
hash=$(sha256sum "$train" | cut -d' ' -f1)
grep -qx "binary $hash" "$stamp" || fail "the counts are of another training binary than $train"

# The objects an order runs through, by the name GCC gives their counts
# (the object's path in the build folder, '/' as '#').
for object in src/codec/CMakeFiles/kite_codec.dir/field_index.cpp.o \
              src/session/CMakeFiles/kite_session.dir/session.cpp.o \
              src/link/CMakeFiles/kite_link.dir/connection.cpp.o \
              src/engine/CMakeFiles/kite_engine.dir/session_agent.cpp.o \
              src/app/CMakeFiles/kite_app.dir/order_app.cpp.o \
              bench/roundtrip/CMakeFiles/kite_roundtrip_cpp.dir/cpp_server.cpp.o; do
  [[ -f $build/$object ]] || fail "no object $build/$object"
  gcda="$profile/${object//\//#}"
  gcda="${gcda%.o}.gcda"
  [[ -s $gcda ]] || fail "no counts for $object (looked for $gcda)"
done

# GCC records each unit's options in its debug information.
units=$(readelf --debug-dump=info --dwarf-depth=1 "$build/bench_roundtrip" 2>/dev/null | grep 'DW_AT_producer' |
        grep -c -- '-fprofile-use' || true)
[[ $units -gt 0 ]] || fail "no unit of bench_roundtrip was compiled with -fprofile-use"
echo "pgo_test: $(grep -c '^cell ' "$stamp") cells trained, $(grep '^gcda ' "$stamp" | cut -d' ' -f2) profiles," \
  "$units units of bench_roundtrip compiled with them"
