#!/usr/bin/env python3
"""The daemon proves itself before it takes work (issue 21): a trivial job
through each mechanism at start; one that fails is turned off and said (log,
`status`, each result's `enforced`), or the daemon refuses to start in one
line. The mechanism is broken from outside by denying one system call
(without_syscall, a seccomp filter inherited by the daemon):

  pool_broken   move_mount (a pooled job's /app): the pool is off, saying
                why; jobs run on fresh roots and say so
  nothing_runs  pivot_root (every sandbox root): exit 2, one line

  test_selfproof.py BIN_DIR pool_broken|nothing_runs   (inside unshare)"""
import json
import os
import subprocess
import sys
import tempfile
import time

SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def daemon_cmd(bin_dir, deny, work):
    return [os.path.join(bin_dir, "without_syscall"), deny, os.path.join(bin_dir, "surgeboxd"),
            "--socket", os.path.join(work, "d.sock"), "--jobs", "1", "--cache-dir", os.path.join(work, "cache")]


def surgebox(bin_dir, work, *args):
    return subprocess.run([os.path.join(bin_dir, "surgebox"), "--socket", os.path.join(work, "d.sock"),
                           "--no-autostart"] + list(args), capture_output=True, text=True, timeout=300)


def pool_broken(bin_dir, work):
    log = open(os.path.join(work, "log"), "w+")
    d = subprocess.Popen(daemon_cmd(bin_dir, "move_mount", work), stderr=log)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and d.poll() is None and surgebox(bin_dir, work, "ping").returncode:
            time.sleep(0.3)
        check(d.poll() is None, f"daemon exited {d.poll()}")
        st = json.loads(surgebox(bin_dir, work, "status", "--json").stdout or "{}")
        pool = st.get("pool") or ""
        check(pool.startswith("off: ") and "move_mount /app: Function not implemented" in pool, f"status pool {pool!r}")
        check(st.get("self_proof", {}).get("pool") == pool, f"status self_proof {st.get('self_proof')}")
        check(st.get("self_proof", {}).get("uid_range", "").startswith("on: "), f"self_proof {st.get('self_proof')}")
        r = json.loads(surgebox(bin_dir, work, "exec", "--json", "--", "sh", "-c", "echo fresh").stdout or "{}")
        step = (r.get("steps") or [{}])[-1]
        check(r.get("status") == "ok" and step.get("stdout") == "fresh\n", f"exec {r.get('status')} {step}")
        check(step.get("enforced", {}).get("pool") == pool, f"enforced.pool {step.get('enforced', {}).get('pool')!r}")
    finally:
        d.terminate()
        d.wait(timeout=120)
    log.seek(0)
    text = log.read()
    check(any("pool off: " in line and "move_mount" in line for line in text.splitlines()), f"log:\n{text}")


def nothing_runs(bin_dir, work):
    p = subprocess.run(daemon_cmd(bin_dir, "pivot_root", work), capture_output=True, text=True, timeout=300)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    print(p.stderr)
    check(p.returncode == 2, f"exit {p.returncode}, want 2")
    check(len(lines) == 1 and lines[0].startswith("surgeboxd: cannot run a job here: ") and "pivot_root" in lines[0],
          f"stderr {lines}")
    check(not os.path.exists(os.path.join(work, "d.sock")), "a socket was made")


def main():
    bin_dir, case = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        print("SKIPPED: needs root (the uid range, cgroups and the pool are root's)")
        return SKIP
    work = tempfile.mkdtemp(prefix="sb-selfproof-")
    {"pool_broken": pool_broken, "nothing_runs": nothing_runs}[case](bin_dir, work)
    if failures:
        print(f"FAILED: {len(failures)} check(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
