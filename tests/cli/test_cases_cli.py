#!/usr/bin/env python3
"""surgebox cases and cases on batch lines (issue 38, the command line).
Every expected verdict, count, line number and exit status below is worked
out by hand from the programs and TESTS lines written here.

usage: test_cases_cli.py BIN_DIR CASE [SEED]   (inside the unshare wrapper;
cases that run programs start their own daemon: test_cli.py's Daemon)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli as tc  # noqa: E402  run, check, tmpdir, write, Daemon, with_daemon

check, run, tmpdir, write = tc.check, tc.run, tc.tmpdir, tc.write

ADD_C = r"""#include <stdio.h>
int main(void) {
  long a, b;
  if (scanf("%ld %ld", &a, &b) != 2) { fprintf(stderr, "no input\n"); return 4; }
  if (a < 0) { fprintf(stderr, "negative: %ld\n", a); return 5; }
  printf("%ld\n", a + b);
  return 0;
}
"""
ADD_PY = """a, b = map(int, input().split())
if a < 0:
    raise ValueError("negative")
print(a + b)
"""
BAD_C = "int main( { return 0; }\n"
SOL_PY = "def add(a, b):\n    return a + b\n"

# Lines 1, 2, 4, 5, 6 are cases 1-5 (line 3 is blank).
TESTS = [
    {"stdin": "1 2\n", "expected": "3\n"},                        # 3: accepted
    {"stdin": "2 2\n", "expected": "5\n"},                        # 4 != 5: wrong_answer
    None,
    {"stdin": "-1 2\n", "expected": "1\n"},                       # exits 5 (C) / 1 (Python): runtime_error
    {"stdin": "10 20", "expected": "30"},                         # "30\n" vs "30", lines: accepted
    {"stdin": "3 4\n", "expected": "7 \n", "compare": "exact"},  # "7\n" vs "7 \n", exact: wrong_answer
]
LINES = [1, 2, 4, 5, 6]
VERDICTS = ["accepted", "wrong_answer", "runtime_error", "accepted", "wrong_answer"]


def write_tests(root, name, rows):
    return write(root, name, "".join((json.dumps(r) if r is not None else "") + "\n" for r in rows))


def table(out):
    """The table's rows as (case, line, verdict, rest), the counts line."""
    lines = out.decode().splitlines()
    check(lines and lines[0].split()[:5] == ["case", "line", "verdict", "cpu_s", "wall_s"], f"table header: {lines[:1]}")
    rows = []
    for l in lines[1:-1]:
        f = l.split(None, 5)
        rows.append((int(f[0]), int(f[1]), f[2], f[5] if len(f) > 5 else ""))
    return rows, lines[-1] if lines else ""


def need(d, name):
    p = run(["toolchains", "--json"], env=d.env)
    names = [t["name"] for t in json.loads(p.stdout)["toolchains"] if t.get("available")] if p.returncode == 0 else []
    if name not in names:
        tc.skip(f"no {name} toolchain on this machine")


def case_c_program(d):
    """A C program, both --stop modes, --compare as the default, all accepted."""
    need(d, "gcc")
    t = tmpdir()
    write(t, "add.c", ADD_C)
    tests = write_tests(t, "t.jsonl", TESTS)
    p = run(["cases", "add.c", "--tests", tests], env=d.env, cwd=t)
    rows, counts = table(p.stdout)
    check(p.returncode == 3, f"a case failed: exit 3, got {p.returncode} {p.stderr!r}")
    check([r[0] for r in rows] == [1, 2, 3, 4, 5] and [r[1] for r in rows] == LINES, f"case and line columns: {rows}")
    check([r[2] for r in rows] == VERDICTS, f"verdicts: {[r[2] for r in rows]}")
    check('expected "5", got "4"' in rows[1][3], f"case 2's first difference: {rows[1][3]!r}")
    check(rows[2][3] == "exit 5: negative: -1", f"case 3's first difference: {rows[2][3]!r}")
    check(rows[0][3] == "" and rows[3][3] == "", "accepted cases show no difference")
    check(counts == "5 cases: 2 accepted, 2 wrong_answer, 1 runtime_error; first failure: case 2 (line 2)",
          f"counts: {counts!r}")

    p = run(["cases", "add.c", "--tests", tests, "--stop", "first_failure"], env=d.env, cwd=t)
    rows, counts = table(p.stdout)
    check(p.returncode == 3 and [r[2] for r in rows] == ["accepted", "wrong_answer", "skipped", "skipped", "skipped"],
          f"--stop first_failure: {p.returncode} {[r[2] for r in rows]}")
    check(counts.startswith("5 cases: 1 accepted, 1 wrong_answer, 3 skipped;"), f"--stop counts: {counts!r}")

    p = run(["cases", "add.c", "--tests", tests, "--stop", "never", "--compare", "exact"], env=d.env, cwd=t)
    rows, _ = table(p.stdout)  # case 4 ("30" exact against "30\n") now fails too
    check([r[2] for r in rows] == ["accepted", "wrong_answer", "runtime_error", "wrong_answer", "wrong_answer"],
          f"--compare exact for the cases that do not say: {[r[2] for r in rows]}")

    good = write_tests(t, "good.jsonl", [TESTS[0], TESTS[4]])
    p = run(["cases", "add.c", "--tests", good], env=d.env, cwd=t)
    rows, counts = table(p.stdout)
    check(p.returncode == 0 and [r[2] for r in rows] == ["accepted", "accepted"] and counts == "2 cases: 2 accepted",
          f"all accepted: exit 0: {p.returncode} {counts!r} {p.stderr!r}")


def case_python_program(d):
    """A Python program on stdin, and Python function calls (fn_name, arguments)."""
    t = tmpdir()
    write(t, "add.py", ADD_PY)
    tests = write_tests(t, "t.jsonl", TESTS)
    p = run(["cases", "add.py", "--tests", tests], env=d.env, cwd=t)
    rows, counts = table(p.stdout)
    check(p.returncode == 3 and [r[2] for r in rows] == VERDICTS, f"python3: {p.returncode} {rows} {p.stderr!r}")
    check(rows[2][3] == "exit 1: ValueError: negative", f"a traceback's last line: {rows[2][3]!r}")
    write(t, "sol.py", SOL_PY)
    calls = [{"fn_name": "add", "arguments": [1, 2], "expected": 3},               # accepted
             {"fn_name": "add", "arguments": [[1], [2]], "expected": [1, 2]},      # list + list: accepted
             {"fn_name": "add", "arguments": [0.1, 0.2], "expected": 0.3},         # 0.30000000000000004, within 1e-6
             {"fn_name": "add", "arguments": [2, 2], "expected": 5},               # 4: wrong_answer
             {"fn_name": "add", "arguments": ["a", 1], "expected": "a1"}]          # TypeError: runtime_error
    fn = write_tests(t, "fn.jsonl", calls)
    p = run(["cases", "sol.py", "--tests", fn, "--json"], env=d.env, cwd=t)
    rec = json.loads(p.stdout) if p.stdout.startswith(b"{") else {}
    got = [c.get("verdict") for c in rec.get("cases", [])]
    check(p.returncode == 3 and got == ["accepted", "accepted", "accepted", "wrong_answer", "runtime_error"],
          f"function calls: {p.returncode} {got} {p.stderr!r}")
    check(rec.get("first_failure") == 3 and rec.get("first_failure_line") == 4, f"first failure: {rec.get('first_failure')}")


def case_build_failure(d):
    """A build that fails answers every case compile_error, its diagnostics on stderr."""
    need(d, "gcc")
    t = tmpdir()
    write(t, "bad.c", BAD_C)
    tests = write_tests(t, "t.jsonl", [TESTS[0], None, TESTS[1], TESTS[4]])
    p = run(["cases", "bad.c", "--tests", tests], env=d.env, cwd=t)
    rows, counts = table(p.stdout)
    check(p.returncode == 3, f"a failed build is the program's failure: exit 3, got {p.returncode}")
    check([(r[1], r[2]) for r in rows] == [(1, "compile_error"), (3, "compile_error"), (4, "compile_error")],
          f"one build verdict for every case: {rows}")
    check(counts == "3 cases: 3 compile_error; first failure: case 1 (line 1)", f"counts: {counts!r}")
    check(b"error" in p.stderr and b"step compile failed" in p.stderr, f"the compiler's words on stderr: {p.stderr[-300:]!r}")
    p = run(["cases", "bad.c", "--tests", tests, "--json"], env=d.env, cwd=t)
    rec = json.loads(p.stdout)
    check(p.returncode == 3 and rec.get("job_status") == "compile_error" and rec.get("verdict") == "compile_error",
          f"--json of a failed build: {p.returncode} {rec.get('job_status')}")
    check([(c["index"], c["line"], c["verdict"]) for c in rec.get("cases", [])] ==
          [(0, 1, "compile_error"), (1, 3, "compile_error"), (2, 4, "compile_error")], f"cases: {rec.get('cases')}")
    check(rec.get("case_counts", {}).get("compile_error") == 3 and rec.get("build", {}).get("status") != "ok",
          f"counts and the build's document: {rec.get('case_counts')} {rec.get('build')}")


def case_json_shape(d):
    """--json: the step's record with each case's line, the counts, the build, the job."""
    need(d, "gcc")
    t = tmpdir()
    write(t, "add.c", ADD_C)
    tests = write_tests(t, "t.jsonl", TESTS)
    p = run(["cases", "add.c", "--tests", tests, "--json"], env=d.env, cwd=t)
    check(p.returncode == 3 and not p.stderr, f"--json: exit 3, nothing on stderr: {p.returncode} {p.stderr!r}")
    rec = json.loads(p.stdout)
    check(rec.get("status") == "cases_failed" and rec.get("job_status") == "cases_failed", f"status: {rec.get('status')}")
    check(rec.get("n_cases") == 5 and rec.get("first_failure") == 1 and rec.get("first_failure_line") == 2,
          f"n_cases, first_failure: {rec.get('n_cases')} {rec.get('first_failure')} {rec.get('first_failure_line')}")
    counts = rec.get("case_counts", {})
    check(counts.get("accepted") == 2 and counts.get("wrong_answer") == 2 and counts.get("runtime_error") == 1 and
          sum(counts.values()) == 5, f"case_counts: {counts}")
    cases = rec.get("cases", [])
    check([c.get("line") for c in cases] == LINES and [c.get("index") for c in cases] == [0, 1, 2, 3, 4] and
          [c.get("verdict") for c in cases] == VERDICTS, f"cases: {[(c.get('index'), c.get('line')) for c in cases]}")
    check(cases and cases[0].get("stdout") == "3\n" and cases[2].get("exit_code") == 5 and
          all(isinstance(c.get("cpu_time_s"), (int, float)) for c in cases), "each case's output, exit and times")
    check(rec.get("build", {}).get("name") == "compile" and rec.get("build", {}).get("status") == "ok",
          f"build: {rec.get('build')}")
    check(rec.get("program") == "add.c" and rec.get("tests") == tests and rec.get("toolchain", {}).get("name") == "gcc",
          f"program, tests, toolchain: {rec.get('program')} {rec.get('toolchain')}")


def case_bad_lines():
    """A line that is not a case: exit 2, one line naming the file, its line and the fix, before any daemon."""
    t = tmpdir()
    write(t, "add.c", ADD_C)
    nodaemon = dict(os.environ, SURGEBOX_SOCKET=os.path.join(t, "none.sock"))
    bad = {
        "syntax.jsonl": ('{"stdin": "1 2\\n", "expected": "3\\n"}\n\n{"stdin": "1", "expected": }\n', 3, "not JSON at column"),
        "field.jsonl": ('{"stdin": "1 2\\n"}\n{"stdn": "1 2\\n"}\n', 2, 'unknown field "stdn"'),
        "array.jsonl": ('{"stdin": "1 2\\n"}\n{"stdin": "1 2\\n"}\n[1, 2]\n', 3, "not a JSON object"),
        "mixed.jsonl": ('{"fn_name": "add", "arguments": [1, 2]}\n{"stdin": "1"}\n', 2, "every line a function call, or none"),
        "two_fns.jsonl": ('{"fn_name": "add", "arguments": [1]}\n{"fn_name": "sub", "arguments": [1]}\n', 2,
                          'but "add" on line 1'),
        "args.jsonl": ('{"fn_name": "add", "arguments": 3}\n', 1, '"arguments" must be a JSON array'),
    }
    for name, (text, line, words) in bad.items():
        path = write(t, name, text)
        p = run(["cases", "add.c", "--tests", path], env=nodaemon, cwd=t)
        err = p.stderr.decode()
        check(p.returncode == 2 and not p.stdout and err.count("\n") == 1 and
              err.startswith(f"surgebox cases: {path} line {line}: ") and words in err and "fix that line" in err,
              f"{name}: exit {p.returncode}, {err!r}")
    empty = write(t, "empty.jsonl", "\n\n")
    p = run(["cases", "add.c", "--tests", empty], env=nodaemon, cwd=t)
    check(p.returncode == 2 and b"has no cases" in p.stderr, f"no cases: {p.returncode} {p.stderr!r}")
    p = run(["cases", "add.c", "--tests", os.path.join(t, "missing.jsonl")], env=nodaemon, cwd=t)
    check(p.returncode == 2 and b"cannot read" in p.stderr, f"a missing TESTS: {p.returncode} {p.stderr!r}")
    p = run(["cases", "add.c", "--tests", empty, "--json"], env=nodaemon, cwd=t)
    check(p.returncode == 2 and json.loads(p.stdout).get("exit") == 2, f"--json error: {p.stdout!r}")
    for args, what in ((["cases", "add.c"], "--tests TESTS.jsonl is required"),
                       (["cases", "--tests", empty], "PROGRAM is required"),
                       (["cases", "add.zz", "--tests", empty], "give --toolchain NAME"),
                       (["cases", "add.c", "--tests", empty, "--stop", "sometimes"], "--stop"),
                       (["cases", "add.c", "--tests", empty, "--budget", "-1"], "--budget")):
        p = run(args, env=nodaemon, cwd=t)
        check(p.returncode == 1 and what.encode() in p.stderr, f"usage {args[1:]}: {p.returncode} {p.stderr!r}")


def case_refused(d):
    """A case the daemon refuses names its line; a missing toolchain is a failure of surgebox (2), not a verdict."""
    need(d, "gcc")
    t = tmpdir()
    write(t, "add.c", ADD_C)
    path = write_tests(t, "t.jsonl", [TESTS[0], None, TESTS[1], {"stdin": "1 1\n", "expected": "2\n", "compare": "nope"}])
    p = run(["cases", "add.c", "--tests", path], env=d.env, cwd=t)
    err = p.stderr.decode()
    check(p.returncode == 2 and not p.stdout and err.startswith(f"surgebox cases: {path} line 4: bad_request: ") and
          "cases[2].compare" in err, f"refused case: {p.returncode} {err!r}")
    good = write_tests(t, "good.jsonl", [TESTS[0]])
    p = run(["cases", "add.c", "--toolchain", "g++-9", "--tests", good], env=d.env, cwd=t)  # g++-9: declared, absent here
    if os.path.exists("/usr/bin/g++-9"):
        return
    check(p.returncode == 2 and not p.stdout and b"toolchain_missing" in p.stderr and b"not a verdict" in p.stderr,
          f"missing toolchain: {p.returncode} {p.stdout!r} {p.stderr!r}")


def case_batch(d):
    """A batch file mixing plain lines and lines with cases: verdicts and counts on each answer, resumable."""
    need(d, "gcc")
    t = tmpdir()
    two = [{"stdin": "1 2\n", "expected": "3\n"}, {"stdin": "2 2\n", "expected": "5\n"}]
    lines = [
        {"id": "plain", "steps": [{"name": "run", "argv": ["sh", "-c", "echo hi"]}]},
        {"id": "c", "toolchain": "gcc", "files": [{"path": "add.c", "content": ADD_C}], "cases": two, "stop": "never"},
        {"id": "sh", "files": [{"path": "add.sh", "content": "read a b\necho $((a + b))\n"}],
         "steps": [{"name": "run", "argv": ["sh", "add.sh"], "cases": list(reversed(two)), "stop": "first_failure"}]},
        {"id": "bad", "toolchain": "gcc", "files": [{"path": "bad.c", "content": BAD_C}], "cases": two},
        {"id": "budget", "toolchain": "gcc", "files": [{"path": "add.c", "content": ADD_C}], "cases": two, "budget_s": -1},
    ]
    inp = write(t, "in.jsonl", "".join(json.dumps(l) + "\n" for l in lines))
    out = os.path.join(t, "out.jsonl")
    p = run(["batch", inp, "--out", out, "--order", "input", "--concurrency", "1"], env=d.env)
    with open(out) as f:
        answers = {a["id"] if a.get("id") is not None else a["line"]: a for a in map(json.loads, f)}
    check(p.returncode == 0, f"batch: every line answered: exit 0, got {p.returncode} {p.stderr[-400:]!r}")
    a = answers.get("plain", {})
    check(a.get("status") == "ok" and "verdicts" not in a and "case_counts" not in a, f"a plain line: {a}")
    a = answers.get("c", {})
    check(a.get("status") == "cases_failed" and a.get("line") == 2 and a.get("verdicts") == ["accepted", "wrong_answer"] and
          a.get("case_counts") == {"accepted": 1, "wrong_answer": 1}, f"line 2: {a.get('status')} {a.get('verdicts')}")
    step = next((s for s in a.get("steps", []) if "cases" in s), {})
    check([c.get("verdict") for c in step.get("cases", [])] == ["accepted", "wrong_answer"] and step.get("first_failure") == 1,
          "line 2's step keeps every case")
    a = answers.get("sh", {})
    check(a.get("verdicts") == ["wrong_answer", "skipped"] and a.get("case_counts") == {"wrong_answer": 1, "skipped": 1},
          f"line 3 (stop first_failure): {a.get('verdicts')}")
    a = answers.get("bad", {})
    check(a.get("status") == "compile_error" and a.get("verdicts") == ["compile_error", "compile_error"] and
          a.get("case_counts") == {"compile_error": 2}, f"line 4 (a build that fails): {a.get('status')} {a.get('verdicts')}")
    a = answers.get("budget", {})
    check(a.get("type") == "error" and a.get("error", {}).get("code") == "bad_limits" and  # PROTOCOL.md: a limit's value
          a.get("error", {}).get("message", "").startswith("line 5: ") and "budget_s" in a["error"]["message"],
          f"line 5 (a bad budget): {a}")
    m = re.search(r"^batch: cases: (\d+) in (\d+) items: (.*)$", p.stderr.decode(), re.M)
    said = dict((k, int(v)) for k, v in (x.strip().split(" ") for x in m.group(3).split(","))) if m else {}
    check(m is not None and m.group(1) == "6" and m.group(2) == "3" and
          said == {"accepted": 1, "wrong_answer": 2, "skipped": 1, "compile_error": 2}, f"the summary: {m and m.group(0)}")
    with open(out) as f:
        before = f.read()
    p = run(["batch", inp, "--out", out, "--order", "input", "--concurrency", "1"], env=d.env)
    with open(out) as f:
        after = f.read()
    check(p.returncode == 0 and after == before and b"5 items already answered" in p.stderr and b"0 to run" in p.stderr,
          f"resumed: nothing runs again: {p.returncode} {p.stderr[-300:]!r}")
    p = run(["batch", inp, "--out", out, "--order", "input", "--concurrency", "1", "--retry-failed"], env=d.env)
    # kept: only "plain" (ok); run again: c, sh, bad (their cases failed) and line 5 (the daemon refused it)
    check(p.returncode == 0 and b"1 items already answered" in p.stderr and b"4 to run" in p.stderr,
          f"--retry-failed runs the lines whose cases failed: {p.stderr[-600:]!r}")
    p = run(["batch", inp, "--order", "input", "--concurrency", "1", "--fields", "verdicts,case_counts"], env=d.env)
    got = [json.loads(x) for x in p.stdout.decode().splitlines()]
    c = next((a for a in got if a.get("id") == "c"), {})
    check(set(c) == {"id", "line", "type", "status", "verdicts", "case_counts"} and c["verdicts"] == ["accepted", "wrong_answer"],
          f"--fields verdicts,case_counts: {c}")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    fn = CASES[sys.argv[2]]
    if fn.__code__.co_argcount:
        tc.with_daemon(fn)
    else:
        fn()
    if tc.failures:
        print(f"{len(tc.failures)} check(s) failed")
        sys.exit(1)
