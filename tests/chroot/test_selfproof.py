#!/usr/bin/env python3
"""The daemon proves itself before it takes work (issue 21): a trivial job
through each mechanism at start; one that fails is turned off and said (log,
`status`, each result's `enforced`), or the daemon refuses to start in one
line. The mechanism is broken from outside by denying one system call
(without_syscall, a seccomp filter inherited by the daemon):

  pool_broken   move_mount (a pooled job's /app): the pool is off, saying
                why; jobs run on fresh roots and say so
  nothing_runs  pivot_root (every sandbox root): exit 2, one line
  uid_unmapped  root of a user namespace mapping uid 0 only: the uid range
                is unusable, exit 2, one line naming it
  doctor        surgebox doctor: the same checks for a person (exit 0 only
                when a job ran)

  test_selfproof.py BIN_DIR pool_broken|nothing_runs|uid_unmapped|doctor   (inside unshare)"""
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
    """surgeboxd, with the system call deny answering ENOSYS (None: none)."""
    wrap = [os.path.join(bin_dir, "without_syscall"), deny] if deny else []
    return wrap + [os.path.join(bin_dir, "surgeboxd"), "--socket", os.path.join(work, "d.sock"), "--jobs", "1",
                   "--cache-dir", os.path.join(work, "cache")]


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


def uid_unmapped(bin_dir, work):
    """Root of a user namespace mapping only uid 0 (a container's root): the
    uid range cannot be used, and the daemon says so in one line."""
    if subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode != 0:
        print("SKIPPED: cannot create a user namespace here")
        sys.exit(SKIP)
    cmd = ["unshare", "--user", "--map-root-user", "--mount"] + daemon_cmd(bin_dir, None, work)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    print(p.stderr)
    check(p.returncode == 2, f"exit {p.returncode}, want 2")
    check(len(lines) == 1 and lines[0].startswith("surgeboxd: cannot run a job here: the uid range 1879048192-")
          and "not all mapped" in lines[0] and "--uid-range FIRST-LAST" in lines[0], f"stderr {lines}")


def doctor(bin_dir, work):
    """surgebox doctor: a job runs here (a private daemon started for the
    check); a named socket nobody answers is a failing line naming the fix,
    and no private daemon is started beside it; where no sandbox can be
    built, exit 2."""
    env = dict(os.environ, SURGEBOX_IDLE_TIMEOUT="0")
    env.pop("SURGEBOX_SOCKET", None)
    # the private daemon's default cache dir: ours in this mount namespace, not the machine's
    # (not /run/surgebox: its uids/ leases must stay the machine's, shared with every other daemon)
    os.makedirs("/var/cache/surgebox", exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/var/cache/surgebox"], check=True)
    sb = os.path.join(bin_dir, "surgebox")
    p = subprocess.run([sb, "doctor", "--json"], capture_output=True, text=True, timeout=600, env=env)
    r = json.loads(p.stdout or "{}")
    got = {c["check"]: c for c in r.get("checks", [])}
    check(p.returncode == 0 and r.get("job_can_run") is True, f"doctor: exit {p.returncode} {p.stdout[-800:]} {p.stderr[-500:]}")
    for name in ("user namespaces", "cgroups", "openat2", "daemon", "pool", "cgroup backend", "uid range", "job",
                 "toolchains", "profiles"):
        check(name in got, f"doctor: no {name!r} line: {sorted(got)}")
    check(got.get("job", {}).get("result") == "ok" and got.get("pool", {}).get("detail") == "on",
          f"doctor: job {got.get('job')} pool {got.get('pool')}")
    check("private one" in got.get("daemon", {}).get("detail", ""), f"doctor: daemon {got.get('daemon')}")

    p = subprocess.run([sb, "doctor", "--profile", "nope"], capture_output=True, text=True, timeout=600, env=env)
    line = [ln for ln in p.stdout.splitlines() if ln.split()[1:2] == ["job"]]
    check(p.returncode == 2 and line and line[0].startswith("FAIL") and 'unknown profile "nope"' in line[0],
          f"doctor --profile nope: {p.returncode} {p.stdout}")

    dead = os.path.join(work, "nobody.sock")
    p = subprocess.run([sb, "doctor", "--socket", dead], capture_output=True, text=True, timeout=300, env=env)
    line = [ln for ln in p.stdout.splitlines() if ln.split()[1:2] == ["daemon"]]
    check(p.returncode == 2 and line and line[0].startswith("FAIL") and dead in line[0]
          and "surgeboxd --socket PATH" in line[0], f"doctor --socket dead: {p.returncode} {p.stdout}")
    check(not os.path.exists(dead), "doctor started a daemon at the named socket")

    p = subprocess.run([os.path.join(bin_dir, "without_syscall"), "pivot_root", sb, "doctor"], capture_output=True,
                       text=True, timeout=300, env=env)
    check(p.returncode == 2 and "no job can run here" in p.stdout and "cannot run a job here: pivot_root" in p.stderr,
          f"doctor without pivot_root: {p.returncode} {p.stdout} {p.stderr}")


def main():
    bin_dir, case = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        print("SKIPPED: needs root (the uid range, cgroups and the pool are root's)")
        return SKIP
    work = tempfile.mkdtemp(prefix="sb-selfproof-")
    cases = {"pool_broken": pool_broken, "nothing_runs": nothing_runs, "uid_unmapped": uid_unmapped, "doctor": doctor}
    cases[case](bin_dir, work)
    if failures:
        print(f"FAILED: {len(failures)} check(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
