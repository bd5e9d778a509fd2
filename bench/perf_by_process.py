#!/usr/bin/env python3
"""CPU per trivial job by process name (daemon, sandbox init, program) for
one or more daemons (issue 16): perf record -a while N /bin/true jobs run
back to back on one connection of a --jobs 1 daemon; samples x period per
comm / N. Each CONFIG is LABEL=BIN_DIR[:ARG,ARG...] (extra surgeboxd
arguments), so two builds (before/after a change) or two modes of one build
(--pool 8 / --pool 0) compare in one run; repeat a label to alternate.

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/perf_by_process.py N OUT.json CONFIG...
  e.g. ... 600 out.json before=/tmp/old/build/bin after=build/bin:--pool,8

Needs perf and root. Prints a line per run; writes every run; asserts
nothing. The init is counted under both names it carries (the clone is
"surgeboxd" until it renames itself, the vfork-started program
"surgebox-init" until its exec). Since issue 22 the inits are cloned by
the spawner ("surgebox-spawn") and named surgebox-init from their first
instruction; bench/job_cpu.py gives the same split from /proc."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

FREQ = 4999


def run(label, bin_dir, extra, n):
    top = tempfile.mkdtemp(prefix="perfjobs-")
    sock = os.path.join(top, "s.sock")
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--state-dir", top + "/st",
                          "--cache-dir", top + "/c", "--toolchains", top, "--no-cache", "--jobs", "1"] + extra,
                         stderr=subprocess.DEVNULL)
    while not os.path.exists(sock):
        time.sleep(0.05)
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    f = s.makefile("rb")

    def one():
        s.sendall(b'{"id":1,"type":"exec","files":[],"steps":[{"argv":["/bin/true"]}]}\n')
        r = json.loads(f.readline())
        assert r.get("status") == "ok", r

    for _ in range(50):  # warm: templates, slot cgroups
        one()
    data = os.path.join(top, "perf.data")
    p = subprocess.Popen(["perf", "record", "-a", "-F", str(FREQ), "-o", data, "-q", "--", "sleep", "3600"],
                         stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    t0 = time.time()
    for _ in range(n):
        one()
    wall = time.time() - t0
    p.send_signal(2)
    p.wait()
    d.terminate()
    d.wait()
    rep = subprocess.run(["perf", "report", "-i", data, "--sort", "comm", "--stdio", "-F", "sample,comm", "-q"],
                         capture_output=True, text=True).stdout
    per = {}
    for line in rep.splitlines():
        m = re.match(r"\s*(\d+)\s+(.+?)\s*$", line)
        if m:
            comm = m.group(2)  # comm is 15 bytes
            if comm.startswith("surgebox-") and comm != "surgebox-spawn":  # the spawner (issue 22) apart
                comm = "surgebox-init"
            per[comm] = per.get(comm, 0.0) + int(m.group(1)) / FREQ / n * 1000
    return {"label": label, "bin": bin_dir, "args": extra, "wall_ms_per_job": wall / n * 1000,
            "cpu_ms_per_job_by_comm": per}


def main():
    n, out, configs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    runs = []
    for c in configs:
        label, rest = c.split("=", 1)
        bin_dir, _, args = rest.partition(":")
        r = run(label, bin_dir, args.split(",") if args else [], n)
        runs.append(r)
        per = r["cpu_ms_per_job_by_comm"]
        mine = sum(per.get(k, 0.0) for k in ("surgeboxd", "surgebox-spawn", "surgebox-init", "true"))
        print("%-10s wall/job %.2f ms  daemon %.3f  spawner %.3f  init %.3f  program %.3f  sum %.3f ms" %
              (label, r["wall_ms_per_job"], per.get("surgeboxd", 0), per.get("surgebox-spawn", 0),
               per.get("surgebox-init", 0), per.get("true", 0), mine))
    json.dump(runs, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
