#!/usr/bin/env python3
"""Two daemons through one client vs the sum of each alone (issue 39 targets >= 0.9x).

Two private daemons (--jobs 1 each), each pinned with its sandboxes to a CPU
of its own (sched_setaffinity on every thread: what taskset does), run the
same CPU-bound raw job (a shell loop, `--work` turns) round after round,
interleaved: through AsyncClient(endpoints=[A]), then [B], then [A, B]
(`--client sync` for Client(endpoints=)). Each configuration keeps 4 jobs
outstanding per daemon. Prints per round jobs/s and the client's CPU per
job, then the ratio of the two-daemon throughput to the sum of the two
single-daemon throughputs measured in the same round (median over rounds),
and the bytes a job's request and answer take on the wire. Asserts nothing.

    SURGEBOX_BIN_DIR=build/bin unshare --mount --propagation private --pid \\
        --fork --mount-proc python3 bench/fleet_throughput.py [--jobs 120] [--rounds 3]
"""
import argparse
import asyncio
import json
import statistics
import time

import fleet_common as fc
import surgebox
from surgebox import _conn
from surgebox._jobs import build_exec


def job(i, work):
    return {"id": i, "steps": [{"argv": ["sh", "-c", "i=0; while [ $i -lt %d ]; do i=$((i+1)); done; echo %d"
                                          % (work, i)], "limits": {"time_s": 60}}]}


def run(eps, n, work, client):
    """(jobs/s, client CPU s per job, the results) of n jobs through one client over eps."""
    jobs = [job(i, work) for i in range(n)]
    conc = 4 * len(eps)
    c0, t0 = time.process_time(), time.monotonic()
    if client == "sync":
        with surgebox.Client(endpoints=eps) as c:
            out = list(c.run_many(jobs, concurrency=conc))
    else:
        async def main():
            async with surgebox.AsyncClient(endpoints=eps) as c:
                return [r async for r in c.run_many(jobs, concurrency=conc)]
        out = asyncio.run(main())
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    bad = [r for r in out if r.status != "ok" or r.stdout != b"%d\n" % r["id"]]
    if bad or len(out) != n:
        raise SystemExit("fleet_throughput: %d of %d jobs failed (first: %s)" % (len(bad), n, bad[:1]))
    return n / wall, cpu / n, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=120, help="jobs per configuration and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=int, default=20000, help="shell loop turns per job")
    ap.add_argument("--client", choices=("async", "sync"), default="async")
    a = ap.parse_args()
    cpus = fc.cpus_of_machine()
    if len(cpus) < 2:
        raise SystemExit("fleet_throughput: needs 2 CPUs, this process may use %s" % cpus)
    da, db = fc.start({cpus[0]}), fc.start({cpus[1]})
    try:
        A, B = da.socket, db.socket
        run([A, B], 8, a.work, a.client)  # warm-up: caches, first sandboxes
        ratios, rows = [], []
        for r in range(a.rounds):
            ta, ca, _ = run([A], a.jobs, a.work, a.client)
            tb, cb, _ = run([B], a.jobs, a.work, a.client)
            tab, cab, out = run([A, B], 2 * a.jobs, a.work, a.client)
            split = {d: sum(1 for x in out if x["daemon"] == d) for d in (A, B)}
            ratios.append(tab / (ta + tb))
            rows.append({"round": r, "A_jobs_s": round(ta, 2), "B_jobs_s": round(tb, 2), "AB_jobs_s": round(tab, 2),
                         "ratio": round(tab / (ta + tb), 3), "client_cpu_ms_per_job": [round(1e3 * x, 3) for x in (ca, cb, cab)],
                         "AB_split": list(split.values())})
            print(json.dumps(rows[-1]), flush=True)
        req = len(_conn.encode(build_exec(job(0, a.work), "f0123456789abcdef")))
        ans = len(_conn.encode({k: v for k, v in out[0].items() if k not in ("daemon", "attempts")}))
        print(json.dumps({"bench": "fleet_throughput", "client": a.client, "work": a.work, "rounds": a.rounds,
                          "one_daemon_jobs_s": round(statistics.median([(x["A_jobs_s"] + x["B_jobs_s"]) / 2 for x in rows]), 2),
                          "two_daemons_jobs_s": round(statistics.median([x["AB_jobs_s"] for x in rows]), 2),
                          "ratio_two_vs_sum_of_one": round(statistics.median(ratios), 3), "target": ">= 0.9",
                          "request_bytes": req, "answer_bytes": ans}))
    finally:
        da.stop()
        db.stop()


if __name__ == "__main__":
    main()
