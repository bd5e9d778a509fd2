#!/usr/bin/env python3
"""The Python client's CPU per job through a fleet (issue 39 targets <= 0.2 ms).

time.process_time() of this process over N trivial jobs (`true`, a raw
step), 16 in flight, through: a single-daemon Client and AsyncClient
(references), Client(endpoints=) (threaded Fleet) and AsyncClient(endpoints=)
(native asyncio fleet) over two private daemons (--jobs 2 each). Then the
parts measured alone, each per job: one json encode of the request and one
decode of a real answer, building the Result, one Unix-socket round trip of
those bytes (a forked child answers), and one asyncio task with its future.
`--profile MODE` prints cProfile's top functions for one mode. The C
fleet in the same run: `surgebox batch --endpoints A,B --concurrency 16` over
the same jobs, its user+system CPU from wait4 (the whole process: start,
probes, reading the jobs, writing the answers), per job ("c_fleet_batch"),
beside the same batch on one daemon (`--socket A`, "c_single_batch": the
pump's own cost, which the fleet adds to); the fleet's start alone (2 jobs)
is given too. Prints figures; asserts nothing.

    SURGEBOX_BIN_DIR=build/bin unshare --mount --propagation private --pid \\
        --fork --mount-proc python3 bench/fleet_client_cpu.py [N] [--profile fleet_async]
"""
import argparse
import asyncio
import cProfile
import json
import os
import pstats
import socket
import tempfile
import time

import fleet_common as fc
import surgebox
from surgebox import _conn
from surgebox._jobs import Result, build_exec

CONC = 16


def job(i):
    return {"id": i, "steps": [{"argv": ["true"]}]}


def single_sync(socks, n):
    with surgebox.Client(socks[0], autostart=False) as c:
        return list(c.run_many((job(i) for i in range(n)), concurrency=CONC))


def single_async(socks, n):
    async def main():
        async with surgebox.AsyncClient(socks[0], autostart=False) as c:
            return [r async for r in c.run_many((job(i) for i in range(n)), concurrency=CONC)]
    return asyncio.run(main())


def fleet_sync(socks, n):
    with surgebox.Client(endpoints=socks) as c:
        return list(c.run_many((job(i) for i in range(n)), concurrency=CONC))


def fleet_async(socks, n):
    async def main():
        async with surgebox.AsyncClient(endpoints=socks) as c:
            return [r async for r in c.run_many((job(i) for i in range(n)), concurrency=CONC)]
    return asyncio.run(main())


MODES = {"single_sync": single_sync, "single_async": single_async, "fleet_sync": fleet_sync,
         "fleet_async": fleet_async}


def surgebox_cli():
    return os.path.join(os.path.dirname(fc.surgeboxd()), "surgebox")


def c_batch(target, n):
    """(user ms, system ms) of one `surgebox batch` over n trivial jobs (target: ["--endpoints",
    A,B] or ["--socket", A]), and its answers (wait4's rusage of the process; it forks nothing)."""
    with tempfile.TemporaryDirectory(prefix="sbcpu-") as tmp:
        jobs = os.path.join(tmp, "jobs.jsonl")
        with open(jobs, "w") as f:
            for i in range(n):
                f.write(json.dumps(job(i)) + "\n")
        return fc.batch_rusage(surgebox_cli(), jobs, target, CONC)


def per_job_ms(f, n, *args):
    c0 = time.process_time()
    out = f(*args)
    return 1e3 * (time.process_time() - c0) / n, out


def per_job_user_sys_ms(f, n, *args):
    """(user ms, system ms) per job, and f's value: the kernel's share is the socket calls and wake-ups."""
    t0 = os.times()
    out = f(*args)
    t1 = os.times()
    return (1e3 * (t1.user - t0.user) / n, 1e3 * (t1.system - t0.system) / n), out


def parts(answer, reps=20000):
    """CPU ms per job of each part of the client's path, measured alone."""
    req = build_exec(job(0), "f0123456789abcdef")
    line = _conn.encode(answer)
    out = {}
    out["json_encode_request"], _ = per_job_ms(lambda: [_conn.encode(req) for _ in range(reps)], reps)
    out["json_decode_answer"], _ = per_job_ms(lambda: [json.loads(line) for _ in range(reps)], reps)
    decoded = json.loads(line)
    out["build_exec_and_Result"], _ = per_job_ms(
        lambda: [(build_exec(job(0), "f1"), Result(decoded)) for _ in range(reps)], reps)
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the other end: a line in, the answer out (its CPU is not ours)
        a.close()
        f = b.makefile("rb")
        for _ in f:
            b.sendall(line)
        os._exit(0)
    b.close()
    data = _conn.encode(req)
    rt = reps // 4

    def round_trips():
        buf = b""
        for _ in range(rt):
            a.sendall(data)
            while b"\n" not in buf:
                buf += a.recv(1 << 16)
            _, _, buf = buf.partition(b"\n")
    out["unix_round_trip"], _ = per_job_ms(round_trips, rt)
    a.close()
    os.waitpid(pid, 0)

    async def tasks():
        loop = asyncio.get_running_loop()

        async def one():
            fut = loop.create_future()
            loop.call_soon(fut.set_result, None)
            await fut
        for _ in range(reps // CONC):
            await asyncio.gather(*(one() for _ in range(CONC)))
    out["asyncio_task_and_future"], _ = per_job_ms(lambda: asyncio.run(tasks()), reps)
    return {k: round(v, 4) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=2000)
    ap.add_argument("--profile", choices=sorted(MODES))
    a = ap.parse_args()
    daemons = [fc.start(jobs=2), fc.start(jobs=2)]
    try:
        socks = [d.socket for d in daemons]
        for f in MODES.values():  # warm-up
            f(socks, 32)
        if a.profile:
            pr = cProfile.Profile()
            pr.enable()
            MODES[a.profile](socks, a.n)
            pr.disable()
            pstats.Stats(pr).sort_stats("tottime").print_stats(25)
            return
        figures, split, answer = {}, {}, None
        for name, f in MODES.items():
            (user, system), out = per_job_user_sys_ms(f, a.n, socks, a.n)
            ms = user + system
            split[name] = {"user": round(user, 3), "system": round(system, 3)}
            bad = [r for r in out if r.status != "ok"]
            if bad or len(out) != a.n:
                raise SystemExit("fleet_client_cpu: %s: %d of %d jobs not ok (%s)" % (name, len(bad), a.n, bad[:1]))
            figures[name] = round(ms, 3)
            answer = {k: v for k, v in out[0].items() if k not in ("daemon", "attempts")}
        for name, target in (("c_single_batch", ["--socket", socks[0]]),
                             ("c_fleet_batch", ["--endpoints", ",".join(socks)])):
            (user, system), out = c_batch(target, a.n)
            bad = [r for r in out if r.get("status") != "ok"]
            if bad or len(out) != a.n:
                raise SystemExit("fleet_client_cpu: %s: %d of %d jobs not ok (%s)" % (name, len(bad), a.n, bad[:1]))
            figures[name] = round((user + system) / a.n, 4)
            split[name] = {"user": round(user / a.n, 4), "system": round(system / a.n, 4)}
        (user, system), _ = c_batch(["--endpoints", ",".join(socks)], 2)
        c_start_ms = round(user + system, 2)
    finally:
        for d in daemons:
            d.stop()
    alone = parts(answer)
    print(json.dumps({"bench": "fleet_client_cpu", "jobs": a.n, "in_flight": CONC,
                      "client_cpu_ms_per_job": figures, "user_system_ms_per_job": split,
                      "target_ms": 0.2,
                      "c_fleet_batch_start_ms": c_start_ms,
                      "fleet_async_vs_single_async": round(figures["fleet_async"] / figures["single_async"], 2),
                      "fleet_sync_vs_single_sync": round(figures["fleet_sync"] / figures["single_sync"], 2),
                      "parts_alone_ms_per_job": alone,
                      "floor_ms_per_job": round(sum(alone.values()), 4)}, indent=1))


if __name__ == "__main__":
    main()
