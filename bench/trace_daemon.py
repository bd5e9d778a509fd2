"""Traces through the daemon (issue 24): CRUXEval programs (`<code>` then
`print(repr(f(<input>)))`) run as toolchain python3 jobs, untraced, traced, and
traced with `check` (untraced then traced, compared), through one private
daemon in the same run, one job at a time and then --concurrency at a time.
Prints the wall-time ratios traced / untraced and the trace bytes. Never
asserts a timing. Run inside the unshare wrapper (it starts a daemon):

  python3 bench/trace_daemon.py --bin build/bin [--samples N] [--concurrency C]"""
import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import surgebox  # noqa: E402
from private_daemon import PrivateDaemon  # noqa: E402


def jobs_of(samples, trace):
    out = []
    for i, s in enumerate(samples):
        src = s["code"] + "\nprint(repr(f(%s)))\n" % s["input"]
        job = {"id": i, "toolchain": "python3", "files": {"main.py": src}, "limits": {"time_s": 30}}
        if trace is not None:
            job["trace"] = trace
        out.append(job)
    return out


def run(c, jobs, concurrency):
    t0 = time.perf_counter()
    res = list(c.run_many(jobs, concurrency=concurrency))
    return time.perf_counter() - t0, res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--data", default="/work/shared/cruxeval/cruxeval.jsonl")
    a = ap.parse_args()
    with open(a.data) as f:
        samples = [json.loads(line) for line in f][: a.samples]
    with tempfile.TemporaryDirectory() as cache:
        d = PrivateDaemon(a.bin, cache)
        try:
            with surgebox.Client(d.sock) as c:
                run(c, jobs_of(samples[:5], True), 1)  # warm: templates, page cache
                for conc in (1, a.concurrency):
                    base, r0 = run(c, jobs_of(samples, None), conc)
                    traced, r1 = run(c, jobs_of(samples, True), conc)
                    checked, r2 = run(c, jobs_of(samples, {"check": True}), conc)
                    statuses = {}
                    for r in r1:
                        st = r.step().get("trace_status")
                        statuses[st] = statuses.get(st, 0) + 1
                    equal = sum(1 for r in r2 if all(r.step().get("trace_check", {}).values()))
                    nbytes = sum(len(r.step().get("trace", "")) for r in r1)
                    plain = {r["id"]: r for r in r0}  # run_many yields in completion order
                    same = sum(1 for y in r1 if plain[y["id"]].stdout == y.stdout and plain[y["id"]].status == y.status)
                    print("concurrency %d, %d programs: untraced %.2f s, traced %.2f s (x%.2f), traced+check %.2f s "
                          "(x%.2f); trace status %s; %d/%d stdout+status as untraced; check equal %d/%d; "
                          "%.1f kB of trace per program" % (conc, len(samples), base, traced, traced / base, checked,
                                                             checked / base, statuses, same, len(samples), equal,
                                                             len(samples), nbytes / len(samples) / 1000))
        finally:
            d.stop()


if __name__ == "__main__":
    main()
