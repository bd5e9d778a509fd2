"""Warm and cold agree where the review of issue 35 (finding 9) found them
apart, each case run cold and warm through a private surgeboxd with the
same PYTHONHASHSEED, status, exit code, signal, stdout and stderr equal
byte for byte, and each checked against what a cold run must print:

  finaliser  a __del__ added to the class of an object start-up made
             (os._Environ): a cold teardown runs it (exit 7, one more
             line); warm took the short exit (exit 0)
  metaclass  the same on abc.ABCMeta, whose classes only the collector
             frees (the zygote's objects were frozen, never collected)
  dumpable   the program's own /proc/self/mem, environ and auxv, and
             PR_GET_DUMPABLE: warm was not dumpable (EACCES)
  user_site  a user site under the job's own HOME (/app): its .pth run
             and its module importable, sys.path as cold; warm ignored it

and one difference PROTOCOL.md lists ("What can differ"), pinned as
listed: a finaliser the program adds to the zygote's objects' class runs
cold at a collection during the run when such an object becomes garbage
(os.PathLike deleted, then gc.collect()), warm at the teardown (midrun).

  test_daemon_parity.py BIN_DIR CACHE_DIR [--cgroup none] [--user]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402

EXIT = os.path.join(daemonrun.ROOT, "tests", "warm", "exit_programs")

DUMPABLE = r'''
import ctypes, errno, os
def probe(path, seek=0):
    try:
        with open(path, "rb", 0) as f:
            if seek:
                f.seek(seek)
            return "readable" if f.read(16) else "empty"
    except OSError as e:
        return errno.errorcode[e.errno]
print("mem", probe("/proc/self/mem", id(probe)))
print("environ", probe("/proc/self/environ"))
print("auxv", probe("/proc/self/auxv"))
print("dumpable", ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))
print("mem is mine", os.stat("/proc/self/mem").st_uid == os.getuid())
'''

USER_SITE_MAIN = r'''
import sys
import sbusermod
print(sbusermod.WHERE)
print(sys.path)
'''


def version():
    out = subprocess.run([daemonrun.PY, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout
    return out.strip()


def cases():
    """(name, files, extra env, what stdout must hold, exit code)"""
    def main_of(d):
        return [{"path": "main.py", "content": open(os.path.join(EXIT, d, "main.py")).read()}]
    yield "finaliser", main_of("old_class_del"), {}, b"body\nos.environ finalised\n", 7
    yield "metaclass", main_of("old_metaclass_del"), {}, b"body\nan ABC finalised\n", 7
    yield "dumpable", [{"path": "main.py", "content": DUMPABLE}], {}, (
        b"mem readable\nenviron readable\nauxv readable\ndumpable 1\nmem is mine True\n"), 0
    site = ".local/lib/python%s/site-packages" % version()
    yield "user_site", [
        {"path": "main.py", "content": USER_SITE_MAIN},
        {"path": site + "/sbusermod.py", "content": "WHERE = 'the user site'\n"},
        {"path": site + "/sbuser.pth", "content": "import sys; sys.stdout.write('the .pth ran\\n')\n"},
    ], {"HOME": "/app"}, b"the .pth ran\nthe user site\n", 0


MIDRUN = r'''
import abc, gc, os


def fin(cls, write=os.write):
    if cls.__name__ == "PathLike":
        write(1, b"PathLike finalised\n")


abc.ABCMeta.__del__ = fin
del os.PathLike
gc.collect()
print("after the collection", flush=True)
'''


def midrun(c, fails):
    """The listed difference: the same lines, the finaliser's last warm."""
    cold = daemonrun.outcome(c.python([{"path": "main.py", "content": MIDRUN}]))
    warm = daemonrun.outcome(c.python([{"path": "main.py", "content": MIDRUN}], warm=True))
    want_cold = b"PathLike finalised\nafter the collection\n"
    want_warm = b"after the collection\nPathLike finalised\n"
    ok = cold[:3] == warm[:3] == ("ok", 0, None) and cold[3] == want_cold and warm[3] == want_warm
    print("%s midrun (cold %r, warm %r)" % ("ok  " if ok else "FAIL", cold[3], warm[3]))
    if not ok:
        fails.append("midrun: not as PROTOCOL.md lists it: cold %r warm %r" % (cold, warm))


def run(sock):
    fails = []
    c = daemonrun.Client(sock)
    for name, files, env, want, code in cases():
        got = {}
        for warm in (False, True):
            step = c.python(files, warm=warm, extra_env=env)
            started = daemonrun.start(step)
            if not started.startswith("warm (" if warm else "cold"):
                fails.append("%s: %s run started %r" % (name, "warm" if warm else "cold", started))
            got[warm] = daemonrun.outcome(step)
        cold, warm = got[False], got[True]
        why = []
        if cold != warm:
            why.append("warm differs from cold:\n  cold %r\n  warm %r" % (cold, warm))
        if cold[1] != code or not cold[3].startswith(want):
            why.append("cold is not what a cold python3 does (exit %d, stdout starting %r): %r" % (code, want, cold))
        print("%s %s" % ("FAIL" if why else "ok  ", name))
        fails += ["%s: %s" % (name, w) for w in why]
    midrun(c, fails)
    c.close()
    for f in fails:
        print("FAIL", f)
    print("%d failures" % len(fails))
    return fails


def main():
    args = sys.argv[1:]
    bin_dir, cache = args[0], args[1]
    cgroup = ["--cgroup", args[args.index("--cgroup") + 1]] if "--cgroup" in args else []
    if not os.path.exists(daemonrun.PY):
        print("SKIPPED: no /usr/bin/python3")
        return daemonrun.SKIP
    if "--user" in args:
        d = daemonrun.UserDaemon(bin_dir)
        try:
            fails = daemonrun.as_user(lambda: run(d.sock))
        finally:
            d.stop()
    else:
        d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "1", *cgroup)
        try:
            fails = run(d.sock)
        finally:
            d.stop()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
