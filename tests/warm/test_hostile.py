"""A hostile warm job cannot change what the next warm job of the same
zygote sees. The hostile program rewrites its modules (os, a stdlib module
replaced in sys.modules), sys (path, argv, flags of the excepthook, the
recursion limit, a trace function), builtins (print, len, open),
os.environ, starts threads (daemon and not), leaves atexit handlers, forks
a grandchild that outlives it and writes late, and tries to reach the
zygote's frame and its socket. A fingerprint program run warm before it and
after it (twice: while the grandchild still lives, and after) prints the
same bytes, equal to its cold twin's. Runs in the unshare wrapper: the
process-level defences (other uid, pid namespace, seccomp) are the
sandbox's, not this test's."""
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zygoterun  # noqa: E402
from test_programs import FINGERPRINT  # noqa: E402

EXTRA = r'''
import builtins
print(sorted(dir(builtins)), print is builtins.__dict__["print"], len([1, 2]), open.__module__)
print(sorted(os.listdir("/proc/self/fd")), os.environ.get("HOSTILE"))
import threading, atexit
print(threading.active_count())
print("atexit handlers", atexit._ncallbacks())
'''


def uncount_short_exit(out):
    """A warm child's atexit list holds the short exit's handler (PROTOCOL.md
    "How a warm program ends"): its fingerprint's count, less that one, is
    what the cold twin prints (a leaked handler of the hostile job would
    still show)."""
    return re.sub(rb"^atexit handlers (\d+)$", lambda m: b"atexit handlers %d" % (int(m.group(1)) - 1), out, flags=re.M)

HOSTILE = r'''
import os, sys, builtins, threading, atexit, time, json
os.environ["HOSTILE"] = "1"
os.environ["PATH"] = "/evil"
os.putenv("LANG", "evil")
sys.path.insert(0, "/evil")
sys.modules["json"] = None
sys.modules["os"].getcwd = lambda: "/evil"
os.path.join = lambda *a: "/evil"
builtins.len = lambda x: 42
builtins.open = None
builtins.print = lambda *a, **k: None
sys.setrecursionlimit(50)
sys.settrace(lambda *a: None)
sys.excepthook = lambda *a: None
atexit.register(lambda: os.write(1, b"ATEXIT\n"))
threading.Thread(target=lambda: (time.sleep(0.5), os.write(1, b"THREAD\n"))).start()
threading.Thread(target=lambda: (time.sleep(5), os.write(1, b"DAEMON\n")), daemon=True).start()
# the zygote's frame: reachable from the program's own, a copy in this process only
# (cold: there is none, ValueError; a listed difference, PROTOCOL.md)
try:
    z = sys._getframe(1).f_globals
    z["_serve"] = None
    z["_strip_hook"] = None
    z["_Z_MODULES"] = frozenset()
except ValueError:
    pass
if os.fork() == 0:
    time.sleep(1.0)
    os.write(1, b"GRANDCHILD\n")
    os._exit(0)
# descriptors: try every one the zygote could have left us
for fd in range(3, 64):
    try:
        os.write(fd, b"RUN\0/\x001\0/bin/sh\x000\0")
    except OSError:
        pass
'''


def _first_diff(a, b):
    if a[0] != b[0]:
        return "exit %d vs %d" % (a[0], b[0])
    for what, x, y in (("stdout", a[1], b[1]), ("stderr", a[2], b[2])):
        for i, (lx, ly) in enumerate(zip(x.split(b"\n"), y.split(b"\n"))):
            if lx != ly:
                return "%s line %d: cold %r warm %r" % (what, i + 1, lx[:300], ly[:300])
        if x != y:
            return "%s lengths %d vs %d" % (what, len(x), len(y))
    return "?"


def main():
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        print("SKIPPED: no /usr/bin/python3")
        return zygoterun.SKIP
    fail = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("fp", FINGERPRINT + EXTRA), ("hostile", HOSTILE)):
            os.mkdir(os.path.join(tmp, name))
            with open(os.path.join(tmp, name, "main.py"), "w") as f:
                f.write(text)
        fp, hostile = os.path.join(tmp, "fp"), os.path.join(tmp, "hostile")
        cold_before = zygoterun.run_cold(py, "main.py", cwd=fp)
        cold_hostile = zygoterun.run_cold(py, "main.py", cwd=hostile)
        cold_after = zygoterun.run_cold(py, "main.py", cwd=fp)
        z = zygoterun.Zygote(py)
        as_cold = (lambda r: (r[0], uncount_short_exit(r[1]), r[2])) if z.lib else (lambda r: r)
        warm_before = as_cold(z.run("main.py", cwd=fp))
        warm_hostile = z.run("main.py", cwd=hostile)
        warm_during = as_cold(z.run("main.py", cwd=fp))  # the grandchild still sleeps
        time.sleep(1.5)
        warm_after = as_cold(z.run("main.py", cwd=fp))
        rc = z.close()
        print("hostile cold:", cold_hostile[:2], "warm:", warm_hostile[:2])
        if cold_before != cold_after:
            fail.append("the cold twin differs after the hostile cold job")
        for what, got in (("before", warm_before), ("during", warm_during), ("after", warm_after)):
            if got != cold_before:
                fail.append("warm fingerprint %s the hostile job differs from cold: %s"
                            % (what, _first_diff(cold_before, got)))
        if cold_before[0] != 0:
            fail.append("the fingerprint program failed: %r" % (cold_before,))
        # the hostile job itself ends the same way warm and cold (its
        # grandchild's late write goes to its own stdout, never the next job's)
        if warm_hostile[:2] != cold_hostile[:2]:
            fail.append("the hostile job differs: %s" % _first_diff(cold_hostile, warm_hostile))
        for out in (warm_during[1], warm_after[1]):
            for mark in (b"ATEXIT", b"THREAD", b"DAEMON", b"GRANDCHILD"):
                if mark in out:
                    fail.append("%s reached the next job's stdout" % mark.decode())
        if rc != 0:
            fail.append("zygote ended with %d" % rc)
    for f in fail:
        print("FAIL", f)
    print("hostile warm job: %d failures" % len(fail))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
