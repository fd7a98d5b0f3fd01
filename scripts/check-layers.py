#!/usr/bin/env python3
"""Fails on an include that points up Kite's layers.

Usage: check-layers.py [ROOT]   (ROOT: the repository, by default this
script's parent folder)

Every `#include "kite/<part>/..."` in include/kite/<part>/ and src/<part>/
must name a part of the same layer or one below it. The layers, bottom up:

    util, codec, session, transport, engine, link, app, capi, then bench, tools, lab

(link joins a session to an engine connection; nothing below it sees both;
capi is libkite's C API over app).
Programs under src/<part>/tools/ are tools, on top. A folder that is not in
the list is an error too, so a new part has to be given its place here.
Prints file:line for each offence and exits 1; exits 0 when there is none.
"""

import pathlib
import re
import sys

LAYERS = ["util", "codec", "session", "transport", "engine", "link", "app", "capi", ("bench", "tools", "lab")]
RANK = {}
for rank, names in enumerate(LAYERS):
    for name in (names,) if isinstance(names, str) else names:
        RANK[name] = rank

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]kite/([A-Za-z0-9_]+)/')
SOURCES = {".hpp", ".h", ".cpp", ".cc"}


def files_of(root: pathlib.Path):
    """(file, part) for every source file under include/kite/<part> and src/<part>."""
    for base in (root / "include" / "kite", root / "src"):
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            for f in sorted(folder.rglob("*")):
                if f.suffix not in SOURCES or not f.is_file():
                    continue
                inner = f.relative_to(folder).parts
                yield f, "tools" if base.name == "src" and inner[0] == "tools" else folder.name


def check(root: pathlib.Path) -> list:
    problems = []
    for f, part in files_of(root):
        where = f.relative_to(root)
        if part not in RANK:
            problems.append(f"{where}:1: part '{part}' has no place in scripts/check-layers.py's LAYERS")
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m is None:
                continue
            other = m.group(1)
            if other not in RANK:
                problems.append(f"{where}:{n}: includes kite/{other}/, a part with no place in LAYERS")
            elif RANK[other] > RANK[part]:
                problems.append(f"{where}:{n}: {part} includes kite/{other}/, a higher layer "
                                f"(bottom up: codec, session, transport, engine, link, app)")
    return problems


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = check(root.resolve())
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} include(s) against the layers' direction", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
