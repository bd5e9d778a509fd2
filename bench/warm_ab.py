#!/usr/bin/env python3
"""Warm ms/job of two builds (A: "old", B: "new"), interleaved in chunks of
10 jobs (order alternating) on two private daemons (--jobs 1) side by side,
then each build's first warm job on fresh daemons (its wall time above the
next five jobs' median: a zygote's start-up on a job's wall clock).
Nothing asserted; run as root inside the throw-away unshare wrapper:

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/warm_ab.py OLD_BIN NEW_BIN CACHE_DIR [JOBS [ROUNDS]]

(issue 35: ab9ce63 against the zygote's own overlays, bench/RESULTS.md)"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "warm"))
import daemonrun  # noqa: E402

OLD, NEW, CACHE = sys.argv[1:4]
N, CHUNK = int(sys.argv[4]) if len(sys.argv) > 4 else 300, 10
files = [{"path": "main.py", "content": "print(sum(range(100)))\n"}]

def job(c):
    t = time.monotonic()
    r = c.python(files, warm=True)
    dt = time.monotonic() - t
    assert r["status"] == "ok" and daemonrun.start(r).startswith("warm"), r
    return dt, r["wall_time_s"]

def first_jobs(rounds):
    out = {"old": [], "new": []}
    for k in range(rounds):
        for name, b in (("old", OLD), ("new", NEW)) if k % 2 == 0 else (("new", NEW), ("old", OLD)):
            d = daemonrun.PrivateDaemon(b, CACHE, "--jobs", "1")
            try:
                c = daemonrun.Client(d.sock)
                c.python(files)  # a cold job first: the slot and its template made
                f = job(c)
                rest = [job(c) for _ in range(5)]
                out[name].append((f[1] - statistics.median(r[1] for r in rest)) * 1000)
            finally:
                d.stop()
    return out

def main():
    ds = {"old": daemonrun.PrivateDaemon(OLD, CACHE, "--jobs", "1"), "new": daemonrun.PrivateDaemon(NEW, CACHE, "--jobs", "1")}
    try:
        cs = {k: daemonrun.Client(d.sock) for k, d in ds.items()}
        for c in cs.values():
            for _ in range(5):
                job(c)  # zygote started, warmed
        rt = {"old": [], "new": []}
        wall = {"old": [], "new": []}
        order = ["old", "new"]
        for i in range(N // CHUNK):
            for k in (order if i % 2 == 0 else order[::-1]):
                for _ in range(CHUNK):
                    a, b = job(cs[k])
                    rt[k].append(a)
                    wall[k].append(b)
        for k in order:
            print("%s: %d jobs, round trip mean %.3f ms median %.3f ms; step wall mean %.3f ms median %.3f ms" % (
                k, len(rt[k]), 1000 * statistics.mean(rt[k]), 1000 * statistics.median(rt[k]),
                1000 * statistics.mean(wall[k]), 1000 * statistics.median(wall[k])))
        print("new/old round trip mean %.3f" % (statistics.mean(rt["new"]) / statistics.mean(rt["old"])))
    finally:
        for d in ds.values():
            d.stop()
    fj = first_jobs(int(sys.argv[5]) if len(sys.argv) > 5 else 6)
    for k, v in fj.items():
        print("%s: first warm job's extra wall (zygote start-up) ms: median %.1f %s" % (k, statistics.median(v), ["%.1f" % x for x in v]))

main()
