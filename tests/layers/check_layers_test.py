#!/usr/bin/env python3
"""scripts/check-layers.py on trees made up for the test, with their own
cmake/layers.toml: it accepts includes and links that follow the declared
parts and fails, naming file:line or the target, on a planted upward
include, an include of test support from a benchmark, an upward link and an
include folder of a part the target may not use.

Usage: check_layers_test.py SCRIPT CMAKE
"""

import pathlib
import subprocess
import sys
import tempfile

SCRIPT, CMAKE = sys.argv[1], sys.argv[2]

LAYERS = """
[include_roots]
"include" = ["util", "codec", "session"]
"bench/include" = ["bench"]
"tests" = ["tests"]
[parts.util]
folders = ["include/kite/util", "src/util"]
uses = []
[parts.codec]
folders = ["include/kite/codec", "src/codec"]
uses = ["util"]
[parts.session]
folders = ["include/kite/session", "src/session"]
uses = ["codec"]
[parts.package]
folders = ["."]
uses = ["session"]
[parts.bench]
folders = ["bench"]
uses = ["session"]
[parts.tests]
folders = ["tests"]
uses = ["bench", "session"]
"""

DOWNWARD = {
    "cmake/layers.toml": LAYERS,
    "include/kite/util/text.hpp": "#pragma once\n",
    "include/kite/codec/fix.hpp": '#pragma once\n#include "kite/util/text.hpp"\n',
    "include/kite/session/session.hpp": '#pragma once\n#include <kite/codec/fix.hpp>\n#include <vector>\n',
    "src/util/text.c": '#include "kite/util/text.hpp"\nint util_text(void) { return 1; }\n',
    "src/codec/fix.c": '#include "kite/codec/fix.hpp"\nint util_text(void);\nint codec_fix(void) { return util_text(); }\n',
    "src/session/session.c": '#include "kite/session/session.hpp"\n#include "local.h"\nint session_go(void) { return 0; }\n',
    "src/session/local.h": "#pragma once\n",
    "bench/include/kite/bench/clock.hpp": '#pragma once\n#include "kite/session/session.hpp"\n',
    "bench/run.c": '#include "kite/bench/clock.hpp"\nint main(void) { return 0; }\n',
    "tests/support/rig.hpp": '#pragma once\n#include "kite/bench/clock.hpp"\n',
    "tests/session_test.c": '#include "support/rig.hpp"\nint main(void) { return 0; }\n',
}

CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(layers_fixture C)
add_subdirectory(src/util)
add_subdirectory(src/codec)
add_subdirectory(bench)
"""
UTIL = "add_library(util STATIC text.c)\ntarget_include_directories(util PUBLIC ${CMAKE_SOURCE_DIR}/include)\n"
CODEC = "add_library(codec STATIC fix.c)\ntarget_link_libraries(codec PUBLIC util)\n"
BENCH = ("add_library(bench_support INTERFACE)\n"
         "target_include_directories(bench_support INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
         "add_executable(bench_run run.c)\ntarget_link_libraries(bench_run PRIVATE codec bench_support)\n")

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def tree(files: dict) -> tempfile.TemporaryDirectory:
    d = tempfile.TemporaryDirectory(prefix="kite-layers-")
    for path, text in files.items():
        f = pathlib.Path(d.name) / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return d


def run(d, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *extra, d.name], capture_output=True, text=True)


def configure(d) -> pathlib.Path:
    """Configures the fixture with the file API's codemodel asked for first."""
    build = pathlib.Path(d.name) / "build"
    query = build / ".cmake" / "api" / "v1" / "query" / "client-kite" / "codemodel-v2"
    query.parent.mkdir(parents=True)
    query.write_text("")
    r = subprocess.run([CMAKE, "-S", d.name, "-B", str(build)], capture_output=True, text=True)
    expect(r.returncode == 0, f"the fixture did not configure: {r.stdout}{r.stderr}")
    return build


# --- include text ---------------------------------------------------------------
d = tree(DOWNWARD)
r = run(d)
expect(r.returncode == 0, f"a downward tree failed: {r.stderr}")

planted = dict(DOWNWARD)
planted["include/kite/codec/session_view.hpp"] = '#pragma once\n\n#include "kite/session/session.hpp"\n'
planted["src/util/up.c"] = '// up\n#include <kite/codec/fix.hpp>\n'
planted["bench/uses_tests.c"] = '#include "support/rig.hpp"\n'  # a benchmark on test support
d = tree(planted)
r = run(d)
expect(r.returncode == 1, f"planted upward includes passed (exit {r.returncode})")
expect("include/kite/codec/session_view.hpp:3: codec includes kite/session/session.hpp (session)" in r.stderr,
       f"codec -> session not named with file:line: {r.stderr}")
expect("src/util/up.c:2: util includes kite/codec/fix.hpp (codec)" in r.stderr,
       f"util -> codec not named with file:line: {r.stderr}")
expect("bench/uses_tests.c:1: bench includes support/rig.hpp (tests)" in r.stderr,
       f"bench -> tests not named with file:line: {r.stderr}")

unknown = dict(DOWNWARD)
unknown["include/kite/gadget/g.hpp"] = "#pragma once\n"
unknown["src/codec/g.c"] = '#include "kite/gadget/gone.hpp"\n'
d = tree(unknown)
r = run(d)
expect(r.returncode == 1 and "include/kite/gadget/g.hpp:1: no part" in r.stderr, f"an unplaced folder passed: {r.stderr}")
expect("src/codec/g.c:1: includes kite/gadget/gone.hpp, which no folder" in r.stderr,
       f"an include of a missing kite header passed: {r.stderr}")

# A bench header in the public include/ (which holds the library alone).
misplaced = dict(DOWNWARD)
misplaced["cmake/layers.toml"] = LAYERS.replace('folders = ["bench"]', 'folders = ["bench", "include/kite/bench"]')
misplaced["include/kite/bench/timer.hpp"] = "#pragma once\n"
d = tree(misplaced)
r = run(d)
expect(r.returncode == 1 and "include/kite/bench/timer.hpp:1: a header of bench in include/, which holds util, codec, "
       "session alone" in r.stderr, f"a bench header in include/ passed: {r.stderr}")

cycle = dict(DOWNWARD)
cycle["cmake/layers.toml"] = LAYERS.replace('uses = []\n[parts.codec]', 'uses = ["session"]\n[parts.codec]')
d = tree(cycle)
r = run(d)
expect(r.returncode == 2 and "a cycle" in r.stderr, f"a cyclic declaration was accepted: {r.stderr}")

# --- the build's targets (CMake's file API) -------------------------------------
linked = dict(DOWNWARD, **{"CMakeLists.txt": CMAKELISTS, "src/util/CMakeLists.txt": UTIL, "src/codec/CMakeLists.txt": CODEC,
                           "bench/CMakeLists.txt": BENCH})
d = tree(linked)
build = configure(d)
r = run(d, "--build", str(build))
expect(r.returncode == 0, f"a downward build failed: {r.stdout}{r.stderr}")

d = tree(linked)
r = run(d, "--build", str(pathlib.Path(d.name) / "build"))
expect(r.returncode == 2 and "no CMake file API reply" in r.stderr, f"a build with no reply was not refused: {r.stderr}")

# codec may use util only: linking a bench library is upward, and so is
# seeing the tests' folder on its include path.
up = dict(linked)
up["src/codec/CMakeLists.txt"] = (CODEC + "target_link_libraries(codec PUBLIC bench_lib)\n"
                                  "target_include_directories(codec PRIVATE ${CMAKE_SOURCE_DIR}/tests)\n")
up["CMakeLists.txt"] = CMAKELISTS.replace("add_subdirectory(src/codec)\nadd_subdirectory(bench)\n",
                                          "add_subdirectory(bench)\nadd_subdirectory(src/codec)\n")
up["bench/CMakeLists.txt"] = BENCH + "add_library(bench_lib STATIC run.c)\n"
d = tree(up)
build = configure(d)
r = run(d, "--build", str(build))
expect(r.returncode == 1, f"a planted upward link passed (exit {r.returncode}): {r.stderr}")
expect("target codec (src/codec, codec) depends on bench_lib (bench, bench), a part it may not use" in r.stderr,
       f"codec -> bench_lib not named: {r.stderr}")
expect("target codec (src/codec, codec) sees tests/ (tests) on its include path" in r.stderr,
       f"an include folder of a higher part passed: {r.stderr}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
