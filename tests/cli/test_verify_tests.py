#!/usr/bin/env python3
"""surgebox verify --benchmark tests: problems with test cases and solutions
written by hand, every expected value worked out by hand (never produced by
the code under test). One case a run (argv[2]):

  passk        a Python function-call problem (n=5, c=2) and a C stdin problem
               (n=2, c=1: one compile error); --k 1,2: pass@1 = (2/5 + 1/2)/2
               = 45%, pass@2 = ((1 - C(3,2)/C(5,2)) + 1)/2 = (0.7 + 1)/2 = 85%
  adapters     input_output (APPS: stdin, a JSON string, and fn_name with its
               outputs wrapped in a list) and test_cases (SandboxFusion:
               stdin_stdout, function_call with JSON text per line); then
               --language for a problem without one and --time-limit
  resume       an interrupted run, continued, writes the uninterrupted file
  shards       two shards merged == the unsharded run, byte for byte
  missing      a problem whose toolchain is not installed: counted, exit 2,
               the other problem still scored
  bad_lines    a bad problem line and a bad solution line named by number
  asserts      HumanEval's test + entry_point and MBPP's test_list run after
               the solution: right, wrong, missing function
  warm         --warm: the same results as cold, a zygote running after it
               (none after the cold run), "warm": true in every request
  livecodebench public/private test lists, stdin and functional with
               metadata.func_name (a class Solution method)
Inside unshare (ctest)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from private_daemon import PrivateDaemon  # noqa: E402

SKIP = 77

ADD_OK = "def add(a, b):\n    return a + b\n"
ADD_OK2 = "def add(a, b):\n    return b + a\n"
ADD_WRONG = "def add(a, b):\n    return a - b\n"
ADD_RAISES = "def add(a, b):\n    raise ValueError('no')\n"
ADD_NONE = "def add(a, b):\n    pass\n"
C_OK = "#include <stdio.h>\nint main(void) { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a * b); return 0; }\n"
C_BROKEN = "int main(void) { return }\n"

PY_FN = {"id": "add", "language": "python", "fn_name": "add",
         "tests": [{"args": [1, 2], "expected": 3}, {"args": [2, 2], "expected": 4}, {"args": [-1, 5], "expected": 4}]}
C_MUL = {"id": "mul", "language": "c",
         "tests": [{"stdin": "2 3\n", "expected": "6\n"}, {"stdin": "7 -1\n", "expected": "-7"}]}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def write_lines(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return path


def verify(bin_dir, args, sock=None, wait=True):
    cmd = [os.path.join(bin_dir, "surgebox"), "verify", "--benchmark", "tests"] + list(args)
    if sock:
        cmd += ["--socket", sock, "--no-autostart", "--jobs", "2"]
    if not wait:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print("$", " ".join(cmd[2:]), "->", p.returncode, "\n", p.stdout[-3000:], p.stderr[-3000:])
    return p


def by_line(result):
    return {r["line"]: r for r in result["results"]}


def passk(bin_dir, d, sock):
    probs = write_lines(os.path.join(d, "P.jsonl"), [PY_FN, C_MUL])
    sols = write_lines(os.path.join(d, "S.jsonl"), [
        {"id": "add", "code": ADD_OK},       # line 1: passes
        {"id": "add", "code": ADD_WRONG},    # line 2: 1-2=-1 != 3: case 0 wrong
        {"id": "mul", "code": C_OK},         # line 3: passes
        {"id": "add", "code": ADD_RAISES},   # line 4: case 0 runtime_error
        {"id": "add", "code": ADD_OK2},      # line 5: passes
        {"id": "mul", "code": C_BROKEN},     # line 6: compile error
        {"id": "add", "code": ADD_NONE},     # line 7: None != 3
    ])
    out = os.path.join(d, "R.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out, "--k", "1,2"], sock)
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    lines = p.stdout.splitlines()
    want = ["tests: 2 problems, 7 solutions (7 distinct programs); 2 problems scored",
            "pass@1: 45.00 pass@2: 85.00",
            "  c: 1 problems, 2 solutions, 1 passed",
            "  python: 1 problems, 5 solutions, 2 passed"]
    if lines != want:
        fail(f"stdout {lines}, expected {want}")
    r = json.load(open(out))
    if abs(r["pass_at_k"]["1"] - 0.45) > 1e-12 or abs(r["pass_at_k"]["2"] - 0.85) > 1e-12:
        fail(f"pass_at_k {r['pass_at_k']}")
    if r["by_language"] != {"c": {"problems": 1, "solutions": 2, "passed": 1, "not_scored": 0},
                            "python": {"problems": 1, "solutions": 5, "passed": 2, "not_scored": 0}}:
        fail(f"by_language {r['by_language']}")
    s = by_line(r)
    if [s[i]["passed"] for i in range(1, 8)] != [True, False, True, False, True, False, False]:
        fail("passed per solution")
    if s[1]["counts"] != {"accepted": 3} or s[1]["n_cases"] != 3 or s[1]["first_failure"] is not None:
        fail(f"line 1: {s[1]}")
    # a - b: 1-2=-1 (wrong), 2-2=0 (wrong), -1-5=-6 (wrong): every case runs (--stop never)
    if s[2]["counts"] != {"wrong_answer": 3} or s[2]["first_failure"]["case"] != 0 or \
            s[2]["first_failure"]["verdict"] != "wrong_answer":
        fail(f"line 2: {s[2]}")
    if s[4]["counts"] != {"runtime_error": 3} or s[4]["first_failure"]["verdict"] != "runtime_error" or \
            "ValueError" not in s[4]["first_failure"].get("why", ""):
        fail(f"line 4: {s[4]}")
    if s[6]["counts"] != {"compile_error": 2} or s[6]["first_failure"]["verdict"] != "compile_error":
        fail(f"line 6: {s[6]}")
    if s[3]["counts"] != {"accepted": 2}:
        fail(f"line 3: {s[3]}")
    if os.path.exists(out + ".progress"):
        fail("the progress file stayed after a complete run")
    # --stop first_failure: the rest of a failing solution's cases are skipped
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", os.path.join(d, "R2.json"), "--k", "1",
                         "--stop", "first_failure"], sock)
    s = by_line(json.load(open(os.path.join(d, "R2.json"))))
    if p.returncode != 0 or s[2]["counts"] != {"wrong_answer": 1, "skipped": 2} or "pass@1: 45.00" not in p.stdout:
        fail(f"--stop first_failure: line 2 {s[2]}")
    # a k above a problem's n is refused before anything runs
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--k", "3"], sock)
    if p.returncode != 1 or 'problem "mul" (line 2) has only 2 solution(s)' not in p.stderr:
        fail("--k 3 with n=2")


def adapters(bin_dir, d, sock):
    # every expected value below is the adapter's rule applied by hand
    rows = [
        # APPS stdin: input_output as a JSON string; an output given as a list of lines (TACO)
        {"id": "apps-stdin", "language": "python",
         "input_output": json.dumps({"inputs": ["3\n1 2 3\n", "1\n5\n"], "outputs": [["6"], "5\n"]})},
        # APPS call-based: outputs wrapped in a one-element list, unwrapped
        {"id": "apps-fn", "language": "python",
         "input_output": {"fn_name": "pair", "inputs": [[1], [2]], "outputs": [[[1, 2]], [[2, 3]]]}},
        # SandboxFusion stdin_stdout
        {"id": "sf-stdin", "language": "python",
         "test_cases": {"type": "stdin_stdout", "input": ["1 2", "3 4"], "output": ["3", "7"], "fn_name": None}},
        # SandboxFusion function_call: JSON text, one argument a line
        {"id": "sf-fn", "language": "python",
         "test_cases": {"type": "function_call", "fn_name": "scale", "input": ["[1, 2]\n3", "[]\n5"],
                        "output": ["[3, 6]", "[]"]}},
    ]
    probs = write_lines(os.path.join(d, "P.jsonl"), rows)
    sols = write_lines(os.path.join(d, "S.jsonl"), [
        {"id": "apps-stdin", "code": "input()\nprint(sum(map(int, input().split())))\n"},
        {"id": "apps-stdin", "code": "print(int(input()))\n"},                       # 3, not 6: wrong
        {"id": "apps-fn", "code": "def pair(x):\n    return (x, x + 1)\n"},          # a tuple equals the list
        {"id": "apps-fn", "code": "def pair(x):\n    return [[x, x + 1]]\n"},        # still wrapped: wrong
        {"id": "sf-stdin", "code": "a, b = map(int, input().split())\nprint(a + b)\n"},
        {"id": "sf-stdin", "code": "print(3)\n"},                                    # 7 expected: wrong on case 1
        {"id": "sf-fn", "code": "def scale(v, k):\n    return [x * k for x in v]\n"},
        {"id": "sf-fn", "code": "def scale(v, k):\n    return v\n"},                 # [1, 2] != [3, 6]
    ])
    out = os.path.join(d, "R.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out], sock)
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    # n = 2 everywhere: pass@10 is not reported (default k), pass@1 = 1/2
    if "pass@1: 50.00" not in p.stdout.splitlines() or "pass@10 not reported" not in p.stderr:
        fail("pass@1 50 and pass@10 left out")
    s = by_line(json.load(open(out)))
    if [s[i]["passed"] for i in range(1, 9)] != [True, False] * 4:
        fail(f"passed {[s[i]['passed'] for i in range(1, 9)]}")
    want_ff = {2: 0, 4: 0, 6: 1, 8: 0}
    for line, case in want_ff.items():
        ff = s[line]["first_failure"]
        if ff["case"] != case or ff["verdict"] != "wrong_answer":
            fail(f"line {line}: first failure {ff}, expected case {case} wrong_answer")
    if s[6]["counts"] != {"accepted": 1, "wrong_answer": 1}:
        fail(f"line 6 counts {s[6]['counts']}")
    # --time-limit S: each case's limit; an endless loop is time_limit, not a failure of surgebox
    probs = write_lines(os.path.join(d, "P-loop.jsonl"), [{"id": "loop", "tests": [{"stdin": "", "expected": "1"}]}])
    sols = write_lines(os.path.join(d, "S-loop.jsonl"), [{"id": "loop", "code": "while True:\n    pass\n"}])
    out = os.path.join(d, "R-loop.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out, "--time-limit", "1",
                         "--language", "python"], sock)
    r = json.load(open(out))["results"][0] if os.path.exists(out) else {}
    if p.returncode != 0 or r.get("counts") != {"time_limit": 1} or r.get("first_failure", {}).get("verdict") != "time_limit":
        fail(f"--time-limit 1: {r}")


def asserts(bin_dir, d, sock):
    # HumanEval (task_id, test defining check(candidate), entry_point) and MBPP (test_list,
    # test_setup_code, test_imports): the tests run after the solution; exit 0 passes
    he_test = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"
    rows = [
        {"task_id": "HumanEval/0", "language": "python", "test": he_test, "entry_point": "add"},
        {"task_id": 11, "language": "python", "test_setup_code": "BASE = 10",
         "test_imports": ["import math"], "test_list": ["assert digits(100) == 3", "assert digits(7) == 1",
                                                        "assert math.floor(2.5) == 2"]},
    ]
    probs = write_lines(os.path.join(d, "P.jsonl"), rows)
    digits_ok = "def digits(n):\n    return len(str(n))\n"
    sols = write_lines(os.path.join(d, "S.jsonl"), [
        {"id": "HumanEval/0", "code": ADD_OK},                          # line 1: passes
        {"id": "HumanEval/0", "code": ADD_WRONG},                       # line 2: 2-3 != 5: AssertionError
        {"id": "HumanEval/0", "code": "def plus(a, b):\n    return a + b\n"},  # line 3: no add: NameError
        {"id": "11", "code": digits_ok},                               # line 4: passes
        {"id": "11", "code": "def digits(n):\n    return n // BASE\n"},  # line 5: 100 // 10 = 10 != 3
        {"id": "11", "code": "def digits(n):\n    return len(str(abs(n)))\n"},  # line 6: passes
    ])
    out = os.path.join(d, "R.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out, "--k", "1"], sock)
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    s = by_line(json.load(open(out)))
    got = [s[i]["passed"] for i in range(1, 7)]
    if got != [True, False, False, True, False, True]:
        fail(f"passed {got}")
    for line in (2, 3, 5):
        if s[line]["first_failure"]["verdict"] != "runtime_error":
            fail(f"line {line}: {s[line]['first_failure']}")
    # pass@1: HumanEval/0 1/3, 11 2/3: (1/3 + 2/3) / 2 = 50%
    if "pass@1: 50.00" not in p.stdout.splitlines():
        fail("pass@1 50")
    bad = write_lines(os.path.join(d, "P-bad.jsonl"), [{"id": "c", "language": "c", "test_list": ["assert 1"]}])
    p = verify(bin_dir, ["--problems", bad, "--solutions", sols])
    if p.returncode != 1 or "assert tests (test, test_list) are for Python problems" not in p.stderr:
        fail("assert tests of a C problem refused")


def livecodebench(bin_dir, d, sock):
    # LiveCodeBench: public/private test lists (JSON text), testtype stdin or functional, metadata.func_name
    stdin_tests = json.dumps([{"input": "2 3\n", "output": "5\n", "testtype": "stdin"}])
    fn_tests = json.dumps([{"input": "[1, 2, 3]\n2", "output": "[2, 4, 6]", "testtype": "functional"}])
    rows = [
        {"question_id": "abc100_a", "language": "python", "public_test_cases": stdin_tests,
         "private_test_cases": [{"input": "10 -4\n", "output": "6\n", "testtype": "stdin"}], "metadata": "{}"},
        {"question_id": "lc-1", "language": "python", "public_test_cases": fn_tests,
         "private_test_cases": json.dumps([{"input": "[]\n7", "output": "[]", "testtype": "functional"}]),
         "metadata": json.dumps({"func_name": "scale"})},
    ]
    probs = write_lines(os.path.join(d, "P.jsonl"), rows)
    sols = write_lines(os.path.join(d, "S.jsonl"), [
        {"id": "abc100_a", "code": "a, b = map(int, input().split())\nprint(a + b)\n"},      # line 1: passes
        {"id": "abc100_a", "code": "a, b = map(int, input().split())\nprint(abs(a) + abs(b))\n"},  # 14 != 6
        {"id": "lc-1", "code": "class Solution:\n    def scale(self, v, k):\n        return [x * k for x in v]\n"},
        {"id": "lc-1", "code": "class Solution:\n    def scale(self, v, k):\n        return v or [0]\n"},  # wrong
    ])
    out = os.path.join(d, "R.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out, "--k", "1"], sock)
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    s = by_line(json.load(open(out)))
    if [s[i]["passed"] for i in range(1, 5)] != [True, False, True, False]:
        fail(f"passed {[s[i]['passed'] for i in range(1, 5)]}")
    if s[2]["first_failure"]["case"] != 1 or s[2]["counts"] != {"accepted": 1, "wrong_answer": 1}:
        fail(f"line 2: the private case fails: {s[2]}")
    if s[4]["first_failure"]["case"] != 0 or s[4]["first_failure"]["verdict"] != "wrong_answer":
        fail(f"line 4: {s[4]}")
    # the release's compressed private tests are refused by name, never unpickled
    bad = write_lines(os.path.join(d, "P-z.jsonl"), [{"question_id": "z", "language": "python",
                                                      "public_test_cases": "[]", "private_test_cases": "eJzLSM3JyQcABiwCFQ=="}])
    p = verify(bin_dir, ["--problems", bad, "--solutions", sols])
    if p.returncode != 1 or "compresses private_test_cases" not in p.stderr:
        fail("compressed private tests named")
    bad = write_lines(os.path.join(d, "P-fn.jsonl"), [{"question_id": "f", "language": "python",
                                                       "public_test_cases": fn_tests, "metadata": "{}"}])
    p = verify(bin_dir, ["--problems", bad, "--solutions", sols])
    if p.returncode != 1 or "func_name" not in p.stderr:
        fail("functional tests without func_name")


def zygotes(bin_dir, sock):
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "status", "--json", "--socket", sock, "--no-autostart"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fail(f"status: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)["warm"]["zygotes"]


def warm(bin_dir, d, sock):
    # --warm: the same results as cold, the cases started by the slots' warm interpreters
    stdin_prob = {"id": "double", "language": "python",
                  "tests": [{"stdin": "2\n", "expected": "4"}, {"stdin": "5\n", "expected": "10"}]}
    probs = write_lines(os.path.join(d, "P.jsonl"), [PY_FN, stdin_prob])
    sols = write_lines(os.path.join(d, "S.jsonl"), [
        {"id": "add", "code": ADD_OK},                           # line 1: passes
        {"id": "add", "code": ADD_WRONG},                        # line 2: wrong on case 0
        {"id": "double", "code": "print(int(input()) * 2)\n"},   # line 3: passes
        {"id": "double", "code": "print(int(input()) + 2)\n"},   # line 4: 2+2 = 4 right, 5+2 = 7 wrong on case 1
    ])
    want = {1: (True, None), 2: (False, 0), 3: (True, None), 4: (False, 1)}
    if zygotes(bin_dir, sock) != 0:
        fail("a fresh daemon has no zygote yet")
    for flag in ([], ["--warm"]):
        out = os.path.join(d, "R%s.json" % "".join(flag))
        p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out, "--k", "1"] + flag, sock)
        if p.returncode != 0:
            fail(f"{flag}: exit {p.returncode}")
        s = by_line(json.load(open(out)))
        got = {i: (s[i]["passed"], (s[i]["first_failure"] or {}).get("case")) for i in range(1, 5)}
        if got != want:
            fail(f"{flag}: {got}")
        if "pass@1: 50.00" not in p.stdout.splitlines():
            fail(f"{flag}: pass@1 50")
        z = zygotes(bin_dir, sock)
        if (z > 0) != bool(flag):
            fail(f"{flag}: {z} zygote(s) running after the run")
    for flag in ([], ["--warm"]):
        dump = os.path.join(d, "requests%s.jsonl" % "".join(flag))
        p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--dump-requests", dump] + flag)
        reqs = [json.loads(line) for line in open(dump)]
        if p.returncode != 0 or len(reqs) != 4 or any(r.get("warm", False) != bool(flag) for r in reqs):
            fail(f"{flag}: dumped requests {reqs}")


def slow_files(d):
    probs = write_lines(os.path.join(d, "P.jsonl"), [
        {"id": "echo", "language": "python", "tests": [{"stdin": "5\n", "expected": "5"}]}])
    # 12 distinct programs that take a while each; those printing 5 pass (odd i print 6)
    sols = [{"id": "echo", "code": f"import time\ntime.sleep(0.4)\nprint({5 + i % 2})  # {i}\n"} for i in range(12)]
    return probs, write_lines(os.path.join(d, "S.jsonl"), sols)


def resume(bin_dir, d, sock):
    probs, sols = slow_files(d)
    whole = os.path.join(d, "whole.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", whole, "--k", "1,10"], sock)
    # n=12, c=6: pass@1 = 0.5; pass@10 = 1 - C(6,10)/C(12,10) = 1 (n - c < k)
    if p.returncode != 0 or "pass@1: 50.00 pass@10: 100.00" not in p.stdout:
        fail("the uninterrupted run")
    part = os.path.join(d, "part.json")
    proc = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", part, "--k", "1,10"], sock, wait=False)
    deadline = time.monotonic() + 120
    while not os.path.exists(part + ".progress") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    so, se = proc.communicate(timeout=120)
    print("interrupted ->", proc.returncode, so, se[-2000:])
    if proc.returncode != 130 or os.path.exists(part) or not os.path.exists(part + ".progress"):
        fail(f"the interrupted run: exit {proc.returncode}, expected 130, a progress file and no result file")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", part, "--k", "1,10"], sock)
    if p.returncode != 0 or "results from an earlier run" not in p.stderr:
        fail("the resumed run")
    ran = int(p.stderr.split(" programs ran")[0].rsplit("verify: ", 1)[1])
    if not 0 <= ran < 12:
        fail(f"the resumed run ran {ran} programs, expected only those left")
    if open(part).read() != open(whole).read():
        fail("the resumed file differs from the uninterrupted one")


def shards(bin_dir, d, sock):
    probs = write_lines(os.path.join(d, "P.jsonl"), [PY_FN, C_MUL])
    sols = write_lines(os.path.join(d, "S.jsonl"), [
        {"id": "add", "code": ADD_OK}, {"id": "add", "code": ADD_WRONG}, {"id": "mul", "code": C_OK},
        {"id": "add", "code": ADD_RAISES}, {"id": "add", "code": ADD_OK2}, {"id": "mul", "code": C_BROKEN},
        {"id": "add", "code": ADD_OK}])  # a repeated program runs once: 6 programs
    args = ["--problems", probs, "--solutions", sols, "--k", "1,2"]
    whole = os.path.join(d, "whole.json")
    if verify(bin_dir, args + ["--out", whole], sock).returncode:
        fail("the unsharded run")
    outs = []
    for i in range(2):
        out = os.path.join(d, f"shard{i}.json")
        if verify(bin_dir, args + ["--out", out, "--shard", f"{i}/2"], sock).returncode:
            fail(f"shard {i}/2")
        if os.path.exists(out):
            fail(f"shard {i}/2 wrote a result file")
        outs.append(out)
    owned = [json.load(open(o + ".shard.json"))["items"]["programs"] for o in outs]
    if sorted(len(o) for o in owned) != [3, 3] or len(set(owned[0]) | set(owned[1])) != 6:
        fail(f"programs per shard {owned}")
    merged = os.path.join(d, "merged.json")
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "merge", "--out", merged] + outs, capture_output=True,
                       text=True, timeout=240)
    print("merge ->", p.returncode, p.stdout, p.stderr[-2000:])
    # add: lines 1, 2, 4, 5, 7: n=5, c=3 (1, 5, 7): pass@1 3/5, pass@2 1 - C(2,2)/C(5,2) = 1 - 1/10 = 0.9
    # mul: n=2, c=1: pass@1 1/2, pass@2 1.  Means: (0.6 + 0.5)/2 = 55.00, (0.9 + 1)/2 = 95.00
    if p.returncode != 0 or "pass@1: 55.00 pass@2: 95.00" not in p.stdout:
        fail("merge")
    if open(merged, "rb").read() != open(whole, "rb").read():
        fail("the merged file differs from the unsharded run's")
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "merge", "--out", os.path.join(d, "m1.json"), outs[0]],
                       capture_output=True, text=True, timeout=240)
    if p.returncode != 2 or "shard 1/2 is missing" not in p.stderr:
        fail("a missing shard is refused")


def missing(bin_dir, d, sock):
    probs = write_lines(os.path.join(d, "P.jsonl"), [
        PY_FN, dict(C_MUL, toolchain="gcc-3")])  # a GNU C the machine does not have
    sols = write_lines(os.path.join(d, "S.jsonl"), [{"id": "add", "code": ADD_OK}, {"id": "mul", "code": C_OK}])
    out = os.path.join(d, "R.json")
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols, "--out", out], sock)
    if p.returncode != 2 or "1 failure(s) of surgebox" not in p.stderr or "toolchain_missing" not in p.stderr:
        fail(f"exit {p.returncode}: a missing toolchain is a failure of surgebox, exit 2")
    if "1 not scored" not in p.stdout or "pass@1: 100.00" not in p.stdout:
        fail("the other problem is scored, the missing one counted")
    r = json.load(open(out))
    if r["not_scored_problems"] != ["mul"] or r["scored_problems"] != 1 or by_line(r)[2]["passed"] is not None:
        fail(f"result file {r['not_scored_problems']} {r['scored_problems']}")
    if not os.path.exists(out + ".progress"):
        fail("the progress file went: the failed program could not be retried")


def bad_lines(bin_dir, d, sock):
    probs = write_lines(os.path.join(d, "P.jsonl"), [PY_FN, "", '{"id": "x", "language": "python", "tests": []}'])
    sols = write_lines(os.path.join(d, "S.jsonl"), [{"id": "add", "code": ADD_OK}])
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols])
    if p.returncode != 1 or f'{probs} line 3 (problem "x"): "tests" is not a non-empty list' not in p.stderr:
        fail("a bad problem line named with its number")
    probs = write_lines(os.path.join(d, "P2.jsonl"), [PY_FN, "{not json"])
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols])
    if p.returncode != 1 or f"{probs} line 2: not JSON" not in p.stderr:
        fail("a line that is not JSON")
    probs = write_lines(os.path.join(d, "P3.jsonl"), [PY_FN])
    sols = write_lines(os.path.join(d, "S3.jsonl"), [{"id": "add", "code": ADD_OK}, {"id": "nope", "code": "x"}])
    p = verify(bin_dir, ["--problems", probs, "--solutions", sols])
    if p.returncode != 1 or f'{sols} line 2 (id "nope"): its "id" names no problem' not in p.stderr:
        fail("a solution of no problem")
    p = verify(bin_dir, ["--problems", os.path.join(d, "absent.jsonl"), "--solutions", sols])
    if p.returncode != 2 or "cannot read" not in p.stderr:
        fail("an unreadable problems file: exit 2")


def main():
    bin_dir, case = sys.argv[1], sys.argv[2]
    cases = {"passk": passk, "adapters": adapters, "resume": resume, "shards": shards, "missing": missing,
             "bad_lines": bad_lines, "asserts": asserts, "livecodebench": livecodebench,
             "warm": warm}
    d = tempfile.mkdtemp(prefix="sbverify-tests-")
    if case == "bad_lines":  # nothing runs
        return bad_lines(bin_dir, d, None)
    if os.geteuid() != 0:
        print("SKIPPED: runs a daemon as root")
        sys.exit(SKIP)
    if case == "passk" and not os.path.exists("/usr/bin/gcc"):
        print("SKIPPED: needs gcc")
        sys.exit(SKIP)
    daemon = PrivateDaemon(bin_dir, None, "--jobs", "2", "--quiet")
    try:
        cases[case](bin_dir, d, daemon.sock)
    finally:
        daemon.stop()
    print("ok")


if __name__ == "__main__":
    main()
