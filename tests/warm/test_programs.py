"""Sameness: every program of tests/trace/programs/ (argv, exit codes,
tracebacks, syntax errors, stdin, buffering, atexit, threads, recursion ...)
on Debian's python3 and every pyenv CPython 3.8 ... 3.13 present (absent
ones printed, not counted), plus a fingerprint of the interpreter's state (sys.modules, sys.path,
sys.argv, sys.orig_argv, __main__'s names, the std streams' settings,
os.environ, the recursion depth reached) run cold (`python3 main.py ARGS`)
and warm (a child of one zygote): exit status, stdout and stderr equal byte
for byte. The recursion limit's number is the one listed difference
(PROTOCOL.md): the depth reached is what must be equal.

tests/warm/exit_programs/ are about the short exit (sbzygote_body.py
_short_exit: the program's end without Python's teardown when nothing in
it could show): each says in its file `short` whether its child must end
that way (yes) or by Python's own finalisation (no: a finaliser, a
suspended generator, a weak-reference callback, a daemon thread, an audit
hook, changed warnings filters, a replaced or failing stdout, a status
Python's main decides...; "yes from 3.12": no below it), and must equal
the cold run either way. The
zygote loads the build's libsbwarm.so (SURGEBOX_WARM_LIB), as surgebox's
daemon has it, and notes each short exit's pid."""
import functools
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zygoterun  # noqa: E402

FINGERPRINT = r'''
import sys, os
print(sorted(sys.modules))
print(sys.path, sys.argv, getattr(sys, "orig_argv", None), sys.executable)
print(sorted(k for k in globals()), __name__, __file__, __spec__, __cached__, type(__loader__).__name__, __loader__.name, __loader__.path)
for s in (sys.stdin, sys.stdout, sys.stderr):
    print(s.name, s.mode, s.encoding, s.errors, s.line_buffering, s.write_through, s.buffer.raw.name, s.seekable())
print(sys.stdin is sys.__stdin__, sys.stdout is sys.__stdout__, os.getcwd(), sorted(os.environ.items()))
print(sys.flags, os.getsid(0) == os.getpid(), sys.gettrace(), sys.getprofile(), sys.excepthook is sys.__excepthook__)
def d(n):
    try:
        return d(n + 1)
    except RecursionError:
        return n
print("depth", d(0))
'''


SEEDED = r'''
import os
print(hash("surgebox"), hash(b"x"), list({"a", "b", "c", "d", "e", "f"}), "PYTHONHASHSEED" in os.environ)
'''


def tmp_seeded():
    d = tempfile.mkdtemp(prefix="seeded")
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write(SEEDED)
    return d


def seeded(py, d):
    """A zygote whose launcher chose its hash seed: a job that sends no
    PYTHONHASHSEED hashes as a cold run with that seed, and the PID reply
    says the seed. (The cold run's environment shows the variable; the warm
    one does not: the job did not ask for it.)"""
    z = zygoterun.Zygote(py, seed=12345)
    warm = z.run("main.py", cwd=d)
    told = z.seed
    z.close()
    cold = zygoterun.run_cold(py, "main.py", cwd=d, env=zygoterun.job_env({"PYTHONHASHSEED": "12345"}))
    want = (cold[0], cold[1].replace(b" True\n", b" False\n"), cold[2])
    shutil.rmtree(d)
    out = []
    if warm != want or not cold[1].endswith(b" True\n"):
        out.append("seeded: cold %r warm %r" % (cold, warm))
    if told != "12345":
        out.append("seeded: the PID reply said seed %r" % told)
    print("%s seeded (seed %s)" % ("FAIL" if out else "ok  ", told))
    return out


@functools.lru_cache(maxsize=None)
def version_of(py):
    out = subprocess.run([py, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True,
                         check=True).stdout
    return tuple(int(x) for x in out.split())


def short_wanted(spec, py):
    """A `short` file: "yes" or "no", optionally "from 3.N": the other below 3.N."""
    f = spec.split()
    want = f[0] == "yes"
    if len(f) == 3 and f[1] == "from":
        return want if version_of(py) >= tuple(int(x) for x in f[2].split(".")) else not want
    return want


def main():
    pys = zygoterun.pythons()
    if not pys:
        print("SKIPPED: no python3 at all")
        return zygoterun.SKIP
    fails = []
    for label, py in pys:
        print("--", label, py)
        fails += ["%s %s" % (label, f) for f in one_python(py)]
    for f in fails:
        print("FAIL", f)
    print("%d Pythons, %d differences" % (len(pys), len(fails)))
    return 1 if fails else 0


def one_python(py):
    progs_dir = os.path.join(zygoterun.ROOT, "tests", "trace", "programs")
    exit_dir = os.path.join(zygoterun.ROOT, "tests", "warm", "exit_programs")
    z = zygoterun.Zygote(py)
    if not z.lib:
        z.close()
        return ["no libsbwarm.so: SURGEBOX_WARM_LIB=%r (the build's, set by tests/warm/CMakeLists.txt)"
                % os.environ.get("SURGEBOX_WARM_LIB")]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        fp = os.path.join(tmp, "fingerprint")
        os.mkdir(fp)
        with open(os.path.join(fp, "main.py"), "w") as f:
            f.write(FINGERPRINT)
        cases = [(n, os.path.join(progs_dir, n)) for n in sorted(os.listdir(progs_dir))] + [("fingerprint", fp)]
        cases += [("exit/" + n, os.path.join(exit_dir, n)) for n in sorted(os.listdir(exit_dir))]
        for name, src in cases:
            work = os.path.join(tmp, "w", name)
            shutil.copytree(src, work)
            args = open(os.path.join(work, "args")).read().split() if os.path.exists(os.path.join(work, "args")) else []
            stdin = open(os.path.join(work, "stdin"), "rb").read() if os.path.exists(os.path.join(work, "stdin")) else b""
            cold = zygoterun.run_cold(py, "main.py", args, stdin, cwd=work)
            warm = z.run("main.py", args, stdin, cwd=work)
            checked += 1
            why = ["%s differs:\n  cold: %r\n  warm: %r" % (what, a, b)
                   for what, a, b in zip(("exit", "stdout", "stderr"), cold, warm) if a != b]
            short = z.last_pid in z.short_exits()
            if os.path.exists(os.path.join(work, "short")):
                want = short_wanted(open(os.path.join(work, "short")).read(), py)
                if short != want:
                    why.append("the child ended by %s, and should not have" % (
                        "the short exit" if short else "Python's finalisation"))
            if why:
                failures.append("%s: %s" % (name, "\n".join(why)))
            print("%s %s (exit %d%s)" % ("FAIL" if why else "ok  ", name, cold[0], ", short exit" if short else ""))
    rc = z.close()
    failures += seeded(py, tmp_seeded())
    checked += 1
    if rc != 0:
        failures.append("the zygote ended with %d after its socket closed" % rc)
    print("%d programs, %d differ" % (checked, len(failures)))
    return failures


if __name__ == "__main__":
    sys.exit(main())
