#!/usr/bin/env python3
"""CPU per trivial job by process name (daemon, sandbox init, program), pool on
and --pool 0 (issue 16): perf record -a while N /bin/true jobs run back to
back on one connection of a --jobs 1 daemon; samples x period per comm / N.

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/perf_by_process.py BUILD/bin N OUT.json

Needs perf and root. Prints a table; asserts nothing."""
import json, os, socket, subprocess, sys, tempfile, time, collections, re
BIN = sys.argv[1]; N = int(sys.argv[2]); OUT = sys.argv[3]
res = {}
for pool in ("8", "0"):
    top = tempfile.mkdtemp(prefix="perfjobs-")
    sock = os.path.join(top, "s.sock")
    d = subprocess.Popen([os.path.join(BIN, "surgeboxd"), "--socket", sock, "--state-dir", top + "/st",
                          "--cache-dir", top + "/c", "--toolchains", top, "--no-cache", "--jobs", "1",
                          "--pool", pool], stderr=subprocess.DEVNULL)
    while not os.path.exists(sock): time.sleep(0.05)
    s = socket.socket(socket.AF_UNIX); s.connect(sock); f = s.makefile("rb")
    def one(i):
        s.sendall((json.dumps({"id": i, "type": "exec", "files": [], "steps": [{"argv": ["/bin/true"]}]}) + "\n").encode())
        r = json.loads(f.readline()); assert r.get("status") == "ok", r
    for i in range(50): one(i)  # warm: templates, slot cgroups
    data = os.path.join(top, "perf.data")
    p = subprocess.Popen(["perf", "record", "-a", "-F", "4999", "-o", data, "-q", "--", "sleep", "3600"],
                         stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    t0 = time.time()
    for i in range(N): one(1000 + i)
    wall = time.time() - t0
    p.send_signal(2); p.wait()
    rep = subprocess.run(["perf", "report", "-i", data, "--sort", "comm", "--stdio", "-F", "sample,comm", "-q"],
                         capture_output=True, text=True).stdout
    per = {}
    for line in rep.splitlines():
        m = re.match(r"\s*(\d+)\s+(.+?)\s*$", line)
        if m: per[m.group(2)] = int(m.group(1)) / 4999 / N * 1000  # ms per job
    d.terminate(); d.wait()
    res["pool" + pool] = {"wall_ms_per_job": wall / N * 1000, "cpu_ms_per_job_by_comm": per}
json.dump(res, open(OUT, "w"), indent=1)
for k, v in res.items():
    tot = sum(c for n, c in v["cpu_ms_per_job_by_comm"].items() if n not in ("swapper",))
    print(k, "wall/job %.2f ms" % v["wall_ms_per_job"], "cpu/job (no idle) %.2f ms" % tot)
    for n, c in sorted(v["cpu_ms_per_job_by_comm"].items(), key=lambda x: -x[1])[:12]:
        print("   %-24s %.3f ms" % (n, c))
