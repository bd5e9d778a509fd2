#!/usr/bin/env python3
"""Every sandbox init is a copy of surgebox-spawner, so a root runtime runs
it only when root alone can change it (runners/spawner_exe.c): a copy of
surgebox-run beside a spawner that is group-writable, another user's, or
in a directory others may write (lib/surgebox or lib) is refused at start
with a line naming the file and what is wrong, and nothing runs; a copy
outside the build tree with no spawner beside it is refused too (never
quietly the build's spawner); beside a sound copy the same binary runs a
job, started from that copy, also when the prefix itself is another
user's (as open to change as the binary root chose to run: not the
spawner's to refuse). Root only (the rule is root's).

    spawner_vetted.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL:", what)


def prefix(build, spawner_mode=0o755, owner=0, dir_mode=0o755, lib_mode=0o755, top_mode=0o755, spawner=True):
    p = tempfile.mkdtemp(prefix="sbspawner-")
    os.chmod(p, top_mode)
    os.makedirs(os.path.join(p, "bin"))
    os.makedirs(os.path.join(p, "lib", "surgebox"))
    shutil.copy(os.path.join(build, "bin", "surgebox-run"), os.path.join(p, "bin"))
    sp = os.path.join(p, "lib", "surgebox", "surgebox-spawner")
    os.chmod(os.path.join(p, "lib"), lib_mode)
    if not spawner:
        return p, sp
    shutil.copy(os.path.join(build, "lib", "surgebox", "surgebox-spawner"), sp)
    os.chown(sp, owner, owner)
    os.chmod(sp, spawner_mode)
    os.chmod(os.path.dirname(sp), dir_mode)
    return p, sp


def run(p):
    return subprocess.run([os.path.join(p, "bin", "surgebox-run"), "--", "/bin/echo", "ran"],
                          capture_output=True, text=True, timeout=120)


def main():
    if os.geteuid() != 0:
        print("SKIPPED: the owner rule is a root runtime's; not root")
        return 77
    build = sys.argv[1]
    for name, kw, want in (("group-writable", {"spawner_mode": 0o775}, "may be changed by a user other than root"),
                           ("another user's", {"owner": 4242}, "may be changed by a user other than root"),
                           ("in a world-writable directory", {"dir_mode": 0o777},
                            "is in a directory a user other than root may change"),
                           ("below a world-writable directory", {"lib_mode": 0o777},
                            "is in a directory a user other than root may change"),
                           ("absent from a copy outside the build tree", {"spawner": False},
                            "cannot be opened (No such file or directory)")):
        p, sp = prefix(build, **kw)
        r = run(p)
        check(r.returncode != 0 and "ran" not in r.stdout, f"{name}: a job ran ({r.returncode}, {r.stdout!r})")
        check(sp in r.stderr and want in r.stderr and ("refused" in r.stderr or not kw.get("spawner", True)),
              f"{name}: the error names the file and why: {r.stderr!r}")
        shutil.rmtree(p)
    for name, kw in (("a sound copy", {}), ("a sound copy in a prefix open to all", {"top_mode": 0o777})):
        p, sp = prefix(build, **kw)
        r = run(p)
        check(r.returncode == 0 and r.stdout == "ran\n", f"{name}: {r.returncode} {r.stdout!r} {r.stderr!r}")
        shutil.rmtree(p)
    print("FAILED: %d" % len(FAILS) if FAILS else "ok")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
