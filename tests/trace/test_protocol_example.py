"""PROTOCOL.md "Traces": each example program (blocks `python trace-example`
and `python trace-cruxeval`, the worked example) traced by Debian's python3
must give exactly its example trace (blocks `jsonl trace-example`, `jsonl
trace-cruxeval`), line for line; only head's `version` and `files` (the
machine's Python and the temporary directory) are taken from the doc. The
worked example's client block (`python trace-cruxeval-views`) is run on that
trace (as main.trace.jsonl) with clients/python: it must print the lines its
`# ...` comment lines show, and the line path the text states."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracerun  # noqa: E402


def blocks(doc, info):
    return re.findall(r"^```" + re.escape(info) + r"\n(.*?)^```$", doc, re.S | re.M)


def main():
    if not os.path.exists("/usr/bin/python3"):
        print("SKIPPED: no /usr/bin/python3")
        return tracerun.SKIP
    doc = open(os.path.join(tracerun.ROOT, "proto", "PROTOCOL.md"), encoding="utf-8").read()
    rc = example(doc, "trace-example", b"[2, 4]\n")
    if rc == 0:
        rc = example(doc, "trace-cruxeval", b"[(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]\n", views=True)
    return rc


def example(doc, tag, stdout, views=False):
    progs, traces = blocks(doc, "python " + tag), blocks(doc, "jsonl " + tag)
    if len(progs) != 1 or len(traces) != 1:
        print("FAIL: want one program and one trace block, got %d and %d" % (len(progs), len(traces)))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "main.py"), "w") as f:
            f.write(progs[0])
        p, trace = tracerun.run_traced("/usr/bin/python3", "main.py", cwd=tmp)
        if views:
            with open(os.path.join(tmp, "main.trace.jsonl"), "w") as f:
                f.write(trace)
            if run_views(doc, tag, tmp):
                return 1
    if p.returncode != 0 or p.stdout != stdout:
        print("FAIL: the example program ran %d %r %r" % (p.returncode, p.stdout, p.stderr))
        return 1
    want = traces[0].splitlines()
    got = trace.splitlines()
    head_doc, head_got = json.loads(want[0]), json.loads(got[0])
    if head_got["version"].split(".")[:2] != head_doc["version"].split(".")[:2]:
        print("SKIPPED: the example is CPython %s's, /usr/bin/python3 is %s" % (head_doc["version"], head_got["version"]))
        return tracerun.SKIP
    head_got["version"], head_got["files"] = head_doc["version"], head_doc["files"]
    if head_got != head_doc or [json.loads(x) for x in got[1:]] != [json.loads(x) for x in want[1:]] \
            or got[1:] != want[1:]:
        print("FAIL: the example differs from the tracer's output:")
        for i, (a, b) in enumerate(zip(want, got)):
            if a != b:
                print("  line %d\n    doc:    %s\n    tracer: %s" % (i + 1, a, b))
        if len(want) != len(got):
            print("  doc has %d lines, tracer %d" % (len(want), len(got)))
        return 1
    print("ok: %s: %d records as in PROTOCOL.md" % (tag, len(got)))
    return 0


def run_views(doc, tag, tmp):
    """1 when the views block does not print what its comment lines show."""
    code = blocks(doc, "python %s-views" % tag)
    if len(code) != 1:
        print("FAIL: want one python %s-views block, got %d" % (tag, len(code)))
        return 1
    want = [ln[2:] for ln in code[0].splitlines() if ln.startswith("# ")]
    client = os.path.join(tracerun.ROOT, "clients", "python")
    env = dict(os.environ, PYTHONPATH=client)
    p = subprocess.run(["/usr/bin/python3", "-c", code[0]], cwd=tmp, env=env, capture_output=True, text=True,
                       timeout=60)
    got = p.stdout.splitlines()
    if p.returncode != 0 or got != want or len(want) < 3:
        print("FAIL: the %s-views block printed %r (want %r): %s" % (tag, got, want, p.stderr[-1000:]))
        return 1
    path = subprocess.run(["/usr/bin/python3", "-c", "from surgebox import Trace; from surgebox.trace_lines import "
                           "line_path; print(*line_path(Trace.load('main.trace.jsonl')))"],
                          cwd=tmp, env=env, capture_output=True, text=True, timeout=60).stdout.strip()
    stated = re.search(r"the executed lines `([0-9 ]+)`", doc)
    if not stated or stated.group(1) != path:
        print("FAIL: the line path stated %r, the converter's %r" % (stated and stated.group(1), path))
        return 1
    print("ok: %s-views prints %d lines as shown, line path %s" % (tag, len(want), path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
