#!/usr/bin/env python3
"""lab_store_sitting: a small sitting paired on the store (cpp, kernel,
single, closed; null, file, postgresql-sync, postgresql-async; three short
rounds) with the real binaries and a machine file that declares the
postgresql service on the client core. The members differ in the store
alone, every result records the store it ran with, the database was started,
pinned, known to the audit and stopped. SKIPPED (exit 77) with the reason
when PostgreSQL cannot start here; the postgresql cells are then `noservice`.

usage: store_sitting.py BENCH_RUN SOURCE_DIR BUILD_DIR RESULTS_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys

MATRIX = """name = "store-test"
flavours = ["cpp"]
transports = ["kernel"]
models = ["single"]
loops = ["closed"]
pairing = "rounds"
pair_on = "store"
stores = ["null", "file", "postgresql-sync", "postgresql-async"]
runs = 1
warmup_s = 0.1
duration_s = 0.4
[audit]
interval_s = 0.1
[rounds]
min_rounds = 2
max_rounds = 3
budget_rounds = 3
seed = 7
[cell]
ready_timeout_s = 20
"""

MACHINE = """name = "store-test"
cpu_model = ""
local = true
[cores]
server = "0"
client = "1"
[services.postgresql]
cores = "client"
fsync = false
"""


def run_sitting(bench_run, source, build, results):
    os.makedirs(results, exist_ok=True)
    matrix, machine = os.path.join(results, "store-test.toml"), os.path.join(results, "machine.toml")
    open(matrix, "w").write(MATRIX)
    open(machine, "w").write(MACHINE)
    cmd = [bench_run, "--matrix", matrix, "--machine", machine, "--source-dir", source, "--build-dir", build,
           "--results", results, "--no-progress", "--no-site", "--sitting", "store"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    print(run.stdout[-3000:], run.stderr[-3000:])
    assert run.returncode == 0, "bench-run exited %d" % run.returncode
    return os.path.join(results, "store-test", "store")


def check_members(sitting):
    cells = {}
    for path in glob.glob(os.path.join(sitting, "cpp@*_kernel_single_closed.json")):
        r = json.load(open(path))
        cells[r["cell"]["store"]] = r
    assert sorted(cells) == ["file", "null", "postgresql-async", "postgresql-sync"], sorted(cells)
    for store, r in cells.items():
        assert {k: v for k, v in r["cell"].items() if k != "store"} == {
            "flavour": "cpp", "transport": "kernel", "model": "single", "loop": "closed"}, r["cell"]
        if r["lab"]["state"] == "marked":
            continue
        eff = r["stamp"]["effective"]["store"]
        assert eff["setting"] == store, eff
        config = r["stamp"]["effective"]["acceptor_config"]
        assert 'StoreKind = "%s"\n' % eff["kind"] in config, config
        if store.startswith("postgresql-"):
            assert eff["kind"] == "postgresql" and eff["commit"] == store.split("-")[1], eff
            assert 'PostgreSQLStoreCommit = "%s"\n' % eff["commit"] in config, config
            assert "dbname=" + eff["database"] in config, config
    return cells


def main():
    bench_run, source, build, results = sys.argv[1:5]
    shutil.rmtree(results, ignore_errors=True)
    sitting = run_sitting(bench_run, source, build, results)
    stamp = json.load(open(os.path.join(sitting, "sitting.json")))
    service = stamp["services"]["postgresql"]
    cells = check_members(sitting)
    if not service["started"]:
        for store in ("postgresql-sync", "postgresql-async"):
            assert cells[store]["marker"] == "noservice", cells[store]
            assert service["reason"] in cells[store]["lab"]["reason"], cells[store]["lab"]
        print("SKIPPED: postgresql cannot start here: " + service["reason"])
        sys.exit(77)
    assert service["cores"] == "1" and service["postmaster_affinity"] == "1", service
    assert service["stopped_at"], "the service was not stopped"
    assert not os.path.exists(service["socket_dir"]), "the service's folder is left behind"
    for store in ("postgresql-sync", "postgresql-async"):
        r = cells[store]
        assert r["lab"]["state"] in ("measured", "refused"), (store, r["lab"])
        audits = [a["audit"] for a in r.get("audits", [])] or [r["audit"]]
        assert any("postgresql" in a.get("services", {}) for a in audits), "the audit does not know the database"
        for a in audits:
            for v in a.get("violations", []):
                assert v["kind"] != "foreign-burner" or "postgres" not in v["comm"], v
    ref = cells["null"]
    if ref["lab"]["state"] == "measured":
        p = ref["pairing"]
        assert p["on"] == "store" and p["reference"] == "cpp@null", p
        assert p["members"] == ["cpp@null", "cpp@file", "cpp@postgresql-sync", "cpp@postgresql-async"], p
    print("store sitting:", {s: c["lab"]["state"] for s, c in cells.items()})


if __name__ == "__main__":
    main()
