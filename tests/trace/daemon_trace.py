"""Traces through the daemon (the "trace" option, PROTOCOL.md "Traces"), one
case per run: `daemon_trace.py --bin BUILD/bin CASE`. The benign cases are
tests/trace's (trace.daemon.*); the hostile ones are also the security
suite's (security.trace_*, with .pool0 twins). Always inside the unshare
wrapper: the programs forge, flood and crash.

direct     a fixture traced by the daemon equals the tracer's own direct output
           (same Python, hash seed and limits; paths /app vs a temporary
           directory), its stdout equal to the untraced run's (trace.check)
refuse     trace on rustc, on a shell step, with a bad limit: refused, naming it
cap        a program flooding fd 3 with valid records: cut by the supervisor at
           its byte cap on a full line, its truncated/bytes end appended
closefd    the program closes fd 3: crashed (no end), the program unchanged
osexit     os._exit mid-run, a SIGKILL to itself: crashed, with the exit status
           or signal, every event up to that line kept
forged     junk lines on fd 3: tampered, cut before the first one
after_end  a forged end then more records: tampered, one end (the supervisor's)
deep       recursion 5000 deep: truncated by the depth cap, the program unchanged
lines      10^7 lines: truncated by the events cap, well within the wall limit
rss        a program writing 400 MB to fd 3 under a 1 MiB cap: the daemon's
           resident memory grows by under 48 MiB while it runs
forge_head issue 35 finding 7a: the program writes a whole trace (head,
           events, a complete end; then also with a made-up seal) on fd 3
           before the tracer's first flush and leaves through an exit the
           tracer does not see: tampered, trace_check.trace_sealed false
           (ab9ce63: complete, every trace_check field true)
forge_cap  finding 7b: past the events cap the program finds the tracer
           through gc and marks it complete: tampered (the tracer sealed
           "truncated" at the cap), trace_check.trace_sealed false
end_cap    finding 8: at every byte cap (4096, the default, 256 MiB) an `end`
           line as long as the cap allows (the cap less 2 KiB for the
           tracer's records, so it is whole), then a `file` record as long:
           the end fails at its 16 KiB bound, the long record is scanned as it
           comes; both tampered (after the tracer's seal); the daemon's
           resident memory grows by at most twice the cap + 32 MiB, and no
           loop turn is busy over 0.1 s (the loop histogram). ab9ce63 parsed
           such an end whole with json-c on the loop thread
"""
import argparse
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cli"))
import tracerun  # noqa: E402
from private_daemon import PrivateDaemon  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def request(sock, req):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall((json.dumps(req) + "\n").encode())
    f = s.makefile("rb")
    line = f.readline()
    s.close()
    return json.loads(line)


def traced(sock, source, trace=True, **extra):
    req = {"id": "t", "type": "exec", "toolchain": "python3", "files": [{"path": "main.py", "content": source}],
           "trace": trace}
    req.update(extra)
    resp = request(sock, req)
    if resp.get("type") == "error":
        raise AssertionError("error response: %r" % resp)
    return resp, resp["steps"][-1]


def lines_of(step):
    return [json.loads(x) for x in step["trace"].splitlines()]


def end_of(step):
    return lines_of(step)[-1]


FIXTURE = '''\
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def gen(n):
    for i in range(n):
        yield i * i


def f(xs):
    seen = {"a", "b", "c", "d"}
    d = {}
    for x in xs:
        d[x] = Point(x, [x] * 2)
    try:
        {}["missing"]
    except KeyError:
        pass
    return sorted(d, key=lambda k: -k), list(gen(3)), seen


print(f([3, 1, 2]))
'''


def case_direct(sock):
    resp, step = traced(sock, FIXTURE, {"check": True, "events": 100000})
    check(step["trace_status"] == "complete", "direct: the daemon's trace is complete")
    check(step.get("trace_check") == {"stdout_equal": True, "stderr_equal": True, "exit_equal": True,
                                      "trace_sealed": True},
          "direct: stdout, stderr and exit equal to the untraced run's, the trace sealed: %r" % step.get("trace_check"))
    check(step.get("trace_sealed") is True and step.get("trace_forgeable") is True,
          "direct: a Python trace says it is sealed and forgeable: %r %r"
          % (step.get("trace_sealed"), step.get("trace_forgeable")))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "main.py")
        with open(path, "w") as f:
            f.write(FIXTURE)
        p, text = tracerun.run_traced("/usr/bin/python3", path, cwd=d,
                                      limits={"events": 100000, "bytes": step["trace_bytes"]})
    check(p.stdout.decode() == step["stdout"], "direct: the same stdout as the direct traced run")
    mine = step["trace"].replace("/app/main.py", "MAIN").splitlines()
    theirs = text.replace(path, "MAIN").splitlines()
    check(len(mine) == len(theirs) and len(mine) > 30, "direct: %d records, %d direct" % (len(mine), len(theirs)))
    diff = [(a, b) for a, b in zip(mine, theirs) if a != b]
    check(not diff, "direct: every record equal to the direct run's (first difference: %r)" % (diff[:1],))
    # descriptors: the traced program has 0-2 and the trace's 3 (close-on-exec), the untraced one 0-2
    src = "import os, fcntl\nfds = sorted(int(x) for x in os.listdir('/proc/self/fd'))[:-1]\n" \
          "print(fds, [fcntl.fcntl(fd, fcntl.F_GETFD) & 1 for fd in fds])\n"
    resp, step = traced(sock, src, {"check": True})
    check(step["stdout"] == "[0, 1, 2, 3] [0, 0, 0, 1]\n", "direct: the traced program's descriptors: %r" % step["stdout"])
    want = hashlib.sha256(b"[0, 1, 2] [0, 0, 0]\n").hexdigest()
    check(step["untraced"]["stdout_sha256"] == want and step["trace_check"]["stdout_equal"] is False,
          "direct: the untraced run has descriptors 0-2 only (so its stdout differs, and check says so)")


def case_refuse(sock):
    # gcc is traced since gdb's tracer (tests/trace/c); rustc has no tracer
    r = request(sock, {"id": 1, "type": "exec", "toolchain": "rustc", "trace": True,
                       "files": [{"path": "main.rs", "content": "fn main() {}\n"}]})
    check(r.get("error", {}).get("code") == "bad_request" and "rustc" in r["error"]["message"]
          and "python3" in r["error"]["message"], "refuse: rustc: %r" % r.get("error"))
    r = request(sock, {"id": 2, "type": "exec", "steps": [{"name": "sh", "argv": ["sh", "-c", "true"], "trace": True}]})
    check(r.get("error", {}).get("code") == "bad_request" and "steps[0] (sh)" in r["error"]["message"],
          "refuse: a shell step, named: %r" % r.get("error"))
    r = request(sock, {"id": 3, "type": "exec", "toolchain": "python3", "trace": {"bytes": 100},
                       "files": [{"path": "main.py", "content": "pass\n"}]})
    check(r.get("error", {}).get("code") == "bad_limits" and "trace.bytes" in r["error"]["message"],
          "refuse: bytes under 4096: %r" % r.get("error"))
    r = request(sock, {"id": 4, "type": "exec", "toolchain": "python3", "trace": {"evnts": 1},
                       "files": [{"path": "main.py", "content": "pass\n"}]})
    check(r.get("error", {}).get("code") == "unknown_field" and "evnts" in r["error"]["message"],
          "refuse: an unknown limit: %r" % r.get("error"))


FLOOD = '''\
import os
rec = b'{"t":"file","f":9,"path":"' + b"x" * 200 + b'"}\\n'
os.write(3, b'{"t":"head","v":1,"lang":"python"}\\n')  # before the tracer's own (buffered) head
try:
    for _ in range(%d):
        os.write(3, rec * 64)
except OSError as e:
    print("write refused:", type(e).__name__)
print("done")
'''


def case_cap(sock):
    resp, step = traced(sock, FLOOD % 2000, {"bytes": 65536})
    end = end_of(step)
    check(step["trace_truncated"] and step["trace_status"] == "truncated", "cap: truncated by the supervisor")
    check(end.get("status") == "truncated" and end.get("cap") == "bytes" and end.get("by") == "supervisor",
          "cap: the supervisor's end: %r" % end)
    check(len(step["trace"].encode()) <= 65536 + 512, "cap: %d bytes kept under 64 KiB + its end" % len(step["trace"]))
    check(all(isinstance(r, dict) for r in lines_of(step)), "cap: every line kept is a whole record")
    check(step["status"] in ("ok", "runtime_error"), "cap: the program ran on (%s)" % step["status"])


def case_closefd(sock):
    src = "import os\ntry:\n    os.close(3)\nexcept OSError:\n    pass\nprint(sum(range(10)))\n"
    resp, step = traced(sock, src, {"check": True})
    end = end_of(step)
    check(step["trace_status"] == "crashed" and end.get("by") == "supervisor", "closefd: crashed: %r" % end)
    check(step["stdout"] == "45\n" and step["exit_code"] == 0, "closefd: the program unchanged")
    check(step["trace_check"]["stdout_equal"], "closefd: stdout equal to the untraced run's")


def case_osexit(sock):
    resp, step = traced(sock, "import os\nfor i in range(3):\n    pass\nos._exit(3)\n")
    end = end_of(step)
    check(step["trace_status"] == "crashed" and end.get("exit") == {"code": 3}, "osexit: crashed, exit 3: %r" % end)
    check(all(r["t"] in ("head", "file", "ev") for r in lines_of(step)[:-1]), "osexit: only whole records kept")
    # the tracer writes its records through before os._exit: every event up to that line
    evs = [(r["k"], r["ln"]) for r in lines_of(step) if r["t"] == "ev"]
    check(evs == [("call", 1), ("line", 1), ("line", 2), ("line", 3), ("line", 2), ("line", 3), ("line", 2),
                  ("line", 3), ("line", 2), ("line", 4)], "osexit: every event up to os._exit: %r" % evs)
    # a SIGKILL the program sends itself: crashed, the signal as its exit, the events up to the kill
    resp, step = traced(sock, "import os\nx = 1\nos.kill(os.getpid(), 9)\nprint('never')\n")
    end = end_of(step)
    check(step["trace_status"] == "crashed" and end.get("exit") == {"signal": 9}, "osexit: killed by itself: %r" % end)
    evs = [(r["k"], r["ln"]) for r in lines_of(step) if r["t"] == "ev"]
    check(evs == [("call", 1), ("line", 1), ("line", 2), ("line", 3)], "osexit: every event up to the kill: %r" % evs)


def case_forged(sock):
    resp, step = traced(sock, "import os\nx = 1\nos.write(3, b'not json\\n')\ny = 2\n")
    end = end_of(step)
    check(step["trace_status"] == "tampered" and end.get("by") == "supervisor", "forged: tampered: %r" % end)
    check("not a trace record" in end.get("reason", ""), "forged: the reason names the line")
    check(all(r["t"] != "end" for r in lines_of(step)[:-1]), "forged: one end record")
    check(b"not json" not in step["trace"].encode(), "forged: cut before the forged line")


def case_after_end(sock):
    src = ("import os\nos.write(3, b'{\"t\":\"end\",\"status\":\"complete\",\"events\":0,\"exit\":{\"code\":0}}\\n')\n"
           "os.write(3, b'{\"t\":\"file\",\"f\":5,\"path\":\"/x\"}\\n')\n")
    resp, step = traced(sock, src)
    recs = lines_of(step)
    check(step["trace_status"] == "tampered", "after_end: tampered: %r" % recs[-1])
    check([r["t"] for r in recs].count("end") == 1 and recs[-1].get("by") == "supervisor",
          "after_end: one end, the supervisor's")


def case_deep(sock):
    src = "import sys\nsys.setrecursionlimit(20000)\ndef r(n):\n    return 0 if n == 0 else 1 + r(n - 1)\nprint(r(5000))\n"
    resp, step = traced(sock, src, {"depth": 100, "check": True})
    end = end_of(step)
    check(end.get("status") == "truncated" and end.get("cap") == "depth", "deep: truncated by depth: %r" % end)
    check(step["stdout"] == "5000\n" and step["trace_check"]["stdout_equal"], "deep: the program unchanged")


def case_lines(sock):
    src = "n = 0\nfor i in range(10 ** 7):\n    n += i\nprint(n)\n"
    t0 = time.monotonic()
    resp, step = traced(sock, src, {"events": 100000}, limits={"time_s": 20})
    took = time.monotonic() - t0
    end = end_of(step)
    check(end.get("status") == "truncated" and end.get("cap") == "events" and end.get("events") == 100000,
          "lines: truncated at 100000 events: %r" % end)
    check(step["status"] == "ok" and step["stdout"] == "%d\n" % sum(range(10 ** 7)),
          "lines: the program ran to its end (%s, %.1f s)" % (step["status"], took))


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def case_rss(sock, pid):
    base = rss_kb(pid)
    peak = [base]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kb(pid))
            time.sleep(0.005)

    th = threading.Thread(target=sample)
    th.start()
    try:
        # 400 MB offered; the pipe is closed at the 1 MiB cap, so the program's writes then fail
        resp, step = traced(sock, FLOOD % 30000, {"bytes": 1 << 20}, limits={"time_s": 60})
    finally:
        stop.set()
        th.join()
    grew = (peak[0] - base) / 1024
    check(step["trace_truncated"] and step["trace_status"] == "truncated", "rss: truncated at the cap")
    check(grew < 48, "rss: the daemon's resident memory grew %.1f MiB (from %.1f MiB) while the program "
          "offered 400 MB" % (grew, base / 1024))


# Finding 7a: a whole trace written before the tracer's first flush (its head
# is still in its buffer), then an exit by a name the tracer does not know
# (no flush, no end of its own). The untraced run prints and exits the same.
FORGE_HEAD = '''\
import os
recs = [
    '{"t":"head","v":1,"lang":"python","impl":"CPython","version":"3.11.2","mech":"settrace","hash_seed":"0",'
    '"files":["/app/main.py"],"entry":0,"argv":["main.py"],"limits":{"events":1000}}',
    '{"t":"ev","i":0,"k":"call","fr":1,"up":null,"d":0,"f":0,"ln":1,"fn":"<module>","loc":{}}',
    '{"t":"ev","i":1,"k":"return","fr":1,"up":null,"d":0,"f":0,"ln":1,"fn":"<module>","loc":{},"val":["NoneType","None"]}',
]
%s
recs.append('{"t":"end","status":"complete","events":2,"exit":{"code":0}}')
try:
    os.write(3, ("\\n".join(recs) + "\\n").encode())
except OSError:
    pass  # the untraced run has no descriptor 3
print("all good")
import sys
sys.stdout.flush()
getattr(os, "_e" + "xit")(0)
'''


def forged_ok(step):
    return step["trace_status"] == "complete" and all(step.get("trace_check", {"x": False}).values())


def case_forge_head(sock):
    for what, extra in (("no seal", ""), ("a made-up seal", "recs.append('{\"t\":\"seal\",\"mac\":\"%s\"}' % ('ab' * 32))")):
        resp, step = traced(sock, FORGE_HEAD % extra, {"check": True})
        end = end_of(step)
        print("forge_head (%s): status %s, trace_check %r, end %r" % (what, step["trace_status"], step.get("trace_check"), end))
        check(step["stdout"] == "all good\n" and step["exit_code"] == 0, "forge_head (%s): the program ran" % what)
        check(not forged_ok(step), "forge_head (%s): not complete with every trace_check field true" % what)
        check(step["trace_status"] == "tampered" and end.get("by") == "supervisor",
              "forge_head (%s): tampered, the supervisor's end: %r" % (what, end))
        check(step.get("trace_check", {}).get("trace_sealed") is False and step.get("trace_sealed") is False,
              "forge_head (%s): trace_check.trace_sealed false" % what)
        check("seal" in end.get("reason", ""), "forge_head (%s): the reason names the seal: %r" % (what, end.get("reason")))


# Finding 7b: past the events cap, the tracer found through gc and marked
# complete (the untraced run finds no tracer and prints the same).
FORGE_CAP = '''\
import gc
n = 0
for i in range(200):
    n += i
for o in gc.get_objects():
    if type(o).__name__ == "Tracer":
        o.status, o.cap = "complete", None
print(n)
'''


def case_forge_cap(sock):
    resp, step = traced(sock, FORGE_CAP, {"check": True, "events": 50})
    end = end_of(step)
    print("forge_cap: status %s, trace_check %r, end %r" % (step["trace_status"], step.get("trace_check"), end))
    check(step["stdout"] == "%d\n" % sum(range(200)), "forge_cap: the program ran")
    check(not forged_ok(step), "forge_cap: not complete with every trace_check field true")
    check(step["trace_status"] == "tampered" and end.get("by") == "supervisor", "forge_cap: tampered: %r" % end)
    check(step.get("trace_check", {}).get("trace_sealed") is False, "forge_cap: trace_check.trace_sealed false")
    check(sum(1 for r in lines_of(step) if r["t"] == "ev") == 50, "forge_cap: the 50 events kept")
    # the same program without the forgery: the tracer's own truncated end, sealed
    resp, step = traced(sock, FORGE_CAP.replace('"Tracer"', '"NoSuchType"'), {"check": True, "events": 50})
    end = end_of(step)
    check(step["trace_status"] == "truncated" and end.get("cap") == "events" and "by" not in end
          and step["trace_check"].get("trace_sealed") is True,
          "forge_cap: unforged, the tracer's sealed truncated/events end: %r %r" % (end, step.get("trace_check")))


# Finding 8: a line as long as the cap allows on fd 3 once the tracer has
# stopped at its events cap (5: its records all written, none comes between
# the program's writes), KIND "end" or "file".
LONG_LINE = '''\
import os
for _ in range(10):
    pass
total = %d
pre = b'{"t":"%s",' + (b'"status":"complete","events":0,"exit":{"code":0},' if b"%s" == b"end" else b'"f":1,') + b'"reason":"'
block = b"x" * (1 << 20)
try:
    os.write(3, pre)
    left = total - len(pre) - 3
    while left > 0:
        left -= os.write(3, block[:min(left, len(block))])
    os.write(3, b'"}\\n')
except OSError as e:
    print("write refused:", type(e).__name__)
print("done")
'''


def turns_over(sock, bound="0.1"):
    text = request(sock, {"id": "m", "type": "metrics"}).get("text", "")
    le = {}
    for line in text.splitlines():
        if line.startswith('surgebox_loop_busy_seconds_bucket{le="'):
            le[line.split('"')[1]] = int(line.rsplit(" ", 1)[1])
    return (le["+Inf"], le["+Inf"] - le[bound]) if "+Inf" in le and bound in le else None


def long_line_run(sock, pid, cap, kind, bound):
    """One run of LONG_LINE: (step, the daemon's RSS growth in MiB, turns
    over BOUND s before and after, loop_busy_max_s before and after)."""
    t0 = turns_over(sock, bound)
    busy0 = request(sock, {"id": "s", "type": "status"}).get("loop_busy_max_s")
    base = rss_kb(pid)
    peak = [base]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kb(pid))
            time.sleep(0.005)

    th = threading.Thread(target=sample)
    th.start()
    try:
        resp, step = traced(sock, LONG_LINE % (cap - 2048, kind, kind), {"bytes": cap, "events": 5},
                            limits={"time_s": 120})
    finally:
        stop.set()
        th.join()
    t1 = turns_over(sock, bound)
    busy1 = request(sock, {"id": "s", "type": "status"}).get("loop_busy_max_s")
    return step, (peak[0] - base) / 1024, t0, t1, busy0, busy1


def case_end_cap(sock, pid):
    # A turn over 0.1 s can also come from elsewhere on a loaded machine (a
    # job's start); so each line gets up to 3 runs, and one of them must have
    # none. ab9ce63 (json-c's parse of a whole end on the loop thread), here:
    # a 16 MiB end 0.19 s in one run of two, a 256 MiB end 4.8 s in each run
    # and 768-784 MiB of RSS; so this case fails there. Under ASan (several
    # times slower, SURGEBOX_SANITIZED from CMake) the bound is the 1 s
    # bucket: still under ab9ce63's 4.8 s.
    bound = "1" if os.environ.get("SURGEBOX_SANITIZED") else "0.1"
    for cap in (4096, 16 << 20, 256 << 20):
        for kind in ("end", "file"):
            clean = False
            for attempt in range(3):
                step, grew, t0, t1, busy0, busy1 = long_line_run(sock, pid, cap, kind, bound)
                end = end_of(step)
                print("end_cap: cap %d, a %s line: %s (%s), %s; RSS +%.1f MiB; loop busy max %s -> %s s, turns over "
                      "%s s %s -> %s" % (cap, kind, step["trace_status"], end.get("reason") or end.get("cap"),
                                          step["stdout"].strip(), grew, busy0, busy1, bound, t0, t1), flush=True)
                check(step["trace_status"] == "tampered" and end.get("by") == "supervisor",
                      "end_cap %d %s: tampered, the supervisor's end: %r" % (cap, kind, end))
                if kind == "end" and cap - 2048 > 16384:
                    check("end record of more than 16384 bytes" in end.get("reason", ""),
                          "end_cap %d: the long end fails at its bound: %r" % (cap, end.get("reason")))
                check(grew <= 2 * cap / (1 << 20) + 32, "end_cap %d %s: the daemon's RSS grew %.1f MiB (at most twice "
                      "the cap + 32 MiB)" % (cap, kind, grew))
                check(t0 is not None and t1 is not None, "end_cap: the loop's histogram in the metrics")
                if t0 is not None and t1 is not None and t1[1] == t0[1]:
                    clean = True
                    break
            check(clean, "end_cap %d %s: a run with no loop turn busy over %s s (3 tried)" % (cap, kind, bound))


CASES = {"direct": case_direct, "refuse": case_refuse, "cap": case_cap, "closefd": case_closefd,
         "osexit": case_osexit, "forged": case_forged, "after_end": case_after_end, "deep": case_deep,
         "lines": case_lines, "rss": case_rss, "forge_head": case_forge_head, "forge_cap": case_forge_cap,
         "end_cap": case_end_cap}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIPPED: the daemon's jobs need root here (uid range, cgroups)")
        return 77
    if not os.path.exists("/usr/bin/python3"):
        print("SKIPPED: no /usr/bin/python3 (the python3 toolchain)")
        return 77
    with tempfile.TemporaryDirectory() as cache:
        d = PrivateDaemon(a.bin, cache)
        try:
            if a.case in ("rss", "end_cap"):
                CASES[a.case](d.sock, d.proc.pid)
            else:
                CASES[a.case](d.sock)
        finally:
            d.stop()
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
