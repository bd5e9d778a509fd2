"""POST /common_evaluate_batch (issue 38) and POST /v1/jobs with cases,
through python3-requests against a private surgeboxd on a loopback port.
One case per ctest (http.batch_<case>).

Expected values are written here by hand from SandboxFusion's endpoint
(sandbox/server/online_judge_api.py and sandbox/utils/testing.py of the
fork that serves it): EvalResult {id, accepted, extracted_code, tests:
[{passed, exec_info: RunCodeResponse, test_info}]}; with run_all_cases
false the tests stop at the first failure; a compile failure is a Failed
exec_info with a compile_result and no run_result; never taken from the
daemon."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpd  # noqa: E402
from httpd import Daemon  # noqa: E402

import requests  # noqa: E402  (python3-requests: .ci/packages-test)

BIN = None
EVAL_KEYS = {"id", "accepted", "extracted_code", "full_code", "test_code", "tests", "extracted_type", "extra",
             "surgebox"}
EXEC_KEYS = {"status", "message", "compile_result", "run_result", "executor_pod_name", "files"}
RESULT_KEYS = {"status", "execution_time", "return_code", "stdout", "stderr"}

ADD_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
ADD_CPP = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def shape(a):
    """SandboxFusion's words only (+ "surgebox")."""
    check(set(a) == EVAL_KEYS, "answer keys %s" % sorted(a))
    check(isinstance(a["accepted"], bool), "accepted")
    for t in a["tests"]:
        check(set(t) == {"passed", "exec_info", "test_info"}, "test keys %s" % sorted(t))
        e = t["exec_info"]
        check(set(e) == EXEC_KEYS, "exec_info keys %s" % sorted(e))
        check(e["status"] in ("Success", "Failed", "SandboxError"), "exec status %r" % e["status"])
        for k in ("compile_result", "run_result"):
            r = e[k]
            if r is not None:
                check(set(r) == RESULT_KEYS, "%s keys %s" % (k, sorted(r)))
                check(r["status"] in ("Finished", "Error", "TimeLimitExceeded"), "%s status" % k)
    return a


def post(d, body, status=200):
    r = requests.post(d.url + "/common_evaluate_batch", json=body, timeout=300)
    check(r.status_code == status, "HTTP %d (expected %d): %s" % (r.status_code, status, r.text[:1500]))
    return shape(r.json()) if status == 200 else r.json()


def body(completion, language, tc, run_all=None, **config):
    cfg = {"language": language, "provided_data": {"test_cases": tc}}
    cfg.update(config)
    if run_all is not None:
        cfg.setdefault("extra", {})["run_all_cases"] = run_all
    return {"completion": completion, "config": cfg}


def passed(a):
    return [t["passed"] for t in a["tests"]]


def stdio(inputs, outputs):
    return {"type": "stdin_stdout", "fn_name": None, "input": inputs, "output": outputs}


def case_stdio(d):
    completion = "Read two numbers:\n```python\n" + ADD_PY + "```\nThat is all."
    tc = stdio(["1 2\n", "2 2\n", "3 4\n"], ["3\n", "5\n", "7"])
    a = post(d, dict(body(completion, "python", tc, run_all=True), id=17, dataset="mine", bogus={"x": 1}))
    check(a["id"] == 17, "id given back: %r" % a["id"])
    check(a["extracted_code"] == ADD_PY.rstrip("\n"), "extracted %r" % a["extracted_code"])
    check(a["extracted_type"] == "fenced", a["extracted_type"])
    check(a["accepted"] is False, "a wrong answer is not accepted")
    check(passed(a) == [True, False, True], "passed %r" % passed(a))
    outs = [t["exec_info"]["run_result"]["stdout"] for t in a["tests"]]
    check(outs == ["3\n", "4\n", "7\n"], "stdout %r" % outs)
    # a wrong answer ran fine: its exec_info is a Success, only passed says no (as SandboxFusion)
    check([t["exec_info"]["status"] for t in a["tests"]] == ["Success"] * 3, "exec status")
    check([t["exec_info"]["run_result"]["return_code"] for t in a["tests"]] == [0, 0, 0], "return codes")
    check(a["tests"][1]["test_info"] == {"input": {"stdin": "2 2\n"}, "output": {"stdout": "5\n"}},
          "test_info %r" % a["tests"][1]["test_info"])
    sb = a["surgebox"]
    check(sb["case_counts"]["accepted"] == 2 and sb["case_counts"]["wrong_answer"] == 1, "counts %r" % sb)
    check(sb["first_failure"] == 1, "first_failure %r" % sb["first_failure"])
    check(sb["cases"][1]["verdict"] == "wrong_answer", "verdict %r" % sb["cases"][1])
    # run_all_cases false (the default): the tests stop at the first failure
    a = post(d, body(completion, "python", tc))
    check(passed(a) == [True, False] and a["accepted"] is False, "first failure stops: %r" % passed(a))
    a = post(d, body(completion, "python", stdio(["1 2", "5 5"], ["3", "10"]), run_all=False))
    check(a["accepted"] is True and passed(a) == [True, True], "all pass: %r" % passed(a))
    # a float answer within SandboxFusion's tolerance (relative 1e-5) passes; beyond it does not
    fl = "```python\nprint(float(input()) / 3)\n```"
    a = post(d, body(fl, "python", stdio(["1", "1"], ["0.333333", "0.3333"]), run_all=True))
    check(passed(a) == [True, False], "float tolerance: %r" % passed(a))
    # letter case ignored, as SandboxFusion's lower_cmp: YES is yes, YEA is not
    yes = "```python\nprint(input())\n```"
    a = post(d, body(yes, "python", stdio(["YES", "Yes No", "YEA"], ["yes", "yes no", "yes"]), run_all=True))
    check(passed(a) == [True, True, False], "ignore case: %r" % passed(a))


def case_function_call(d):
    completion = "```python\ndef add(a, b):\n    return a + b\n```"
    tc = {"type": "function_call", "fn_name": "add", "input": [[1, 2], [2, 3], [[1], [2, 3]]],
          "output": [[3], [6], [[1, 2, 3]]]}
    a = post(d, body(completion, "python", tc, run_all=True))
    check(passed(a) == [True, False, True], "passed %r" % passed(a))
    check(a["accepted"] is False, "accepted")
    check(a["tests"][0]["test_info"] == {"type": "function_call", "fn_name": "add", "input": [1, 2], "output": [3]},
          "test_info %r" % a["tests"][0]["test_info"])
    a = post(d, body(completion, "python", tc))
    check(passed(a) == [True, False], "stops at the first failure: %r" % passed(a))
    # LeetCode's layout (class Solution) and json_input (one JSON value per line)
    sol = "```python\nclass Solution:\n    def twice(self, xs, k):\n        return [x * k for x in xs]\n```"
    tc = {"type": "function_call", "fn_name": "twice", "json_input": True, "input": ["[1, 2]\n3", "[]\n5"],
          "output": ["[3, 6]", "[]"]}
    a = post(d, body(sol, "python", tc, run_all=True))
    check(passed(a) == [True, True] and a["accepted"] is True, "class Solution + json_input: %s" % json.dumps(a)[:800])
    # an exception in the function: a run-time failure, not passed
    a = post(d, body("```python\ndef add(a, b):\n    raise ValueError('no')\n```", "python",
                     {"type": "function_call", "fn_name": "add", "input": [[1, 2]], "output": [[3]]}))
    e = a["tests"][0]["exec_info"]
    check(passed(a) == [False] and e["status"] == "Failed" and e["run_result"]["return_code"] != 0, "raise: %r" % e)


def case_compile_error(d):
    completion = "```cpp\nint main( {\n```"
    tc = stdio(["1 2", "3 4"], ["3", "7"])
    a = post(d, body(completion, "cpp", tc, run_all=True))
    check(a["accepted"] is False and passed(a) == [False, False], "passed %r" % passed(a))
    for t in a["tests"]:
        e = t["exec_info"]
        check(e["status"] == "Failed", "exec status %r" % e["status"])
        check(e["compile_result"]["status"] == "Finished" and e["compile_result"]["return_code"] != 0,
              "compile_result %r" % e["compile_result"])
        check("error" in e["compile_result"]["stderr"], "compiler's message")
        check(e["run_result"] is None, "no run")
    check(a["surgebox"]["case_counts"]["compile_error"] == 2, "case_counts %r" % a["surgebox"])
    a = post(d, body(completion, "cpp", tc))
    check(len(a["tests"]) == 1 and passed(a) == [False], "first failure: %r" % passed(a))
    # the same cases with a program that builds: built once, every case run
    a = post(d, body("```cpp\n" + ADD_CPP + "```", "cpp", stdio(["1 2", "3 4", "-5 5"], ["3", "7", "0"])))
    check(a["accepted"] is True and passed(a) == [True, True, True], "cpp: %s" % json.dumps(a)[:800])
    names = [s["name"] for s in a["surgebox"]["steps"]]
    check(names.count("compile") == 1, "one build: %r" % names)
    check(all(t["exec_info"]["compile_result"]["return_code"] == 0 for t in a["tests"]), "compile_result")


def case_time_limit(d):
    prog = "```python\nn = int(input())\nwhile n: pass\nprint('done')\n```"
    tc = stdio(["0", "1", "0"], ["done", "done", "done"])
    # 3 s, not 1: at a load of 15 on 2 cores a cold python3's start alone
    # took over 1 s of wall time (http.batch_time_limit failed so)
    a = post(d, body(prog, "python", tc, run_all=True, run_timeout=3))
    check(passed(a) == [True, False, True], "passed %r: %s" % (passed(a), [
        (c.get("verdict"), c.get("wall_time_s"), c.get("cpu_time_s")) for c in a["surgebox"]["cases"]]))
    e = a["tests"][1]["exec_info"]
    check(e["status"] == "Failed" and e["run_result"]["status"] == "TimeLimitExceeded"
          and e["run_result"]["return_code"] is None, "time limit %r" % e)
    check(a["surgebox"]["cases"][1]["verdict"] == "time_limit", a["surgebox"]["cases"][1])
    # a memory limit: the program's failure (Finished, non-zero return code), never a Success
    mem = "```python\nx = bytearray(400 * 1024 * 1024)\nfor i in range(0, len(x), 4096): x[i] = 1\nprint(1)\n```"
    a = post(d, body(mem, "python", stdio([""], ["1"]), memory_limit_MB=128))
    e = a["tests"][0]["exec_info"]
    check(passed(a) == [False] and e["status"] == "Failed" and e["run_result"]["return_code"] not in (0, None),
          "memory %r" % e)
    check(a["surgebox"]["cases"][0]["verdict"] == "memory_limit", a["surgebox"]["cases"][0])
    # total_timeout: the cases not started once it is spent answer SandboxError "Total Timeout"
    slow = "```python\nimport time\ntime.sleep(0.7)\nprint(input())\n```"
    a = post(d, body(slow, "python", stdio(["a", "b", "c", "d"], ["a", "b", "c", "d"]), run_all=True,
                     extra={"run_all_cases": True, "total_timeout": 1}))
    check(len(a["tests"]) == 4 and a["accepted"] is False, "total_timeout: %r" % passed(a))
    check(a["tests"][0]["passed"] is True, "the first case ran")
    last = a["tests"][3]
    check(last["passed"] is False and last["exec_info"]["status"] == "SandboxError"
          and last["exec_info"]["message"] == "Total Timeout" and last["test_info"] is None, "last %r" % last)


# SandboxFusion's documented special judge: it reads stdin.txt, stdout.txt
# (the expected) and answer.txt (the program's output) and exits 0 to accept.
SUM_JUDGE = """import sys
def read(p):
    with open(p) as f:
        return f.read().strip().split('\\n')
stdin, expected, answer = read('stdin.txt'), read('stdout.txt'), read('answer.txt')
a, b = map(int, answer[0].split())
sys.exit(0 if a + b == int(stdin[0]) else 1)
"""
PERM_JUDGE = """import sys
expected = sorted(open('stdout.txt').read().split())
answer = sorted(open('answer.txt').read().split())
sys.exit(0 if expected == answer and len(sys.argv) == 1 else 1)
"""


def case_special_judge(d):
    def sj(completion, tc, program, **extra):
        b = body("```python\n" + completion + "```", "python", tc, run_all=True)
        b["config"]["extra"].update(special_judge_program=program, **extra)
        return post(d, b)
    # any pair summing to the input passes, though the expected output differs byte for byte
    tc = stdio(["3", "7", "5"], ["1 2", "3 4", "2 3"])
    a = sj("c = int(input())\nprint(c - 1, 1)\n", tc, SUM_JUDGE)
    check(passed(a) == [True, True, True] and a["accepted"] is True, "sum judge: %r" % passed(a))
    check([k["verdict"] for k in a["surgebox"]["cases"]] == ["accepted"] * 3, "verdicts %r" % a["surgebox"]["cases"])
    a = sj("c = int(input())\nprint(c - 1, 2 if c == 7 else 1)\n", tc, SUM_JUDGE, special_judge_language="python")
    check(passed(a) == [True, False, True] and a["accepted"] is False, "sum judge, one wrong: %r" % passed(a))
    check(a["tests"][1]["exec_info"]["status"] == "Success", "a rejected answer ran fine: %r" % a["tests"][1])
    # stdout.txt is the expected, answer.txt the program's: a permutation of the expected passes
    tc = stdio(["1 2 3", "4 5"], ["1 2 3", "4 5"])
    a = sj("print(*reversed(input().split()))\n", tc, PERM_JUDGE)
    check(passed(a) == [True, True], "permutation judge: %r" % passed(a))
    a = sj("print(*input().split()[1:])\n", tc, PERM_JUDGE)
    check(passed(a) == [False, False], "permutation judge, wrong: %r" % passed(a))
    # a judge that fails (testlib's 3, a crash's signal) is no verdict on the program: SandboxError
    a = sj("print(1)\n", stdio(["1"], ["1"]), "import sys\nsys.exit(3)\n")
    check(passed(a) == [False] and a["tests"][0]["exec_info"]["status"] == "SandboxError", "judge failure %r" % a)
    # the judge's language is the languages map's name, never a path or a toolchain the client names
    url = d.url + "/common_evaluate_batch"
    for extra, status, word in (({"special_judge_language": "/usr/bin/python3"}, 400, "special_judge_language"),
                                ({"special_judge_language": "cobol"}, 400, "cobol"),
                                ({"special_judge_program": 7}, 422, "special_judge_program"),
                                ({"special_judge_program": ""}, 422, "special_judge_program")):
        b = body("```python\nprint(1)\n```", "python", stdio(["1"], ["1"]))
        b["config"]["extra"] = dict({"special_judge_program": SUM_JUDGE}, **extra)
        r = requests.post(url, json=b, timeout=60)
        check(r.status_code == status and word in r.json()["detail"], "%r: %d %s" % (extra, r.status_code, r.text))
    b = body("```python\ndef f(x):\n    return x\n```", "python",
             {"type": "function_call", "fn_name": "f", "input": [[1]], "output": [[1]]})
    b["config"]["extra"] = {"special_judge_program": SUM_JUDGE}
    r = requests.post(url, json=b, timeout=60)
    check(r.status_code == 400 and "function_call" in r.json()["detail"], "fn + judge: %d %s" % (r.status_code, r.text))


HE_TEST = """

METADATA = {}


def check(candidate):
    assert candidate(6) == False
    assert candidate(101) == True
    assert candidate(4) == False
    assert candidate(1) == False
    assert candidate(5 * 17) == False
"""
IS_PRIME = """def is_prime(n):
    if n < 2:
        return False
    return all(n % d for d in range(2, int(n ** 0.5) + 1))
"""


def case_assert(d):
    def one(code, tc):
        return post(d, body("```python\n" + code + "```", "python", dict(tc, type="assert")))
    # HumanEval's form: test defines check(candidate), entry_point names the function
    a = one(IS_PRIME, {"test": HE_TEST, "entry_point": "is_prime"})
    check(a["accepted"] is True and passed(a) == [True], "a right solution: %r" % a)
    check(a["tests"][0]["test_info"] is None, "test_info %r" % a["tests"][0]["test_info"])
    check(a["extracted_code"] == IS_PRIME.rstrip("\n"), "extracted %r" % a["extracted_code"])
    check(a["full_code"].endswith("check(is_prime)\n") and IS_PRIME.rstrip("\n") in a["full_code"],
          "full_code %r" % a["full_code"])
    # a wrong solution fails an assert: a Failed run, return code 1, not accepted
    wrong = IS_PRIME.replace("n < 2", "n < 1")  # is_prime(1) is True: the fourth assert fails
    a = one(wrong, {"test": HE_TEST, "entry_point": "is_prime"})
    check(a["accepted"] is False and passed(a) == [False], "a wrong solution: %r" % passed(a))
    run = a["tests"][0]["exec_info"]["run_result"]
    check(a["tests"][0]["exec_info"]["status"] == "Failed" and run["return_code"] == 1, "exec %r" % a["tests"][0])
    check("AssertionError" in run["stderr"], "stderr %r" % run["stderr"])
    # MBPP's bare asserts: no entry_point, the test runs as written
    mbpp = "assert is_prime(7)\nassert not is_prime(9)\n"
    a = one(IS_PRIME, {"test": mbpp})
    check(a["accepted"] is True and passed(a) == [True], "mbpp asserts: %r" % passed(a))
    a = one(IS_PRIME.replace("+ 1))", "))"), {"test": mbpp})  # 9 = 3 * 3 is missed: prime
    check(a["accepted"] is False and passed(a) == [False], "mbpp asserts, wrong: %r" % passed(a))
    # a solution that never defines the entry point fails, it does not pass vacuously
    a = one("def other(n):\n    return True\n", {"test": HE_TEST, "entry_point": "is_prime"})
    check(a["accepted"] is False and "NameError" in a["tests"][0]["exec_info"]["run_result"]["stderr"], "%r" % a)


def case_bad_body(d):
    url = d.url + "/common_evaluate_batch"
    bad = [
        (b"{not json", 422, "JSON"),
        (b"[1, 2]", 422, "object"),
        (json.dumps({"config": {"language": "python"}}).encode(), 422, "completion"),
        (json.dumps({"completion": "x"}).encode(), 422, "config"),
        (json.dumps(body("x", None, stdio(["1"], ["1"]))).encode(), 400, "language"),
        (json.dumps(body("x", "python", {"type": "doctest", "input": [], "output": []})).encode(), 400, "type"),
        (json.dumps(body("x", "python", {"type": "assert", "input": [], "output": []})).encode(), 422, "test"),
        (json.dumps(body("x", "python", {"type": "assert", "test": "", "entry_point": "f(1)"})).encode(), 422,
         "entry_point"),
        (json.dumps(body("x", "cpp", {"type": "assert", "tests": "int main() {}"})).encode(), 400, "python only"),
        (json.dumps(body("x", "python", stdio(["1", "2"], ["1"]))).encode(), 422, "outputs"),
        (json.dumps(body("x", "python", stdio([], []))).encode(), 422, "no case"),
        (json.dumps(body("x", "python", stdio(["1"], ["1"]), run_timeout="ten")).encode(), 422, "run_timeout"),
        (json.dumps(body("x", "python", stdio(["1"], ["1"]), custom_extract_logic="import os")).encode(), 400,
         "custom_extract_logic"),
        (json.dumps(body("x", "cpp", {"type": "function_call", "fn_name": "f", "input": [[1]], "output": [[1]]}))
         .encode(), 400, "python only"),
        (json.dumps(body("x", "cobol", stdio(["1"], ["1"]))).encode(), 400, "cobol"),
    ]
    for data, status, word in bad:
        r = requests.post(url, data=data, headers={"Content-Type": "application/json"}, timeout=60)
        check(r.status_code == status, "%r: HTTP %d, expected %d: %s" % (data[:80], r.status_code, status, r.text))
        msg = r.json()["detail"]
        check(word in msg and "\n" not in msg, "%r: message %r lacks %r" % (data[:80], msg, word))
    r = requests.get(url, timeout=30)
    check(r.status_code == 405, "GET: %d" % r.status_code)


def case_jobs_cases(d):
    """(b) POST /v1/jobs with cases: the native request and answer over HTTP."""
    req = {"id": "c-1", "type": "exec", "toolchain": "python3",
           "files": [{"path": "main.py", "content": ADD_PY}],
           "cases": [{"stdin": "1 2\n", "expected": "3"}, {"stdin": "2 2\n", "expected": "5"},
                     {"stdin": "x\n", "expected": "1"}],
           "stop": "never"}
    r = requests.post(d.url + "/v1/jobs", json=req, timeout=300)
    check(r.status_code == 200, "HTTP %d: %s" % (r.status_code, r.text[:500]))
    a = r.json()
    check(a["id"] == "c-1" and a["status"] == "cases_failed", "status %r" % a.get("status"))
    run = [s for s in a["steps"] if "cases" in s][0]
    check([k["verdict"] for k in run["cases"]] == ["accepted", "wrong_answer", "runtime_error"],
          "verdicts %r" % [k["verdict"] for k in run["cases"]])
    check(run["first_failure"] == 1 and run["n_cases"] == 3, "step %r" % {k: run[k] for k in ("first_failure", "n_cases")})
    req["stop"] = "first_failure"
    a = requests.post(d.url + "/v1/jobs", json=req, timeout=300).json()
    run = [s for s in a["steps"] if "cases" in s][0]
    check([k["verdict"] for k in run["cases"]] == ["accepted", "wrong_answer", "skipped"], "stop: %r" % run["cases"])
    # the native strictness stays: a case field the protocol lacks is refused
    req["cases"][0]["bogus"] = 1
    r = requests.post(d.url + "/v1/jobs", json=req, timeout=60)
    check(r.status_code == 400, "strict: %d %s" % (r.status_code, r.text[:300]))


CASES = {
    "stdio": case_stdio,
    "function_call": case_function_call,
    "compile_error": case_compile_error,
    "time_limit": case_time_limit,
    "bad_body": case_bad_body,
    "special_judge": case_special_judge,
    "assert": case_assert,
    "jobs_cases": case_jobs_cases,
}


def main():
    global BIN
    BIN = sys.argv[1]
    fn = CASES[sys.argv[2]]
    d = Daemon(BIN, "--jobs", "2")
    try:
        fn(d)
    except Exception:
        print(d.logtext()[-4000:], file=sys.stderr)
        raise
    finally:
        d.stop()
    print("ok")


if __name__ == "__main__":
    main()
