#!/bin/sh
# Instructions per codec operation, exact whatever the load: callgrind runs
# codec_ops 100,000 times per mode and once with nothing to do; the difference
# divided by 100,000 is printed. Usage: count_instructions.sh BUILD_DIR
# valgrind 3.19 stops on AVX-512 (and its CPUID shows none): it counts the
# scalar and avx2 levels, KITE_CODEC_LEVEL=scalar|avx2 (docs/codec.md) choosing
# one. For the AVX-512 levels run BUILD_DIR/bench/codec/codec_ops steps, which
# single-steps one call of each.
set -eu
ops="${1:?usage: count_instructions.sh BUILD_DIR}/bench/codec/codec_ops"
n=100000
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$ops" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "level ${KITE_CODEC_LEVEL:-the best valgrind's CPU has}"
base=$(count none "$n")
for mode in frame index decode encode; do
  total=$(count "$mode" "$n")
  echo "$mode $(( (total - base) / n ))"
done
