#!/usr/bin/env python3
"""The daemon's loop beside a neighbour's teardown (issue 22), as ratios.

Run inside the throw-away wrapper, as root:
  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/loop_stall.py --bin BUILD/bin [--rounds 3] [--out F]

One surgeboxd (2 workers, no toolchains, no cache). Round after round: B's
short jobs alone for a while (A idle), then beside A's jobs that leave
300 MB of tmpfs and 100k files each (tests/daemon/test_loop_thread.py's
program). Per phase: B's latency (p50, p90, max; where the slowest one's
time went: queue, sandbox set-up, the program), and from the
`surgebox_loop_busy_seconds` histogram (metrics) the turns of the loop and
how many were busy longer than 10, 50 and 250 ms. Prints a JSON document
with the busy/idle ratios; nothing here is a pass/fail test. An old daemon
without the histogram gives latencies only.
"""
import argparse
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemon"))
import test_daemon as td  # noqa: E402  the daemon and client helpers
import test_loop_thread as lt  # noqa: E402  A's program, B's job

BOUNDS = ("0.01", "0.05", "0.25")


def loop_hist(c):
    """{le: cumulative count} of surgebox_loop_busy_seconds, plus '+Inf'."""
    text = c.call({"id": "m", "type": "metrics"}).get("text", "")
    out = {}
    for line in text.splitlines():
        if line.startswith("surgebox_loop_busy_seconds_bucket{le=\""):
            le = line.split('"')[1]
            out[le] = int(line.rsplit(" ", 1)[1])
    return out


def over(h0, h1):
    """Turns in the phase, and how many were longer than each bound."""
    if not h0 or not h1:
        return None
    turns = h1["+Inf"] - h0["+Inf"]
    return {"turns": turns, **{"over_%s_s" % b: turns - (h1[b] - h0[b]) for b in BOUNDS}}


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def phase(d, busy, seconds):
    a, b, m = td.Client(d.sock), td.Client(d.sock), td.Client(d.sock)
    h0 = loop_hist(m)
    stop = time.monotonic() + seconds
    th = None
    if busy:
        def client_a():
            n = 0
            while time.monotonic() < stop:
                a.call(td.exec_req("a%d" % n, ["python3", "-c", lt.HEAVY],
                                   limits={"memory_mib": 1024, "time_s": 60}), timeout=300)
                n += 1
        th = threading.Thread(target=client_a)
        th.start()
    lat, bad, n, slowest = [], 0, 0, None
    while time.monotonic() < stop or (th and th.is_alive()):
        t, r = lt.b_job(b, n)
        lat.append(t)
        if t >= max(lat):  # where the slowest answer's time went
            s = (r.get("steps") or [{}])[0]
            slowest = {"latency_s": t, "queue_time_s": r.get("queue_time_s"), "setup_time_s": s.get("setup_time_s"),
                       "wall_time_s": s.get("wall_time_s")}
        bad += r.get("status") != "ok"
        n += 1
    if th:
        th.join()
    res = {"b_jobs": len(lat), "b_not_ok": bad, "b_p50_ms": pct(lat, 0.5) * 1e3, "b_p90_ms": pct(lat, 0.9) * 1e3,
           "b_max_ms": max(lat) * 1e3, "b_slowest": slowest, "loop": over(h0, loop_hist(m))}
    for c in (a, b, m):
        c.close()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--out")
    args = ap.parse_args()
    td.BIN = args.bin
    d = td.Daemon("--jobs", "2", "--no-cache", *td.NO_TOOLCHAINS)
    rounds = []
    try:
        for _ in range(args.rounds):
            rounds.append({"idle": phase(d, False, args.seconds), "busy": phase(d, True, args.seconds)})
    finally:
        d.stop()
    ratio = {k: sum(r["busy"][k] for r in rounds) / max(1e-9, sum(r["idle"][k] for r in rounds))
             for k in ("b_p50_ms", "b_p90_ms", "b_max_ms")}
    doc = {"rounds": rounds, "busy_over_idle": ratio,
           "loadavg": open("/proc/loadavg").read().split()[:3]}
    text = json.dumps(doc, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
