#!/usr/bin/python3 -S
"""A stand-in for bench_roundtrip that obeys the bench-run contract, for the
lab's fast tests. It listens and answers like the real one would be asked to,
but measures nothing: the client connects once, sleeps through its runs
(FAKE_BR_SCALE shrinks the time) and writes a plausible result JSON.

Knobs (environment):
  FAKE_BR_UNSUPPORTED=flav[,flav]  server exits 3 with `unsupported:` for these flavours
  FAKE_BR_NO_READY=1               server never writes its ready file
  FAKE_BR_CLIENT_FAIL=1            client exits 1 without a result
  FAKE_BR_SCALE=0.1                multiply run times (default 0.05)
  FAKE_BR_LOG=FILE                 append one line per server start (flavour/transport/model)
  FAKE_BR_FAIL_ONCE=FILE           client fails when FILE does not exist, and creates it
  FAKE_BR_MUTATE=1                 client appends a comment to this script (a binary that changes)
  FAKE_BR_MUTATE_FILE=FILE         client appends a line to FILE (an artifact that changes)
  FAKE_BR_ENV_LOG=FILE             server and client append a JSON line: role, cell, network namespace,
                                   and the launcher environment they were given (LD_PRELOAD, EF_*, VMA_*)
"""
import json, os, random, signal, socket, sys, time


def opts(argv):
    out, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                out[a[2:]] = argv[i + 1]
                i += 2
                continue
            out[a[2:]] = "1"
        i += 1
    return out


def cores(text):
    s = set()
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            s.update(range(int(lo), int(hi) + 1))
        elif part:
            s.add(int(part))
    return s


def log_env(role, cell):
    path = os.environ.get("FAKE_BR_ENV_LOG")
    if not path:
        return
    env = {k: v for k, v in os.environ.items() if k == "LD_PRELOAD" or k.startswith(("EF_", "VMA_"))}
    with open(path, "a") as f:
        f.write(json.dumps({"role": role, "cell": cell, "netns": os.readlink("/proc/self/ns/net"), "env": env}) + "\n")


def from_acceptor_file(o):
    """The engine settings of --acceptor-config's file, as the flags would give them."""
    import tomllib
    with open(o["acceptor-config"], "rb") as f:
        e = tomllib.load(f).get("engine", {})
    for key, flag in (("transport", "transport"), ("model", "model"), ("bind", "bind"), ("port", "port"),
                      ("workers", "workers"), ("busy_poll_usecs", "busy-poll-usecs")):
        if key in e:
            o[flag] = str(e[key])
    if "cores" in e:
        o["cores"] = ",".join(str(c) for c in e["cores"])


def server(o):
    if "acceptor-config" in o:
        from_acceptor_file(o)
    flav = o.get("flavour", "cpp")
    log_env("server", f"{flav}/{o.get('transport')}/{o.get('model')}")
    if flav in os.environ.get("FAKE_BR_UNSUPPORTED", "").split(","):
        print(f"unsupported: fake {flav} cannot serve {o.get('model')}", file=sys.stderr)
        return 3
    if os.environ.get("FAKE_BR_LOG"):
        with open(os.environ["FAKE_BR_LOG"], "a") as f:
            f.write(f"{flav}/{o.get('transport')}/{o.get('model')}\n")
    if o.get("cores"):
        os.sched_setaffinity(0, {min(cores(o["cores"]))})
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((o.get("bind", "127.0.0.1"), int(o.get("port", "0"))))
    s.listen(64)
    port = s.getsockname()[1]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    if not os.environ.get("FAKE_BR_NO_READY"):
        tmp = o["ready-file"] + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.rename(tmp, o["ready-file"])
    s.settimeout(0.05)
    conns = []
    deadline = time.time() + 600
    while not stop and time.time() < deadline:
        try:
            c, _ = s.accept()
            if int(o.get("busy-poll-usecs", "0")) > 0:  # as the real server does, so the lab can read it back
                c.setsockopt(socket.SOL_SOCKET, 46, int(o["busy-poll-usecs"]))  # SO_BUSY_POLL
            conns.append(c)
        except (socket.timeout, InterruptedError):
            pass
    return 0


def pct(base):
    return {"p50": base, "p90": base * 1.3, "p99": base * 2.0, "p999": base * 3.0, "max": base * 9.0, "mean": base * 1.1}


def client(o):
    if os.environ.get("FAKE_BR_CLIENT_FAIL"):
        print("client: logon refused (fake)", file=sys.stderr)
        return 1
    once = os.environ.get("FAKE_BR_FAIL_ONCE")
    if once and not os.path.exists(once):
        open(once, "w").close()
        print("client: connection reset (fake, once)", file=sys.stderr)
        return 1
    if os.environ.get("FAKE_BR_MUTATE"):
        with open(os.path.abspath(sys.argv[0]), "a") as f:
            f.write("# mutated\n")
    if os.environ.get("FAKE_BR_MUTATE_FILE"):
        with open(os.environ["FAKE_BR_MUTATE_FILE"], "a") as f:
            f.write("mutated\n")
    log_env("client", o.get("cell", ""))
    if o.get("cores"):
        os.sched_setaffinity(0, {min(cores(o["cores"]))})
    conn = socket.create_connection((o["host"], int(o["port"])), timeout=5)  # held through the runs, as a session
    scale = float(os.environ.get("FAKE_BR_SCALE", "0.05"))
    runs, dur = int(o.get("runs", "5")), float(o.get("duration", "5"))
    loop = o.get("loop", "closed")
    flavour, transport, model, _ = o["cell"].split("/")
    base = {"cpp": 20.0, "raw": 12.0, "quickfix": 45.0}.get(flavour, 30.0) * (1 if model == "single" else 3)
    time.sleep(float(o.get("warmup", "1")) * scale)
    out_runs = []
    for j in range(runs):
        time.sleep(dur * scale)
        p = base * (1 + random.uniform(-0.02, 0.02))
        r = {"count": 1000, "errors": 0, "achieved_rate": float(o.get("rate", "0")) if loop == "open" else 40000.0,
             "max_in_flight": 3, "cap_hits": 0, "complete": True, "service": pct(p),
             "client": {"polls": 1000, "empty_polls": 0, "busy_s": dur, "idle_s": 0.0}}
        if loop == "open":
            r["response"] = pct(p * 1.05)
        out_runs.append(r)
        print(f"run {j + 1}/{runs} done: p50={p:.2f} us p99={2 * p:.2f} us", file=sys.stderr, flush=True)
    med = lambda k, v: sorted(r[v][k] for r in out_runs)[len(out_runs) // 2]
    summ = {"service": {k: med(k, "service") for k in ("p50", "p90", "p99", "p999")}}
    summ["service"]["max"] = max(r["service"]["max"] for r in out_runs)
    summ["service"]["mean_max"] = sum(r["service"]["max"] for r in out_runs) / runs
    if loop == "open":
        summ["response"] = {k: med(k, "response") for k in ("p50", "p90", "p99", "p999")}
        summ["response"]["max"] = max(r["response"]["max"] for r in out_runs)
        summ["response"]["mean_max"] = summ["response"]["max"]
    summ.update({"cv": {"p50": 0.01, "p99": 0.02}, "achieved_rate": out_runs[0]["achieved_rate"],
                 "count": 1000 * runs, "errors": 0, "max_in_flight": 3})
    doc = {"schema": 1, "cell": {"flavour": flavour, "transport": transport, "model": model, "loop": loop},
           "sessions": int(o.get("sessions", "1")), "rate": int(o.get("rate", "0")) if loop == "open" else 0,
           "think_us": int(o.get("think-us", "0")), "warmup_s": float(o.get("warmup", "1")),
           "duration_s": dur, "clock": {"method": "clock_gettime", "tsc_ghz": 0}, "idle": o.get("idle", "spin"),
           "client_threads": 1, "orders_total": 1000 * runs, "runs": out_runs, "summary": summ, "verdict": "ok", "verdict_reasons": [],
           "thresholds": {"cv_p50": float(o.get("cv-p50-limit", "0.1")), "cv_p99": float(o.get("cv-p99-limit", "0.25")),
                          "rate_fraction": 0.99, "response_over_service": 2.0},
           "cdf": [[base * 0.8, 0.0], [base, 0.5], [base * 2, 0.99], [base * 9, 1.0]],
           "stamp": {"binary": "bench_roundtrip (fake)", "build_flags": "", "compiler": "python", "git": ""}}
    conn.close()
    with open(o["json"], "w") as f:
        json.dump(doc, f)
    print(f"{o['cell']}: p50 {base:.2f} us (fake)")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--version":
        print("bench_roundtrip (fake, tests/lab) compiler=python flags=none")
        return 0
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: bench_roundtrip server|client [options] (fake)")
        return 0
    o = opts(sys.argv[2:])
    return server(o) if sys.argv[1] == "server" else client(o) if sys.argv[1] == "client" else 2


if __name__ == "__main__":
    sys.exit(main())
