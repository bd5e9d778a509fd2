#!/usr/bin/env python3
"""The HTTP front's cost (issue 37): the same jobs through SandboxFusion's
/run_code and through the Unix socket, in one run, interleaved round by
round so the machine's drift cancels. Run inside the throw-away unshare
wrapper, as root:

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/http_run_code.py --bin build/bin [--jobs 2] [--concurrency 2,16]
                                   [--rounds 3] [--cpp 100] [--data FILE] [--limit N]

Jobs: CRUXEval's programs each sent as `code` + an `assert` of its reference
output (every check passes), language python (warm, as the front asks by
default); and, with --cpp N, one C++ program sent N times with a different
stdin each (as verl sends a test case per request: one compile, then the
compile cache). The Unix side sends the very native request the front
makes of each /run_code body (`/v1/jobs` is not used: the front's own
translation is part of what is measured). Each side keeps `concurrency`
connections busy (keep-alive HTTP/1.1; one Unix connection per worker).
Prints per concurrency the sums over rounds, their ratio (HTTP / Unix) and
the per-round ratios; verdicts must be identical. Nothing here asserts a
timing."""
import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import CPP, DEFAULT_DATA, cruxeval_checks, start_daemon  # noqa: E402


def bodies(a):
    out = []
    if a.data and os.path.exists(a.data):
        out = [{"code": c, "language": "python"} for c in cruxeval_checks(a.data)]
    else:
        print("no CRUXEval data at %s: synthetic Python checks" % a.data)
        out = [{"code": "def f(x):\n    return sorted(x)\nassert f([%d, 1]) == [1, %d]\n" % (i + 2, i + 2),
                "language": "python"} for i in range(800)]
    if a.limit:
        out = out[:a.limit]
    return out


def native_of(body):
    """The request the front makes of a /run_code body (http/run_code.c)."""
    return {"type": "exec", "toolchain": "python3" if body["language"] == "python" else "g++",
            "files": [{"path": "main.py" if body["language"] == "python" else "main.cpp", "content": body["code"]}],
            **({"options": {"std": "c++17"}, "compile_args": ["-pthread"]} if body["language"] == "cpp" else {}),
            **({"stdin": body["stdin"]} if body.get("stdin") else {}),
            "limits": {"time_s": 10, "cpu_time_s": 10}, "compile_limits": {"time_s": 10, "cpu_time_s": 10},
            "outputs_max_bytes": 16 << 20, **({"warm": True} if body["language"] == "python" else {})}


def http_worker(d, work, results, lock):
    c = d.conn(timeout=300)
    while True:
        with lock:
            if not work:
                break
            i, body = work.pop()
        c.request("POST", "/run_code", body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = c.getresponse()
        a = json.loads(r.read())
        results[i] = a["status"]
    c.close()


def unix_worker(sock, work, results, lock):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    f = s.makefile("rb")
    while True:
        with lock:
            if not work:
                break
            i, body = work.pop()
        req = native_of(body)
        req["id"] = i
        s.sendall((json.dumps(req) + "\n").encode())
        r = json.loads(f.readline())
        st = r.get("status")
        results[i] = "Success" if st == "ok" else "Failed" if st in ("runtime_error", "compile_error", "timeout",
                                                                      "memory_limit", "signaled", "output_limit") \
            else "SandboxError"
    s.close()


def timed(kind, d, items, conc):
    work = list(enumerate(items))[::-1]
    results, lock = {}, threading.Lock()
    fn = http_worker if kind == "http" else unix_worker
    arg = d if kind == "http" else d.sock
    ts = [threading.Thread(target=fn, args=(arg, work, results, lock)) for _ in range(conc)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.monotonic() - t0, [results[i] for i in range(len(items))]


def compare(name, d, items, conc, rounds):
    sums = {"http": 0.0, "unix": 0.0}
    ratios, verdicts = [], {}
    for r in range(rounds):
        order = ("http", "unix") if r % 2 == 0 else ("unix", "http")
        got = {}
        for kind in order:
            t, v = timed(kind, d, items, conc)
            got[kind] = t
            sums[kind] += t
            verdicts.setdefault(kind, v)
            if v != verdicts[kind]:
                print("  %s: verdicts changed between rounds" % kind)
        ratios.append(got["http"] / got["unix"])
    same = verdicts["http"] == verdicts["unix"]
    n = len(items) * rounds
    print("%-22s c=%-3d  http %.2fs (%.1f/s)  unix %.2fs (%.1f/s)  ratio %.3f  per round %s  verdicts %s (%s)" % (
        name, conc, sums["http"], n / sums["http"], sums["unix"], n / sums["unix"], sums["http"] / sums["unix"],
        " ".join("%.3f" % x for x in ratios), "identical" if same else "DIFFER",
        ", ".join("%s %d" % (k, verdicts["http"].count(k)) for k in sorted(set(verdicts["http"])))))
    return sums["http"] / sums["unix"], same


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def idle_connections(d, n):
    """Daemon RSS before and after n idle keep-alive connections (each has
    made one request and stays open)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 256)), hard))
    before = rss_kb(d.proc.pid)
    socks = []
    for _ in range(n):
        s = socket.create_connection((d.host, d.port), timeout=30)
        s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(s)
    for s in socks:
        s.recv(4096)
    time.sleep(0.5)
    after = rss_kb(d.proc.pid)
    open_ = d.metric("surgebox_http_open_connections")
    for s in socks:
        s.close()
    print("idle connections: %d open (the daemon counts %d): daemon RSS %.1f MB -> %.1f MB (+%.1f MB)" % (
        n, open_, before / 1024, after / 1024, (after - before) / 1024))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--concurrency", default="2,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpp", type=int, default=100)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--idle", type=int, default=1000, help="idle HTTP connections for the RSS figure (0: none)")
    ap.add_argument("--data", default=DEFAULT_DATA)
    a = ap.parse_args()
    items = bodies(a)
    d = start_daemon(a.bin, a.jobs)
    try:
        print("surgeboxd --jobs %d, %d CRUXEval checks per round, %d rounds" % (a.jobs, len(items), a.rounds))
        timed("http", d, items[:20], 2)  # warm-up: zygotes started, caches filled
        timed("unix", d, items[:20], 2)
        if a.idle:
            idle_connections(d, a.idle)
        ok = True
        for conc in [int(x) for x in a.concurrency.split(",")]:
            ok &= compare("cruxeval python", d, items, conc, a.rounds)[1]
        if a.cpp:
            cpp = [{"code": CPP, "language": "cpp", "stdin": "%d %d\n" % (i, i)} for i in range(a.cpp)]
            timed("http", d, cpp[:2], 1)  # the one compile, cached for both sides
            for conc in [int(x) for x in a.concurrency.split(",")]:
                ok &= compare("cpp x%d (cached)" % a.cpp, d, cpp, conc, a.rounds)[1]
        if not ok:
            print("verdicts differ between HTTP and the Unix socket")
            sys.exit(1)
    finally:
        d.stop()


if __name__ == "__main__":
    main()
