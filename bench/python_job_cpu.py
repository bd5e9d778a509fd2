#!/usr/bin/env python3
"""CPU per Python job by process, cold and --warm (issue 25), from /proc as
bench/job_cpu.py (whose helpers it uses): a surgeboxd (--jobs 2, --cgroup
v1, installed toolchains, no cache), 20 warm-up jobs per connection, then
N jobs per connection on J connections at once (a CRUXEval-sized program:
a function and an assert). Per job: the loop thread (schedstat), the
daemon's other threads, the spawner, the zygotes (the spawner's long-lived
children, with the warm programs they reaped) and the reaped inits with
their cold programs (and any zygote that ended, with its children). Asserts nothing.

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/python_job_cpu.py BIN_DIR N J"""
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import job_cpu as jc
bin_dir, n, jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
top = tempfile.mkdtemp(prefix="pycpu-")
sock = os.path.join(top, "s.sock")
d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--state-dir", top + "/st", "--cache-dir", top + "/c",
                      "--no-cache", "--jobs", "2", "--quiet", "--cgroup", "v1"], stderr=subprocess.DEVNULL)
while not os.path.exists(sock): time.sleep(0.05)
time.sleep(1)
prog = "def f(x):\n    return [c for c in x]\nassert f('abc') == ['a','b','c']\n"
def req(i, warm):
    return {"id": i, "type": "exec", "steps": [{"argv": ["/usr/bin/python3", "main.py"]}], "files": [{"path": "main.py", "content": prog}], "warm": warm}
def threads_cpu(pid):
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/stat") as f:
            x = f.read().rsplit(")", 1)[1].split()
        out[t] = (int(x[11]) + int(x[12])) / jc.TICK
    return out
def desc_cpu(root):
    # the spawner's live children: its zygotes, with the warm programs they reaped (inits are reaped before we read)
    tot = 0.0
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            st = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError: continue
        if int(st[1]) == root:
            tot += sum(int(v) for v in st[11:15]) / jc.TICK  # its own and its reaped children's (warm programs)
    return tot
for warm in (False, True):
    cs = [jc.Conn(sock) for _ in range(jobs)]
    for c in cs:
        for i in range(20): r = c.call(req(i, warm)); assert r["status"] == "ok", r
    sp = jc.spawner_pid(d.pid)
    s0, l0, p0, t0, z0 = jc.stat(d.pid), jc.loop_ns(d.pid), jc.stat(sp), threads_cpu(d.pid), desc_cpu(sp)
    w0 = time.time()
    def worker(c):
        for i in range(n):
            r = c.call(req(i, warm)); assert r["status"] == "ok", r
    ths = [threading.Thread(target=worker, args=(c,)) for c in cs]
    [t.start() for t in ths]; [t.join() for t in ths]
    wall = time.time() - w0
    s1, l1, p1, t1, z1 = jc.stat(d.pid), jc.loop_ns(d.pid), jc.stat(sp), threads_cpu(d.pid), desc_cpu(sp)
    N = n * jobs
    ms = lambda v: v / N * 1000
    other = sum(t1[t] - t0.get(t, 0) for t in t1 if t != str(d.pid))
    print(f"{'warm' if warm else 'cold'}: {N} jobs, {jobs} at a time: wall {wall/N*1000:.2f} ms/job; CPU ms/job: loop thread {(l1-l0)/1e6/N:.3f}, "
          f"other daemon threads {ms(other):.3f}, spawner {ms(p1['self']-p0['self']):.3f}, zygotes {ms(z1-z0):.3f}, "
          f"inits+programs (reaped) {ms(s1['children']-s0['children']) + ms(p1['children']-p0['children']):.3f}, "
          f"whole daemon {ms(s1['self']-s0['self']):.3f}", flush=True)
d.terminate(); d.wait()
