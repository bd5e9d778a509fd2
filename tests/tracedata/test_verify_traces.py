"""surgebox verify --benchmark traces as a user runs it, on a references directory written here by
hand (the layout trace-dataset writes: index.jsonl, traces/ID.jsonl) from the hand-written trace of
test_trace_score.py. Expected figures worked out by hand beside each assertion.

usage: test_verify_traces.py BIN_DIR CASE   (CASE: perfect, broken, cwm, questions, errors)"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_trace_score import ROWS, T  # noqa: E402
from trace_fixtures import I, jsonl  # noqa: E402

SRC = "def f(a):\n    b = a + 1\n    return b\nprint(f(1))\n"
ITEMS = ("a", "b", "c")


def refs_dir(root, statuses=None):
    os.makedirs(os.path.join(root, "traces"))
    with open(os.path.join(root, "index.jsonl"), "w") as idx:
        for item in ITEMS + tuple(statuses or ()):
            st = (statuses or {}).get(item, "complete")
            with open(os.path.join(root, "traces", item + ".jsonl"), "w") as f:
                f.write(T)
            idx.write(json.dumps({"id": item, "files": [{"path": "main.py", "content": SRC}], "trace_status": st,
                                  "trace": "traces/%s.jsonl" % item}) + "\n")


def verify(bin_dir, refs, lines, *extra):
    pred = os.path.join(refs, "..", "pred.jsonl")
    with open(pred, "w") as f:
        f.write("".join(lines))
    out = os.path.join(refs, "..", "report.json")
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "verify", "--benchmark", "traces", "--references", refs,
                        "--predictions", pred, "--out", out] + list(extra), capture_output=True, text=True)
    print(p.stdout, p.stderr)
    report = json.load(open(out)) if p.returncode == 0 else None
    return p, report


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def near(a, b):
    return a is not None and abs(a - b) < 1e-9


def case_perfect(bin_dir, tmp):
    refs = os.path.join(tmp, "refs")
    refs_dir(refs)
    p, r = verify(bin_dir, refs, [json.dumps({"id": i, "trace": T}) + "\n" for i in ITEMS])
    check(p.returncode == 0, "exit 0")
    t = r["traces"]
    for align in ("positional", "lcs"):
        for m, v in t[align].items():
            check(v == 1.0, "%s %s is 1.0 (got %r)" % (align, m, v))
    for m, v in t["paths"].items():
        check(v == 1.0, "%s is 1.0 (got %r)" % (m, v))
    check(r["json_valid"] == 1.0 and t["format_valid"] == 1.0, "json and format valid")
    check(r["missing"] == [] and r["bad_predictions"] == {}, "nothing missing or bad")
    # the same through --gold-out: every gold answer scored against the recording
    gold = os.path.join(tmp, "gold.jsonl")
    g = subprocess.run([os.path.join(bin_dir, "surgebox"), "verify", "--benchmark", "traces", "--references", refs,
                        "--gold-out", gold])
    check(g.returncode == 0, "--gold-out exit 0")
    p, r = verify(bin_dir, refs, open(gold).readlines())
    check(all(v == 1.0 for v in r["questions"]["metrics"].values()), "every question metric 1.0")
    check(r["questions"]["by_question"]["coverage"] == 3, "one coverage question per item")


def case_broken(bin_dir, tmp):
    refs = os.path.join(tmp, "refs")
    refs_dir(refs, {"cut": "truncated"})
    rows = list(ROWS)
    rows[5] = ("line", 2, 1, 1, 3, "f", {"loc": {"b": I(3)}})   # b predicted 3 (recorded: 2)
    lines = [json.dumps({"id": "a", "trace": T}) + "\n",
             "{oops\n",                                           # not JSON
             json.dumps({"id": "zzz", "trace": T}) + "\n",        # no such item
             json.dumps({"id": "b", "trace": jsonl(rows)}) + "\n",
             "\n"]                                                # blank; item c has no prediction
    p, r = verify(bin_dir, refs, lines)
    check(p.returncode == 0, "scored: exit 0")
    check(r["references"] == 4 and r["scored_references"] == 3, "4 references, 3 complete")
    check(r["references_not_complete"] == {"truncated": 1}, "the truncated one said")
    check(r["prediction_lines"] == 5 and r["blank_lines"] == 1, "5 lines, 1 blank")
    check(near(r["json_valid"], 3 / 4), "json_valid 3/4 (one of 4 non-blank lines is not JSON)")
    check(r["bad_predictions"] == {"not_json": 1, "unknown_id": 1}, "not_json 1, unknown_id 1: %r" % r["bad_predictions"])
    check(r["missing"] == ["c"], "c missing")
    t = r["traces"]
    check(t["predicted"] == 2 and t["items"] == 3 and t["format_valid"] == 1.0, "2 of 3 predicted, both well formed")
    # a: all 1; b: steps 5 and 6 of 8 have b = 3 (key_value 1/2 and 2/3 there); c: 0
    want = {"action_exact": 2 / 3, "state_exact": (1 + 6 / 8) / 3, "key_match": 2 / 3,
            "key_value": (1 + (6 + 1 / 2 + 2 / 3) / 8) / 3, "value_typed": (1 + (6 + 1 / 2 + 2 / 3) / 8) / 3}
    for align in ("positional", "lcs"):
        for m, v in want.items():
            check(near(t[align][m], v), "%s %s = %r (got %r)" % (align, m, v, t[align][m]))
    for m in ("path_exact", "path_similarity", "coverage_f1", "next_line"):
        check(near(t["paths"][m], 2 / 3), "%s 2/3 (c missing)" % m)
    check("missing: 1 items" in p.stdout and "bad predictions: 1 not_json (first: line 2)" in p.stdout,
          "the missing item and the bad line said on stdout")


def case_questions(bin_dir, tmp):
    refs = os.path.join(tmp, "refs")
    refs_dir(refs)
    lines = [json.dumps({"id": "a", "q": "coverage", "answer": [1, 2, 5]}) + "\n",       # P 2/3 R 1/2
             json.dumps({"id": "a", "q": "state:2", "answer": {"a": "1", "b": "3"}}) + "\n",  # typed 1/2
             json.dumps({"id": "b", "q": "step_out:4", "answer": 4}) + "\n",              # right
             json.dumps({"id": "b", "q": "step_into:2", "answer": {"ln": 2}}) + "\n",     # wrong: 1
             json.dumps({"id": "b", "q": "state:9", "answer": {}}) + "\n",                # line 9 never ran
             json.dumps({"id": "b", "q": "teleport:1", "answer": 1}) + "\n"]              # no such question
    p, r = verify(bin_dir, refs, lines)
    q = r["questions"]
    check(q["answered"] == 4, "4 answered")
    check(near(q["metrics"]["coverage_f1"], 4 / 7) and near(q["metrics"]["value_typed"], 1 / 2), "coverage, state")
    check(near(q["metrics"]["debugger_line"], 1 / 2), "debugger_line 1/2")
    check(r["bad_predictions"] == {"bad_question": 1, "unanswerable_question": 1}, "bad questions counted")
    check(r["missing"] == ["c"], "c missing")


# CWM's text of T from f's call (trace_cwm.to_cwm's frames, written out by hand)
def cwm(b_value):
    return ('<|call_sep|>{"a": "1"}<|action_sep|>def f(a):\n<|frame_sep|>'
            '<|line_sep|>{"a": ".."}<|action_sep|>    b = a + 1\n<|frame_sep|>'
            '<|line_sep|>{"a": "..", "b": "%s"}<|action_sep|>    return b\n<|frame_sep|>'
            '<|return_sep|><|action_sep|>    return b\n<|arg_sep|>"2"<|frame_sep|><|end_of_text|>' % b_value)


def case_cwm(bin_dir, tmp):
    refs = os.path.join(tmp, "refs")
    refs_dir(refs)
    lines = [json.dumps({"id": "a", "cwm": cwm("2")}) + "\n",
             json.dumps({"id": "b", "cwm": cwm("3")}) + "\n",          # b = 3 at the third frame (recorded: 2)
             json.dumps({"id": "c", "cwm": "garbage<|frame_sep|>"}) + "\n"]  # one malformed frame
    p, r = verify(bin_dir, refs, lines)
    t = r["traces"]
    check(near(t["format_valid"], 2 / 3), "format_valid 2/3 (c malformed)")
    check("paths" not in t, "no line-path metrics from CWM frames")
    # a: 1; b: frame 3 of 4 has {a, b} with b wrong (key_value 1/2 there); c: its one malformed step pairs
    # with nothing equal: 0
    want = {"action_exact": 2 / 3, "state_exact": (1 + 3 / 4) / 3, "key_match": 2 / 3,
            "key_value": (1 + (3 + 1 / 2) / 4) / 3, "value_typed": (1 + (3 + 1 / 2) / 4) / 3}
    for align in ("positional", "lcs"):
        for m, v in want.items():
            check(near(t[align][m], v), "%s %s = %r (got %r)" % (align, m, v, t[align][m]))
    check(r["missing"] == [] and r["bad_predictions"] == {}, "nothing missing; a malformed trace is scored, not dropped")


def case_errors(bin_dir, tmp):
    sb = os.path.join(bin_dir, "surgebox")
    p = subprocess.run([sb, "verify", "--benchmark", "traces", "--references", os.path.join(tmp, "nope"),
                        "--predictions", "/dev/null"], capture_output=True, text=True)
    check(p.returncode == 2 and "cannot read the references" in p.stderr, "missing references: 2, said")
    p = subprocess.run([sb, "verify", "--benchmark", "traces", "--predictions", "/dev/null"], capture_output=True, text=True)
    check(p.returncode == 1 and "--references DIR is required" in p.stderr, "usage: 1")
    p = subprocess.run([sb, "verify", "--benchmark", "traces", "--references", tmp, "--predictions", "x", "--shard", "0/2"],
                       capture_output=True, text=True)
    check(p.returncode == 1, "--shard refused")


def main():
    bin_dir, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        globals()["case_" + case](bin_dir, tmp)
    print("ok")


if __name__ == "__main__":
    main()
