"""Sameness on CRUXEval's 800 programs (output mode, as surgebox's verify
runs them: `<code>` then `assert <output> == f(<input>)`, the reference
output, CRUXEval's own check): each run cold (`python3 prog.py`) and warm
(a child of one zygote), on Debian's python3 and every pyenv CPython
3.8 ... 3.13 present (absent ones printed, not counted): exit status, stdout and stderr equal byte for byte.
Skips (77) when the data is absent. PYTHONHASHSEED=0 on both sides: a warm
job has its zygote's one seed, a cold one its own (PROTOCOL.md).
CRUXEVAL_STRIDE=K runs every K-th program only (a CI slice)."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zygoterun  # noqa: E402

DATA = os.environ.get("CRUXEVAL_DATA", os.path.join(zygoterun.ROOT, "..", "shared", "cruxeval", "cruxeval.jsonl"))
STRIDE = int(os.environ.get("CRUXEVAL_STRIDE", "1"))
EXPECTED = (800 + STRIDE - 1) // STRIDE


def programs(path):
    with open(path) as f:
        for i, line in enumerate(f):
            if i % STRIDE:
                continue
            s = json.loads(line)
            yield s["id"], "%s\nassert %s == f(%s)" % (s["code"], s["output"], s["input"])


def main():
    if not os.path.exists(DATA):
        print("SKIPPED: no CRUXEval data at %s (set CRUXEVAL_DATA)" % DATA)
        return zygoterun.SKIP
    pys = zygoterun.pythons()
    if not pys:
        print("SKIPPED: no python3 at all")
        return zygoterun.SKIP
    bad = [label for label, py in pys if one_python(label, py)]
    print("%d Pythons, %d with differences%s" % (len(pys), len(bad), (": " + ", ".join(bad)) if bad else ""))
    return 1 if bad else 0


def one_python(label, py):
    z = zygoterun.Zygote(py)
    diffs, n, failed_cold = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for sid, prog in programs(DATA):
            d = os.path.join(tmp, sid)
            os.mkdir(d)
            with open(os.path.join(d, "prog.py"), "w") as f:
                f.write(prog)
            cold = zygoterun.run_cold(py, "prog.py", cwd=d)
            warm = z.run("prog.py", cwd=d)
            n += 1
            failed_cold += cold[0] != 0
            if cold != warm:
                diffs.append("%s: cold %r\n  warm %r" % (sid, cold, warm))
    rc = z.close()
    for d in diffs:
        print("DIFF", d)
    print("%s: %d programs (%d fail cold), %d differ warm vs cold; zygote exit %d" % (label, n, failed_cold, len(diffs), rc))
    if n != EXPECTED:
        print("FAIL: expected %d programs, read %d" % (EXPECTED, n))
        return True
    return bool(diffs or rc)


if __name__ == "__main__":
    sys.exit(main())
