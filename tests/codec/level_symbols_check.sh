#!/bin/sh
# The levels' objects, built for instructions the CPU may lack, must define
# no code that another object could define too (an inline function of a
# header left out of line): the linker keeps one copy of such a function for
# the whole program, and a copy with AVX2 or AVX-512 in it would then run on
# a CPU without them. Allowed: instantiations with the level's own scan, and
# constant tables (the same bytes in every copy). Usage: level_symbols_check.sh
# NM OBJECT... (an object that nm cannot read fails the check).
nm=$1
shift
status=0
for o in "$@"; do
  if ! symbols=$("$nm" -C --defined-only "$o"); then
    echo "$o: $nm cannot read it"
    status=1
    continue
  fi
  bad=$(printf '%s\n' "$symbols" | awk '$2 ~ /^[WVu]$/' | grep -v -e 'Avx512Scan<' -e 'DW.ref.__gxx_personality' \
        -e 'kite::codec::detail::kLength' -e 'Sse2Scan::checksum(char const\*, char const\*)::kTailMask' \
        -e 'utc_timestamp_avx512(.*)::k[A-Z][A-Za-z]*$')
  if [ -n "$bad" ]; then
    echo "$o defines shared code built for its level's instructions:"
    echo "$bad"
    status=1
  fi
done
[ $status -eq 0 ] && echo "no shared code in $# level objects"
exit $status
