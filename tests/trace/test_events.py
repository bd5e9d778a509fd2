"""The events the tracer records where the program ends abruptly, catches an
exception or runs threads, against hand-written expectations, on every
Python installed (Debian's and pyenv's 3.8 ... 3.13):

- abrupt ends (os._exit, os.abort, a SIGKILL sent to itself, a forked child's
  os._exit then the parent's): the trace written so far holds every event up
  to the line that ends the process (its last record is that line's event),
  whole records only and no end (the supervisor adds `crashed`); stdout,
  stderr and exit status equal to the plain run's;
- `handled`: right where the exception is caught, before the first line of
  the except block (not on the `except` clause, in a `finally` or at a
  `with`'s exit);
- threads: each thread's events carry its number `th` (absent for the main
  thread), each thread's sequence as written here, the records never mixed
  (every line a whole record, `i` without gaps, with a 1 us switch interval).
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracerun  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(py, src, limits=None, files=None):
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in dict(files or {}, **{"main.py": src}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        plain = tracerun.run_plain(py, "main.py", cwd=tmp)
        traced, trace = tracerun.run_traced(py, "main.py", cwd=tmp, limits=limits)
    same = (plain.stdout, plain.stderr, plain.returncode) == (traced.stdout, traced.stderr, traced.returncode)
    return plain, traced, trace, same


def seq(evs, fn=None, th=None):
    """'k ln' of the events of function fn (any: None) in thread th (any: None)."""
    return ["%s %d" % (e["k"], e["ln"]) for e in evs
            if (fn is None or e["fn"] == fn) and (th is None or e.get("th", 0) == th)]


# ------------------------------------------------------------------ abrupt ends
EXIT = "import os\n\n\ndef bye(code):\n    x = code * 2\n    os._exit(x)\n\n\nprint('out', flush=True)\nbye(3)\n"
ABORT = "import os\n\n\ndef stop():\n    y = [1]\n    os.abort()\n\n\nstop()\n"
KILL = "import os\nimport signal\nz = 1\nos.kill(os.getpid(), signal.SIGKILL)\nprint('never')\n"
RAISE = "import signal\n\n\ndef f():\n    signal.raise_signal(signal.SIGKILL)\n\n\nf()\n"
FORK = ("import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\nw = 5\n"
        "os._exit(7)\n")
# called by another name: a global bound to it (every version), a parameter (sys.monitoring's
# CALL event sees it, 3.12+)
ALIAS = "import os\ndie = getattr(os, '_ex' + 'it')\n\n\ndef g():\n    v = 4\n    die(v)\n\n\ng()\n"
PARAM = "import os\n\n\ndef g(f):\n    v = 5\n    f(v)\n\n\ng(getattr(os, '_ex' + 'it'))\n"

ABRUPT = [
    # name, program, exit status, the events (k ln, all frames) to the end, 3.12+ only
    ("os._exit", EXIT, 6, ["call 1", "line 1", "line 4", "line 9", "line 10", "call 4", "line 5", "line 6"], False),
    ("os.abort", ABORT, -6, ["call 1", "line 1", "line 4", "line 9", "call 4", "line 5", "line 6"], False),
    ("kill self", KILL, -9, ["call 1", "line 1", "line 2", "line 3", "line 4"], False),
    ("raise_signal", RAISE, -9, ["call 1", "line 1", "line 4", "line 8", "call 4", "line 5"], False),
    ("fork, child _exit, parent _exit", FORK, 7,
     ["call 1", "line 1", "line 2", "line 3", "line 5", "line 6", "line 7"], False),
    ("os._exit by a global's name", ALIAS, 4,
     ["call 1", "line 1", "line 2", "line 5", "line 10", "call 5", "line 6", "line 7"], False),
    ("os._exit passed as an argument", PARAM, 5,
     ["call 1", "line 1", "line 4", "line 9", "call 4", "line 5", "line 6"], True),
]


def partial_records(text):
    """The records of a trace without an end: whole lines, head first, ev numbered."""
    assert text.endswith("\n"), "a partial line"
    recs = [json.loads(x) for x in text.split("\n")[:-1]]
    assert recs[0]["t"] == "head"
    evs = [r for r in recs if r["t"] == "ev"]
    assert [e["i"] for e in evs] == list(range(len(evs))), "i with gaps"
    assert all(r["t"] in ("head", "file", "ev") for r in recs), "an end record"
    return recs, evs


def abrupt(label, py, mon):
    for name, src, code, want, mon_only in ABRUPT:
        if mon_only and not mon:
            print("NOTE %s %s: up to 3.11 a call under a local name is not seen (PROTOCOL.md)" % (label, name))
            continue
        plain, traced, trace, same = run(py, src)
        check(same and plain.returncode == code, "%s %s: the program unchanged (exit %d, plain %d)"
              % (label, name, traced.returncode, plain.returncode))
        try:
            recs, evs = partial_records(trace)
            got = seq(evs)
        except Exception as e:
            got = ["bad trace %r" % e]
        check(got == want, "%s %s: every event up to the end: %s" % (label, name, got if got != want else ""))
    # the loc of the last event: the state before the line that ended the process
    _, _, trace, _ = run(py, EXIT)
    try:
        last = partial_records(trace)[1][-1]
    except Exception as e:
        last = {"bad trace": repr(e)}
    check(last.get("k") == "line" and last.get("loc") == {"x": ["int", "6"]},
          "%s os._exit: the last event's state: %r" % (label, last))


# ------------------------------------------------------------------ handled
HANDLED = '''class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return True


def w():
    with Quiet():
        raise KeyError(1)
    return 2


def h(x):
    try:
        return 1 // x
    except ZeroDivisionError:
        return -1


def inner():
    raise ValueError("x")


def outer():
    try:
        inner()
    except ValueError:
        return "caught"


def fin():
    try:
        raise KeyError("k")
    finally:
        z = 1


def bare():
    try:
        [][0]
    except:
        pass
    return 0


def g():
    try:
        try:
            raise ValueError(1)
        finally:
            z = 2
    except TypeError:
        pass
    except ValueError as e:
        w = 3
    return 4


w()
h(0)
outer()
try:
    fin()
except KeyError:
    pass
bare()
g()
'''

# the with's exit runs at a line event of its own: the with line (3.10+), the
# raise's line again (3.9), none (3.8); handled comes before line 12 in each
W_EXIT = {(3, 8): [], (3, 9): ["line 11"]}
HANDLED_WANT = {
    "w": ["call 9", "line 10", "line 11", "exception 11", "<exit>", "handled 12", "line 12", "return 12"],
    "h": ["call 15", "line 16", "line 17", "exception 17", "line 18", "handled 19", "line 19", "return 19"],
    "outer": ["call 26", "line 27", "line 28", "exception 28", "line 29", "handled 30", "line 30", "return 30"],
    "fin": ["call 33", "line 34", "line 35", "exception 35", "line 37", "unwind 37"],
    "bare": ["call 40", "line 41", "line 42", "exception 42", "line 43", "handled 44", "line 44", "line 45",
             "return 45"],
    "g": ["call 48", "line 49", "line 50", "line 51", "exception 51", "line 53", "line 54", "line 56",
          "handled 57", "line 57", "line 58", "return 58"],
    "<module>": ["call 1", "line 1", "line 9", "line 15", "line 22", "line 26", "line 33", "line 40", "line 48",
                 "line 61", "line 62", "line 63", "line 64", "line 65", "exception 65", "line 66", "handled 67",
                 "line 67", "line 68", "line 69", "return 69"],
}


def handled(label, py, version):
    plain, traced, trace, same = run(py, HANDLED)
    check(same, "%s handled: the program unchanged" % label)
    evs = tracerun.events(tracerun.records(trace))
    for fn, want in HANDLED_WANT.items():
        if "<exit>" in want:
            at = want.index("<exit>")
            want = want[:at] + W_EXIT.get(version, ["line 10"]) + want[at + 1:]
        got = seq(evs, fn)
        check(got == want, "%s handled in %s%s" % (label, fn, "" if got == want else ": %s, want %s" % (got, want)))
    # in a module of the program (read and parsed when an exception is first pending in it)
    helper = "def g(d):\n    try:\n        return d['k']\n    except KeyError:\n        return 0\n"
    _, _, trace, same = run(py, "import helper\nprint(helper.g({}))\n", files={"helper.py": helper})
    got = seq(tracerun.events(tracerun.records(trace)), "g")
    want = ["call 1", "line 2", "line 3", "exception 3", "line 4", "handled 5", "line 5", "return 5"]
    check(same and got == want, "%s handled in a module of the program%s" % (label, "" if got == want else ": %s" % got))


# ------------------------------------------------------------------ threads
THREADS = '''import threading
results = []
def worker(n):
    t = 0
    for i in range(n):
        t += i
    results.append(t)
ts = [threading.Thread(target=worker, args=(i,)) for i in (0, 1, 2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(results))
'''
PINGPONG = '''import threading
a, b = threading.Event(), threading.Event()
def other():
    a.wait()
    x = 1
    b.set()
t = threading.Thread(target=other)
t.start()
y = 2
a.set()
b.wait()
t.join()
'''
STRESS = '''import sys, threading
sys.setswitchinterval(1e-6)
def spin(n):
    s = ""
    for i in range(n):
        s = s + "é\\u2028" + str(i)
    return len(s)
ts = [threading.Thread(target=spin, args=(1500,)) for _ in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
'''
RAW = '''import _thread, time
done = []
def side(v):
    done.append(v)
_thread.start_new_thread(side, (1,))
while not done:
    time.sleep(0.001)
'''
NONE = "import sys\nx = 'threading' in sys.modules\nprint(x)\n"
# a thread busy in traced code while the main thread forks (the child must not wait for a lock
# the other thread held), and one still running when the module's code ends (nothing after end)
# late() waits for an event set in threading's shutdown, not for
# threading.main_thread().join(): before 3.13 a join that takes the main
# thread's lock between _shutdown's release of it and its _stop() fails
# _stop's assert (CI saw it once on 3.9, in the traced run only: "Exception
# ignored in: <module 'threading'> ... assert not lock.locked()"), a race of
# the program, not of the tracer.
FORKING = '''import os, sys, threading, time, warnings
warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork in a threaded process, with the pid
sys.setswitchinterval(1e-6)
stop = []
def busy():
    n = 0
    while not stop:
        n += 1
t = threading.Thread(target=busy)
t.start()
for k in range(20):
    pid = os.fork()
    if pid == 0:
        x = k
        os._exit(0)
    os.waitpid(pid, 0)
stop.append(1)
t.join()
def late():
    ended.wait()  # set once the module has ended, in threading's shutdown
    y = 1
def watch():  # 3.8 (no _register_atexit): the main thread's stop, read without taking its lock
    while not threading.main_thread()._is_stopped:
        time.sleep(0.0005)
    ended.set()
ended = threading.Event()
if hasattr(threading, "_register_atexit"):
    threading._register_atexit(ended.set)
else:
    threading.Thread(target=watch).start()
threading.Thread(target=late).start()
print("forked 20")
'''


def worker(n):
    return ["call 3", "line 4", "line 5"] + ["line 6", "line 5"] * n + ["line 7", "return 7"]


def threads(label, py, mon):
    plain, traced, trace, same = run(py, THREADS)
    check(same and plain.stdout == b"[0, 0, 1]\n", "%s threads: the program unchanged" % label)
    evs = tracerun.events(tracerun.records(trace))
    ths = sorted({e.get("th", 0) for e in evs})
    check(ths == [0, 1, 2, 3] and all("th" not in e for e in evs if e["fn"] == "<module>"),
          "%s threads: numbered 1, 2, 3, the main thread's events without th: %s" % (label, ths))
    per = sorted(seq(evs, th=n) for n in (1, 2, 3))
    check(per == sorted(worker(n) for n in (0, 1, 2)), "%s threads: each worker's own sequence %s" % (label, per))
    check(all(e["d"] == 0 and e["up"] is None for e in evs if e.get("th") and e["k"] == "call"),
          "%s threads: a thread's first traced frame at depth 0" % label)

    _, _, trace, same = run(py, PINGPONG)
    evs = tracerun.events(tracerun.records(trace))
    t1 = seq(evs, th=1)
    check(same and t1 == ["call 3", "line 4", "line 5", "line 6", "return 6"],
          "%s pingpong: the thread's sequence %s" % (label, t1))
    order = [(e.get("th", 0), e["k"], e["ln"]) for e in evs]
    check(order.index((0, "line", 10)) < order.index((1, "line", 5)) < order.index((0, "return", 12)),
          "%s pingpong: x = 1 after a.set() was reached, before the module's end" % label)

    _, traced, trace, same = run(py, STRESS, limits={"events": 1000000})
    try:
        recs = tracerun.records(trace)
        n = len(tracerun.events(recs))
        ok = recs[-1]["status"] == "complete" and n > 4 * 3000
    except Exception as e:
        ok, n = False, repr(e)
    check(same and ok, "%s threads at a 1 us switch interval: whole records, i without gaps (%s events)" % (label, n))

    _, _, trace, same = run(py, NONE)
    recs = tracerun.records(trace)
    check(same and all("th" not in e for e in tracerun.events(recs)),
          "%s no threads: threading not imported for the program, no th" % label)

    plain, traced, trace, same = run(py, FORKING, limits={"events": 200000})
    try:
        recs = tracerun.records(trace)
        evs = tracerun.events(recs)
        why = [w for w, bad in (
            ("status %s" % recs[-1].get("status"), recs[-1]["status"] not in ("complete", "truncated")),
            ("late's line 21 traced", [e for e in evs if e["fn"] == "late" and e["k"] == "line" and e["ln"] == 21]),
            ("no event of busy", not [e for e in evs if e["fn"] == "busy"]),
            ("a child's lines 14/15", [e for e in evs if e["fn"] == "<module>" and e["ln"] in (14, 15)])) if bad]
        ok = True if not why else "; ".join(why)
    except Exception as e:
        ok = "bad trace %r" % e
    if not same or traced.stdout != b"forked 20\n":  # say which run said what (a flake in CI said only False)
        ok = "%s; plain exit %s out %r err %r; traced exit %s out %r err %r" % (
            ok, plain.returncode, plain.stdout[-200:], plain.stderr[-600:], traced.returncode, traced.stdout[-200:],
            traced.stderr[-600:])
    check(same and traced.stdout == b"forked 20\n" and ok is True,
          "%s forks while a thread runs, a thread after the end: no hang, no child's events, nothing after the end (%s)"
          % (label, ok))

    if mon:
        _, _, trace, same = run(py, RAW)
        evs = tracerun.events(tracerun.records(trace))
        got = seq(evs, "side")
        check(same and got == ["call 3", "line 4", "return 4"] and all(e.get("th") == 1 for e in evs if e["fn"] == "side"),
              "%s a _thread thread (sys.monitoring): traced as thread 1: %s" % (label, got))


def main():
    pys = tracerun.pythons()
    if not pys:
        print("SKIPPED: no python3")
        return tracerun.SKIP
    for label, py in pys:
        out = tracerun.run_plain(py, "-c", ["import sys; print(*sys.version_info[:2])"]).stdout.split()
        version = (int(out[0]), int(out[1]))
        mon = version >= (3, 12)
        abrupt(label, py, mon)
        handled(label, py, version)
        threads(label, py, mon)
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
