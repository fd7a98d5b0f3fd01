#!/usr/bin/env python3
"""scripts/check-layers.py on temporary trees: it accepts includes that point
down the layers and fails, naming file:line, on one that points up."""

import pathlib
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]


def tree(files: dict) -> tempfile.TemporaryDirectory:
    d = tempfile.TemporaryDirectory(prefix="kite-layers-")
    for path, text in files.items():
        f = pathlib.Path(d.name) / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return d


def run(d) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, d.name], capture_output=True, text=True)


DOWNWARD = {
    "include/kite/codec/fix.hpp": "#pragma once\n",
    "include/kite/session/session.hpp": '#pragma once\n#include "kite/codec/fix.hpp"\n',
    "include/kite/engine/protocol.hpp": "#pragma once\n#include <cstddef>\n",
    "include/kite/link/connection.hpp": '#include "kite/engine/protocol.hpp"\n#include "kite/session/session.hpp"\n',
    "src/session/session.cpp": '#include "kite/session/session.hpp"\n',
    "src/engine/tools/cost.cpp": '#include "kite/link/connection.hpp"\n',  # a tool: on top
}

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


d = tree(DOWNWARD)
r = run(d)
expect(r.returncode == 0, f"a downward tree failed: {r.stderr}")

planted = dict(DOWNWARD)
planted["include/kite/session/connection.hpp"] = '#pragma once\n\n#include "kite/engine/protocol.hpp"\n'
planted["src/codec/values.cpp"] = '// up\n#include <kite/session/session.hpp>\n'
d = tree(planted)
r = run(d)
expect(r.returncode == 1, f"planted upward includes passed (exit {r.returncode})")
expect("include/kite/session/connection.hpp:3: session includes kite/engine/" in r.stderr,
       f"session -> engine not named with file:line: {r.stderr}")
expect("src/codec/values.cpp:2: codec includes kite/session/" in r.stderr,
       f"codec -> session not named with file:line: {r.stderr}")

unknown = dict(DOWNWARD)
unknown["include/kite/gadget/g.hpp"] = "#pragma once\n"
d = tree(unknown)
r = run(d)
expect(r.returncode == 1 and "'gadget' has no place" in r.stderr, f"an unplaced part passed: {r.stderr}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
