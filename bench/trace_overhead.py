"""The Python tracer's cost (issue 24): CRUXEval programs (`<code>` then
`f(<input>)`, as CRUXEval runs them) and a loop-heavy program, each run as
`python3 main.py` and under toolchains/tracers/python/sbtrace.py, in the same
run. Prints wall and CPU ratios (traced / plain) and the CPU cost per trace
event. Processes, not the daemon: the daemon's own per-job cost comes on top
of both sides. Never asserts a timing.

  python3 bench/trace_overhead.py [--python PY] [--samples N] [--data cruxeval.jsonl]"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SBTRACE = os.path.join(ROOT, "toolchains", "tracers", "python", "sbtrace.py")
LOOP = "def work(n):\n    t = 0\n    for i in range(n):\n        if i % 3:\n            t += i\n    return t\nprint(work(200000))\n"


def run_all(cmds, cwd_files):
    """Runs each (argv, cwd, trace?) once; (wall s, cpu s, events)."""
    wall = cpu = 0.0
    events = 0
    for argv, cwd, traced in cmds:
        env = dict(os.environ, PYTHONHASHSEED="0")
        with tempfile.TemporaryFile() as tf:
            if traced:
                env["SURGEBOX_TRACE_FD"] = str(tf.fileno())
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           pass_fds=(tf.fileno(),) if traced else (), timeout=60)
            wall += time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu += r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
            if traced:
                tf.seek(0)
                last = tf.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
                events += json.loads(last).get("events", 0)
    return wall, cpu, events


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "cruxeval", "cruxeval.jsonl"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        with open(a.data) as f:
            for n, line in enumerate(f):
                if n >= a.samples:
                    break
                s = json.loads(line)
                d = os.path.join(tmp, s["id"])
                os.mkdir(d)
                with open(os.path.join(d, "main.py"), "w") as g:
                    g.write(s["code"] + "\nf(" + s["input"] + ")\n")
                dirs.append(d)
        loop = os.path.join(tmp, "loop")
        os.mkdir(loop)
        with open(os.path.join(loop, "main.py"), "w") as g:
            g.write(LOOP)
        py = a.python
        plain = [([py, "main.py"], d, False) for d in dirs]
        traced = [([py, SBTRACE, "main.py"], d, True) for d in dirs]
        # interleave twice to spread the machine's noise over both sides
        p1, t1 = run_all(plain, None), run_all(traced, None)
        p2, t2 = run_all(plain, None), run_all(traced, None)
        pw, pc = p1[0] + p2[0], p1[1] + p2[1]
        tw, tc, ev = t1[0] + t2[0], t1[1] + t2[1], t1[2] + t2[2]
        print("CRUXEval, %d programs x 2, %s:" % (len(dirs), py))
        print("  wall plain %.2f s, traced %.2f s: ratio %.2f" % (pw, tw, tw / pw))
        print("  cpu  plain %.2f s, traced %.2f s: ratio %.2f" % (pc, tc, tc / pc))
        print("  %d events, %.1f per program; cpu per event %.2f us" % (ev, ev / (2 * len(dirs)),
                                                                          (tc - pc) / max(ev, 1) * 1e6))
        lp = run_all([([py, "main.py"], loop, False)] * 3, None)
        lt = run_all([([py, SBTRACE, "main.py"], loop, True)] * 3, None)
        print("loop-heavy (200000 iterations, events capped at 1000000), x 3:")
        print("  wall plain %.2f s, traced %.2f s: ratio %.1f" % (lp[0], lt[0], lt[0] / lp[0]))
        print("  cpu  plain %.2f s, traced %.2f s: ratio %.1f; %d events, cpu per event %.2f us" % (
            lp[1], lt[1], lt[1] / lp[1], lt[2], (lt[1] - lp[1]) / max(lt[2], 1) * 1e6))


if __name__ == "__main__":
    main()
