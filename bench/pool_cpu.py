#!/usr/bin/env python3
"""CPU per trivial job with and without the pool (issue 16), as ratios.

Run inside the throw-away wrapper, as root:
  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/pool_cpu.py --bin BUILD/bin [--jobs-per-round 200] [--rounds 5] [--workers 1] [--out F]

Starts one surgeboxd per mode (--pool 8 and --pool 0, private socket, state
and cache directories, no toolchains) and, round after round, interleaved,
sends each the same batch of `/bin/true` jobs (`--workers` connections, one
request in flight each). Per batch it reads the CPU the daemon's process
tree used (utime+stime of the daemon and of every child it reaped: the
sandbox inits, and through them the programs; the teardown thread is the
daemon's own), the wall time, and the jobs' own figures. On a loaded
machine wall time says little; CPU per job is what bounds throughput on
2 cores. Prints a JSON document; nothing here is a pass/fail test.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid):
    """utime+stime+cutime+cstime of pid, seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


class Daemon:
    def __init__(self, bin_dir, pool, workers):
        self.dir = tempfile.mkdtemp(prefix="sb-poolcpu-")
        self.sock = os.path.join(self.dir, "s.sock")
        notc = os.path.join(self.dir, "no-toolchains")
        os.mkdir(notc)
        self.proc = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", self.sock,
                                      "--state-dir", os.path.join(self.dir, "state"),
                                      "--cache-dir", os.path.join(self.dir, "cache"), "--toolchains", notc,
                                      "--jobs", str(workers), "--pool", str(pool), "--quiet", "--no-cache"],
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while not os.path.exists(self.sock):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("surgeboxd did not start")
            time.sleep(0.05)
        time.sleep(0.2)
        self.conns = []
        for _ in range(workers):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.sock)
            self.conns.append([s, b""])

    def stop(self):
        for s, _ in self.conns:
            s.close()
        self.proc.terminate()
        self.proc.wait(60)
        shutil.rmtree(self.dir, ignore_errors=True)


def recv(c):
    while b"\n" not in c[1]:
        chunk = c[0].recv(1 << 16)
        if not chunk:
            raise EOFError
        c[1] += chunk
    line, _, c[1] = c[1].partition(b"\n")
    return json.loads(line)


def batch(d, n):
    req = lambda i: (json.dumps({"id": f"j{i}", "type": "exec", "files": [],  # noqa: E731
                                 "steps": [{"argv": ["/bin/true"]}]}) + "\n").encode()
    cpu0, t0 = tree_cpu(d.proc.pid), time.monotonic()
    sent = done = 0
    setup, bad = [], 0
    inflight = []
    for c in d.conns:
        if sent < n:
            c[0].sendall(req(sent))
            sent += 1
            inflight.append(c)
    while inflight:
        c = inflight.pop(0)
        r = recv(c)
        done += 1
        st = (r.get("steps") or [{}])[0]
        if r.get("status") != "ok":
            bad += 1
        if st.get("setup_time_s") is not None:
            setup.append(st["setup_time_s"])
        if sent < n:
            c[0].sendall(req(sent))
            sent += 1
            inflight.append(c)
    wall = time.monotonic() - t0
    time.sleep(0.3)  # let the teardown thread catch up: its CPU belongs to these jobs
    cpu = tree_cpu(d.proc.pid) - cpu0
    return {"cpu_ms_per_job": 1000 * cpu / n, "wall_ms_per_job": 1000 * wall / n,
            "setup_ms_median": 1000 * statistics.median(setup) if setup else None, "failed": bad}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--jobs-per-round", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    a = ap.parse_args()
    if os.getpid() != 1:
        sys.exit("pool_cpu.py: run inside the unshare wrapper (pid 1 of its own pid namespace)")
    modes = {"pool": 8, "pool0": 0}
    out = {"benchmark": "pool_cpu", "workers": a.workers, "jobs_per_round": a.jobs_per_round,
           "rounds": a.rounds, "load_start": load(), "rows": {m: [] for m in modes}}
    daemons = {m: Daemon(a.bin, p, a.workers) for m, p in modes.items()}
    try:
        for m, d in daemons.items():
            batch(d, 20)  # warm-up: templates built, caches filled
        for rnd in range(a.rounds):
            order = list(modes) if rnd % 2 == 0 else list(reversed(modes))
            for m in order:
                out["rows"][m].append(batch(daemons[m], a.jobs_per_round))
            print(f"pool_cpu: round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
    finally:
        for d in daemons.values():
            d.stop()
    out["load_end"] = load()
    ratios = [p["cpu_ms_per_job"] / q["cpu_ms_per_job"] for p, q in zip(out["rows"]["pool"], out["rows"]["pool0"])]
    wr = [p["wall_ms_per_job"] / q["wall_ms_per_job"] for p, q in zip(out["rows"]["pool"], out["rows"]["pool0"])]
    out["summary"] = {
        m: {k: statistics.median(r[k] for r in rows) for k in ("cpu_ms_per_job", "wall_ms_per_job")}
        for m, rows in out["rows"].items()}
    out["summary"]["pool_vs_pool0_cpu_median"] = statistics.median(ratios)
    out["summary"]["pool_vs_pool0_cpu_range"] = [min(ratios), max(ratios)]
    out["summary"]["pool_vs_pool0_wall_median"] = statistics.median(wr)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    else:
        json.dump(out, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
