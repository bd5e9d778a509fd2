#!/usr/bin/env python3
"""Issue 38: test cases as a first-class part of a step ("cases" in the
native protocol): many cases against one built program, each in a sandbox of
its own, judged by the daemon. Expected values below are worked out by hand
from the programs and inputs each case gives.

Run as: test_cases.py BIN_DIR CASE, inside the unshare wrapper (ctest does
it). Each case starts its own daemon (tests/daemon/test_daemon.py's)."""
import os
import secrets
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "daemon"))
import test_daemon as td  # noqa: E402  the Daemon and Client of the daemon tests

SKIP = 77
NO_TOOLCHAINS = ["--toolchains", "/nonexistent-surgebox-toolchains"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(d, req, timeout=300):
    c = td.Client(d.sock)
    try:
        return c.call(req, timeout=timeout)
    finally:
        c.close()


def cases_step(resp, name="run"):
    for s in resp.get("steps", []):
        if s.get("name") == name:
            return s
    return {}


def verdicts(step):
    return [c.get("verdict") for c in step.get("cases", [])]


# One C program, built once by the compile step; each case picks a behaviour
# by its first argument and reads its standard input.
PROG_C = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  const char *w = argc > 1 ? argv[1] : "sum";
  if (!strcmp(w, "sum")) { long a, b; if (scanf("%ld %ld", &a, &b) != 2) return 9; printf("%ld\n", a + b); return 0; }
  if (!strcmp(w, "loop")) { volatile unsigned long x = 0; for (;;) x++; }
  if (!strcmp(w, "mem")) { size_t n = (size_t)256 << 20; char *p = malloc(n); if (!p) return 8;
                           for (size_t i = 0; i < n; i += 4096) p[i] = 1; printf("%d\n", p[4096]); return 0; }
  if (!strcmp(w, "exit3")) { printf("partial\n"); return 3; }
  if (!strcmp(w, "segv")) { raise(SIGSEGV); return 0; }
  if (!strcmp(w, "flood")) { for (;;) fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n", stdout); }
  return 7;
}
"""


def prog_req(id_, cases, compile_src=PROG_C, **extra):
    run_step = {"name": "run", "argv": ["./prog"], "cases": cases}
    run_step.update(extra)
    return {"id": id_, "type": "exec", "files": [{"path": "prog.c", "content": compile_src}],
            "steps": [{"name": "compile", "argv": ["gcc", "-O1", "-o", "prog", "prog.c"]}, run_step]}


def case_verdicts(d):
    cases = [
        {"args": ["sum"], "stdin": "2 2\n", "expected": "4\n"},                                  # accepted
        {"args": ["sum"], "stdin": "2 3\n", "expected": "4\n"},                                  # 5 != 4
        {"args": ["loop"], "expected": "", "limits": {"time_s": 1, "cpu_time_s": 1}},            # time_limit
        {"args": ["mem"], "expected": "1\n", "limits": {"memory_mib": 32}},                      # memory_limit
        {"args": ["exit3"], "expected": "partial\n"},                                            # exit 3
        {"args": ["segv"], "expected": ""},                                                      # SIGSEGV
        {"args": ["flood"], "expected": "", "limits": {"output_bytes": 1000}},                   # output_limit
        {"args": ["sum"], "stdin": "40 2", "expected": "42"},                                    # accepted
    ]
    r = run(d, prog_req("v", cases))
    s = cases_step(r)
    check(r.get("status") == "cases_failed", "status cases_failed: %s %s" % (r.get("status"), r.get("error")))
    check(r["steps"][0].get("status") == "ok", "the build ran once, ok: %s" % r["steps"][0].get("status"))
    check(len(r["steps"]) == 2, "two step documents (one build): %d" % len(r["steps"]))
    want = ["accepted", "wrong_answer", "time_limit", "memory_limit", "runtime_error", "signaled", "output_limit",
            "accepted"]
    check(verdicts(s) == want, "verdicts %s" % verdicts(s))
    counts = s.get("case_counts", {})
    check(counts.get("accepted") == 2 and counts.get("wrong_answer") == 1 and counts.get("time_limit") == 1
          and counts.get("memory_limit") == 1 and counts.get("runtime_error") == 1 and counts.get("signaled") == 1
          and counts.get("output_limit") == 1 and counts.get("skipped") == 0, "counts %s" % counts)
    check(s.get("first_failure") == 1, "first_failure 1: %s" % s.get("first_failure"))
    check(s.get("n_cases") == 8, "n_cases 8")
    c = s.get("cases", [{}] * 8)
    check(c[0].get("stdout") == "4\n" and c[0].get("exit_code") == 0, "case 0 printed 4: %s" % c[0])
    check(c[1].get("stdout") == "5\n" and "why" in c[1], "case 1 printed 5, says why: %s" % c[1])
    check(c[4].get("exit_code") == 3 and c[4].get("stdout") == "partial\n", "case 4 exit 3: %s" % c[4])
    check(c[5].get("signal") == "SIGSEGV" and c[5].get("exit_code") is None, "case 5 SIGSEGV: %s" % c[5])
    check(c[6].get("stdout_truncated") is True and len(c[6].get("stdout", "")) <= 4096, "case 6 shown output bounded")
    check(c[7].get("stdout") == "42\n", "case 7 printed 42 (expected without newline: lines mode)")
    for k, x in enumerate(c):
        check(isinstance(x.get("cpu_time_s"), (int, float)) and isinstance(x.get("wall_time_s"), (int, float)),
              "case %d has cpu and wall time" % k)
        check(x.get("index") == k, "case %d index" % k)


def case_compare_modes(d):
    # `cat` prints its stdin: the actual output is the stdin, compared with expected under each mode
    def c(actual, expected, compare=None):
        x = {"stdin": actual, "expected": expected}
        if compare is not None:
            x["compare"] = compare
        return x
    cases = [
        c("a b\n", "a b\n", "exact"),                     # 0 accepted
        c("a b\n", "a b", "exact"),                       # 1 wrong: the final newline
        c("a b  \n\n\n", "a b", "lines"),                 # 2 accepted: trailing spaces, blank lines
        c("a  b\n", "a b\n", "lines"),                    # 3 wrong: inner spaces count
        c("x\ny\n", "x y\n", "lines"),                    # 4 wrong: line structure counts
        c("a   b\n c\n", "a b c", "tokens"),              # 5 accepted
        c("a b\n", "a b c", "tokens"),                    # 6 wrong: a token missing
        c("1.0000004 2\n", "1 2", {"mode": "numbers", "abs_tol": 1e-6, "rel_tol": 0}),   # 7 accepted: 4e-7
        c("1.1 2\n", "1 2", {"mode": "numbers", "abs_tol": 1e-6, "rel_tol": 1e-6}),      # 8 wrong: 0.1
        c("1000.5\n", "1000", {"mode": "numbers", "abs_tol": 0, "rel_tol": 1e-3}),       # 9 accepted: 5e-4 rel
        c("1000.5\n", "1000", {"mode": "numbers", "abs_tol": 0, "rel_tol": 1e-4}),       # 10 wrong: 5e-4 > 1e-4
        c("x 1\n", "y 1", "numbers"),                     # 11 wrong: a word compared exactly
        c("a b \n", "a b"),                               # 12 accepted: default is lines
        c("a b\n", "a  b"),                               # 13 wrong under the default (lines)
        c("YES\nNo\n", "yes\nno", {"mode": "lines", "ignore_case": True}),                 # 14 accepted
        c("YES\n", "yes", "lines"),                       # 15 wrong: case counts by default
        c("Case #1: 2.0000001\n", "case #1: 2", {"mode": "numbers", "ignore_case": True}),  # 16 accepted
        c("YEA\n", "yes", {"mode": "tokens", "ignore_case": True}),                         # 17 wrong: a letter
    ]
    r = run(d, {"id": "m", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": cases}]})
    s = cases_step(r)
    a, w = "accepted", "wrong_answer"
    want = [a, w, a, w, w, a, w, a, w, a, w, w, a, w, a, w, a, w]
    check(verdicts(s) == want, "compare verdicts %s" % verdicts(s))
    check(s.get("first_failure") == 1, "first_failure 1")
    check(s.get("case_counts", {}).get("accepted") == 8 and s.get("case_counts", {}).get("wrong_answer") == 10,
          "counts %s" % s.get("case_counts"))


def case_stop(d):
    cases = [{"stdin": "1\n", "expected": "1"}, {"stdin": "2\n", "expected": "3"}, {"stdin": "3\n", "expected": "3"}]
    r = run(d, {"id": "s1", "type": "exec",
                "steps": [{"name": "run", "argv": ["cat"], "cases": cases, "stop": "first_failure"}]})
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "wrong_answer", "skipped"], "first_failure: %s" % verdicts(s))
    check(s.get("case_counts", {}).get("skipped") == 1 and s.get("first_failure") == 1, "first_failure counts")
    check(r.get("status") == "cases_failed", "status cases_failed")
    r = run(d, {"id": "s2", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": cases, "stop": "never"}]})
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "wrong_answer", "accepted"], "never: %s" % verdicts(s))
    # no stop: never
    r = run(d, {"id": "s3", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": cases}]})
    check(verdicts(cases_step(r)) == ["accepted", "wrong_answer", "accepted"], "default stop is never")
    # all accepted: the step and the job are ok
    r = run(d, {"id": "s4", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": [cases[0], cases[2]]}]})
    check(r.get("status") == "ok" and cases_step(r).get("first_failure") is None, "all accepted: ok %s" % r.get("status"))


def case_build_failure(d):
    cases = [{"args": ["sum"], "stdin": "1 1", "expected": "2"}] * 3
    r = run(d, prog_req("b", cases, compile_src="int main( { return 0; }\n"))
    check(r.get("status") == "compile_error", "status compile_error: %s" % r.get("status"))
    check([x.get("name") for x in r.get("steps", [])] == ["compile"], "the steps stop at the failed build")
    nr = r.get("cases_not_run") or [{}]
    check(len(nr) == 1 and nr[0].get("name") == "run" and nr[0].get("n_cases") == 3, "cases_not_run names the step")
    check(nr[0].get("verdict") == "compile_error", "every case compile_error: %s" % nr[0])
    check(nr[0].get("case_counts", {}).get("compile_error") == 3 and nr[0].get("case_counts", {}).get("accepted") == 0,
          "counts %s" % nr[0].get("case_counts"))
    check(nr[0].get("first_failure") == 0, "first_failure 0")


RUN_SH = r"""
case "$1" in
write)
  echo planted > /tmp/mark; echo planted > /dev/shm/mark; echo planted > mark; mkdir -p d; echo x > d/f
  echo 'echo hijacked' > run.sh
  echo wrote ;;
check)
  for f in /tmp/mark /dev/shm/mark mark d/f given.txt; do test -e "$f" && echo "seen $f"; done
  echo clean ;;
esac
"""


def case_isolation(d):
    cases = [{"args": ["write"], "expected": "wrote", "files": [{"path": "given.txt", "content": "case 0's\n"}]},
             {"args": ["check"], "expected": "clean"},
             {"args": ["write"], "expected": "wrote"},
             {"args": ["check"], "expected": "clean"}]
    r = run(d, {"id": "i", "type": "exec", "files": [{"path": "run.sh", "content": RUN_SH}],
                "steps": [{"name": "run", "argv": ["sh", "run.sh"], "cases": cases},
                          {"name": "after", "argv": ["sh", "run.sh", "check"]}]})
    s = cases_step(r)
    check(verdicts(s) == ["accepted"] * 4, "isolation verdicts %s (%s)" % (verdicts(s),
                                                                           [c.get("stdout") for c in s.get("cases", [])]))
    after = cases_step(r, "after")
    check(after.get("stdout") == "clean\n", "the job's /app after the cases is as before: %r" % after.get("stdout"))
    check(r.get("status") == "ok", "status ok: %s" % r.get("status"))


HUNT_PY = r"""
import os, sys
# the program does not know the secret; it looks for anything of its shape
# (32 lowercase hex characters after the marker) and prints what it found
import re
pat = re.compile(rb"SBSECRET-([0-9a-f]{32})")
hits = set()
def scan(where, data):
    for m in pat.finditer(data):
        hits.add(m.group(1).decode())
def read(path, cap=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(cap)
    except Exception:
        return b""
scan("stdin", sys.stdin.buffer.read())
scan("argv", "\0".join(sys.argv).encode())
scan("env", "\0".join(k + "=" + v for k, v in os.environ.items()).encode())
for fd in range(3, 1024):
    try:
        scan("fd", os.read(fd, 1 << 20))
    except Exception:
        pass
for pid in os.listdir("/proc"):
    if pid.isdigit() or pid == "self":
        for name in ("cmdline", "environ", "maps"):
            scan("/proc", read("/proc/%s/%s" % (pid, name)))
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                scan("/proc fd", read("/proc/%s/fd/%s" % (pid, fd)))
        except Exception:
            pass
skip = {"/proc", "/sys", "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/dev"}
for top in os.listdir("/"):
    base = "/" + top
    if base in skip:
        continue
    for root, dirs, files in os.walk(base):
        for f in files:
            scan(root, read(os.path.join(root, f)))
for f in ("/dev/shm",):
    for root, dirs, files in os.walk(f):
        for x in files:
            scan(root, read(os.path.join(root, x)))
print("SBSECRET-" + sorted(hits)[0] if hits else "NOTFOUND")
"""


def case_hunt(d):
    """A program that searches its stdin, argv, environment, descriptors,
    /proc and every file it can read outside the system directories for
    its expected output (a fresh random secret with a marker) never finds
    it: the expected bytes stay in the daemon."""
    secret = "SBSECRET-" + secrets.token_hex(16)
    cases = [{"stdin": "hunt %d\n" % k, "expected": secret + "\n", "limits": {"time_s": 60, "cpu_time_s": 60}}
             for k in range(3)]
    # the control: given the secret (in a file of the case), the hunter finds and prints it
    cases.append({"files": [{"path": "planted/x", "content": "..%s..\n" % secret}], "expected": secret + "\n",
                  "limits": {"time_s": 60, "cpu_time_s": 60}})
    r = run(d, {"id": "h", "type": "exec", "files": [{"path": "hunt.py", "content": HUNT_PY}],
                "steps": [{"name": "run", "argv": ["python3", "hunt.py"], "cases": cases}]})
    s = cases_step(r)
    outs = [c.get("stdout") for c in s.get("cases", [])]
    check(outs == ["NOTFOUND\n"] * 3 + [secret + "\n"],
          "the program never found its expected output (but found it when planted): %s %s" % (outs, r.get("error")))
    check(verdicts(s) == ["wrong_answer"] * 3 + ["accepted"], "verdicts %s" % verdicts(s))


def many(d, n):
    cases = [{"stdin": "%d\n" % k, "expected": "%d" % k} for k in range(n)]
    cases[n // 2]["expected"] = "wrong"
    r = run(d, {"id": "n", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": cases}]}, timeout=3600)
    s = cases_step(r)
    counts = s.get("case_counts", {})
    check(s.get("n_cases") == n and len(s.get("cases", [])) == n, "%d case documents" % n)
    check(counts.get("accepted") == n - 1 and counts.get("wrong_answer") == 1, "counts %s" % counts)
    check(s.get("first_failure") == n // 2, "first_failure %s" % s.get("first_failure"))
    check(all(c.get("index") == k for k, c in enumerate(s.get("cases", []))), "indexes in order")


def case_many_500(d):
    many(d, 500)


def case_many_10000(d):
    many(d, 10000)


def case_toolchain_form(d):
    """The toolchain form: top-level cases belong to the run step; the
    compile runs once; the top-level args come before each case's."""
    cases = [{"args": ["sum"], "stdin": "20 22", "expected": "42"},
             {"args": ["exit3"], "expected": "partial"},
             {"args": ["sum"], "stdin": "1 1", "expected": "3"}]
    r = run(d, {"id": "tc", "type": "exec", "toolchain": "gcc", "files": [{"path": "main.c", "content": PROG_C}],
                "cases": cases})
    if r.get("status") == "toolchain_missing" or (r.get("error") or {}).get("code") == "unknown_toolchain":
        print("SKIPPED: no gcc toolchain here: %s" % r)
        sys.exit(SKIP)
    names = [x.get("name") for x in r.get("steps", [])]
    check(names == ["compile", "run"], "one compile, one run step: %s" % names)
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "runtime_error", "wrong_answer"], "toolchain verdicts %s" % verdicts(s))
    check(s.get("first_failure") == 1 and r.get("status") == "cases_failed", "first_failure 1, cases_failed")
    # top-level args come first: ./main sum then the case's (none); a case's args after
    r = run(d, {"id": "tc2", "type": "exec", "toolchain": "gcc", "files": [{"path": "main.c", "content": PROG_C}],
                "args": ["sum"], "cases": [{"stdin": "2 3", "expected": "5"}, {"args": ["ignored"], "stdin": "1 2",
                                                                               "expected": "3"}]})
    check(verdicts(cases_step(r)) == ["accepted", "accepted"], "top-level args first: %s" % verdicts(cases_step(r)))


def case_large_compare(d):
    """Outputs over the loop thread's 64 KiB: judged on the worker pool, the
    same verdicts (a difference in the last line found)."""
    big = "".join("%07d\n" % k for k in range(40000))  # 320,000 bytes
    wrong = big[:-8] + "9999999\n"
    cases = [{"stdin": big, "expected": big, "compare": "exact"},
             {"stdin": big, "expected": wrong, "compare": "exact"},
             {"stdin": big, "expected": wrong},
             {"stdin": big, "expected": big.replace("\n", " "), "compare": "tokens"}]
    r = run(d, {"id": "big", "type": "exec", "steps": [{"name": "run", "argv": ["cat"], "cases": cases}]})
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "wrong_answer", "wrong_answer", "accepted"], "large verdicts %s" % verdicts(s))
    c = s.get("cases", [{}, {}, {}])
    check("40000" in c[2].get("why", ""), "the difference is on line 40000: %s" % c[2].get("why"))
    check(c[0].get("stdout_bytes") == 320000 and c[0].get("stdout_truncated") is True
          and len(c[0].get("stdout", "")) == 4096, "the shown output is 4096 bytes of 320000")
    # the text shown of all cases together stays within 16 MiB: 24 cases of 1 MiB, shown up to 1 MiB each
    mib = 1 << 20
    cases = [{"args": ["-c", "head -c %d /dev/zero | tr '\\0' a" % mib]}] * 24
    r = run(d, {"id": "shown", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases,
                                                          "case_output_bytes": mib}]})
    s = cases_step(r)
    shown = [len(x.get("stdout", "")) for x in s.get("cases", [])]
    check(verdicts(s) == ["accepted"] * 24 and all(x.get("stdout_bytes") == mib for x in s.get("cases", [])),
          "24 cases printed 1 MiB each: %s" % verdicts(s))
    check(shown[0] == mib and sum(shown) <= 16 * mib and shown[-1] < mib and s["cases"][-1].get("stdout_truncated"),
          "shown text bounded: %s" % shown)


def case_budget(d):
    """budget_s: once spent, the cases not started are skipped (each case
    here sleeps 0.2 s, the budget is 0.001 s: only the first runs)."""
    cases = [{"args": ["-c", "sleep 0.2; echo x"], "expected": "x"}] * 4
    r = run(d, {"id": "bu", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases, "budget_s": 0.001}]})
    s = cases_step(r)
    check(verdicts(s) == ["accepted", "skipped", "skipped", "skipped"], "budget verdicts %s" % verdicts(s))
    check("budget_s" in (s.get("error") or ""), "the step says why: %s" % s.get("error"))
    check(r.get("status") == "cases_failed", "skipped cases are not all accepted")


def case_cancel(d):
    """A cancel during the cases: the running case is killed, the rest
    skipped, the job cancelled; the daemon serves on."""
    c = td.Client(d.sock)
    cases = [{"args": ["-c", "echo x"], "expected": "x"}, {"args": ["-c", "sleep 30"], "expected": ""}] + \
        [{"args": ["-c", "echo y"], "expected": "y"}] * 3
    c.send({"id": "long", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases}]})
    import time
    time.sleep(1.5)  # not an assertion: the cancel may land anywhere, the answer is checked either way
    c.send({"id": "c", "type": "cancel", "target": "long"})
    got = {}
    while len(got) < 2:
        r = c.recv(120)
        got[r.get("id")] = r
    r = got["long"]
    s = cases_step(r)
    v = verdicts(s)
    check(r.get("status") == "cancelled", "cancelled: %s" % r.get("status"))
    check(len(v) == 5 and v[-1] == "skipped" and "accepted" not in v[2:], "the rest skipped: %s" % v)
    r = c.call({"id": "after", "type": "exec", "steps": [{"name": "run", "argv": ["cat"],
                                                          "cases": [{"stdin": "a", "expected": "a"}]}]})
    check(r.get("status") == "ok", "the daemon serves on: %s" % r.get("status"))
    c.close()


# ---- cases on lent slots (issue 38): a cases step runs its cases on idle
# slots too, answering as the sequential run would ----
def status_of(d):
    c = td.Client(d.sock)
    try:
        return c.call({"id": "st", "type": "status"}, timeout=30)
    finally:
        c.close()


# Prints CLOCK_MONOTONIC (one clock for every namespace here: no time
# namespace) when it starts and when it ends, 0.1 s apart.
TURNS_C = r"""
#include <stdio.h>
#include <time.h>
static long long now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
int main(void) {
  long long a = now();
  struct timespec d = {0, 100000000};
  nanosleep(&d, NULL);
  printf("%lld %lld\n", a, now());
  return 0;
}
"""


def case_turns(d):
    """One slot (--jobs 1): a step's cases run one after another there, so
    no case's program starts before the one before it ended: the programs'
    own clocks never overlap (a set-up ahead of its turn that started its
    program early, or a second program on one slot, would fail this)."""
    r = run(d, prog_req("t", [{} for _ in range(8)], compile_src=TURNS_C))
    s = cases_step(r)
    check(verdicts(s) == ["accepted"] * 8, "turns verdicts %s" % verdicts(s))
    spans = []
    for x in s.get("cases", []):
        try:
            a, b = (int(v) for v in x.get("stdout", "").split())
            spans.append((a, b))
        except ValueError:
            check(False, "case %s printed %r" % (x.get("index"), x.get("stdout")))
    check(len(spans) == 8, "8 spans: %d" % len(spans))
    for k in range(1, len(spans)):
        check(spans[k][0] >= spans[k - 1][1],
              "case %d started %.1f ms before case %d ended" % (k, (spans[k - 1][1] - spans[k][0]) / 1e6, k - 1))


def case_parallel_slots(d):
    """One cases job on a 2-slot daemon, nothing else queued: a second slot
    is lent, so status shows 2 running with one job (the old daemon ran its
    cases one after another on one slot: never more than 1). Answers in
    case order, each its own."""
    cases = [{"args": ["-c", "echo 0"], "expected": "0"}] + \
        [{"args": ["-c", "sleep 1; echo %d" % k], "expected": str(k)} for k in range(1, 7)]
    c = td.Client(d.sock)
    c.send({"id": "par", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases}]})
    most, r = poll_until_answer(d, c)
    c.close()
    s = cases_step(r)
    check(most == 2, "two slots running for one cases job: most running seen %d" % most)
    check(verdicts(s) == ["accepted"] * 7, "all accepted: %s" % verdicts(s))
    check([x.get("stdout") for x in s.get("cases", [])] == ["%d\n" % k for k in range(7)],
          "each case's own output, in order: %s" % [x.get("stdout") for x in s.get("cases", [])])
    check([x.get("index") for x in s.get("cases", [])] == list(range(7)), "indexes in order")
    st = status_of(d)
    check(st.get("running") == 0 and st.get("queued") == 0, "all slots back: %s" % st)


def poll_until_answer(d, c, timeout=120):
    """Status polled (its "running") on another connection until c's answer
    is in: the most seen, and the answer."""
    import select
    import time
    most = 0
    end = time.time() + timeout
    while time.time() < end:
        most = max(most, status_of(d).get("running", 0))
        ready, _, _ = select.select([c.s], [], [], 0.05)
        if ready:  # the answer's first bytes are in
            break
    return most, c.recv(timeout)


# Verdicts in a mix, later cases ending before earlier ones (the sleeps
# make the order of ends differ from the order of indexes when two run).
MIX = [
    {"args": ["-c", "echo a"], "expected": "a"},                                  # 0 accepted
    {"args": ["-c", "sleep 0.6; echo b"], "expected": "x"},                       # 1 wrong_answer (b)
    {"args": ["-c", "echo c; exit 3"], "expected": "c"},                          # 2 runtime_error
    {"args": ["-c", "sleep 0.4; echo d"], "expected": "d"},                       # 3 accepted
    {"args": ["-c", "kill -SEGV $$"], "expected": ""},                            # 4 signaled
    {"args": ["-c", "sleep 30"], "expected": "", "limits": {"time_s": 1, "cpu_time_s": 1}},  # 5 time_limit
    {"args": ["-c", "echo g"], "expected": "g"},                                  # 6 accepted
    {"args": ["-c", "sleep 0.3; printf '1 2 3'"], "expected": "1 2 4"},           # 7 wrong_answer
    {"args": ["-c", "echo i"], "expected": "i"},                                  # 8 accepted
]
MIX_WANT = ["accepted", "wrong_answer", "runtime_error", "accepted", "signaled", "time_limit", "accepted",
            "wrong_answer", "accepted"]


def same_answer(a, b):
    """The parts of a case that do not vary by run (times, rss do)."""
    keep = ("index", "verdict", "exit_code", "signal", "stdout", "stderr", "limit_hit", "why")
    return [{k: x.get(k) for k in keep} for x in a] == [{k: x.get(k) for k in keep} for x in b]


def case_parallel_order(d):
    """The same mix on a 1-slot daemon and on this 2-slot one: identical
    answers, in case order, verdicts as worked out by hand."""
    one = td.Daemon(*NO_TOOLCHAINS, "--jobs", "1")
    try:
        r1 = run(one, {"id": "o1", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": MIX}]})
    finally:
        one.stop()
    c = td.Client(d.sock)
    c.send({"id": "o2", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": MIX}]})
    most, r2 = poll_until_answer(d, c)
    c.close()
    s1, s2 = cases_step(r1), cases_step(r2)
    check(verdicts(s1) == MIX_WANT, "1 slot: verdicts %s" % verdicts(s1))
    check(verdicts(s2) == MIX_WANT, "2 slots: verdicts %s" % verdicts(s2))
    check(most == 2, "the 2-slot daemon ran cases on both: most running %d" % most)
    check(same_answer(s1.get("cases", []), s2.get("cases", [])), "the same answers on 1 and 2 slots")
    for k in ("case_counts", "first_failure", "n_cases", "status", "error"):
        check(s1.get(k) == s2.get(k), "%s alike: %s vs %s" % (k, s1.get(k), s2.get(k)))
    check(s2.get("first_failure") == 1, "first_failure 1: %s" % s2.get("first_failure"))
    check(r1.get("status") == r2.get("status") == "cases_failed", "both cases_failed")


def case_parallel_first_failure(d):
    """stop: first_failure with cases running on three slots: the lowest
    failing index is reported and every case after it skipped, as the
    sequential run says, though later cases (one of them failing, one
    accepted) ended first; the case still running past it (sleep 120) is
    killed: the answer comes long before it could end. Every case that is
    to overlap another sleeps (0.4 s and more), so the overlap shows in
    status at any machine's speed: with echo alone the lent cases ended
    between two polls on a quiet machine, and a failure at 3 cut the run
    before the sleep 120 started."""
    cases = [{"args": ["-c", "echo a"], "expected": "a"},                       # 0 accepted
             {"args": ["-c", "sleep 1.5; exit 1"], "expected": ""},            # 1 runtime_error, late (main)
             {"args": ["-c", "sleep 0.4; echo c"], "expected": "c"},            # 2 accepted, early (lent A)
             {"args": ["-c", "sleep 120"], "expected": ""},                     # 3 killed at the cut (lent B)
             {"args": ["-c", "sleep 0.4; echo d"], "expected": "x"},            # 4 wrong_answer, early (lent A)
             {"args": ["-c", "echo f"], "expected": "f"}]
    c = td.Client(d.sock)
    c.send({"id": "ff", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases,
                                                   "stop": "first_failure"}]})
    most, r = poll_until_answer(d, c, timeout=60)
    c.close()
    s = cases_step(r)
    check(most == 3, "all three slots ran cases: most running %d" % most)
    check(verdicts(s) == ["accepted", "runtime_error", "skipped", "skipped", "skipped", "skipped"],
          "the sequential answer: %s" % verdicts(s))
    check(s.get("first_failure") == 1, "first_failure 1: %s" % s.get("first_failure"))
    cnt = s.get("case_counts", {})
    check(cnt.get("accepted") == 1 and cnt.get("runtime_error") == 1 and cnt.get("skipped") == 4
          and cnt.get("wrong_answer") == 0, "counts %s" % cnt)
    check("first_failure after case 1" in (s.get("error") or ""), "the step says why: %s" % s.get("error"))
    check(all("stdout" not in x for x in s.get("cases", [])[2:]), "skipped cases show nothing of a run")
    st = status_of(d)
    check(st.get("running") == 0, "the killed case's slot is back: %s" % st)


def case_parallel_cancel(d):
    """A cancel of a cases job running on two slots kills both running
    cases (sleep 120): the answer comes, cancelled, with the sequential
    report (the lowest running case killed, the rest skipped), and every
    slot is back."""
    import time
    cases = [{"args": ["-c", "echo a"], "expected": "a"}] + [{"args": ["-c", "sleep 120"], "expected": ""}] * 4
    c = td.Client(d.sock)
    c.send({"id": "long", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases}]})
    most = 0
    end = time.time() + 60
    while most < 2 and time.time() < end:
        most = max(most, status_of(d).get("running", 0))
        time.sleep(0.05)
    check(most == 2, "two slots running before the cancel: %d" % most)
    c.send({"id": "c", "type": "cancel", "target": "long"})
    got = {}
    while len(got) < 2:
        r = c.recv(60)
        got[r.get("id")] = r
    r = got["long"]
    s = cases_step(r)
    v = verdicts(s)
    check(r.get("status") == "cancelled", "cancelled: %s" % r.get("status"))
    check(len(v) == 5 and v[0] == "accepted" and v[1] != "accepted" and v[2:] == ["skipped"] * 3,
          "case 1 killed, the rest skipped: %s" % v)
    check((s.get("cases") or [{}, {}])[1].get("limit_hit") == "cancel", "case 1 was killed by the cancel: %s"
          % (s.get("cases") or [{}, {}])[1])
    st = status_of(d)
    check(st.get("running") == 0, "both slots back: %s" % st)
    r = c.call({"id": "after", "type": "exec", "steps": [{"name": "run", "argv": ["cat"],
                                                          "cases": [{"stdin": "a", "expected": "a"}] * 3}]})
    check(r.get("status") == "ok", "the daemon serves on: %s" % r.get("status"))
    c.close()


def case_parallel_queued_first(d):
    """A job queued while a long cases job borrows every idle slot starts
    when a lent case ends (slots are lent only while nothing is queued, for
    one case at a time): it is answered long before the cases job ends."""
    cases = [{"args": ["-c", "echo a"], "expected": "a"}] + [{"args": ["-c", "sleep 1; echo b"], "expected": "b"}] * 40
    a = td.Client(d.sock)
    a.send({"id": "many", "type": "exec", "steps": [{"name": "run", "argv": ["sh"], "cases": cases}]})
    import time
    most = 0
    end = time.time() + 60
    while most < 2 and time.time() < end:
        most = max(most, status_of(d).get("running", 0))
        time.sleep(0.05)
    check(most == 2, "the cases job holds both slots: %d" % most)
    b = td.Client(d.sock)
    b.send({"id": "later", "type": "exec", "steps": [{"name": "run", "argv": ["echo", "hi"]}]})
    rb = b.recv(120)
    check(rb.get("status") == "ok" and rb["steps"][0].get("stdout") == "hi\n", "the later job ran: %s" % rb.get("status"))
    st = status_of(d)
    check(st.get("running") >= 1, "the cases job still runs when the later job is answered: %s" % st)
    b.close()
    ra = a.recv(180)
    check(verdicts(cases_step(ra)) == ["accepted"] * 41, "the cases job ends well: %s" % verdicts(cases_step(ra)))
    a.close()


SLOW_FN = "import time\ndef slow(k):\n    time.sleep(0.5)\n    return k * 2\n"


def case_parallel_warm(d):
    """Warm function-call cases on lent slots: once both slots have a warm
    zygote up (a warm job on each, from two connections: a new connection's
    first job takes a slot never used), a warm cases job runs on both, each
    case warm, started by two zygotes (two hash seeds among the cases), and
    answers in order."""
    for k in range(2):
        c = td.Client(d.sock)  # kept open: the next connection is a new one and takes the other slot
        r = c.call({"id": "w%d" % k, "type": "exec", "warm": True, "files": [{"path": "w.py", "content": "print(1)"}],
                    "steps": [{"name": "run", "argv": ["python3", "w.py"]}]}, timeout=120)
        check(r.get("status") == "ok" and r["steps"][0].get("stdout") == "1\n", "warm job %d: %s" % (k, r.get("status")))
        if k == 0:
            first = c
        else:
            c.close()
    first.close()
    cases = [{"args": [k], "expected": 2 * k} for k in range(8)]
    c = td.Client(d.sock)
    c.send({"id": "pw", "type": "exec", "warm": True, "files": [{"path": "sol.py", "content": SLOW_FN}],
            "steps": [{"name": "run", "argv": ["python3", "sol.py"], "fn_name": "slow", "cases": cases}]})
    most, r = poll_until_answer(d, c)
    c.close()
    s = cases_step(r)
    check(verdicts(s) == ["accepted"] * 8, "warm cases accepted: %s %s" % (verdicts(s), [x.get("stderr") for x in s.get("cases", [])]))
    starts = [x.get("start", "") for x in s.get("cases", [])]
    check(len(starts) == 8 and all(x.startswith("warm (zygote, hash seed ") for x in starts), "all warm: %s" % starts)
    check(len(set(starts)) == 2, "two slots' zygotes served the cases: %s" % sorted(set(starts)))
    check(most == 2, "both slots ran cases: most running %d" % most)


N_LENT = 20


def case_parallel_warm_lent(d):
    """Warm function-call cases on a fresh 2-slot daemon, no warm job run
    before: the lent slot has no zygote, so it starts one of its own and
    runs cases on it once it is up (the old daemon lent only slots whose
    zygote was already up: every case ran on the job's own slot, one hash
    seed). Each case warm, two hash seeds (two zygotes) among them, status
    counting a zygote on each slot, answers in order."""
    cases = [{"args": [k], "expected": 2 * k} for k in range(N_LENT)]  # ~10 s on one lane: time for a start-up
    c = td.Client(d.sock)
    c.send({"id": "pwl", "type": "exec", "warm": True, "files": [{"path": "sol.py", "content": SLOW_FN}],
            "steps": [{"name": "run", "argv": ["python3", "sol.py"], "fn_name": "slow", "cases": cases}]})
    r = c.recv(300)
    c.close()
    s = cases_step(r)
    check(verdicts(s) == ["accepted"] * N_LENT, "warm cases accepted: %s %s" % (verdicts(s), [x.get("stderr") for x in s.get("cases", [])]))
    check([x.get("index") for x in s.get("cases", [])] == list(range(N_LENT)), "indexes in order")
    starts = [x.get("start", "") for x in s.get("cases", [])]
    check(len(starts) == N_LENT and all(x.startswith("warm (zygote, hash seed ") for x in starts), "all warm: %s" % starts)
    check(len(set(starts)) == 2, "the lent slot's own zygote served cases too: %s" % sorted(set(starts)))
    st = status_of(d)
    check((st.get("warm") or {}).get("zygotes") == 2, "a zygote on each slot: %s" % st.get("warm"))
    check(st.get("running") == 0 and st.get("queued") == 0, "all slots back: %s" % st)


def case_pyclient(d):
    """Client.run_cases (clients/python): the steps form puts the cases on
    the last step; bytes stdin and expected go as base64."""
    c = td.surgebox.Client(d.sock, autostart=False)
    try:
        r = c.run_cases([{"stdin": "a b\n", "expected": "a b"}, {"stdin": b"\xff\n", "expected": b"\xff\n",
                                                                "compare": "exact"},
                         {"stdin": "1", "expected": "2"}, {"stdin": "3", "expected": "3"}],
                        steps=[["true"], ["cat"]], stop="first_failure")
        s = r.step("step2") or {}
        check(verdicts(s) == ["accepted", "accepted", "wrong_answer", "skipped"], "run_cases verdicts %s" % verdicts(s))
        check(r["status"] == "cases_failed" and s.get("first_failure") == 2, "run_cases status %s" % r["status"])
        r = c.run_cases([{"stdin": "1 1", "expected": "2"}] * 2, steps=[{"name": "compile", "argv": ["false"]},
                                                                        ["cat"]])
        nr = (r.get("cases_not_run") or [{}])[0]
        check(r["status"] == "compile_error" and nr.get("verdict") == "compile_error" and nr.get("n_cases") == 2,
              "run_cases build failure: %s" % r.get("cases_not_run"))
    finally:
        c.close()


SOLUTION_PY = r"""
import sys
def add(a, b): return a + b
def pair(x): return (x, [x, (x,)])
def ratio(a, b): return a / b
def nested(): return {"k": [1, 2.5, [3]], "t": (1, 2)}
def boom(): raise ValueError("no")
def noisy(x):
    print("noise", x)
    sys.stdout.flush()
    return x
def aset(): return {1, 2}
class Solution:
    def twice(self, x): return 2 * x
if __name__ == "__main__":
    print("main ran")
    raise SystemExit(9)
"""


def case_fn_calls(d):
    """Function-call cases (fn_name): the daemon's harness calls the
    function, the daemon compares the JSON value (lists and tuples alike,
    floats within tolerance); the module's __main__ part never runs."""
    def job(fn, cases, argv=("python3", "sol.py")):
        r = run(d, {"id": "fn-" + fn, "type": "exec", "files": [{"path": "sol.py", "content": SOLUTION_PY}],
                    "steps": [{"name": "run", "argv": list(argv), "fn_name": fn, "cases": cases}]})
        return r, cases_step(r)
    r, s = job("add", [{"args": [1, 2], "expected": 3},                 # accepted
                       {"args": [1, 2], "expected": 4},                 # 3 != 4
                       {"args": [[1], [2, 3]], "expected": [1, 2, 3]},  # list concatenation
                       {"args": [1.5, 1.5], "expected": 3},             # 3.0 == 3
                       {"args": ["a", "b"], "expected": "ab"}])
    check(verdicts(s) == ["accepted", "wrong_answer", "accepted", "accepted", "accepted"],
          "add verdicts %s %s" % (verdicts(s), [c.get("stderr") for c in s.get("cases", [])]))
    check("main ran" not in str(s), "the __main__ part did not run")
    r, s = job("pair", [{"args": [5], "expected": [5, [5, [5]]]}])    # tuples as lists
    check(verdicts(s) == ["accepted"], "tuples compare as lists: %s" % verdicts(s))
    r, s = job("ratio", [{"args": [1, 3], "expected": 0.3333333},     # |diff| 3.3e-8 <= 1e-6
                         {"args": [1, 3], "expected": 0.3334},        # 6.7e-5 > 1e-6
                         {"args": [1, 3], "expected": 0.3334, "compare": {"mode": "numbers", "abs_tol": 1e-3}}])
    check(verdicts(s) == ["accepted", "wrong_answer", "accepted"], "float tolerance: %s" % verdicts(s))
    r, s = job("nested", [{"args": [], "expected": {"k": [1, 2.5, [3]], "t": [1, 2]}},
                          {"args": [], "expected": {"k": [1, 2.5, [3, 4]], "t": [1, 2]}}])
    check(verdicts(s) == ["accepted", "wrong_answer"], "nested: %s" % verdicts(s))
    r, s = job("boom", [{"args": [], "expected": None}])
    check(verdicts(s) == ["runtime_error"] and "ValueError" in s["cases"][0].get("stderr", ""), "exception: %s" % s)
    r, s = job("noisy", [{"args": [7], "expected": 7}])
    check(verdicts(s) == ["accepted"] and "noise 7" in s["cases"][0].get("stderr", ""), "prints go to stderr: %s" % s)
    r, s = job("aset", [{"args": [], "expected": [1, 2]}])
    check(verdicts(s) == ["runtime_error"] and s["cases"][0].get("exit_code") == 3, "a set is not JSON: %s" % s)
    r, s = job("twice", [{"args": [4], "expected": 8}])
    check(verdicts(s) == ["accepted"], "a method of Solution: %s" % verdicts(s))
    r, s = job("Solution.twice", [{"args": [4], "expected": 8}])
    check(verdicts(s) == ["accepted"], "Solution.twice: %s" % verdicts(s))
    r, s = job("add", [{"args": [1, 2], "expected": 3}], argv=("sh", "sol.py"))
    check(verdicts(s) == ["judge_error"] and "Python" in (s.get("error") or ""), "not Python: %s" % s)
    t = run(d, {"id": "fn-bad", "type": "exec", "steps": [{"argv": ["python3", "x.py"], "fn_name": "a-b",
                                                           "cases": [{"args": [], "expected": 1}]}]})
    check(t.get("type") == "error" and "fn_name" in str(t), "a bad fn_name refused: %s" % t)


def case_fn_warm_same(d):
    """Warm function-call cases against cold ones, case for case: verdict,
    exit code, stdout and stderr byte for byte, tracebacks through the
    harness included (a zygote runs the harness's code compiled once at its
    start, sbzygote_body.py _precompile; its frames and lines must be the
    ones a cold interpreter shows)."""
    cases = {"add": [{"args": [1, 2], "expected": 3}, {"args": [1, 2], "expected": 4}],
             "boom": [{"args": [], "expected": None}],
             "noisy": [{"args": [7], "expected": 7}],
             "aset": [{"args": [], "expected": [1, 2]}],
             "Solution.twice": [{"args": [4], "expected": 8}],
             "missing": [{"args": [], "expected": 1}]}
    for fn, cs in cases.items():
        got = {}
        for warm in (False, True):
            r = run(d, {"id": "fnw-%s-%s" % (fn, warm), "type": "exec", "warm": warm,
                        "files": [{"path": "sol.py", "content": SOLUTION_PY}],
                        "steps": [{"name": "run", "argv": ["python3", "sol.py"], "fn_name": fn, "cases": cs}]})
            s = cases_step(r)
            got[warm] = [(c.get("verdict"), c.get("exit_code"), c.get("stdout"), c.get("stderr")) for c in s.get("cases", [])]
            starts = [c.get("start", "") for c in s.get("cases", [])]
            check(len(starts) == len(cs) and all(x.startswith("warm" if warm else "cold") for x in starts),
                  "%s %s: every case started %s: %s" % (fn, "warm" if warm else "cold", "warm" if warm else "cold", starts))
        check(got[True] == got[False], "%s: warm cases as cold ones: %r / %r" % (fn, got[True], got[False]))
    check(".sb_fn_harness.py" in str(got), "the tracebacks show the harness's frames: %r" % got)


def case_bad_requests(d):
    def err(req):
        r = run(d, req)
        return r.get("type"), r.get("code") or (r.get("error") or {}).get("code"), str(r)
    one = {"stdin": "", "expected": ""}
    t, code, text = err({"id": 1, "type": "exec", "steps": [{"argv": ["cat"], "cases": [one] * 10001}]})
    check(t == "error" and "10000" in text and "split" in text, "10001 cases refused: %s" % text[:300])
    t, code, text = err({"id": 2, "type": "exec", "steps": [{"argv": ["cat"], "cases": [dict(one, compare="fuzzy")]}]})
    check(t == "error" and "compare" in text, "unknown compare mode refused: %s" % text[:300])
    t, code, text = err({"id": 3, "type": "exec", "steps": [{"argv": ["cat"], "stdin": "x", "cases": [one]}]})
    check(t == "error" and "stdin" in text, "step stdin with cases refused: %s" % text[:300])
    t, code, text = err({"id": 4, "type": "exec", "steps": [{"argv": ["cat"], "stop": "never"}]})
    check(t == "error" and "cases" in text, "stop without cases refused: %s" % text[:300])
    t, code, text = err({"id": 5, "type": "exec", "steps": [{"argv": ["cat"], "cases": [dict(one, bogus=1)]}]})
    check(t == "error" and "bogus" in text, "unknown case field refused: %s" % text[:300])
    for cmp, word in (({"mode": "exact", "ignore_case": True}, "ignore_case"),
                      ({"mode": "lines", "ignore_case": 1}, "true or false")):
        t, code, text = err({"id": 7, "type": "exec", "steps": [{"argv": ["cat"], "cases": [dict(one, compare=cmp)]}]})
        check(t == "error" and word in text, "compare %r refused: %s" % (cmp, text[:300]))
    big = "x" * (1 << 20)
    t, code, text = err({"id": 6, "type": "exec", "steps": [{"argv": ["cat"], "cases": [{"stdin": big}] * 65}]})
    check(t == "error" and "bytes" in text, "cases over 64 MiB refused: %s" % text[:300])


CASES = {
    "verdicts": (case_verdicts, []),
    "compare_modes": (case_compare_modes, NO_TOOLCHAINS),
    "stop": (case_stop, NO_TOOLCHAINS),
    "build_failure": (case_build_failure, []),
    "isolation": (case_isolation, NO_TOOLCHAINS),
    "hunt": (case_hunt, NO_TOOLCHAINS),
    "many_500": (case_many_500, NO_TOOLCHAINS),
    "many_10000": (case_many_10000, NO_TOOLCHAINS),
    "toolchain_form": (case_toolchain_form, []),
    "large_compare": (case_large_compare, NO_TOOLCHAINS),
    "budget": (case_budget, NO_TOOLCHAINS),
    "cancel": (case_cancel, NO_TOOLCHAINS),
    "pyclient": (case_pyclient, NO_TOOLCHAINS),
    "fn_calls": (case_fn_calls, NO_TOOLCHAINS),
    "fn_warm_same": (case_fn_warm_same, []),
    "turns": (case_turns, NO_TOOLCHAINS + ["--jobs", "1"]),
    "parallel_slots": (case_parallel_slots, NO_TOOLCHAINS + ["--jobs", "2"]),
    "parallel_order": (case_parallel_order, NO_TOOLCHAINS + ["--jobs", "2"]),
    "parallel_first_failure": (case_parallel_first_failure, NO_TOOLCHAINS + ["--jobs", "3"]),
    "parallel_cancel": (case_parallel_cancel, NO_TOOLCHAINS + ["--jobs", "2"]),
    "parallel_warm": (case_parallel_warm, ["--jobs", "2"]),
    "parallel_warm_lent": (case_parallel_warm_lent, ["--jobs", "2"]),
    "parallel_queued_first": (case_parallel_queued_first, NO_TOOLCHAINS + ["--jobs", "2"]),
    "bad_requests": (case_bad_requests, NO_TOOLCHAINS + ["--max-line", str(80 << 20)]),
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
    fn, args = CASES[name]
    d = td.Daemon(*args)
    try:
        fn(d)
    finally:
        d.stop()
    if failures:
        print("--- daemon log ---\n" + d.logtext()[-4000:])
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
