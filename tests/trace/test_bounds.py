"""Bounds and tampering: each program runs plain and traced (stdout, stderr
and exit must stay equal whatever the trace says) and its trace must be
well formed and end as stated: the event, byte and depth caps give
`truncated` with the cap; removing or replacing the tracer gives `tampered`;
huge values are cut inside their record; a forked child writes nothing."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracerun  # noqa: E402

LOOP = "t = 0\nfor i in range(20000):\n    t += i\nprint(t)\n"
CASES = [
    # name, program, limits, expected end (status, cap), extra check on (records, trace text)
    ("event_cap", LOOP, {"events": 1000}, ("truncated", "events"), lambda r, t: r[-1]["events"] == 1000),
    ("byte_cap", LOOP, {"bytes": 20000}, ("truncated", "bytes"), lambda r, t: len(t.encode()) <= 20000),
    ("depth_cap", "def d(n):\n    return 0 if n == 0 else 1 + d(n - 1)\nprint(d(50))\n", {"depth": 10},
     ("truncated", "depth"), lambda r, t: max(e["d"] for e in tracerun.events(r)) == 10),
    # call, line 1, (line 2, line 3) x 20000, line 2 (the end of the loop), line 4, return
    ("under_caps", LOOP, {"events": 100000}, ("complete", None), lambda r, t: r[-1]["events"] == 40005),
    ("settrace_none", "import sys\nprint(1)\nsys.settrace(None)\nx = 2\nprint(x)\n", None, "settrace", None),
    ("settrace_other", "import sys\ndef t(*a):\n    return None\nsys.settrace(t)\nprint('x')\n", None,
     ("tampered", None), None),
    ("setprofile", "import sys\nsys.setprofile(lambda *a: None)\nprint('p')\nsys.setprofile(None)\n", None,
     ("complete", None), None),  # removed again before the end: nothing left to see
    ("setprofile_kept", "import sys\nsys.setprofile(lambda *a: None)\nprint('p')\n", None, ("tampered", None), None),
    ("threading_settrace", "import threading\nthreading.settrace(lambda *a: None)\nprint('t')\n", None,
     ("tampered", None), None),
    # up to 3.11 the tracer's own hook is threading's: removing it is tampering (3.12+ has none there)
    ("threading_settrace_none", "import threading\nthreading.settrace(None)\nprint('t')\n", None, "settrace", None),
    ("huge_values", "s = 'x' * 10000000\nl = list(range(1000000))\nd = {i: [i] * 100 for i in range(1000)}\n"
     "print(len(s), len(l), len(d))\n", None, ("complete", None), lambda r, t: len(t) < 200000),
    ("fork", "import os\npid = os.fork()\nif pid == 0:\n    x = 1\n    print('child', flush=True)\n    os._exit(0)\n"
     "os.waitpid(pid, 0)\nprint('parent')\n", None, ("complete", None),
     lambda r, t: all(e["ln"] not in (4, 5, 6) for e in tracerun.events(r))),
]
# (the plain run has no tool 0: the program catches the ValueError there)
MONITORING = [
    ("monitoring_off", "import sys\ntry:\n    sys.monitoring.set_events(0, 0)\nexcept ValueError:\n    pass\n"
     "print('m')\n", None, ("tampered", None), None),
    ("monitoring_free", "import sys\ntry:\n    sys.monitoring.free_tool_id(0)\nexcept ValueError:\n    pass\n"
     "print('m')\n", None, ("tampered", None), None),
    ("monitoring_callback", "import sys\ntry:\n    sys.monitoring.register_callback(0, sys.monitoring.events.LINE, None)\n"
     "except ValueError:\n    pass\nx = 1\n", None, ("tampered", None), None),
]


def bad_setup(py):
    """A tracer told nonsense says so in one line and runs nothing (exit 2)."""
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "main.py"), "w") as f:
            f.write("print('ran')\n")
        for what, limits, env, needle in [
                ("unknown limit", {"bogus": 1}, None, b"unknown limit 'bogus'"),
                ("zero limit", {"events": 0}, None, b"events must be at least 1"),
                ("byte limit under head and end", {"bytes": 1000}, None, b"bytes must be at least 4096"),
                ("no descriptor", None, {"SURGEBOX_TRACE_FD": "x"}, b"SURGEBOX_TRACE_FD must name"),
                ("closed descriptor", None, {"SURGEBOX_TRACE_FD": "250"}, b"SURGEBOX_TRACE_FD=250")]:
            if env:
                e = tracerun._env(env)
                p = subprocess.run([py, tracerun.SBTRACE, "main.py"], cwd=tmp, env=e, capture_output=True)
            else:
                p, _ = tracerun.run_traced(py, "main.py", cwd=tmp, limits=limits)
            ok = p.returncode == 2 and p.stdout == b"" and needle in p.stderr and p.stderr.count(b"\n") == 1
            print("%s bad setup: %s" % ("ok  " if ok else "FAIL", what))
            if not ok:
                print("    %d %r %r" % (p.returncode, p.stdout, p.stderr))
                fails += 1
    return fails


def closed_descriptor(py):
    """The program closes every descriptor past stderr: the tracer cannot
    write any more (no end: the supervisor says crashed) and the program
    goes on unchanged."""
    prog = "import os\nx = 1\nos.closerange(3, 1024)\nfor i in range(3000):\n    x += i\nprint(x)\n"
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "main.py"), "w") as f:
            f.write(prog)
        plain = tracerun.run_plain(py, "main.py", cwd=tmp)
        traced, trace = tracerun.run_traced(py, "main.py", cwd=tmp)
    same = (plain.stdout, plain.stderr, plain.returncode) == (traced.stdout, traced.stderr, traced.returncode)
    ok = same and plain.stdout == b"4498501\n" and '"t":"end"' not in trace
    print("%s closed trace descriptor" % ("ok  " if ok else "FAIL"))
    if not ok:
        print("    %r %r %r" % (traced.stdout, traced.stderr, trace[-300:]))
    return 0 if ok else 1


def main():
    pys = tracerun.pythons()
    if not pys:
        print("SKIPPED: no python3")
        return tracerun.SKIP
    fails = bad_setup(pys[0][1]) + closed_descriptor(pys[0][1])
    for label, py in pys:
        mon = tracerun.run_plain(py, "-c", ["import sys; print(sys.version_info >= (3, 12))"]).stdout.strip() == b"True"
        for name, prog, limits, want, check in CASES + (MONITORING if mon else []):
            if want == "settrace":
                # sys.settrace(None) removes the tracer up to 3.11; from 3.12 it
                # touches another tool than ours: the trace goes on, complete
                want = ("complete", None) if mon else ("tampered", None)
            status, cap = want
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "main.py"), "w") as f:
                    f.write(prog)
                plain = tracerun.run_plain(py, "main.py", cwd=tmp)
                traced, trace = tracerun.run_traced(py, "main.py", cwd=tmp, limits=limits)
            why = []
            for what in ("stdout", "stderr", "returncode"):
                if getattr(plain, what) != getattr(traced, what):
                    why.append("%s: %r != %r" % (what, getattr(plain, what), getattr(traced, what)))
            try:
                recs = tracerun.records(trace)
                end = recs[-1]
                if (end["status"], end.get("cap")) != (status, cap):
                    why.append("end %r, want %s %s" % (end, status, cap))
                if check and not check(recs, trace):
                    why.append("check failed; end %r" % end)
            except Exception as e:
                why.append("bad trace %r: %s" % (e, trace[-500:]))
            print("%s %s %s" % ("FAIL" if why else "ok  ", label, name))
            for w in why:
                print("   ", w)
            fails += bool(why)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
