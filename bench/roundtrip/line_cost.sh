#!/usr/bin/env bash
# What one code line costs a server per order on this host, against one
# instruction: the cpp server runs, in profile.sh's paired rounds, with a
# preloaded send() that first runs
#   none      nothing (the control),
#   lines     LINES cache lines of code visited in a shuffled order (14 nops
#             and a jump in each line),
#   loop      the same instructions in one line (13 nops, dec, jnz, LINES times),
# so "lines - loop" is what fetching LINES lines costs beyond their
# instructions, and "loop - none" what the instructions cost. Preloading
# send() also moves every server from direct system calls to libc's
# wrappers (docs/transports.md), the same for the three.
#   usage: bench/roundtrip/line_cost.sh [BUILD_DIR] [OUT]
#   env: LINES (200) and profile.sh's (ROUNDS, MODEL, SAMPLE_S, ...)
set -euo pipefail
build=${1:-build/release}
out=${2:-results/line-cost-$(date -u +%Y%m%dT%H%M%SZ)}
lines=${LINES:-200}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x $build/bench_roundtrip ]] || { echo "line_cost.sh: no $build/bench_roundtrip: build it first" >&2; exit 1; }
command -v cc >/dev/null || { echo "line_cost.sh: no C compiler (cc)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
server=$(cd "$build" && pwd)/bench_roundtrip

python3 - "$lines" >"$out/burn.S" <<'PY'
import random, sys
n = int(sys.argv[1])
order = list(range(n))
random.Random(7).shuffle(order)  # a fixed order: the prefetcher cannot stream it
after = {order[i]: order[i + 1] if i + 1 < n else None for i in range(n)}
a = [".text", ".globl burn_lines", ".type burn_lines,@function", ".p2align 6", "burn_lines:", f"  jmp L{order[0]}"]
for i in range(n):
    a += [".p2align 6", f"L{i}:"] + ["  nopl 0x0(%rax)"] * 14
    a.append(f"  jmp L{after[i]}" if after[i] is not None else "  ret")
a += [".globl burn_loop", ".type burn_loop,@function", ".p2align 6", "burn_loop:", f"  mov ${n}, %ecx",
      ".p2align 6", "C0:"] + ["  nopl 0x0(%rax)"] * 13 + ["  dec %ecx", "  jnz C0", "  ret"]
a.append('.section .note.GNU-stack,"",@progbits')
print("\n".join(a))
PY
cat >"$out/send.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
void burn_lines(void);
void burn_loop(void);
static ssize_t (*real_send)(int, const void*, size_t, int);
ssize_t send(int fd, const void* b, size_t n, int flags) {
  if (!real_send) real_send = (ssize_t (*)(int, const void*, size_t, int))dlsym(RTLD_NEXT, "send");
#if MODE == 1
  burn_lines();
#elif MODE == 2
  burn_loop();
#endif
  return real_send(fd, b, n, flags);
}
C
names=(none lines loop)
for m in 0 1 2; do
  d="$out/${names[$m]}"
  mkdir -p "$d"
  cc -O2 -shared -fPIC -DMODE=$m -o "$d/send.so" "$out/send.c" "$out/burn.S" -ldl
  printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$d/send.so" "$server" >"$d/bench_roundtrip"
  chmod +x "$d/bench_roundtrip"
done

FLAVOURS="cpp@$out/none cpp@$out/lines cpp@$out/loop" "$here/profile.sh" "$build" "$out/profile" | tee "$out/profile.txt"
# The own-code column (4th) and the rate against the control (last) of each row.
awk -v n="$lines" '
  $1 ~ /@.*\/none$/ { none = $4 } $1 ~ /@.*\/lines$/ { ln = $4; rl = $NF } $1 ~ /@.*\/loop$/ { loop = $4; rp = $NF }
  END {
    if (none == "" || ln == "" || loop == "") { print "line_cost.sh: a variant has no figures" > "/dev/stderr"; exit 1 }
    printf "%d lines beyond their instructions: own code %+.3f us (%.2f ns per line), rate %+.1f%% (lines %.3f, loop %.3f of the control)\n",
      n, ln - loop, 1000 * (ln - loop) / n, 100 * (rl / rp - 1), rl, rp
    printf "%d instructions in one line: own code %+.3f us (%.3f ns each)\n", 15 * n, loop - none, 1000 * (loop - none) / (15 * n)
  }' "$out/profile.txt"
