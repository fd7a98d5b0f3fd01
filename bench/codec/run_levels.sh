#!/bin/sh
# codec_bench once per codec level (docs/codec.md), lowest first, each in its
# own process with KITE_CODEC_LEVEL set; a level this CPU lacks is reported
# and skipped. Options after BUILD_DIR go to every codec_bench run.
# Usage: run_levels.sh BUILD_DIR [codec_bench options...]
set -u
bench="${1:?usage: run_levels.sh BUILD_DIR [codec_bench options...]}/bench/codec/codec_bench"
shift
status=0
for level in scalar avx2 avx512bw avx512vbmi; do
  echo "== KITE_CODEC_LEVEL=$level"
  KITE_CODEC_LEVEL=$level "$bench" "$@"
  rc=$?
  if [ $rc -eq 2 ]; then
    echo "(skipped: this CPU lacks $level)"
  elif [ $rc -ne 0 ]; then
    status=$rc
  fi
done
exit $status
