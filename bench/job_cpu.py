#!/usr/bin/env python3
"""CPU per trivial job by process (issue 22: the spawner), alone and beside a
big request, for one or more builds, as ratios against the first.

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/job_cpu.py [--jobs N] [--hold MIB] [--rounds R] LABEL=BIN_DIR[:ARG,ARG...] ...
  e.g. ... before=/tmp/old/bin after=build/bin

Per build: a surgeboxd (--jobs 2, no toolchains, no cache, --cgroup v1
unless given), 50 warm-up jobs, then N /bin/true jobs back to back on one
connection, twice: alone, and beside a held request line of --hold MiB
while another job sleeps (freed heap stays mapped while a job runs) and
after a 16 MiB non-UTF-8 output was answered. Read from /proc, not perf
(the machine is shared: other surgeboxd processes do not count): the
daemon's loop thread (schedstat, ns), the whole daemon (utime+stime), the
spawner (its utime+stime; the old code has none) and the sandbox inits
with their programs (the daemon's cutime+cstime: with CLONE_PARENT the inits
are still the daemon's children, as before). Rounds alternate the builds.
Prints a line per run and the medians' ratios against the first label;
asserts nothing."""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        x = f.read().rsplit(")", 1)[1].split()
    return {"self": (int(x[11]) + int(x[12])) / TICK, "children": (int(x[13]) + int(x[14])) / TICK}


def loop_ns(pid):
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        return int(f.read().split()[0])


class Conn:
    def __init__(self, sock):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(sock)
        self.f = self.s.makefile("rb")

    def call(self, obj):
        self.s.sendall(json.dumps(obj).encode() + b"\n")
        return json.loads(self.f.readline())


def req(id_, argv, **limits):
    step = {"argv": argv}
    if limits:
        step["limits"] = limits
    return {"id": id_, "type": "exec", "files": [], "steps": [step]}


def spawner_pid(d):
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/status") as f:
                    st = dict(line.split(":\t", 1) for line in f if ":\t" in line)
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if st.get("PPid", "").strip() == str(d) and cmd == b"surgebox-spawner\0":
                return int(p)
    return None


def batch(c, n, d, sp):
    s0, l0 = stat(d), loop_ns(d)
    p0 = stat(sp)["self"] if sp else 0.0
    t0 = time.time()
    rss = []
    for i in range(n):
        r = c.call(req(i, ["/bin/true"]))
        assert r.get("status") == "ok", r
        rss.append(r["steps"][0].get("max_rss_kb") or 0)
    wall = time.time() - t0
    s1, l1 = stat(d), loop_ns(d)
    p1 = stat(sp)["self"] if sp else 0.0
    ms = lambda v: v / n * 1000  # noqa: E731
    return {"wall": ms(wall), "loop": (l1 - l0) / 1e6 / n, "daemon": ms(s1["self"] - s0["self"]),
            "spawner": ms(p1 - p0), "inits": ms(s1["children"] - s0["children"]), "max_rss_kb": max(rss)}


def run(label, bin_dir, extra, n, hold):
    top = tempfile.mkdtemp(prefix="jobcpu-")
    sock = os.path.join(top, "s.sock")
    args = extra if any(a.startswith("--cgroup") for a in extra) else extra + ["--cgroup", "v1"]
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--state-dir", top + "/st",
                          "--cache-dir", top + "/c", "--toolchains", top, "--no-cache", "--jobs", "2",
                          "--max-line", str(max(hold + 16, 64) << 20)] + args, stderr=subprocess.DEVNULL)
    while not os.path.exists(sock):
        time.sleep(0.05)
    time.sleep(0.3)
    c = Conn(sock)
    for i in range(50):
        c.call(req(i, ["/bin/true"]))
    sp = spawner_pid(d.pid)
    out = {"label": label, "alone": batch(c, n, d.pid, sp)}
    sleeper = Conn(sock)
    sleeper.s.sendall(json.dumps(req("sleep", ["sleep", "600"], time_s=900)).encode() + b"\n")
    Conn(sock).call(req("big", ["sh", "-c", "head -c 16777216 /dev/zero | tr '\\0' '\\377'"], output_bytes=32 << 20))
    holder = socket.socket(socket.AF_UNIX)
    holder.connect(sock)
    holder.sendall(b'{"id":"held","type":"exec","files":[{"path":"x","content_b64":"' + b"A" * (hold << 20))
    time.sleep(1.0)
    out["beside"] = batch(c, n, d.pid, sp)
    holder.close()
    sleeper.s.close()
    d.terminate()
    d.wait()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=500)
    ap.add_argument("--hold", type=int, default=112)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    runs = {}
    keys = ("wall", "loop", "daemon", "spawner", "inits", "max_rss_kb")
    for rnd in range(a.rounds):
        for cfg in a.configs:
            label, rest = cfg.split("=", 1)
            bin_dir, _, extra = rest.partition(":")
            r = run(label, bin_dir, extra.split(",") if extra else [], a.jobs, a.hold)
            runs.setdefault(label, []).append(r)
            for ph in ("alone", "beside"):
                x = r[ph]
                print(f"round {rnd} {label:8} {ph:6}  wall {x['wall']:.2f}  loop thread {x['loop']:.3f}  daemon "
                      f"{x['daemon']:.3f}  spawner {x['spawner']:.3f}  inits+programs {x['inits']:.3f} ms/job  "
                      f"max_rss_kb {x['max_rss_kb']}", flush=True)
    med = {lab: {ph: {k: statistics.median(r[ph][k] for r in rs) for k in keys} for ph in ("alone", "beside")}
           for lab, rs in runs.items()}
    base = a.configs[0].split("=", 1)[0]
    print("\nmedians (ms per job) and ratios against", base, "alone:")
    for lab, m in med.items():
        for ph in ("alone", "beside"):
            x, b = m[ph], med[base]["alone"]
            tot, btot = x["daemon"] + x["spawner"] + x["inits"], b["daemon"] + b["spawner"] + b["inits"]
            ratio = lambda v, w: (v / w) if w else float("nan")  # noqa: E731
            print(f"{lab:8} {ph:6}  loop {x['loop']:.3f} ({ratio(x['loop'], b['loop']):.2f}x)  daemon {x['daemon']:.3f}"
                  f"  spawner {x['spawner']:.3f}  inits+programs {x['inits']:.3f} "
                  f"({ratio(x['inits'], b['inits']):.2f}x)  all {tot:.3f} ({ratio(tot, btot):.2f}x)  "
                  f"max_rss_kb {x['max_rss_kb']:.0f}")
    json.dump(med, sys.stderr)


if __name__ == "__main__":
    main()
