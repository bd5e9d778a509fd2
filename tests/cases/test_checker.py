#!/usr/bin/env python3
"""Issue 38: the checker judge (compare "checker"): a special judge program
built once per step and run per case in a sandbox of its own, testlib-style
(CHECKER input output answer; exit 0 accepted, 1 and 2 wrong_answer, 3 and
anything else judge_error). Every expected verdict below is worked out by
hand from the program, the checker and the case.

Run as: test_checker.py BIN_DIR CASE, inside the unshare wrapper (ctest
does it). Each case starts its own daemon (tests/daemon/test_daemon.py's)."""
import json
import os
import secrets
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cases as tc  # noqa: E402  run, check, cases_step, verdicts, HUNT_PY
from test_cases import check, run, cases_step, verdicts  # noqa: E402

td = tc.td
SKIP = 77

# The program: `tr a-z A-Z` (its output is its input in capitals). The
# checker's behaviour is chosen by the input's first word.
CHECKER_PY = r"""
import os, signal, sys
inp, out, ans = (open(p).read() for p in sys.argv[1:4])
word = inp.split()[0] if inp.split() else ""
if word == "cmp":           # a real special judge: the same numbers in any order
    got, want = sorted(out.split()[1:]), sorted(ans.split()[1:])
    if got == want:
        sys.exit(0)
    extra = sorted(set(got) - set(want))
    sys.stderr.write("wrong answer: %s not expected\n" % (extra[0] if extra else "?"))
    sys.exit(1)
if word == "order":         # argv order: input output answer
    ok = inp == "order x\n" and out == "ORDER X\n" and ans == "answer y\n"
    sys.stderr.write("order %s\n" % ("ok" if ok else "bad: %r %r %r" % (inp, out, ans)))
    sys.exit(0 if ok else 1)
if word == "pe":
    sys.stderr.write("presentation error: extra spaces\n")
    sys.exit(2)
if word == "fail":
    sys.stderr.write("fail: the answer file is broken\n")
    sys.exit(3)
if word == "seven":
    sys.exit(7)
if word == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
if word == "spin":
    while True:
        pass
sys.stderr.write("unknown word %r\n" % word)
sys.exit(3)
"""


def checker(src=CHECKER_PY, toolchain="python3", path="check.py", **extra):
    c = {"toolchain": toolchain, "files": [{"path": path, "content": src}]}
    c.update(extra)
    return c


def tr_req(id_, cases, chk, **extra):
    step = {"name": "run", "argv": ["tr", "a-z", "A-Z"], "cases": cases, "checker": chk}
    step.update(extra)
    return {"id": id_, "type": "exec", "steps": [step]}


def case_verdicts(d):
    cases = [
        {"stdin": "cmp 3 1 2\n", "expected": "cmp 1 2 3\n"},   # 0: same numbers, other order: exit 0
        {"stdin": "cmp 3 1 4\n", "expected": "cmp 1 2 3\n"},   # 1: 4 is not expected: exit 1
        {"stdin": "order x\n", "expected": "answer y\n"},      # 2: argv input output answer: exit 0
        {"stdin": "pe\n", "expected": ""},                     # 3: exit 2 (presentation error)
        {"stdin": "fail\n", "expected": ""},                   # 4: exit 3 (testlib's fail)
        {"stdin": "seven\n", "expected": ""},                  # 5: exit 7: no verdict of testlib's
        {"stdin": "crash\n", "expected": ""},                  # 6: the checker dies by SIGSEGV
        {"stdin": "spin\n", "expected": ""},                   # 7: the checker's time limit (2 s)
        {"stdin": "cmp 1\n", "expected": "CMP 1\n", "compare": "exact"},  # 8: bytes, no checker: accepted
        {"stdin": "cmp 1\n", "expected": "cmp 1\n", "compare": "exact"},  # 9: "CMP 1" != "cmp 1"
        {"stdin": "cmp 1\n", "expected": "cmp 1\n", "args": ["--bogus-flag"]},  # 10: tr fails: runtime_error
    ]
    r = run(d, tr_req("cv", cases, checker(limits={"time_s": 2, "cpu_time_s": 2}), compare="checker"))
    s = cases_step(r)
    want = ["accepted", "wrong_answer", "accepted", "wrong_answer", "judge_error", "judge_error", "judge_error",
            "judge_error", "accepted", "wrong_answer", "runtime_error"]
    check(verdicts(s) == want, "verdicts %s (error %s)" % (verdicts(s), s.get("error")))
    c = s.get("cases", [{}] * 11)
    if len(c) != 11:
        return
    msg = lambda k: (c[k].get("checker") or {}).get("message")  # noqa: E731
    check(msg(1) == "wrong answer: 4 not expected", "case 1 carries the checker's message: %s" % c[1])
    check("4 not expected" in c[1].get("why", ""), "case 1's why has it: %s" % c[1].get("why"))
    check(msg(2) == "order ok", "case 2: argv order input output answer: %s" % msg(2))
    check((c[3].get("checker") or {}).get("exit_code") == 2, "case 3 checker exit 2: %s" % c[3])
    check((c[4].get("checker") or {}).get("exit_code") == 3 and "fail" in c[4].get("why", ""),
          "case 4 exit 3, why says fail: %s" % c[4])
    check((c[5].get("checker") or {}).get("exit_code") == 7, "case 5 exit 7: %s" % c[5])
    check((c[6].get("checker") or {}).get("signal") == "SIGSEGV", "case 6 checker SIGSEGV: %s" % c[6])
    check((c[7].get("checker") or {}).get("limit_hit") in ("wall_time", "cpu_time"), "case 7 limit: %s" % c[7])
    check("checker" not in c[8] and "checker" not in c[9], "exact cases are not sent to the checker")
    check("checker" not in c[10] and c[10].get("exit_code") not in (0, None),
          "a program that failed is not sent to the checker: %s" % c[10])
    check(c[0].get("stdout") == "CMP 3 1 2\n", "case 0's own stdout shown: %s" % c[0].get("stdout"))
    counts = s.get("case_counts", {})
    check(counts.get("accepted") == 3 and counts.get("wrong_answer") == 3 and counts.get("judge_error") == 4
          and counts.get("runtime_error") == 1, "counts %s" % counts)
    check(s.get("first_failure") == 1, "first_failure 1: %s" % s.get("first_failure"))


FIRST_LINE_PY = r"""
import sys
inp = open(sys.argv[1]).read().split()
print({"a": "ok 3 numbers", "b": "wrong_answer 3 != 4", "c": "garbage", "d": "ok"}[inp[0]])
sys.exit(1 if inp[0] == "d" else 0)
"""


def case_first_line(d):
    cases = [{"stdin": w + "\n"} for w in "abcd"]
    r = run(d, tr_req("fl", cases, checker(FIRST_LINE_PY, verdict="first_line"), compare="checker"))
    s = cases_step(r)
    # a: ok; b: wrong_answer; c: not a verdict word; d: "ok" (its exit status 1 does not count in this mode)
    check(verdicts(s) == ["accepted", "wrong_answer", "judge_error", "accepted"], "verdicts %s %s" %
          (verdicts(s), s.get("error")))
    c = s.get("cases", [])
    check(len(c) == 4 and (c[1].get("checker") or {}).get("message") == "wrong_answer 3 != 4",
          "message is the first line without stderr: %s" % c[1:2])


CHECKER_CPP = r"""
#include <fstream>
#include <iostream>
int main(int argc, char **argv) {
  if (argc != 4) { std::cerr << "usage\n"; return 3; }
  std::ifstream out(argv[2]), ans(argv[3]);
  long a = 0, b = 0;
  if (!(out >> a)) { std::cerr << "wrong answer: no number\n"; return 1; }
  if (!(ans >> b)) { std::cerr << "fail: no answer\n"; return 3; }
  if (a % 10 == b % 10) { std::cerr << "ok last digit " << a % 10 << "\n"; return 0; }
  std::cerr << "wrong answer: " << a << " vs " << b << "\n";
  return 1;
}
"""


def cache_hits(d):
    r = run(d, {"id": "st", "type": "status"})
    return ((r.get("cache") or {}).get("hits"), (r.get("cache") or {}).get("misses"), r)


def case_cpp(d):
    """A C++ checker: built once per step (one compile for three cases),
    through the compile cache (the same checker again is a hit); one that
    does not compile makes every case judge_error, saying why."""
    cases = [{"stdin": "13\n", "expected": "3"},   # last digits 3, 3: accepted
             {"stdin": "14\n", "expected": "3"},   # 4 vs 3: wrong_answer
             {"stdin": "x\n", "expected": "3"}]    # no number: wrong_answer
    # a checker of this run alone (the daemons of the tests may share a cache directory)
    src = "// %s\n%s" % (secrets.token_hex(8), CHECKER_CPP)
    req = {"id": "cpp", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": cases, "compare": "checker",
                                                   "checker": checker(src, "g++", "check.cpp")}]}
    h0, m0, st = cache_hits(d)
    if h0 is None:
        check(False, "status has cache hits: %s" % st)
        return
    r = run(d, req)
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "wrong_answer", "wrong_answer"], "verdicts %s %s" % (verdicts(s), s.get("error")))
    c = s.get("cases", [{}] * 3)
    check(len(c) == 3 and (c[1].get("checker") or {}).get("message") == "wrong answer: 14 vs 3", "message %s" % c[1:2])
    h1, m1, _ = cache_hits(d)
    check(m1 == m0 + 1 and h1 == h0, "one compile for three cases (misses %s -> %s, hits %s -> %s)" % (m0, m1, h0, h1))
    r = run(d, dict(req, id="cpp2"))
    check(verdicts(cases_step(r)) == ["accepted", "wrong_answer", "wrong_answer"], "again: %s" % verdicts(cases_step(r)))
    h2, m2, _ = cache_hits(d)
    check(h2 == h1 + 1 and m2 == m1, "the same checker again: a cache hit (hits %s -> %s)" % (h1, h2))
    bad = json.loads(json.dumps(req))
    bad["id"] = "cpp-bad"
    bad["steps"][0]["checker"]["files"][0]["content"] = "int main( {"
    s = cases_step(run(d, bad))
    check(verdicts(s) == ["judge_error"] * 3 and "did not build" in (s.get("error") or ""),
          "a checker that does not compile: %s %s" % (verdicts(s), s.get("error")))
    missing = json.loads(json.dumps(req))
    missing["id"] = "cpp-missing"
    missing["steps"][0]["checker"]["toolchain"] = "no-such-toolchain"
    s = cases_step(run(d, missing))
    check(verdicts(s) == ["judge_error"] * 3 and "no-such-toolchain" in (s.get("error") or ""),
          "an unknown checker toolchain: %s %s" % (verdicts(s), s.get("error")))


# A hostile checker: it looks for the program (other processes, its files,
# a marker the program left in /app, /tmp and /dev/shm), the daemon's
# socket, the host's files and the network, and says what it found on its
# first stderr line; it exits 0. The answer of the control case holds the
# marker: the scan finds it there (in its own answer file), so a scan that
# finds nothing elsewhere is a scan that works.
PROBE_PY = r"""
import json, os, socket, sys
marker, sock_path, port, host_file = open(sys.argv[1]).read().split()[1:5]
found = {}
mine = {os.getpid(), os.getppid()}  # itself and its sandbox's init
found["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine)
hits = []
def scan(path):
    try:
        with open(path, "rb") as f:
            if marker.encode() in f.read(1 << 20):
                hits.append(path)
    except Exception:
        pass
skip = {"/proc", "/sys", "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"}
for top in os.listdir("/"):
    base = "/" + top
    if base in skip or base == "/dev":
        continue
    for root, dirs, files in os.walk(base):
        for f in files:
            scan(os.path.join(root, f))
for root, dirs, files in os.walk("/dev/shm"):
    for f in files:
        scan(os.path.join(root, f))
found["marker"] = sorted(hits)
found["sock"] = os.path.exists(sock_path)
try:
    s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sock_path); found["sock_connect"] = True
except Exception:
    found["sock_connect"] = False
try:
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=2); found["net"] = True
except Exception:
    found["net"] = False
found["host_file"] = os.path.exists(host_file)
wrote = []
for d in ("/", "/etc", "/usr", "/var/tmp", "/opt", "/root", "/home", "/run"):
    try:
        with open(os.path.join(d, "sbprobe-" + marker), "w") as f:
            f.write("x")
        wrote.append(d)
    except Exception:
        pass
found["wrote"] = wrote
sys.stderr.write(json.dumps(found, separators=(",", ":")) + "\n")
sys.exit(0)
"""

# The program leaves the marker wherever it can write, and a process that
# would outlive it if the sandbox let it.
LEAVE_SH = r"""read word marker rest
for d in /app /tmp /dev/shm; do echo "$marker" > "$d/left-by-program" 2>/dev/null; done
(sleep 60 &) 2>/dev/null
echo done
"""


def case_checker_probe(d):
    marker = "SBMARK" + secrets.token_hex(12)
    host_file = os.path.join(os.path.dirname(d.sock), "host-only-" + marker)
    with open(host_file, "w") as f:
        f.write("host\n")
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(4)
    lst.settimeout(0.1)
    port = lst.getsockname()[1]
    line = "probe %s %s %d %s\n" % (marker, d.sock, port, host_file)
    cases = [{"stdin": line, "expected": "nothing\n"},
             {"stdin": line, "expected": "control " + marker + "\n"}]
    r = run(d, {"id": "probe", "type": "exec", "files": [{"path": "leave.sh", "content": LEAVE_SH}],
                "steps": [{"name": "run", "argv": ["sh", "leave.sh"], "cases": cases, "compare": "checker",
                           "checker": checker(PROBE_PY)}]})
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "accepted"], "the probe ran: %s %s" % (verdicts(s), s.get("error")))
    got = []
    for c in s.get("cases", []):
        try:
            got.append(json.loads((c.get("checker") or {}).get("message", "")))
        except ValueError:
            got.append(None)
            check(False, "the probe's report is JSON: %s" % c)
    if len(got) != 2 or None in got:
        return
    for k, g in enumerate(got):
        check(g["pids"] == [], "case %d: the checker sees no process but its own and its init: %s" % (k, g["pids"]))
        check(g["sock"] is False and g["sock_connect"] is False, "case %d: no daemon socket: %s" % (k, g))
        check(g["net"] is False, "case %d: no connection to the host's loopback listener" % k)
        check(g["host_file"] is False, "case %d: the host's file beside the socket is not there" % k)
        check(g["wrote"] == [], "case %d: wrote nothing outside its workspace and /tmp: %s" % (k, g["wrote"]))
    check(got[0]["marker"] == ["/app/.sb_check/input"],
          "case 0: the marker only in its own input, nowhere the program left it: %s" % got[0]["marker"])
    check(got[1]["marker"] == ["/app/.sb_check/answer", "/app/.sb_check/input"],
          "control: the scan finds the marker in the answer: %s" % got[1]["marker"])
    try:
        lst.accept()
        check(False, "a connection reached the host's listener")
    except OSError:
        pass
    lst.close()
    for dd in ("/", "/etc", "/var/tmp", "/opt", "/root", "/home", "/run", "/tmp"):
        check(not os.path.exists(os.path.join(dd, "sbprobe-" + marker)), "nothing written in the host's %s" % dd)
    check(not os.path.exists("/tmp/left-by-program"), "the program's /tmp is not the host's")


def case_hunt(d):
    """A program that hunts for its expected output and for the checker
    (stdin, argv, environment, descriptors, /proc, every file) finds
    neither: the expected bytes and the checker stay outside its sandbox.
    The checker (its source holds a second secret) accepts when the
    program printed the answer; the control case plants the expected
    secret in a case file, and the hunter finds it."""
    secret = "SBSECRET-" + secrets.token_hex(16)
    secret_chk = "SBSECRET-" + secrets.token_hex(16)
    eq_py = "import sys  # %s\nsys.exit(0 if open(sys.argv[2]).read() == open(sys.argv[3]).read() else 1)\n" % secret_chk
    lim = {"time_s": 60, "cpu_time_s": 60}
    cases = [{"stdin": "hunt %d\n" % k, "expected": secret + "\n", "limits": lim} for k in range(3)]
    cases.append({"files": [{"path": "planted/x", "content": "..%s..\n" % secret}], "expected": secret + "\n",
                  "limits": lim})
    r = run(d, {"id": "h", "type": "exec", "files": [{"path": "hunt.py", "content": tc.HUNT_PY}],
                "steps": [{"name": "run", "argv": ["python3", "hunt.py"], "cases": cases, "compare": "checker",
                           "checker": checker(eq_py)}]})
    s = cases_step(r)
    outs = [c.get("stdout") for c in s.get("cases", [])]
    check(outs == ["NOTFOUND\n"] * 3 + [secret + "\n"],
          "the program found neither its expected output nor the checker (but the planted one): %s %s" %
          (outs, s.get("error")))
    check(verdicts(s) == ["wrong_answer"] * 3 + ["accepted"], "verdicts %s" % verdicts(s))


def case_bad_requests(d):
    def err(req):
        r = run(d, req)
        return r.get("type"), str(r)
    one = {"stdin": "", "expected": ""}
    t, text = err({"id": 1, "type": "exec", "steps": [{"argv": ["cat"], "cases": [dict(one, compare="checker")]}]})
    check(t == "error" and "checker" in text and "toolchain" in text, "compare checker without a checker: %s" % text)
    t, text = err({"id": 2, "type": "exec", "steps": [{"argv": ["cat"], "cases": [one], "compare": "checker",
                                                       "checker": {"toolchain": "python3"}}]})
    check(t == "error" and "files" in text, "a checker without files: %s" % text)
    t, text = err({"id": 3, "type": "exec", "steps": [{"argv": ["cat"], "cases": [one], "compare": "checker",
                                                       "checker": checker(verdict="maybe")}]})
    check(t == "error" and "verdict" in text, "checker.verdict unknown: %s" % text)
    t, text = err({"id": 4, "type": "exec", "steps": [{"argv": ["python3", "s.py"], "fn_name": "f", "compare": "checker",
                                                       "cases": [{"args": [], "expected": 1}],
                                                       "checker": checker()}]})
    check(t == "error" and "fn_name" in text, "checker with function-call cases: %s" % text)
    t, text = err({"id": 5, "type": "exec", "steps": [{"argv": ["cat"], "checker": checker()}]})
    check(t == "error" and "cases" in text, "checker without cases: %s" % text)


WARM_FN = """import sys
SEEN = []
def f(x):
    SEEN.append(x)
    with open('/tmp/left', 'a') as out:
        out.write('x')
    return [len(SEEN), len(open('/tmp/left').read()), x * 2]
"""
WARM_STDIN = """import os
n = int(input())
left = os.path.exists('/tmp/left') or os.path.exists('/app/left')
open('/tmp/left', 'w').write('x'); open('/app/left', 'w').write('x')
print(n * 2, 'left-over' if left else 'clean')
"""


def case_warm(d):
    """With "warm": true, Python cases (function-call and stdin) start from
    the slot's warm zygote, each still in a sandbox of its own: a case never
    sees what an earlier one left in its module, /tmp or /app (each function
    call finds SEEN with its own call alone, one x in /tmp/left). Without
    warm they start cold."""
    files = [{"path": "s.py", "content": WARM_FN}]
    for warm in (True, False):
        req = {"id": "wf", "type": "exec", "files": files,
               "steps": [{"name": "run", "argv": ["python3", "s.py"], "fn_name": "f",
                          "cases": [{"args": [k], "expected": [1, 1, 2 * k]} for k in range(4)]}]}
        if warm:
            req["warm"] = True
        s = cases_step(run(d, req))
        check(verdicts(s) == ["accepted"] * 4, "fn cases (warm %s) each alone: %s %s" % (warm, verdicts(s),
                                                                                        [c.get("why") for c in s.get("cases", [])]))
        starts = [c.get("start", "") for c in s.get("cases", [])]
        want = "warm (zygote" if warm else "cold"
        check(len(starts) == 4 and all(x.startswith(want) for x in starts), "fn cases start %s: %s" % (want, starts))
    req = {"id": "ws", "type": "exec", "warm": True, "files": [{"path": "s.py", "content": WARM_STDIN}],
           "steps": [{"name": "run", "argv": ["python3", "s.py"],
                      "cases": [{"stdin": "%d\n" % k, "expected": "%d clean" % (2 * k)} for k in range(4)]}]}
    s = cases_step(run(d, req))
    check(verdicts(s) == ["accepted"] * 4, "stdin cases (warm) each alone: %s %s" %
          (verdicts(s), [c.get("stdout") for c in s.get("cases", [])]))
    starts = [c.get("start", "") for c in s.get("cases", [])]
    check(len(starts) == 4 and all(x.startswith("warm (zygote") for x in starts), "stdin cases start warm: %s" % starts)


CASES = {
    "warm": case_warm,
    "checker_verdicts": case_verdicts,
    "checker_first_line": case_first_line,
    "checker_cpp": case_cpp,
    "checker_probe": case_checker_probe,
    "checker_hunt": case_hunt,
    "checker_bad_requests": case_bad_requests,
}


def main():
    td.BIN = sys.argv[1]
    name = sys.argv[2]
    if os.geteuid() != 0:
        print("SKIPPED: the daemon tests run as root (CI and this machine are root)")
        sys.exit(SKIP)
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid is not 1)")
        sys.exit(2)
    d = td.Daemon()
    try:
        names = {t.get("name") for t in run(d, {"id": "tc", "type": "toolchains"}).get("toolchains", [])}
        need = {"python3"} | ({"g++"} if name == "checker_cpp" else set())
        if not need <= names:
            print("SKIPPED: toolchain(s) %s not installed" % sorted(need - names))
            d.stop()
            sys.exit(SKIP)
        CASES[name](d)
    finally:
        d.stop()
    if tc.failures:
        print("--- daemon log ---\n" + d.logtext()[-4000:])
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
