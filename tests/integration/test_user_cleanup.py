#!/usr/bin/env python3
"""surgebox-run as an ordinary user: the clean-up of /app (a plain directory
on the host disk in that mode) removes what the program left there, also
directories it made mode 000 or 0500, and never follows a symlink it
planted to a directory of the host. Runs inside the unshare wrapper (ctest
does); drops to uid 4242 itself."""
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
UID = 4242


def main():
    run = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIPPED: needs root to become another user for the test")
        sys.exit(SKIP)
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid is not 1)")
        sys.exit(2)
    os.chmod(os.path.dirname(run), 0o755)
    xdg = tempfile.mkdtemp(prefix="sb-usercleanup-")
    os.chmod(xdg, 0o755)
    os.chown(xdg, UID, UID)
    victim = tempfile.mkdtemp(prefix="sb-victim-")  # the user's own host directory, writable by it
    with open(os.path.join(victim, "keep"), "w") as f:
        f.write("host data\n")
    os.chmod(victim, 0o777)
    os.chown(victim, UID, UID)
    script = ("cd /app && mkdir -p a/b/c d e && echo x > a/b/c/f && echo y > d/g && "
              f"ln -s {victim} link && ln -s {victim} a/link2 && "
              # a chain deeper than the clean-up enters at once, locked at every tenth level
              "p=deep; for i in $(seq 150); do p=$p/d; done; mkdir -p $p && echo z > $p/f && "
              "for k in $(seq 150 -10 10); do q=deep; for i in $(seq $k); do q=$q/d; done; chmod 000 $q; done && "
              "chmod 000 a/b/c && chmod 500 a/b && chmod 000 a && chmod 500 d && chmod 000 e && echo done")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "XDG_RUNTIME_DIR": xdg}
    cmd = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", run, "--", "/bin/sh", "-c", script]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    fails = []
    if p.returncode != 0 or "done" not in p.stdout:
        fails.append(f"the run: exit {p.returncode} stdout {p.stdout[-300:]!r} stderr {p.stderr[-500:]!r}")
    left = []
    for root, dirs, files in os.walk(xdg):
        for n in dirs + files:
            path = os.path.join(root, n)
            if "/jobs/" in path + "/" and not path.endswith("/jobs"):
                left.append(path)
    if left:
        fails.append(f"left behind: {left[:8]}")
    if sorted(os.listdir(victim)) != ["keep"]:
        fails.append(f"the host directory behind a planted symlink changed: {os.listdir(victim)}")
    shutil.rmtree(victim, ignore_errors=True)
    subprocess.run(["chmod", "-R", "u+rwx", xdg])
    shutil.rmtree(xdg, ignore_errors=True)
    if fails:
        print("FAIL:", fails)
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
