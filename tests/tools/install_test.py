#!/usr/bin/env python3
"""Kite installed on its own: `cmake --install` into a fresh prefix, then the
installed kite-fixprint and kite-acceptor run with KITE_DICTIONARY_DIR unset,
from a working directory with nothing beside it, and must read the installed
dictionaries (share/kite/dictionaries): removing one of them must show in
their output. The installed headers are the public include/ exactly: the
library's, no lab or bench header.

Usage: install_test.py CMAKE BUILD_DIR SAMPLE_LOG SOURCE_DIR (ctest's install_standalone).
"""
import os
import shutil
import subprocess
import sys
import tempfile

# Two sessions that validate: one names its dictionary relative to the
# configuration file's folder, one names none (the installed default).
CONFIG = """\
[engine]
port = 0

[defaults]
SenderCompID = "KITE"
StoreKind = "memory"
UseDataDictionary = true

[[session]]
TargetCompID = "C44"
DataDictionary = "../prefix/share/kite/dictionaries/FIX44.xml"

[[session]]
BeginString = "FIXT.1.1"
DefaultApplVerID = "FIX.5.0SP2"
TargetCompID = "C50"
"""

failures = []


def check(ok, what, output=""):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        failures.append(what)
        print(output)


def run(args, cwd, env):
    p = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    cmake, build_dir, sample, source_dir = sys.argv[1:5]
    env = {k: v for k, v in os.environ.items() if k != "KITE_DICTIONARY_DIR"}
    with tempfile.TemporaryDirectory(prefix="kite-install-") as tmp:
        tmp = os.path.realpath(tmp)  # the programs see their own folder with links resolved
        prefix = os.path.join(tmp, "prefix")
        conf = os.path.join(tmp, "conf")
        work = os.path.join(tmp, "work", "here")  # the config's relative path does not resolve from here
        os.makedirs(conf)
        os.makedirs(work)
        shutil.copy(sample, os.path.join(work, "sample.log"))
        config = os.path.join(conf, "acc.toml")
        with open(config, "w") as f:
            f.write(CONFIG)

        code, out = run([cmake, "--install", build_dir, "--prefix", prefix], tmp, env)
        check(code == 0, "cmake --install", out)
        if code != 0:
            return
        bin_dir = os.path.join(prefix, "bin")
        dicts = os.path.join(prefix, "share", "kite", "dictionaries")
        for name in ("kite-acceptor", "kite-admin", "kite-fixprint", "kite-demo", "kite-store", "bench_roundtrip", "bench-run"):
            check(os.access(os.path.join(bin_dir, name), os.X_OK), "bin/" + name + " installed")
        for name in ("FIX42.xml", "FIX44.xml", "FIXT11.xml", "FIX50SP2.xml", "LICENSE.quickfix"):
            check(os.path.isfile(os.path.join(dicts, name)), "share/kite/dictionaries/" + name + " installed")

        def files_under(top):
            return sorted(os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs)

        installed = files_under(os.path.join(prefix, "include"))
        public = files_under(os.path.join(source_dir, "include"))
        check(installed == public, f"include/ installed as the source's include/ ({len(public)} headers)",
              "installed only: %s\nnot installed: %s" % (sorted(set(installed) - set(public)),
                                                          sorted(set(public) - set(installed))))
        check("kite/kite.h" in installed and "kite/app/acceptor.hpp" in installed, "the library's headers installed")
        check(not any(h.startswith(("kite/lab/", "kite/bench/")) for h in installed), "no lab or bench header installed",
              "\n".join(h for h in installed if h.startswith(("kite/lab/", "kite/bench/"))))

        fixprint = [os.path.join(bin_dir, "kite-fixprint"), "--validate", "--no-color", "sample.log"]
        code, out = run(fixprint, work, env)
        # Exit 1: the sample holds a broken frame and a message that fails validation.
        check(code == 1, "kite-fixprint --validate exits 1 on the sample", out)
        check("REJECT 5: Value is incorrect (out of range) for this tag: tag 54 (Side)" in out,
              "kite-fixprint --validate rejects the bad Side with the dictionary", out)
        check("NewOrderSingle (35=D)" in out and "cannot open the dictionary" not in out,
              "kite-fixprint names messages from the dictionary", out)

        acceptor = [os.path.join(bin_dir, "kite-acceptor"), "--config", config, "--check"]
        code, out = run(acceptor, work, env)
        check(code == 0 and out.strip() == config + ": ok: 2 session(s), mode ack, kernel/mono on 127.0.0.1:0",
              "kite-acceptor --check loads both sessions' dictionaries", out)

        # Without the installed FIX44.xml both tools must fail on it: they
        # read the installed folder, not the source tree's.
        os.remove(os.path.join(dicts, "FIX44.xml"))
        missing = os.path.join(dicts, "FIX44.xml") + ": cannot open the dictionary file"
        code, out = run(fixprint, work, env)
        check(missing in out, "kite-fixprint reads share/kite/dictionaries first", out)
        code, out = run(acceptor, work, env)
        check(code == 2 and missing in out, "kite-acceptor --check reads the installed dictionary", out)

        # A default-dictionary session alone still loads (FIXT11 + FIX50SP2 are there).
        with open(config, "w") as f:
            f.write(CONFIG.replace('DataDictionary = "../prefix/share/kite/dictionaries/FIX44.xml"\n', "")
                    .replace('TargetCompID = "C44"\n', 'TargetCompID = "C44"\nBeginString = "FIX.4.2"\n'))
        code, out = run(acceptor, work, env)
        check(code == 0, "kite-acceptor --check with the installed default dictionaries", out)


if __name__ == "__main__":
    main()
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
