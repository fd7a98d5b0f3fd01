#!/usr/bin/env python3
"""lab_tls_sitting: a sitting of tests/lab/tls_matrix.toml (cpp, kernel and
tls, single, closed) with the real binaries. The tls cell's client and server
ran over TLS with the sitting's certificates and answered every order, and
the results page has a tls transport row.

usage: tls_sitting.py BENCH_RUN SOURCE_DIR BUILD_DIR RESULTS_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys


def main():
    bench_run, source, build, results = sys.argv[1:5]
    shutil.rmtree(results, ignore_errors=True)
    cmd = [bench_run, "--matrix", os.path.join(source, "tests/lab/tls_matrix.toml"), "--machine", "local",
           "--source-dir", source, "--build-dir", build, "--results", results, "--no-progress"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    print(run.stdout[-3000:], run.stderr[-3000:])
    assert run.returncode == 0, "bench-run exited %d" % run.returncode
    sittings = glob.glob(os.path.join(results, "*", "*", "sitting.json"))
    assert len(sittings) == 1, sittings
    sitting = os.path.dirname(sittings[0])
    for name in ("ca.pem", "server.pem", "server.key"):
        assert os.path.exists(os.path.join(sitting, ".work", "tls", name)), "no " + name + " made at the start"

    cell = json.load(open(os.path.join(sitting, "cpp_tls_single_closed.json")))
    state = cell["lab"]["state"]
    # refused: the audit saw another program on a measured core (a shared
    # test machine); the cell still ran to its end over TLS.
    assert state in ("measured", "refused"), "tls cell %s: %s" % (state, cell["lab"].get("reason"))
    assert cell["orders_total"] > 0, "no order answered over tls"
    assert cell["server_exit_code"] == 0, cell["server_exit_code"]
    argv = cell["stamp"]["effective"]["server_argv"]
    assert argv[argv.index("--acceptor-config") + 1].endswith(".acceptor.toml"), argv
    config = cell["stamp"]["effective"]["acceptor_config"]
    assert "\n[tls]\n" in config and '/.work/tls/server.pem"\n' in config, config
    client = cell["stamp"]["effective"]["client_argv"]
    assert "--tls" in client and client[client.index("--tls-ca") + 1].endswith("/.work/tls/ca.pem"), client
    if state == "measured":
        assert cell["summary"]["service"]["p50"] > 0

    # A sequential matrix is method v1: the host page lists it as an archive,
    # and the sitting's own page and its archive page carry the rows.
    site = glob.glob(os.path.join(results, "site", "*"))
    site = [d for d in site if os.path.isdir(d) and os.path.basename(d) != "assets"]
    assert len(site) == 1, site
    host = open(os.path.join(site[0], "index.html")).read()
    assert "method v1" in host and os.path.basename(sitting) in host, "the host page does not list the sitting"
    pages = [os.path.join(site[0], "sitting", os.path.basename(sitting), "index.html")]
    pages += glob.glob(os.path.join(site[0], "archive", "*-v1", "index.html"))
    assert len(pages) == 2, pages
    for path in pages:
        page = open(path).read()
        assert "tls/single" in page, path + " has no tls row"
        assert "kernel/single" in page, path + " has no kernel row"
    print("tls cell", state, "orders", cell["orders_total"])


if __name__ == "__main__":
    main()
