#!/usr/bin/env python3
"""The Python client's own CPU per job, on a CPU of its own (issue 39 targets <= 0.2 ms).

fleet_client_cpu.py measures the client beside two real daemons whose
sandboxes run on the same two vCPUs: that figure includes what running
there costs the client (caches and TLBs the sandboxes' set-up flushes, the
neighbour effect of bench/neighbour_cpu.py, a wake-up per answer on a busy
core). A client of a fleet runs on a node of its own. This bench gives the
client's own work: two stand-in daemons (forked processes on the last CPU)
answer each exec request with the bytes of a real trivial job's answer
(taken first from a private surgeboxd, so the client decodes what it would
decode), after --delay seconds each, one line at a time (so every answer is
a read and a wake-up of its own, as from a real daemon), and a status
request with a queue p99 of 0. The client runs on the first CPU alone:
time.process_time() over N jobs, 16 in flight, through Client and
AsyncClient on one stand-in and through Client(endpoints=) and
AsyncClient(endpoints=) on both, rounds interleaved; the median per mode.
Prints figures; asserts nothing. Needs 2 CPUs.

    SURGEBOX_BIN_DIR=build/bin unshare --mount --propagation private --pid \\
        --fork --mount-proc python3 bench/fleet_client_own_cpu.py [N] [--delay 0.002] [--rounds 3]
"""
import argparse
import heapq
import json
import os
import selectors
import socket
import statistics
import tempfile
import time

import fleet_client_cpu as fcc  # the same four clients, jobs and in-flight count
import fleet_common as fc
import surgebox

job, CONC = fcc.job, fcc.CONC


def real_answer():
    """A trivial job's answer from a private surgeboxd, without what the client adds."""
    d = fc.start(jobs=1)
    try:
        with surgebox.Client(d.socket, autostart=False) as c:
            r = next(c.run_many([job(0)]))
    finally:
        d.stop()
    if r.get("status") != "ok":
        raise SystemExit("fleet_client_own_cpu: the real job did not end ok: %.300r" % (r,))
    return {k: v for k, v in r.items() if k not in ("daemon", "attempts")}


def stand_in(path, answer, delay):
    """Serve path until killed: an exec's answer `delay` s after its request, a line at a time."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ)
    bufs, due, seq = {}, [], 0
    while True:
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, _, c, data = heapq.heappop(due)
            try:
                c.sendall(data)
            except OSError:
                pass
        for key, _ in sel.select(max(0.0, due[0][0] - time.monotonic()) if due else None):
            s = key.fileobj
            if s is srv:
                c, _ = srv.accept()
                sel.register(c, selectors.EVENT_READ)
                bufs[c] = b""
                continue
            data = s.recv(1 << 16)
            if not data:
                sel.unregister(s)
                s.close()
                continue
            bufs[s] += data
            while b"\n" in bufs[s]:
                line, _, bufs[s] = bufs[s].partition(b"\n")
                req = json.loads(line)
                if req.get("type") == "exec":
                    seq += 1
                    out = json.dumps(dict(answer, id=req["id"])).encode() + b"\n"
                    heapq.heappush(due, (time.monotonic() + delay, seq, s, out))
                else:
                    s.sendall(json.dumps({"id": req.get("id"), "type": req.get("type"),
                                          "queue_time": {"p99_s": 0.0}}).encode() + b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=2000)
    ap.add_argument("--delay", type=float, default=0.002, help="seconds from a request to its answer")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    cpus = fc.cpus_of_machine()
    if len(cpus) < 2:
        raise SystemExit("fleet_client_own_cpu: needs 2 CPUs (the client's and the stand-ins')")
    answer = real_answer()
    tmp = tempfile.mkdtemp(prefix="sbown-")
    socks = [os.path.join(tmp, "a.sock"), os.path.join(tmp, "b.sock")]
    pids = []
    try:
        for path in socks:
            pid = os.fork()
            if pid == 0:  # a stand-in: our own code, on the last CPU
                try:
                    os.sched_setaffinity(0, {cpus[-1]})
                    stand_in(path, answer, a.delay)
                finally:
                    os._exit(0)
            pids.append(pid)
        os.sched_setaffinity(0, {cpus[0]})
        for path in socks:
            while not os.path.exists(path):
                time.sleep(0.01)
        for f in fcc.MODES.values():  # warm-up
            f(socks, a.n)
        per = {name: [] for name in fcc.MODES}
        for _ in range(a.rounds):
            for name, f in fcc.MODES.items():
                c0 = time.process_time()
                out = f(socks, a.n)
                dt = time.process_time() - c0
                bad = [r for r in out if r.get("status") != "ok"]
                if bad or len(out) != a.n:
                    raise SystemExit("fleet_client_own_cpu: %s: %d of %d jobs not ok (%.200r)" % (name, len(bad), a.n, bad[:1]))
                per[name].append(round(1e3 * dt / a.n, 4))
    finally:
        for pid in pids:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    print(json.dumps({"bench": "fleet_client_own_cpu", "jobs": a.n, "in_flight": CONC, "delay_s": a.delay,
                      "answer_bytes": len(json.dumps(answer)), "client_cpu": cpus[0], "stand_in_cpu": cpus[-1],
                      "client_cpu_ms_per_job_median": {k: statistics.median(v) for k, v in per.items()},
                      "rounds": per, "target_ms": 0.2}, indent=1))


if __name__ == "__main__":
    main()
