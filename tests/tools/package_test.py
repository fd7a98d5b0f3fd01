#!/usr/bin/env python3
"""Kite as a library a user adopts (ctest's package_adopt, issue 38):

1. `cmake --install` into a fresh prefix;
2. examples/order-gateway built against it with only CMAKE_PREFIX_PATH set
   (libkitecpp.so), and with pkg-config (`pkg-config --cflags --libs kite`;
   and `--static`, libkitecpp.a, which proves Libs.private/Requires.private);
3. each build run against the installed kite-initiator for 1,000 orders:
   every order must get its ExecutionReport, on both sides' counts;
4. CPack's .deb packages: `dpkg-deb -c` (files), `dpkg-deb -I` (control
   fields, declared dependencies), extracted with `dpkg-deb -x` into a fresh
   root where the packaged kite-acceptor --check must accept a configuration
   (dictionaries found beside its bin/), and the example must build against
   the extracted kite-dev with only CMAKE_PREFIX_PATH set.

Usage: package_test.py CMAKE CPACK BUILD_DIR SOURCE_DIR VERSION
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ORDERS = 1000

GATEWAY = """\
[engine]
model = "mono"
bind = "127.0.0.1"
port = 0

[defaults]
BeginString = "FIX.4.4"
SenderCompID = "GATEWAY"
HeartBtInt = 30
StoreKind = "memory"

[[session]]
TargetCompID = "CLIENT1"
"""

INITIATOR = """\
[engine]
threads = 1
idle = "block"

[orders]
source = "rate"
rate = 5000
count = {orders}
report_interval_s = 1

[defaults]
BeginString = "FIX.4.4"
ConnectionType = "initiator"
SenderCompID = "CLIENT1"
TargetCompID = "GATEWAY"
HeartBtInt = 30
StoreKind = "memory"
SocketConnectHost = "127.0.0.1"
SocketConnectPort = {port}

[[session]]
"""

# kite-acceptor --check from the extracted package: a session that validates
# with the installed default dictionary (FIX44.xml beside bin/).
CHECK = """\
[engine]
port = 0

[defaults]
SenderCompID = "KITE"
StoreKind = "memory"
UseDataDictionary = true

[[session]]
TargetCompID = "CLIENT1"
"""

failures = []


def check(ok, what, output=""):
    print(("ok: " if ok else "FAILED: ") + what, flush=True)
    if not ok:
        failures.append(what)
        if output:
            print(output[-4000:], flush=True)
    return ok


def run(args, cwd=None, env=None, timeout=600):
    p = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout


def clean_env():
    """The environment a user's shell would have: no Kite variables, no
    compiler launcher, no CMake or pkg-config search paths of ours."""
    drop = ("KITE_", "CMAKE_", "PKG_CONFIG", "CCACHE_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def run_orders(gateway, bindir, work, env):
    """Runs the gateway and kite-initiator for ORDERS orders; checks both counts."""
    os.makedirs(work)
    with open(os.path.join(work, "gateway.toml"), "w") as f:
        f.write(GATEWAY)
    gw = subprocess.Popen([gateway, "gateway.toml"], cwd=work, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    init = None
    try:
        line = gw.stdout.readline()
        m = re.search(r"listening on port (\d+)", line)
        if not check(m is not None, f"{os.path.basename(gateway)} listens", line):
            return
        with open(os.path.join(work, "initiator.toml"), "w") as f:
            f.write(INITIATOR.format(orders=ORDERS, port=m.group(1)))
        log = open(os.path.join(work, "initiator.log"), "w+")
        init = subprocess.Popen([os.path.join(bindir, "kite-initiator"), "--config", "initiator.toml"], cwd=work,
                                env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        # The per-second report line says when every order was answered.
        deadline = time.monotonic() + 30
        answered = False
        while time.monotonic() < deadline and init.poll() is None:
            time.sleep(0.2)
            log.seek(0)
            text = log.read()
            if re.search(rf"reports {ORDERS}\b", text) or re.search(rf"\({ORDERS} answered\)", text):
                answered = True
                break
        init.send_signal(signal.SIGTERM)
        init.wait(timeout=15)
        log.seek(0)
        text = log.read()
        check(answered, f"kite-initiator: {ORDERS} orders answered within 30 s", text)
        check(f"orders sent {ORDERS}, execution reports {ORDERS}" in text,
              f"kite-initiator: orders sent {ORDERS}, execution reports {ORDERS}", text)
        check(init.returncode == 0, "kite-initiator exits 0 on SIGTERM", text)
        gw.send_signal(signal.SIGTERM)
        out, _ = gw.communicate(timeout=15)
        check(f"{ORDERS} orders acknowledged" in out, f"{os.path.basename(gateway)}: {ORDERS} orders acknowledged",
              out)
        check(gw.returncode == 0, f"{os.path.basename(gateway)} exits 0 on SIGTERM", out)
    finally:
        if init is not None:
            log.close()
        for p in (init, gw):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def build_with_cmake(cmake, example, build, prefix_path, env, extra=()):
    rc, out = run([cmake, "-S", example, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix_path}", *extra], env=env)
    if rc == 0:
        rc, out2 = run([cmake, "--build", build, "-j2"], env=env)
        out += out2
    return rc, out


def main():
    cmake, cpack, build_dir, source_dir, version = sys.argv[1:6]
    example = os.path.join(source_dir, "examples", "order-gateway")
    env = clean_env()
    with tempfile.TemporaryDirectory(prefix="kite-package-") as tmp:
        tmp = os.path.realpath(tmp)
        prefix = os.path.join(tmp, "prefix")

        # 1. install.
        rc, out = run([cmake, "--install", build_dir, "--prefix", prefix], env=env)
        if not check(rc == 0, "cmake --install into a fresh prefix", out):
            return
        for rel in ("lib/cmake/Kite/KiteConfig.cmake", "lib/pkgconfig/kite.pc", "include/kite/app/acceptor.hpp",
                    "include/kite/kite.h", "lib/libkitecpp.a", f"lib/libkitecpp.so.{version}", "lib/libkite.so.0"):
            check(os.path.exists(os.path.join(prefix, rel)), f"installed {rel}")
        for rel in ("include/kite/lab", "include/kite/bench"):
            check(not os.path.exists(os.path.join(prefix, rel)), f"not installed: {rel}")
        rc, out = run(["readelf", "-d", os.path.join(prefix, "lib", "libkitecpp.so")])
        check(re.search(r"SONAME.*\[libkitecpp\.so\.[0-9.]+\]", out) is not None, "libkitecpp.so has a versioned soname",
              out)

        # 2a. find_package(Kite) with only CMAKE_PREFIX_PATH.
        rc, out = build_with_cmake(cmake, example, os.path.join(tmp, "b-cmake"), prefix, env)
        cmake_bin = os.path.join(tmp, "b-cmake", "order-gateway")
        check(rc == 0 and os.path.exists(cmake_bin), "example built with find_package(Kite)", out)

        # 2b. pkg-config, shared and static.
        pc_env = dict(env, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        src = os.path.join(example, "order_gateway.cpp")
        rc, flags = run(["pkg-config", "--cflags", "--libs", "kite"], env=pc_env)
        pc_bin = os.path.join(tmp, "order-gateway-pc")
        if check(rc == 0, "pkg-config --cflags --libs kite", flags):
            rc, out = run(["sh", "-c", f"g++ -std=c++20 -O2 -o {pc_bin} {src} {flags.strip()} "
                          f"-Wl,-rpath,{prefix}/lib"], env=pc_env)
            check(rc == 0, "example built with pkg-config (libkitecpp.so)", out)
        rc, flags = run(["pkg-config", "--static", "--cflags", "--libs", "kite"], env=pc_env)
        static_bin = os.path.join(tmp, "order-gateway-static")
        if check(rc == 0, "pkg-config --static --cflags --libs kite", flags):
            # The archive by name: both libkitecpp.so and .a sit in libdir.
            flags = flags.strip().replace("-lkitecpp", "-l:libkitecpp.a")
            rc, out = run(["sh", "-c", f"g++ -std=c++20 -O2 -o {static_bin} {src} {flags}"], env=pc_env)
            if check(rc == 0, "example built with pkg-config --static (libkitecpp.a)", out):
                _, out = run(["ldd", static_bin])
                check("libkitecpp" not in out, "the static build needs no libkitecpp.so", out)

        # 3. 1,000 orders through each build.
        bindir = os.path.join(prefix, "bin")
        for name, binary in (("cmake", cmake_bin), ("pkg-config", pc_bin), ("static", static_bin)):
            if os.path.exists(binary):
                run_orders(binary, bindir, os.path.join(tmp, "run-" + name), env)

        # 4. The Debian packages.
        debs = os.path.join(tmp, "debs")
        rc, out = run([cpack, "-G", "DEB", "-B", debs], cwd=build_dir, env=env)
        runtime = os.path.join(debs, f"kite_{version}_amd64.deb")
        dev = os.path.join(debs, f"kite-dev_{version}_amd64.deb")
        if not check(rc == 0 and os.path.exists(runtime) and os.path.exists(dev),
                     f"cpack: kite_{version}_amd64.deb and kite-dev_{version}_amd64.deb", out):
            return
        _, files = run(["dpkg-deb", "-c", runtime])
        for f in ("./usr/bin/kite-acceptor", "./usr/bin/kite-initiator", "./usr/bin/kite-admin",
                  "./usr/bin/kite-fixprint", "./usr/bin/bench-run", "./usr/share/kite/dictionaries/FIX44.xml",
                  "./usr/share/kite/dictionaries/LICENSE.quickfix", f"./usr/lib/libkitecpp.so.{version}",
                  "./usr/lib/libkite.so.0", "./usr/share/doc/kite/CHANGELOG.md",
                  "./usr/share/doc/kite/LICENSE.quickfix"):
            check(re.search(rf" {re.escape(f)}( |$)", files, re.M) is not None, f"kite .deb holds {f}", files)
        check("./usr/include/" not in files, "kite .deb holds no headers (kite-dev does)", files)
        _, files = run(["dpkg-deb", "-c", dev])
        for f in ("./usr/include/kite/app/acceptor.hpp", "./usr/lib/libkitecpp.a", "./usr/lib/libkitecpp.so",
                  "./usr/lib/cmake/Kite/KiteConfig.cmake", "./usr/lib/pkgconfig/kite.pc"):
            check(re.search(rf" {re.escape(f)}( |$)", files, re.M) is not None, f"kite-dev .deb holds {f}", files)
        check("/kite/lab/" not in files and "/kite/bench/" not in files, "kite-dev .deb: no lab or bench header",
              files)
        _, info = run(["dpkg-deb", "-I", runtime])
        print(info)
        depends = re.search(r"^ Depends: (.*)$", info, re.M)
        depends = depends.group(1) if depends else ""
        for lib in ("libc6", "libstdc++6", "libssl3", "liburing2", "libpugixml1v5", "libtomlplusplus3", "libdate-tz3"):
            check(re.search(rf"\b{re.escape(lib)}\b", depends) is not None, f"kite Depends names {lib}", info)
        check(re.search(rf"^ Version: {re.escape(version)}$", info, re.M) is not None, f"kite Version {version}", info)
        check(re.search(r"^ Architecture: amd64$", info, re.M) is not None, "kite Architecture amd64", info)
        _, info = run(["dpkg-deb", "-I", dev])
        print(info)
        check(re.search(rf"^ Depends: .*\bkite \(= {re.escape(version)}\)", info, re.M) is not None,
              f"kite-dev Depends names kite (= {version})", info)
        check(re.search(r"^ Depends: .*\blibssl-dev\b", info, re.M) is not None, "kite-dev Depends names libssl-dev",
              info)

        root = os.path.join(tmp, "root")
        for deb in (runtime, dev):
            rc, out = run(["dpkg-deb", "-x", deb, root])
            check(rc == 0, f"dpkg-deb -x {os.path.basename(deb)}", out)
        conf = os.path.join(tmp, "check")
        os.makedirs(conf)
        with open(os.path.join(conf, "acceptor.toml"), "w") as f:
            f.write(CHECK)
        lib_env = dict(env, LD_LIBRARY_PATH=os.path.join(root, "usr", "lib"))
        rc, out = run([os.path.join(root, "usr", "bin", "kite-acceptor"), "--config", "acceptor.toml", "--check"],
                      cwd=conf, env=lib_env)
        check(rc == 0 and "ok: 1 session(s)" in out, "the packaged kite-acceptor --check accepts a configuration", out)
        rc, out = build_with_cmake(cmake, example, os.path.join(tmp, "b-deb"), os.path.join(root, "usr"), env)
        check(rc == 0, "example built against the extracted kite-dev (CMAKE_PREFIX_PATH only)", out)
        if rc == 0:
            _, out = run(["ldd", os.path.join(tmp, "b-deb", "order-gateway")], env=lib_env)
            check(os.path.join(root, "usr", "lib", "libkitecpp.so") in out,
                  "that build loads the packaged libkitecpp", out)


if __name__ == "__main__":
    main()
    if failures:
        print(f"{len(failures)} check(s) failed: " + "; ".join(failures))
        sys.exit(1)
    print("every check passed")
