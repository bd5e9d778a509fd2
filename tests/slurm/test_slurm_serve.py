#!/usr/bin/env python3
"""deploy/slurm/serve.sbatch for real (issue 39): on a single-node Slurm
cluster on this machine (test_slurm.py's), the recipe starts one surgeboxd
per allocated node with --http and a generated token and writes the
endpoint list; surgebox.Fleet reads that file and runs jobs on it; a
request without the token is refused; cancelling the allocation stops the
daemon and removes the list. HTTP on loopback only (SURGEBOX_HTTP_ADDR).

  test_slurm_serve.py SOURCE_DIR BIN_DIR

Runs inside `unshare --mount --propagation private --pid --fork --mount-proc
--uts`, as test_slurm.py.
"""
import http.client
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "clients", "python"))
import test_slurm  # noqa: E402  cluster(), its processes
from shardcheck import SKIP, check, failures, finish  # noqa: E402  (test_slurm put ../surge on the path)
import surgebox  # noqa: E402
from surgebox.fleet import parse_endpoints  # noqa: E402


def surgeboxd_pids(port):
    """surgeboxd processes of this pid namespace serving on port"""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"surgeboxd") and f"127.0.0.1:{port}".encode() in argv:
            found.append(int(pid))
    return found


def answers(port, headers):
    """the HTTP status of GET /v1/ping, or None when nothing listens"""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/v1/ping", headers=headers)
        st = c.getresponse().status
        c.close()
        return st
    except OSError:
        return None


def main():
    src, bin_dir = sys.argv[1:3]
    if os.geteuid() != 0:
        print("SKIPPED: a Slurm cluster on localhost needs root")
        return SKIP
    missing = [b for b in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "scancel")
               if not shutil.which(b)]
    if missing:
        print(f"SKIPPED: not installed: {' '.join(missing)} (Debian's slurm-wlm and munge)")
        return SKIP
    if socket.gethostname() != "localhost":
        subprocess.run(["hostname", "localhost"], check=True)  # our own UTS namespace
    t = tempfile.mkdtemp(prefix="surgebox-serve-")
    env = None
    port = test_slurm.free_port()
    t0 = time.monotonic()
    try:
        env = test_slurm.cluster(t)
        check(env is not None, "the single-node cluster came up")
        if env is None:
            return 1
        fleet = f"{t}/fleet"
        env.update(SURGEBOX_FLEET_DIR=fleet, SURGEBOX_BIN=bin_dir, SURGEBOX_HTTP_ADDR="127.0.0.1",
                   SURGEBOX_HTTP_PORT=str(port), SURGEBOX_DEPLOY=f"{src}/deploy/slurm",
                   SURGEBOX_DAEMON_ARGS="--toolchains /nonexistent-surgebox-toolchains")
        p = subprocess.run(["sbatch", "--parsable", "--nodes=1", "--output", f"{t}/serve-%j.out",
                            f"{src}/deploy/slurm/serve.sbatch"], capture_output=True, text=True, env=env, cwd=t)
        check(p.returncode == 0, f"sbatch serve.sbatch: {p.returncode} {p.stderr}")
        if p.returncode:
            return 1
        job = p.stdout.strip().split(";")[0]
        endpoints = f"{fleet}/endpoints"
        test_slurm.wait_for("the endpoint list", lambda: os.path.exists(endpoints), 300)
        check(os.path.exists(endpoints), "serve.sbatch wrote the endpoint list")
        if not os.path.exists(endpoints):
            return 1
        lines = open(endpoints).read().splitlines()
        want = f"http://127.0.0.1:{port} token-file={fleet}/token"
        check(lines == [want], f"one endpoint per node: {lines}, expected [{want!r}]")
        tok = open(f"{fleet}/token").read().strip()
        mode = stat.S_IMODE(os.stat(f"{fleet}/token").st_mode)
        check(len(tok) >= 16 and mode == 0o600, f"a generated token of {len(tok)} characters, mode {mode:o}")
        check(answers(port, {}) == 401, "a request without the token is refused (401)")
        # the file is what a client reads: surgebox.Fleet(path), and SURGEBOX_ENDPOINTS=path
        eps = parse_endpoints(endpoints)
        check([(e.kind, e.name, e.token) for e in eps] == [("http", f"http://127.0.0.1:{port}", tok)],
              f"parse_endpoints reads the file: {eps}")
        with surgebox.Fleet(endpoints, probe_interval=0.5) as f:
            results = list(f.run_many([{"id": i, "steps": [["/bin/echo", "job%d" % i]]} for i in range(6)],
                                      concurrency=3))
        got = sorted((r["id"], r.status, r.stdout, r["daemon"]) for r in results)
        check(got == [(i, "ok", b"job%d\n" % i, f"http://127.0.0.1:{port}") for i in range(6)],
              f"six jobs answered once each by the node's daemon: {got}")
        pids = surgeboxd_pids(port)
        check(len(pids) == 1, f"one surgeboxd for the one node: {pids}")
        # the allocation ends: the daemon stops and the list goes
        subprocess.run(["scancel", job], env=env, check=False)
        test_slurm.wait_for("the daemon's end", lambda: not surgeboxd_pids(port) and not os.path.exists(endpoints), 120)
        check(not surgeboxd_pids(port), f"the daemon stopped with the allocation: {surgeboxd_pids(port)}")
        check(not os.path.exists(endpoints), "the endpoint list removed with the allocation")
        check(answers(port, {"Authorization": "Bearer " + tok}) is None, "nothing listens on the port any more")
        print(f"slurm serve test: {time.monotonic() - t0:.0f} s wall")
    finally:
        if env:
            subprocess.run(["scancel", "--full", "--partition", "test"], env=env, capture_output=True)
        for p in reversed(test_slurm.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if failures:
            for log in ("slurmctld.log", "slurmd.log"):
                if os.path.exists(f"{t}/{log}"):
                    print(f"---- {log}\n" + open(f"{t}/{log}").read()[-3000:])
            for root, _, files in os.walk(t):
                for f in files:
                    if f.endswith(".out") or f.endswith(".log") and "fleet" in root:
                        print(f"---- {f}\n" + open(os.path.join(root, f)).read()[-2000:])
    return finish(t)


if __name__ == "__main__":
    sys.exit(main())
