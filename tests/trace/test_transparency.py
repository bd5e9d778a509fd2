"""Every program of programs/ run as `python3 main.py ARGS` and under the
tracer: stdout, stderr and exit status equal byte for byte, on every Python
installed (Debian's and pyenv's 3.8 ... 3.13); the trace well formed, its end
saying how the program ended."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracerun  # noqa: E402


def main():
    pys = tracerun.pythons()
    if not pys:
        print("SKIPPED: no python3 at all")
        return tracerun.SKIP
    progs = sorted(os.listdir(os.path.join(tracerun.HERE, "programs")))
    failures = []
    checked = 0
    for label, py in pys:
        for name in progs:
            src = os.path.join(tracerun.HERE, "programs", name)
            with tempfile.TemporaryDirectory() as tmp:
                work = os.path.join(tmp, name)
                shutil.copytree(src, work)
                args = open(os.path.join(work, "args")).read().split() if os.path.exists(os.path.join(work, "args")) else []
                stdin = open(os.path.join(work, "stdin"), "rb").read() if os.path.exists(os.path.join(work, "stdin")) else b""
                plain = tracerun.run_plain(py, "main.py", args, stdin, cwd=work)
                traced, trace = tracerun.run_traced(py, "main.py", args, stdin, cwd=work)
            checked += 1
            why = []
            for what in ("stdout", "stderr", "returncode"):
                a, b = getattr(plain, what), getattr(traced, what)
                if a != b:
                    why.append("%s differs:\n  plain:  %r\n  traced: %r" % (what, a, b))
            try:
                recs = tracerun.records(trace)
                end = recs[-1]
                want = open(os.path.join(src, "status")).read().split() if os.path.exists(os.path.join(src, "status")) else ["complete"]
                if [end["status"]] + ([end["cap"]] if "cap" in end else []) != want:
                    why.append("end status %s" % end)
                code = plain.returncode
                if code >= 0 and end["exit"].get("code", 1 if "exception" in end["exit"] else None) != code:
                    why.append("end exit %s, process %d" % (end["exit"], code))
            except Exception as e:
                why.append("bad trace: %r\n%s" % (e, trace[-2000:]))
            if why:
                failures.append("%s %s: %s" % (label, name, "\n".join(why)))
            print("%s %s %s" % ("FAIL" if why else "ok  ", label, name))
    for f in failures:
        print("FAIL", f)
    print("%d runs, %d failed" % (checked, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
