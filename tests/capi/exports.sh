#!/bin/sh
# libkite.so exports the C API's kite_* functions and nothing else: no C++
# symbol (mangled _Z...), no Kite internals, no libstdc++ instantiations.
# Usage: exports.sh LIBKITE_SO
lib=$1
[ -f "$lib" ] || { echo "exports.sh: no library at $lib" >&2; exit 1; }
command -v nm >/dev/null || { echo "exports.sh: nm (binutils) not found" >&2; exit 1; }
syms=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//')
[ -n "$syms" ] || { echo "exports.sh: $lib exports nothing" >&2; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v -e '^kite_' -e '^KITE_0$')
if [ -n "$bad" ]; then
  echo "exports.sh: $lib exports symbols beyond the C API:" >&2
  printf '%s\n' "$bad" | head -20 >&2
  exit 1
fi
# Every function the header declares is exported.
hdr=$(dirname "$0")/../../include/kite/kite.h
for f in $(grep -o 'kite_[a-z_]*(' "$hdr" | tr -d '(' | sort -u); do
  printf '%s\n' "$syms" | grep -qx "$f" || { echo "exports.sh: $f is declared in kite.h but not exported" >&2; exit 1; }
done
echo "exports.sh: $(printf '%s\n' "$syms" | grep -c '^kite_') kite_* functions, nothing else"
