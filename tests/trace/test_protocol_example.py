"""PROTOCOL.md "Traces": the example program (block `python trace-example`)
traced by Debian's python3 must give exactly the example trace (block
`jsonl trace-example`), line for line; only head's `version` and `files`
(the machine's Python and the temporary directory) are taken from the doc."""
import json
import os
import re
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
    progs, traces = blocks(doc, "python trace-example"), blocks(doc, "jsonl trace-example")
    if len(progs) != 1 or len(traces) != 1:
        print("FAIL: want one program and one trace block, got %d and %d" % (len(progs), len(traces)))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "main.py"), "w") as f:
            f.write(progs[0])
        p, trace = tracerun.run_traced("/usr/bin/python3", "main.py", cwd=tmp)
    if p.returncode != 0 or p.stdout != b"[2, 4]\n":
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
    print("ok: %d records as in PROTOCOL.md" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
