"""The C and C++ corpus traced through the daemon (gdb's tracer, PROTOCOL.md
"Traces", "C and C++"): `test_c.py --bin BUILD/bin CASE`, one ctest
trace.c.CASE each. The job is the toolchain form with trace.check: the
traced run's stdout, stderr and exit must equal the untraced run's, and the
trace must match expect.py's hand-written events and values."""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "cli"))
from expect import CASES  # noqa: E402
from private_daemon import PrivateDaemon  # noqa: E402
import gdbtrace  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def states(events):
    """The locals of each event's frame after it (loc applied: diffs, or a full snapshot)."""
    frames, out = {}, []
    full_kinds = ("call",)
    for ev in events:
        cur = frames.setdefault(ev["fr"], {})
        if "loc" in ev:
            if ev["k"] in full_kinds or ev.get("_full"):
                cur.clear()
            for k, v in ev["loc"].items():
                if v is None:
                    cur.pop(k, None)
                else:
                    cur[k] = v
        out.append(dict(cur))
    return out


def obj(repr_):
    m = re.match(r"#(\d+)", repr_)
    return m.group(1) if m else None


def run_case(sock, name, spec):
    src = [f for f in os.listdir(HERE) if f.split(".")[0] == name][0]
    main = "main" + os.path.splitext(src)[1]
    with open(os.path.join(HERE, src)) as f:
        content = f.read()
    req = {"id": name, "type": "exec", "toolchain": spec["toolchain"],
           "files": [{"path": main, "content": content}], "trace": {"check": True}, "limits": {"time_s": 60}}
    if "stdin" in spec:
        req["stdin"] = spec["stdin"]
    if "options" in spec:
        req["options"] = spec["options"]
    t0 = time.monotonic()
    resp = gdbtrace.request(sock, req)
    wall = time.monotonic() - t0
    check(resp.get("type") == "exec", "%s: an exec answer (%s)" % (name, str(resp)[:300]))
    if resp.get("type") != "exec":
        return
    comp = resp["steps"][0]
    check(comp.get("name") == "compile" and comp.get("status") == "ok", "%s: compiled (%s)" % (name, comp.get("stderr", "")[:300]))
    step = resp["steps"][-1]
    check(step.get("trace_check") == {"stdout_equal": True, "stderr_equal": True, "exit_equal": True},
          "%s: traced run equal to the untraced one: %r" % (name, step.get("trace_check")))
    check(step.get("stdout") == spec["stdout"], "%s: stdout %r" % (name, step.get("stdout")))
    recs = [json.loads(x) for x in step.get("trace", "").splitlines()]
    head, end = recs[0], recs[-1]
    check(head.get("t") == "head" and head.get("lang") == ("cpp" if spec["toolchain"] == "g++" else "c")
          and head.get("impl") == "gdb" and "-O0" in head.get("flags", "").split() and "-g" in head.get("flags", "").split(),
          "%s: head says gdb, the language and -O0 -g: %r" % (name, {k: head.get(k) for k in ("lang", "impl", "compiler", "flags")}))
    check(head.get("files") == ["/app/" + main], "%s: files %r" % (name, head.get("files")))
    build = head.get("build", [])
    check("-O0" in build and "-g" in build and not [a for a in build if a.startswith("-O") and a != "-O0"],
          "%s: the compile step as run, at -O0 -g only: %r" % (name, build))
    check(end.get("t") == "end" and end.get("status") == "complete" and end.get("exit") == spec["exit"]
          and "by" not in end, "%s: the tracer's complete end with exit %r: %r" % (name, spec["exit"], end))
    events = [r for r in recs if r.get("t") == "ev"]
    got = ["%s %s %d" % (e["k"], e["fn"], e["ln"]) for e in events]
    check(got == spec["events"], "%s: events\n  got      %s\n  expected %s" % (name, got, spec["events"]))
    check([e["i"] for e in events] == list(range(len(events))), "%s: i without gaps" % name)
    if got != spec["events"]:
        return
    st = states(events)
    for i, var, want in spec.get("values", []):
        have = st[i].get(var)
        r = have[1] if have else None
        if want.startswith("="):  # =NAME@I: NAME's object at event I; =NAME@I+K: K bytes into it
            other, at = want[1:].split("@")
            at, _, off = at.partition("+")
            num = obj(st[int(at)][other][1])
            ok = r is not None and num is not None and (r == "#%s+%s" % (num, off) if off else obj(r) == num)
        elif want.startswith("re:"):
            ok = r is not None and re.fullmatch(want[3:], r) is not None
        elif want.startswith("~"):
            ok = r is not None and r.endswith(want[2:])
        else:
            ok = r is not None and re.sub(r"^#\d+", "", r) == want
        check(ok, "%s: event %d: %s = %r (expected %r)" % (name, i, var, r, want))
    for i, var, ty in spec.get("types", []):
        have = st[i].get(var)
        check(have is not None and have[0] == ty, "%s: event %d: %s's type %r" % (name, i, var, have and have[0]))
    for i, want in spec.get("vals", {}).items():
        v = events[i].get("val")
        check(v is not None and v[1] == want, "%s: event %d returns %r (expected %s)" % (name, i, v, want))
    for i, want in spec.get("exc", {}).items():
        check(events[i].get("exc") == want, "%s: event %d exc %r" % (name, i, events[i].get("exc")))
    for i, d in spec.get("depths", {}).items():
        check(events[i]["d"] == d, "%s: event %d depth %d" % (name, i, events[i]["d"]))
    for i, j in spec.get("ups", {}).items():
        check(events[i]["up"] == events[j]["fr"], "%s: event %d's caller is event %d's frame" % (name, i, j))
    frs = {}
    for e in events:  # a frame keeps its function and depth
        frs.setdefault(e["fr"], (e["fn"], e["d"], e["up"]))
        check(frs[e["fr"]] == (e["fn"], e["d"], e["up"]), "%s: event %d: frame %d stable" % (name, e["i"], e["fr"])) if frs[e["fr"]] != (e["fn"], e["d"], e["up"]) else None
    print("%s: %d events, %.2f s through the daemon (compile, untraced and traced runs)" % (name, len(events), wall))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    skip = gdbtrace.skip_reason(CASES[a.case]["toolchain"])
    if skip:
        print("SKIPPED: " + skip)
        return 77
    with tempfile.TemporaryDirectory() as cache:
        d = PrivateDaemon(a.bin, cache)
        try:
            run_case(d.sock, a.case, CASES[a.case])
        finally:
            d.stop()
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
