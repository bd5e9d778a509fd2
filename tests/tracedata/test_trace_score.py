"""verify --benchmark traces' metrics (surgebox.trace_score, surgebox.trace_questions) on small
hand-written traces and steps. Every expected number is worked out by hand in the comment beside
it, never produced by the scorer."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients"))

from surgebox import trace_questions as tq  # noqa: E402
from surgebox.trace import Trace  # noqa: E402
from surgebox.trace_lines import line_path  # noqa: E402
from surgebox.trace_score import (coverage_prf, lcs_pairs, next_line_accuracy, path_scores, step_scores,  # noqa: E402
                                  steps_of_cwm, steps_of_trace, trace_scores, value_equal)
from trace_fixtures import I, jsonl  # noqa: E402

# def f(a):        # 1
#     b = a + 1    # 2
#     return b     # 3
# print(f(1))      # 4
ROWS = [
    ("call", 1, None, 0, 1, "<module>", {"loc": {}}),
    ("line", 1, None, 0, 1, "<module>", {}),
    ("line", 1, None, 0, 4, "<module>", {}),
    ("call", 2, 1, 1, 1, "f", {"loc": {"a": I(1)}}),
    ("line", 2, 1, 1, 2, "f", {}),
    ("line", 2, 1, 1, 3, "f", {"loc": {"b": I(2)}}),
    ("return", 2, 1, 1, 3, "f", {"val": I(2)}),
    ("return", 1, None, 0, 4, "<module>", {"loc": {}, "val": ["NoneType", "None"]}),
]
T = jsonl(ROWS)


def close(test, got, want):
    test.assertIsNotNone(got)
    test.assertAlmostEqual(got, want, places=9)


class ValueEqualTest(unittest.TestCase):
    def test_types_and_literals(self):
        self.assertFalse(value_equal(("int", "1"), ("bool", "True")))       # the type names differ
        self.assertFalse(value_equal((None, "1"), (None, "True")))          # no names: 1 is int, True bool
        self.assertFalse(value_equal((None, "1.0"), (None, "1")))           # float against int
        self.assertTrue(value_equal(("dict", "{1: 2, 3: 4}"), ("dict", "{3: 4, 1: 2}")))  # the same dict
        self.assertTrue(value_equal(("list", "#1[1, 2]"), ("list", "[1, 2]")))            # identity stripped
        self.assertFalse(value_equal(("list", "[1, 2]"), ("tuple", "(1, 2)")))
        self.assertFalse(value_equal((None, "[1, True]"), (None, "[1, 1]")))  # types all the way down
        self.assertTrue(value_equal((None, "<function f>"), (None, "<function f>")))  # not literals: text
        self.assertFalse(value_equal(("Point", "Point(x=1)"), ("Point", "Point(x=2)")))


class StepTest(unittest.TestCase):
    def test_one_pair(self):
        pred = ("line 0:2 f", {"a": ("int", "1"), "b": ("int", "2")})
        ref = ("line 0:2 f", {"a": ("int", "1"), "b": ("int", "3"), "c": ("int", "4")})
        s = step_scores(pred, ref)
        # names in either: a, b, c; equal: a only
        self.assertEqual(s["action_exact"], 1.0)
        self.assertEqual(s["state_exact"], 0.0)
        self.assertEqual(s["key_match"], 0.0)
        close(self, s["key_value"], 1 / 3)
        close(self, s["value_typed"], 1 / 3)

    def test_alignments(self):
        # ref A B C D (x = 1 2 3 4); pred A C D (x = 1 3 5): B left out, D's value wrong
        ref = [(a, {"x": (None, str(x))}) for a, x in zip("ABCD", (1, 2, 3, 4))]
        pred = [(a, {"x": (None, str(x))}) for a, x in zip("ACD", (1, 3, 5))]
        s = trace_scores(pred, ref)
        pos, lcs = s["positional"], s["lcs"]
        # positional pairs (A,A) (C,B) (D,C), denominator 4
        close(self, pos["action_exact"], 1 / 4)
        close(self, pos["state_exact"], 1 / 4)
        close(self, pos["key_match"], 3 / 4)
        close(self, pos["key_value"], 1 / 4)
        # LCS pairs (A,A) (C,C) (D,D): states 1, 1, 0
        close(self, lcs["action_exact"], 3 / 4)
        close(self, lcs["state_exact"], 2 / 4)
        close(self, lcs["key_match"], 3 / 4)
        close(self, lcs["value_typed"], 2 / 4)
        self.assertEqual(lcs_pairs("ABCD", "ACD"), [(0, 0), (2, 1), (3, 2)])
        self.assertEqual(lcs_pairs("", "A"), [])


class PathTest(unittest.TestCase):
    def test_one_line_left_out(self):
        s = path_scores([1, 2, 3, 5], [1, 2, 3, 4, 5])
        self.assertEqual(s["path_exact"], 0.0)
        close(self, s["path_similarity"], 8 / 9)        # LCS 4: 2 * 4 / (4 + 5)
        self.assertEqual(s["coverage_precision"], 1.0)  # 4 of 4 predicted lines ran
        close(self, s["coverage_recall"], 4 / 5)
        close(self, s["coverage_f1"], 8 / 9)            # 2 * 1 * 0.8 / 1.8
        close(self, s["next_line"], 3 / 5)              # 1->2, 2->3, 5->end right; 3->4, 4->5 wrong

    def test_loop(self):
        # ref 1 2 3 2 3 4: 1->{2} 2->{3} 3->{2,4} 4->{end}; pred 1 2 3 4: 3->{4} only
        close(self, next_line_accuracy([1, 2, 3, 4], [1, 2, 3, 2, 3, 4]), 3 / 4)
        self.assertEqual(path_scores([4], [4])["path_exact"], 1.0)
        self.assertEqual(coverage_prf(set(), {1})["f1"], 0.0)
        self.assertEqual(coverage_prf(set(), set())["f1"], 1.0)


class StepsOfTest(unittest.TestCase):
    def test_surgebox_trace(self):
        steps = steps_of_trace(Trace.parse(T))
        self.assertEqual([a for a, _ in steps],
                         ["call 0:1 <module>", "line 0:1 <module>", "line 0:4 <module>", "call 0:1 f",
                          "line 0:2 f", "line 0:3 f", "return 0:3 f", "return 0:4 <module>"])
        self.assertEqual(steps[5][1], {"a": ("int", "1"), "b": ("int", "2")})
        self.assertEqual(steps[6][1], {"a": ("int", "1"), "b": ("int", "2"), "<return>": ("int", "2")})
        self.assertEqual(line_path(Trace.parse(T)), [1, 4, 2, 3])

    def test_cwm(self):
        text = ('<|call_sep|>{"a": "1"}<|action_sep|>def f(a):\n<|frame_sep|>'
                '<|line_sep|>{"a": ".."}<|action_sep|>    b = a + 1\n<|frame_sep|>'
                '<|line_sep|>{"a": "..", "b": "2"}<|action_sep|>    return b\n<|frame_sep|>'
                '<|return_sep|><|action_sep|>    return b\n<|arg_sep|>"2"<|frame_sep|><|end_of_text|>')
        steps, bad = steps_of_cwm(text)
        self.assertEqual(bad, 0)
        self.assertEqual(steps, [("call|def f(a):", {"a": (None, "1")}),
                                 ("line|b = a + 1", {"a": (None, "1")}),
                                 ("line|return b", {"a": (None, "1"), "b": (None, "2")}),
                                 ("return|return b", {"<return>": (None, "2")})])
        steps, bad = steps_of_cwm('<|line_sep|>{not json<|action_sep|>x\n<|frame_sep|>nonsense<|frame_sep|>')
        self.assertEqual(bad, 2)
        self.assertEqual(steps, [("malformed", {}), ("malformed", {})])


class QuestionTest(unittest.TestCase):
    def setUp(self):
        self.t = Trace.parse(T)

    def test_answers(self):
        self.assertEqual(tq.answer(self.t, "coverage"), [1, 2, 3, 4])
        self.assertEqual(tq.answer(self.t, "path"), [1, 4, 2, 3])
        self.assertEqual(tq.answer(self.t, "next_lines:4"), [2])
        self.assertEqual(tq.answer(self.t, "next_lines:3"), [-1])
        # after line 2 ran: f's next event (5) before line 3
        self.assertEqual(tq.answer(self.t, "state:2"), {"a": ["int", "1"], "b": ["int", "2"]})
        # event 2 (module, line 4): step into the call of f (event 3, line 1, a = 1)
        self.assertEqual(tq.answer(self.t, "step_into:2"), {"ln": 1, "locals": {"a": "1"}})
        # no later line of the module frame, nothing below it: the run ends
        self.assertEqual(tq.answer(self.t, "step_over:2"), {"ln": None, "locals": {}})
        # event 4 (f, line 2): out to the module's return at line 4 (event 7)
        self.assertEqual(tq.answer(self.t, "step_out:4"), {"ln": 4, "locals": {}})
        for bad in ("nonsense", "state", "state:x", "next_lines:9", "step_over:99", "state:9"):
            with self.assertRaises(tq.BadQuestion, msg=bad):
                tq.answer(self.t, bad)

    def test_scores(self):
        s = tq.score_answer("coverage", [1, 2, 5], [1, 2, 3, 4])
        close(self, s["coverage_precision"], 2 / 3)
        close(self, s["coverage_recall"], 1 / 2)
        close(self, s["coverage_f1"], 4 / 7)     # 2 * (1/3) / (7/6)
        ref = {"a": ["int", "1"], "b": ["int", "2"]}
        s = tq.score_answer("state:2", {"a": "1", "b": "3"}, ref)
        self.assertEqual(s["state_exact"], 0.0)
        close(self, s["value_typed"], 1 / 2)
        s = tq.score_answer("state:2", {"a": ["bool", "True"], "b": ["int", "2"]}, ref)
        self.assertEqual(s["state_exact"], 0.0)
        close(self, s["value_typed"], 1 / 2)
        self.assertEqual(tq.score_answer("state:2", {"a": "1", "b": "2"}, ref), {"state_exact": 1.0, "value_typed": 1.0})
        out = {"ln": 4, "locals": {}}
        self.assertEqual(tq.score_answer("step_out:4", 4, out), {"debugger_line": 1.0})
        self.assertEqual(tq.score_answer("step_out:4", {"ln": 4, "locals": {"x": "1"}}, out),
                         {"debugger_line": 1.0, "debugger_state": 0.0})
        self.assertEqual(tq.score_answer("step_over:2", None, {"ln": None, "locals": {}}), {"debugger_line": 1.0})
        self.assertEqual(tq.score_answer("next_lines:3", [-1], [-1]), {"next_line": 1.0})
        self.assertEqual(tq.score_answer("path", "1 4 2 3", [1, 4, 2, 3]), {"path_exact": 0.0, "path_similarity": 0.0})


if __name__ == "__main__":
    unittest.main()
