#!/usr/bin/env python3
"""Checks Kite's tree against its declared parts (cmake/layers.toml).

Usage: check-layers.py [--layers FILE] [--build DIR] [ROOT]

ROOT: the repository (by default this script's parent folder); FILE: the
declaration (by default ROOT/cmake/layers.toml).

Include text: every C/C++ file under ROOT belongs to a part (the longest
folder that matches); each `#include` that names a file of the tree (beside
the includer, or under one of `include_roots`) must name one of the same
part or of a part it may use (`uses`, followed through).

With --build (a configured CMake build folder): the same rule on the build's
targets, read from CMake's file API (the codemodel that cmake/KiteLayers.cmake
asks for): a target belongs to the part of the folder that defines it; every
target it depends on and every folder on its include path must be of its own
part or of one it may use (a folder that holds parts, such as include/, is
allowed where one of them is). Custom targets (build order only) are skipped.

Prints file:line (or target: why) for each offence and exits 1; 0 when there
is none; 2 when the declaration or the build folder cannot be read.
"""

import argparse
import json
import os
import pathlib
import re
import sys
import tomllib

SOURCES = {".hpp", ".h", ".cpp", ".cc", ".c"}
SKIP_DIRS = {".git", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


class Layers:
    """The declared parts: folder ownership and who may use whom."""

    def __init__(self, path: pathlib.Path):
        data = tomllib.loads(path.read_text())
        self.roots = data.get("include_roots", {})  # folder -> the parts it may hold
        self.parts = data.get("parts", {})
        self.owner = {}  # folder (a relative POSIX path, "." the top) -> part
        for name, part in self.parts.items():
            for folder in part.get("folders", []):
                self.owner[folder.rstrip("/")] = name
            for used in part.get("uses", []):
                if used not in self.parts:
                    raise ValueError(f"{path}: part '{name}' uses '{used}', which is not declared")
        for root, held in self.roots.items():
            for name in held:
                if name not in self.parts:
                    raise ValueError(f"{path}: include root '{root}' holds '{name}', which is not declared")
        self.allowed = {name: self._reach(name) for name in self.parts}
        for name in self.parts:
            for other in self.allowed[name] - {name}:
                if name in self.allowed[other]:
                    raise ValueError(f"{path}: parts '{name}' and '{other}' may use each other (a cycle)")

    def _reach(self, name: str) -> set:
        seen, todo = {name}, [name]
        while todo:
            for used in self.parts[todo.pop()].get("uses", []):
                if used not in seen:
                    seen.add(used)
                    todo.append(used)
        return seen

    def part_of(self, rel: str):
        """The part whose folder holds rel (longest match), or None."""
        if rel in self.owner:
            return self.owner[rel]
        parts = rel.split("/")
        for n in range(len(parts) - 1, 0, -1):
            name = self.owner.get("/".join(parts[:n]))
            if name is not None:
                return name
        return None

    def parts_under(self, rel: str) -> set:
        """The parts with a folder inside rel (an include root's, as declared, where it is one)."""
        if rel in self.roots:
            return set(self.roots[rel])
        prefix = "" if rel == "." else rel + "/"
        return {name for folder, name in self.owner.items() if folder != "." and folder.startswith(prefix)}

    def root_of(self, rel: str):
        """The include root that holds rel, or None."""
        for root in self.roots:
            if rel.startswith(root.rstrip("/") + "/"):
                return root
        return None

    def may_use(self, user: str, used: str) -> bool:
        return used in self.allowed[user]


def source_files(root: pathlib.Path):
    for folder, dirs, files in os.walk(root):
        here = pathlib.Path(folder)
        # Build folders (build/, build-*) and hidden ones are not the tree's sources.
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                         and not (here == root and d.startswith("build")))
        for f in sorted(files):
            if pathlib.Path(f).suffix in SOURCES:
                yield here / f


def check_includes(root: pathlib.Path, layers: Layers) -> list:
    problems = []
    for f in source_files(root):
        rel = f.relative_to(root).as_posix()
        part = layers.part_of(rel)
        if part is None:
            problems.append(f"{rel}:1: no part of cmake/layers.toml holds this folder")
            continue
        root_dir = layers.root_of(rel)
        if root_dir is not None and part not in layers.roots[root_dir]:
            problems.append(f"{rel}:1: a header of {part} in {root_dir}/, which holds "
                            f"{', '.join(layers.roots[root_dir])} alone")
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m is None:
                continue
            name = m.group(1)
            target = None
            for base in [f.parent] + [root / r for r in layers.roots]:
                if (base / name).is_file():
                    target = (base / name).resolve()
                    break
            if target is None:
                if name.startswith("kite/"):
                    problems.append(f"{rel}:{n}: includes {name}, which no folder of include_roots holds")
                continue
            try:
                target_rel = target.relative_to(root).as_posix()
            except ValueError:
                continue
            other = layers.part_of(target_rel)
            if other is None:
                problems.append(f"{rel}:{n}: includes {target_rel}, in a folder no part holds")
            elif not layers.may_use(part, other):
                problems.append(f"{rel}:{n}: {part} includes {name} ({other}), a part it may not use")
    return problems


def read_codemodel(build: pathlib.Path):
    """The targets of the build's codemodel: {id: target json}, and the source folder."""
    reply = build / ".cmake" / "api" / "v1" / "reply"
    indexes = sorted(reply.glob("index-*.json")) if reply.is_dir() else []
    if not indexes:
        raise FileNotFoundError(f"{build}: no CMake file API reply: configure the build folder again "
                                f"(cmake/KiteLayers.cmake asks for the codemodel; the reply comes from the next run)")
    index = json.loads(indexes[-1].read_text())
    entry = index.get("reply", {}).get("client-kite", {}).get("codemodel-v2")
    if entry is None or "jsonFile" not in entry:
        raise FileNotFoundError(f"{indexes[-1]}: no codemodel-v2 reply for client-kite")
    model = json.loads((reply / entry["jsonFile"]).read_text())
    config = model["configurations"][0]
    targets = {t["id"]: json.loads((reply / t["jsonFile"]).read_text()) for t in config["targets"]}
    return targets, pathlib.Path(model["paths"]["source"])


def check_targets(root: pathlib.Path, build: pathlib.Path, layers: Layers) -> list:
    targets, source = read_codemodel(build)
    source = source.resolve()
    build = build.resolve()

    def part_of_target(t):
        return layers.part_of(t["paths"]["source"])

    problems = []
    for t in sorted(targets.values(), key=lambda t: t["name"]):
        if t["type"] == "UTILITY":
            continue
        where = t["paths"]["source"]
        part = part_of_target(t)
        if part is None:
            problems.append(f"target {t['name']}: defined in {where}, a folder no part of cmake/layers.toml holds")
            continue
        for dep in t.get("dependencies", []):
            d = targets.get(dep["id"])
            if d is None or d["type"] == "UTILITY":
                continue
            other = part_of_target(d)
            if other is None or not layers.may_use(part, other):
                problems.append(f"target {t['name']} ({where}, {part}) depends on {d['name']} "
                                f"({d['paths']['source']}, {other}), a part it may not use")
        seen = set()
        for group in t.get("compileGroups", []):
            for inc in group.get("includes", []):
                path = pathlib.Path(inc["path"]).resolve()
                if path in seen or path == build or build in path.parents:
                    continue
                seen.add(path)
                try:
                    rel = path.relative_to(source).as_posix() or "."
                except ValueError:
                    continue  # the system's and third-party folders
                other = layers.part_of(rel)
                if other is not None:
                    ok = layers.may_use(part, other)
                else:
                    held = layers.parts_under(rel)
                    ok = any(layers.may_use(part, h) for h in held)
                    other = "holds " + ", ".join(sorted(held)) if held else "no part"
                if not ok:
                    problems.append(f"target {t['name']} ({where}, {part}) sees {rel}/ ({other}) "
                                    f"on its include path, a part it may not use")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parent.parent)
    ap.add_argument("--layers", help="the declaration (default ROOT/cmake/layers.toml)")
    ap.add_argument("--build", help="a configured CMake build folder: check its targets too")
    args = ap.parse_args()
    root = pathlib.Path(args.root).resolve()
    try:
        layers = Layers(pathlib.Path(args.layers) if args.layers else root / "cmake" / "layers.toml")
        problems = check_includes(root, layers)
        if args.build:
            problems += check_targets(root, pathlib.Path(args.build), layers)
    except (OSError, ValueError, KeyError, tomllib.TOMLDecodeError) as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} dependenc(ies) against cmake/layers.toml", file=sys.stderr)
        return 1
    what = "includes and targets" if args.build else "includes"
    print(f"check-layers: {what} follow cmake/layers.toml ({len(layers.parts)} parts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
