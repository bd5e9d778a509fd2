#!/usr/bin/env python3
"""The client's Trace class, debugger views and converters on hand-written traces
(trace_fixtures.py). Every expected value is worked out by hand from the fixture listings (event
indices are the `# n` comments there). No daemon, no tracer; Python >= 3.8."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
import trace_fixtures as F  # noqa: E402
from surgebox import trace_views as V  # noqa: E402
from surgebox.trace import Trace, plain_repr  # noqa: E402
from surgebox.trace_cwm import cwm_frames, to_cwm  # noqa: E402
from surgebox.trace_ldb import block_states, blocks, ldb_text  # noqa: E402
from surgebox.trace_lines import line_path, reval_coverage, reval_next_lines, reval_path, reval_state  # noqa: E402

A, B, C = Trace.parse(F.TRACE_A), Trace.parse(F.TRACE_B), Trace.parse(F.TRACE_C)


class ParseTest(unittest.TestCase):
    def test_complete(self):
        self.assertEqual((A.status, A.problems, len(A.events), A.files), ("complete", [], 20, ["/app/main.py"]))
        self.assertEqual(A.events[8].k, "call")
        self.assertEqual(A.events[10].val, ("int", "6"))
        self.assertEqual(C.end["exit"], {"exception": {"ty": "ValueError", "msg": "base"}})
        self.assertEqual(Trace.parse(F.TRACE_A.encode()).status, "complete")

    def test_cut_mid_line_keeps_what_is_there(self):
        text = F.TRACE_A[:F.TRACE_A.index('"i": 12') + 5]
        t = Trace.parse(text)
        self.assertEqual((t.status, len(t.events)), ("truncated", 12))
        self.assertIsNone(t.end)
        self.assertEqual(t.locals_at(11)["out"], ("list", "#1[6]"))

    def test_supervisor_truncation_and_crash(self):
        lines = F.TRACE_A.splitlines()[:8]
        t = Trace.parse("\n".join(lines + ['{"t":"end","status":"truncated","cap":"bytes"}']) + "\n")
        self.assertEqual((t.status, t.end["cap"], len(t.events), t.problems), ("truncated", "bytes", 7, []))
        t = Trace.parse("\n".join(lines + ['{"t":"end","status":"crashed"}']) + "\n")
        self.assertEqual((t.status, len(t.events)), ("crashed", 7))
        self.assertIsNone(V.step_out(t, 6))   # f never returns in what is there

    def test_tampering_found_by_the_parser(self):
        lines = F.TRACE_A.splitlines()
        gap = "\n".join(lines[:5] + lines[6:]) + "\n"             # event 4 missing
        t = Trace.parse(gap)
        self.assertEqual((t.status, len(t.events)), ("tampered", 4))
        after = F.TRACE_A + lines[3] + "\n"                         # a record after the end
        self.assertEqual(Trace.parse(after).status, "tampered")
        junk = "\n".join(lines[:3] + ["not json"] + lines[3:]) + "\n"
        self.assertEqual(len(Trace.parse(junk).events), 2)
        badfile = F.TRACE_A.replace('"f": 0, "ln": 5', '"f": 3, "ln": 5')
        self.assertEqual((Trace.parse(badfile).status, len(Trace.parse(badfile).events)), ("tampered", 5))
        with self.assertRaises(ValueError):
            Trace.parse('{"t":"ev"}\n')
        lines = F.TRACE_A.splitlines()
        helper = '{"t": "file", "f": 1, "path": "/app/helper.py"}'
        t = Trace.parse("\n".join(lines[:3] + [helper] + lines[3:]) + "\n")
        self.assertEqual((t.status, t.files), ("complete", ["/app/main.py", "/app/helper.py"]))
        t = Trace.parse("\n".join(lines[:3] + [helper.replace('"f": 1', '"f": 2')] + lines[3:]) + "\n")
        self.assertEqual((t.status, len(t.events)), ("tampered", 2))

    def test_parse_from_a_file(self):
        import io
        import tempfile
        self.assertEqual(len(Trace.parse(io.StringIO(F.TRACE_B)).events), 31)
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
            f.write(F.TRACE_C)
            f.flush()
            self.assertEqual(Trace.load(f.name).end["exit"]["exception"]["msg"], "base")

    def test_locals_at_applies_diffs_and_snapshots(self):
        self.assertEqual(A.locals_at(12), {"s": ("str", "'ab'"), "n": ("int", "3"), "out": ("list", "#1[6]"),
                                           "c": ("str", "'b'")})
        self.assertEqual(list(A.locals_at(12)), ["s", "n", "out", "c"])
        self.assertEqual(A.locals_at(5), {"s": ("str", "'ab'"), "n": ("int", "3")})
        self.assertEqual(A.locals_at(9), {"x": ("int", "3")})
        self.assertEqual(A.locals_at(9, fr=2)["c"], ("str", "'a'"))   # the caller, as of event 9
        self.assertEqual(B.locals_at(28), {"n": ("int", "2"), "total": ("int", "-1"), "v": ("int", "1")})
        self.assertEqual(B.locals_at(14), {"n": ("int", "2"), "k": ("int", "0")})
        self.assertEqual(A.locals_at(3), {"g": ("function", "<function g>"), "f": ("function", "<function f>")})

    def test_deletion_and_checkpoints(self):
        rows = [("call", 1, None, 0, 1, "<module>", {"loc": {}})]
        for n in range(1, 200):
            rows.append(("line", 1, None, 0, 1, "<module>", {"loc": {"x": F.I(n)}}))
        rows.append(("line", 1, None, 0, 2, "<module>", {"loc": {"x": None, "y": F.I(0)}}))
        t = Trace.parse(F.jsonl(rows))
        self.assertEqual(t.locals_at(150), {"x": ("int", "150")})
        self.assertEqual(t.locals_at(130), {"x": ("int", "130")})
        self.assertEqual(t.locals_at(200), {"y": ("int", "0")})

    def test_stack(self):
        self.assertEqual(A.stack_at(9), [(3, "g", 2), (2, "f", 7), (1, "<module>", 10)])
        self.assertEqual(C.stack_at(31), [(8, "fact", 3), (7, "fact", 4), (2, "f", 14), (1, "<module>", 16)])
        self.assertEqual(C.stack_at(11), [(4, "<lambda>", 10), (2, "f", 10), (1, "<module>", 16)])
        self.assertEqual(B.stack_at(15), [(3, "gen", 3), (2, "f", 7), (1, "<module>", 15)])

    def test_coverage(self):
        self.assertEqual(A.coverage(), {1: 1, 4: 1, 10: 1, 5: 1, 6: 3, 7: 2, 2: 2, 8: 1})

    def test_plain_repr(self):
        self.assertEqual(plain_repr("#1[1, #2[2]]"), "[1, [2]]")
        self.assertEqual(plain_repr("#3[1, #3]"), "[1, [...]]")
        self.assertEqual(plain_repr("#2{1: #2}"), "{1: {...}}")
        self.assertEqual(plain_repr("#5Point(x=1, s='a#1', me=#5)"), "Point(x=1, s='a#1', me=...)")
        self.assertEqual(plain_repr('"it\'s #1"'), '"it\'s #1"')
        self.assertEqual(plain_repr("'a\\'#2'"), "'a\\'#2'")


class ViewsTest(unittest.TestCase):
    def test_step_into(self):
        self.assertEqual(V.step_into(A, 7), 8)       # into g
        self.assertEqual(V.step_into(A, 10), 11)     # g's return -> f's next line
        self.assertEqual(V.step_into(B, 12), 13)     # next(gen) resumes it
        self.assertEqual(V.step_into(C, 6), 7)       # the key lambda, called by sorted
        self.assertIsNone(V.step_into(C, 32))        # nothing runs after the uncaught exception
        self.assertEqual(V.back_step_into(A, 11), 9)
        self.assertEqual(V.back_step_into(B, 13), 12)

    def test_step_over(self):
        self.assertEqual(V.step_over(A, 5), 6)
        self.assertEqual(V.step_over(A, 7), 11)      # g(n) stepped over
        self.assertEqual(V.step_over(A, 9), 11)      # g's last line: out to f's next line
        self.assertEqual(V.step_over(B, 9), 14)      # over a yield: the generator's next line once resumed
        self.assertEqual(V.step_over(B, 15), 20)
        self.assertEqual(V.step_over(B, 20), 22)     # the generator ends: the consumer's next line
        self.assertEqual(V.step_over(B, 23), 25)     # int('x') raises: the except clause's line
        self.assertEqual(V.step_over(C, 6), 13)      # both lambda calls stepped over
        self.assertEqual(V.step_over(C, 8), 13)      # from a lambda: f's next line (sorted is C)
        self.assertIsNone(V.step_over(C, 31))        # raise, never caught: no line after it
        self.assertEqual(V.step_over(C, 14), 20)     # the comprehension stepped over; the with's exit
        self.assertEqual(V.back_step_over(A, 11), 7)
        self.assertEqual(V.back_step_over(A, 9), 7)  # g's first line: back to the calling line
        self.assertEqual(V.back_step_over(B, 14), 9)  # back across the resume and the yield
        self.assertEqual(V.back_step_over(B, 8), 6)   # the generator's first line: the caller's line
        self.assertEqual(V.back_step_over(B, 25), 23)  # the except clause: back to the raising line
        self.assertEqual(V.back_step_over(B, 26), 25)  # handled: back to the except clause

    def test_step_over_a_yield_never_resumed(self):
        gen = ["generator", "<generator gen #3>"]
        rows = [("call", 1, None, 0, 1, "<module>", {"loc": {}}), ("line", 1, None, 0, 1, "<module>", {"loc": {}}),
                ("line", 1, None, 0, 5, "<module>", {"loc": {"gen": F.FN("gen")}}),
                ("line", 1, None, 0, 10, "<module>", {"loc": {"f": F.FN("f")}}),
                ("call", 2, 1, 1, 5, "f", {"loc": {}}),                                  # 4
                ("line", 2, 1, 1, 6, "f", {"loc": {}}),
                ("line", 2, 1, 1, 7, "f", {"loc": {"it": gen}}),                         # 6
                ("call", 3, 2, 2, 1, "gen", {"loc": {}}),
                ("line", 3, 2, 2, 2, "gen", {"loc": {}}),                                # 8
                ("yield", 3, 2, 2, 2, "gen", {"loc": {}, "val": F.I(1)}),
                ("line", 2, 1, 1, 8, "f", {"loc": {"it": gen, "a": F.I(1)}}),            # 10
                ("return", 2, 1, 1, 8, "f", {"loc": {}, "val": F.I(1)}),
                # f's return drops the generator: closed by GeneratorExit, no line of it runs
                ("resume", 3, 1, 1, 2, "gen", {"loc": {}}),                              # 12
                ("exception", 3, 1, 1, 2, "gen", {"loc": {}, "exc": {"ty": "GeneratorExit", "msg": ""}}),
                ("unwind", 3, 1, 1, 2, "gen", {"loc": {}, "exc": {"ty": "GeneratorExit", "msg": ""}}),
                ("return", 1, None, 0, 10, "<module>", {"loc": {"gen": F.FN("gen"), "f": F.FN("f")},
                                                         "val": ["NoneType", "None"]})]
        t = Trace.parse(F.jsonl(rows))
        self.assertEqual(V.step_over(t, 8), 10)      # the consumer's next line
        self.assertEqual(V.step_out(t, 8), 10)
        self.assertEqual(t.stack_at(13), [(3, "gen", 2), (1, "<module>", 10)])   # closed from the module
        rows = rows[:12]                             # a trace cut before the close: the same answer
        self.assertEqual(V.step_over(Trace.parse(F.jsonl(rows)), 8), 10)

    def test_step_out(self):
        self.assertEqual(V.step_out(A, 9), 11)
        self.assertEqual(V.step_out(A, 12), 19)      # out of f: the module's return
        self.assertEqual(V.step_out(B, 14), 17)      # generator: out at its next yield
        self.assertEqual(V.step_out(C, 8), 13)       # first lambda: past sorted, into f
        self.assertEqual(V.step_out(C, 31), 34)      # unwind: the caller's exception event
        self.assertIsNone(V.step_out(A, 3))          # the module has no caller
        self.assertEqual(V.back_step_out(A, 14), 12)
        self.assertEqual(V.back_step_out(B, 20), 18)
        self.assertEqual(V.back_step_out(C, 30), 28)

    def test_continue_to(self):
        self.assertEqual(V.continue_to(A, 0, 7), 7)
        self.assertEqual(V.continue_to(A, 4, 7, cond="c == 'b'"), 12)
        self.assertEqual(V.continue_to(A, 0, 7, cond="out == [6]"), 12)          # #n ignored
        self.assertEqual(V.continue_to(A, 0, 7, cond=lambda s: s["out"] == "#1[]"), 7)
        self.assertIsNone(V.continue_to(A, 0, 7, cond="c == 'z'"))
        self.assertEqual(V.continue_to(C, 0, 2, cond="n == 1"), 30)
        self.assertEqual(V.back_continue_to(A, 18, 6), 16)
        self.assertEqual(V.back_continue_to(C, 39, 2), 30)
        with self.assertRaises(ValueError):
            V.continue_to(A, 0, 7, cond="c = 1")

    def test_trace_methods_and_the_readme_example(self):
        import surgebox
        t = surgebox.Trace.parse(F.TRACE_A)
        i = t.continue_to(0, 7)
        self.assertEqual((i, t.step_over(i), t.step_into(i), t.step_out(t.step_into(i))), (7, 11, 8, 11))
        self.assertEqual(t.locals_at(11)["out"], ("list", "#1[6]"))
        self.assertEqual((t.back_step_into(11), t.back_step_over(11), t.back_step_out(9)), (9, 7, 7))
        self.assertEqual((t.back_continue_to(18, 6), t.call_inputs("g", 1)), (16, [("x", ("int", "3"))]))

    def test_what_was_the_input(self):
        self.assertEqual(V.call_inputs(A, "f"), [("s", ("str", "'ab'")), ("n", ("int", "3"))])
        self.assertEqual(V.input_repr(A, "f"), "'ab', 3")
        self.assertEqual(V.input_repr(C, "f"), "[1, 2]")
        self.assertEqual(V.call_inputs(C, "fact", nth=1), [("n", ("int", "1"))])
        self.assertIsNone(V.call_inputs(C, "fact", nth=2))


# ---- converters --------------------------------------------------------------------------
def cwm_dbg_locals(frames, k):
    """demos/cwmdbg.py's CWMDebugger.local_vars, re-stated: resolve '..' by walking back through
    earlier frames, stopping at a call or return frame."""
    parsed = []
    for fr in frames:
        kind = fr[:fr.index("|>") + 2]
        body = fr[len(kind):]
        loc = json.loads(body.split("<|action_sep|>")[0]) if kind in ("<|call_sep|>", "<|line_sep|>") else {}
        parsed.append((kind, loc))
    lv = dict(parsed[k][1])
    for name, v in lv.items():
        if v != "..":
            continue
        j = k - 1
        while j >= 0:
            got = parsed[j][1].get(name, "..")
            if got != "..":
                lv[name] = got
                break
            if parsed[j][0] in ("<|call_sep|>", "<|return_sep|>"):
                break
            j -= 1
    return lv


class CwmTest(unittest.TestCase):
    def test_program_a_exact(self):
        L, R, CL, A_, G = "<|line_sep|>", "<|return_sep|>", "<|call_sep|>", "<|action_sep|>", "<|frame_sep|>"
        want = [
            CL + '{"s": "\'ab\'", "n": "3"}' + A_ + "def f(s, n):\n" + G,
            L + '{"s": "..", "n": ".."}' + A_ + "    out = []\n" + G,
            L + '{"s": "..", "n": "..", "out": "[]"}' + A_ + "    for c in s:\n" + G,
            L + '{"s": "..", "n": "..", "out": "..", "c": "\'a\'"}' + A_ + "        out.append(g(n))\n" + G,
            CL + '{"x": "3"}' + A_ + "def g(x):\n" + G,
            L + '{"x": ".."}' + A_ + "    return x * 2\n" + G,
            R + A_ + "    return x * 2\n" + "<|arg_sep|>" + '"6"' + G,
            L + '{"s": "\'ab\'", "n": "3", "out": "[6]", "c": "\'a\'"}' + A_ + "    for c in s:\n" + G,
            L + '{"s": "..", "n": "..", "out": "..", "c": "\'b\'"}' + A_ + "        out.append(g(n))\n" + G,
            CL + '{"x": "3"}' + A_ + "def g(x):\n" + G,
            L + '{"x": ".."}' + A_ + "    return x * 2\n" + G,
            R + A_ + "    return x * 2\n" + "<|arg_sep|>" + '"6"' + G,
            L + '{"s": "\'ab\'", "n": "3", "out": "[6, 6]", "c": "\'b\'"}' + A_ + "    for c in s:\n" + G,
            L + '{"s": "..", "n": "..", "out": "..", "c": ".."}' + A_ + "    return out\n" + G,
            R + A_ + "    return out\n" + "<|arg_sep|>" + '"[6, 6]"' + G,
            "<|end_of_text|>",
        ]
        self.assertEqual(cwm_frames(A, {0: F.SRC_A}), want)
        self.assertEqual(to_cwm(A, {"/app/main.py": F.SRC_A}), "".join(want))
        # every '..' resolves the way CWM's own debugger reads it back
        got = cwm_frames(A, {0: F.SRC_A})
        self.assertEqual(cwm_dbg_locals(got, 13), {"s": "'ab'", "n": "3", "out": "[6, 6]", "c": "'b'"})
        self.assertEqual(cwm_dbg_locals(got, 5), {"x": "3"})

    def test_generator_and_caught_exception(self):
        got = cwm_frames(B, {0: F.SRC_B})
        self.assertEqual(got[6], '<|return_sep|><|action_sep|>        yield k * k\n<|arg_sep|>"0"<|frame_sep|>')
        self.assertEqual(got[9], '<|call_sep|>{"n": "2", "k": "0"}<|action_sep|>        yield k * k\n<|frame_sep|>')
        exc = [g for g in got if g.startswith("<|exception_sep|>")]
        self.assertEqual(exc, ['<|exception_sep|><|action_sep|>        int(\'x\')\n<|arg_sep|>'
                               '"ValueError(\\"invalid literal for int() with base 10: \'x\'\\")"<|frame_sep|>'])
        after = got[got.index(exc[0]) + 1]            # `handled` has no frame; '..' still resolves
        self.assertEqual(after, '<|line_sep|>{"n": "..", "total": "..", "v": ".."}<|action_sep|>'
                                '    except ValueError:\n<|frame_sep|>')
        self.assertEqual(got[-2:], ['<|return_sep|><|action_sep|>    return total\n<|arg_sep|>"-1"<|frame_sep|>',
                                    "<|end_of_text|>"])

    def test_uncaught_exception_ends_with_a_return_of_none(self):
        got = cwm_frames(C, {0: F.SRC_C})
        self.assertEqual(got[-3:], [
            '<|exception_sep|><|action_sep|>    return fact(2) + total\n<|arg_sep|>"ValueError(\'base\')"<|frame_sep|>',
            '<|return_sep|><|action_sep|>    return fact(2) + total\n<|arg_sep|>"None"<|frame_sep|>',
            "<|end_of_text|>"])
        self.assertEqual(got[0], '<|call_sep|>{"xs": "[1, 2]"}<|action_sep|>def f(xs):\n<|frame_sep|>')
        self.assertEqual(got[2], '<|call_sep|>{"x": "1"}<|action_sep|>    ys = sorted(xs, key=lambda x: -x)\n<|frame_sep|>')
        self.assertEqual(got[8], '<|line_sep|>{"xs": "[1, 2]", "ys": "[2, 1]"}<|action_sep|>'
                                 "    with open('/dev/null') as fh:\n<|frame_sep|>")
        self.assertEqual(got[10], '<|call_sep|>{".0": "<list_iterator>"}<|action_sep|>'
                                  '        sq = [y * y for y in ys]\n<|frame_sep|>')
        self.assertEqual(got[15], '<|line_sep|>{"xs": "[1, 2]", "ys": "[2, 1]", "fh": "<TextIOWrapper>", '
                                  '"sq": "[4, 1]"}<|action_sep|>' "    with open('/dev/null') as fh:\n<|frame_sep|>")
        self.assertEqual(got[16], '<|line_sep|>{"xs": "..", "ys": "..", "fh": "..", "sq": ".."}<|action_sep|>'
                                  "    total = eval('twice(len(sq))')\n<|frame_sep|>")

    def test_published_strawberry_example(self):
        """demos/README.md of facebookresearch/cwm (the tech report's Fig. B.25): the session starts
        at `-> def f(c):` and `print` shows {'c': "'a'"}-shaped locals; traced with c = 'r'. The
        fixture's line sequence is CPython 3.11's settrace sequence for this program (checked on
        the host)."""
        src, rows = strawberry()
        t = Trace.parse(F.jsonl(rows))
        got = cwm_frames(t, {0: src})
        self.assertEqual(got[0], '<|call_sep|>{"c": "\'r\'"}<|action_sep|>def f(c):\n<|frame_sep|>')
        self.assertEqual(str(cwm_dbg_locals(got, 0)), "{'c': \"'r'\"}")
        self.assertEqual(got[1], '<|line_sep|>{"c": ".."}<|action_sep|>    word = "strawberry"\n<|frame_sep|>')
        self.assertEqual(got[2], '<|line_sep|>{"c": "..", "word": "\'strawberry\'"}<|action_sep|>'
                                 '    num = count_letters(word, c)\n<|frame_sep|>')
        self.assertEqual(got[3], '<|call_sep|>{"s": "\'strawberry\'", "letter": "\'r\'"}<|action_sep|>'
                                 'def count_letters(s, letter):\n<|frame_sep|>')
        self.assertEqual(got[-2], '<|return_sep|><|action_sep|>    return ans\n<|arg_sep|>'
                                  '"\'Found 0003 occurrences of the letter r in strawberry\'"<|frame_sep|>')
        # count_letters: call, line 2, 10 x (3, 4), 3, 5, return = 25 frames; format_answer: call, 9 ... 14,
        # 8, 16, return = 10; f: call, 19, 20, 21, 22, return + end = 7
        self.assertEqual(len(got), 42)
        self.assertEqual(got[-6], '<|line_sep|>{"word": "..", "letter": "..", "count": ".."}<|action_sep|>'
                                  '    parts = [\n<|frame_sep|>')
        # after 'rr' (c unchanged) the loop's frame shows c as '..', n counted up to 3
        self.assertEqual(got[22], '<|line_sep|>{"s": "..", "letter": "..", "n": "..", "c": ".."}<|action_sep|>'
                                  '        n += int(c == letter)\n<|frame_sep|>')
        self.assertEqual(cwm_dbg_locals(got, 22), {"s": "'strawberry'", "letter": "'r'", "n": "2", "c": "'r'"})


def strawberry():
    src = ('def count_letters(s, letter):\n    n = 0\n    for c in s:\n        n += int(c == letter)\n    return n\n\n'
           'def format_answer(word, letter, count):\n    parts = [\n        "Found",\n        f"{count:04d}",\n'
           '        "occurrences of the letter",\n        letter,\n        "in",\n        word\n    ]\n'
           '    return " ".join(parts)\n\ndef f(c):  # << START_OF_TRACE\n    word = "strawberry"\n'
           '    num = count_letters(word, c)\n    ans = format_answer(word, c, num)\n    return ans\n\nf(\'r\')\n')
    W, r = F.S("strawberry"), F.S("r")
    rows = [("call", 1, None, 0, 1, "<module>", {"loc": {}}), ("line", 1, None, 0, 1, "<module>", {"loc": {}}),
            ("line", 1, None, 0, 7, "<module>", {"loc": {"count_letters": F.FN("count_letters")}}),
            ("line", 1, None, 0, 18, "<module>", {"loc": {"format_answer": F.FN("format_answer")}}),
            ("line", 1, None, 0, 24, "<module>", {"loc": {"f": F.FN("f")}}),
            ("call", 2, 1, 1, 18, "f", {"loc": {"c": r}}), ("line", 2, 1, 1, 19, "f", {"loc": {}}),
            ("line", 2, 1, 1, 20, "f", {"loc": {"word": W}}),
            ("call", 3, 2, 2, 1, "count_letters", {"loc": {"s": W, "letter": r}}),
            ("line", 3, 2, 2, 2, "count_letters", {"loc": {}})]
    n, prev, changed = 0, None, True
    for ch in "strawberry":                 # the fixture's loop events (not an expected value)
        rows.append(("line", 3, 2, 2, 3, "count_letters", {"loc": {"n": F.I(n)} if changed else {}}))
        rows.append(("line", 3, 2, 2, 4, "count_letters", {"loc": {"c": F.S(ch)} if ch != prev else {}}))
        prev, changed, n = ch, ch == "r", n + (ch == "r")
    rows.append(("line", 3, 2, 2, 3, "count_letters", {"loc": {"n": F.I(n)} if changed else {}}))
    rows.append(("line", 3, 2, 2, 5, "count_letters", {"loc": {}}))
    rows.append(("return", 3, 2, 2, 5, "count_letters", {"loc": {}, "val": F.I(3)}))
    ans = F.S("Found 0003 occurrences of the letter r in strawberry")
    rows += [("line", 2, 1, 1, 21, "f", {"loc": {"c": r, "word": W, "num": F.I(3)}}),
             ("call", 4, 2, 2, 7, "format_answer", {"loc": {"word": W, "letter": r, "count": F.I(3)}}),
             # CPython 3.11 runs the multi-line list's element lines first, then line 8's store
             ] + [("line", 4, 2, 2, ln, "format_answer", {"loc": {}}) for ln in (9, 10, 11, 12, 13, 14, 8)] + [
             ("line", 4, 2, 2, 16, "format_answer", {"loc": {"parts": ["list", "#1['Found', '0003', "
                                                                        "'occurrences of the letter', 'r', 'in', 'strawberry']"]}}),
             ("return", 4, 2, 2, 16, "format_answer", {"loc": {}, "val": ans}),
             ("line", 2, 1, 1, 22, "f", {"loc": {"c": r, "word": W, "num": F.I(3), "ans": ans}}),
             ("return", 2, 1, 1, 22, "f", {"loc": {}, "val": ans}),
             ("return", 1, None, 0, 24, "<module>", {"loc": {}, "val": ["NoneType", "None"]})]
    return src, rows


class LinesTest(unittest.TestCase):
    def test_line_path(self):
        self.assertEqual(line_path(A), [1, 4, 10, 5, 6, 7, 2, 6, 7, 2, 6, 8])
        self.assertEqual(line_path(A, fn="f"), [5, 6, 7, 6, 7, 6, 8])
        self.assertEqual(line_path(C, fn="fact"), [2, 4, 2, 3])

    def test_reval(self):
        # the module frame returns on line 10, not f's last line 8: a state (issue 36)
        self.assertEqual(reval_path(A), [0, 3, 9, 4, 5, 6, 1, 5, 6, 1, 5, 7, 9])
        self.assertEqual(reval_coverage(A), {0, 1, 3, 4, 5, 6, 7, 9})
        self.assertEqual(reval_next_lines(A, 5), {6, 7})
        self.assertEqual(reval_next_lines(A, 7), {9})
        self.assertEqual(reval_next_lines(A, 9), {4, -1})
        self.assertEqual(reval_path(A, fn="f"), [4, 5, 6, 5, 6, 5, 7])   # f returns on its last state's line
        self.assertEqual(reval_next_lines(A, 6), {1})
        self.assertEqual(reval_state(A, 6), {"s": ("str", "'ab'"), "n": ("int", "3"), "out": ("list", "[6]"),
                                             "c": ("str", "'a'")})
        self.assertEqual(reval_state(A, 1, nth=1), {"x": ("int", "3")})
        self.assertIsNone(reval_state(A, 1, nth=2))
        self.assertEqual(reval_state(B, 11), {"n": ("int", "2"), "total": ("int", "-1"), "v": ("int", "1")})

    def test_reval_as_its_own_tracer_answers(self):
        """REval's dynamics.py: an event on the line of the previous state updates that state
        (Sandbox.add_state), a line that never ran has {-1} as its next lines (States.get_next_line)."""
        self.assertEqual(reval_next_lines(A, 2), {-1})              # line 3 of A is blank: never ran
        # def f(xs):\n    t = 0\n    for x in xs: t += x\n    return t\n\nf([1, 2])\n (3.11's line events)
        rows = [("call", 1, None, 0, 1, "<module>", {"loc": {}}), ("line", 1, None, 0, 1, "<module>", {}),
                ("line", 1, None, 0, 6, "<module>", {}), ("call", 2, 1, 1, 1, "f", {"loc": {"xs": ["list", "#1[1, 2]"]}}),
                ("line", 2, 1, 1, 2, "f", {}), ("line", 2, 1, 1, 3, "f", {"loc": {"t": F.I(0)}}),
                ("line", 2, 1, 1, 3, "f", {"loc": {"x": F.I(1), "t": F.I(1)}}),
                ("line", 2, 1, 1, 3, "f", {"loc": {"x": F.I(2), "t": F.I(3)}}),
                ("line", 2, 1, 1, 4, "f", {}), ("return", 2, 1, 1, 4, "f", {"val": F.I(3)}),
                ("return", 1, None, 0, 6, "<module>", {"loc": {}, "val": ["NoneType", "None"]})]
        t = Trace.parse(F.jsonl(rows))
        self.assertEqual(line_path(t), [1, 6, 2, 3, 3, 3, 4])
        # f returns on line 4 (its last state's): nothing added; the module returns on line 6
        # after f's line 4: a state for it (REval's States.trace, issue 36)
        self.assertEqual(reval_path(t), [0, 5, 1, 2, 3, 5])
        self.assertEqual(reval_next_lines(t, 2), {3})
        self.assertEqual(reval_next_lines(t, 3), {5})
        self.assertEqual(reval_next_lines(t, 5), {1, -1})
        self.assertEqual(reval_path(t, fn="f"), [1, 2, 3])

    def test_reval_return_state(self):
        """A worked example of REval's return-only state (States.trace; HumanEval 56 and 74 end so):
        1 def g(n):\n2     return n * 2\n3\n4 def f(n):\n5     return g(n) + 1\n6\n7 f(3)\n
        g returns on line 2, its last state: nothing added; f returns on line 5 after g's line 2: a
        state for line 5; the module returns on line 7 after it: a state for line 7. Without the
        rule the path ended at g's line and next_lines(1) was {-1}."""
        rows = [("call", 1, None, 0, 1, "<module>", {"loc": {}}), ("line", 1, None, 0, 1, "<module>", {}),
                ("line", 1, None, 0, 4, "<module>", {}), ("line", 1, None, 0, 7, "<module>", {}),
                ("call", 2, 1, 1, 4, "f", {"loc": {"n": F.I(3)}}), ("line", 2, 1, 1, 5, "f", {}),
                ("call", 3, 2, 2, 1, "g", {"loc": {"n": F.I(3)}}), ("line", 3, 2, 2, 2, "g", {}),
                ("return", 3, 2, 2, 2, "g", {"val": F.I(6)}), ("return", 2, 1, 1, 5, "f", {"val": F.I(7)}),
                ("return", 1, None, 0, 7, "<module>", {"loc": {}, "val": ["NoneType", "None"]})]
        t = Trace.parse(F.jsonl(rows))
        self.assertEqual(line_path(t), [1, 4, 7, 5, 2])              # line events only: CoCoNUT's path
        self.assertEqual(reval_path(t), [0, 3, 6, 4, 1, 4, 6])
        self.assertEqual(reval_next_lines(t, 1), {4})
        self.assertEqual(reval_next_lines(t, 4), {1, 6})
        self.assertEqual(reval_next_lines(t, 6), {4, -1})
        self.assertEqual(reval_coverage(t), {0, 1, 3, 4, 6})
        # an exception unwinding a frame is settrace's "return" too
        rows[8] = ("unwind", 3, 2, 2, 2, "g", {})
        rows[9] = ("unwind", 2, 1, 1, 5, "f", {})
        rows[10] = ("unwind", 1, None, 0, 7, "<module>", {})
        self.assertEqual(reval_path(Trace.parse(F.jsonl(rows))), [0, 3, 6, 4, 1, 4, 6])


class LdbTest(unittest.TestCase):
    def test_blocks(self):
        self.assertEqual(blocks(F.SRC_A), {1: 0, 4: 0, 10: 0, 2: 1, 5: 2, 6: 3, 7: 4, 8: 5})
        self.assertEqual(blocks(F.SRC_B), {1: 0, 5: 0, 15: 0, 2: 1, 3: 2, 6: 3, 7: 4, 8: 5, 9: 6, 10: 6,
                                           11: 7, 12: 7, 13: 8})
        got = blocks(F.SRC_C)
        self.assertEqual([got[n] for n in (2, 3, 4, 7)], [1, 2, 3, 4])              # if | raise | return
        self.assertEqual({got[n] for n in range(10, 15)}, {5})                     # `with` does not branch

    def test_block_states(self):
        runs = block_states(A, {0: F.SRC_A}, fn="f")
        st = {"s": "'ab'", "n": "3"}
        self.assertEqual(runs, [
            {"fr": 2, "fn": "f", "block": 2, "lines": [5], "state": dict(st, out="[]")},
            {"fr": 2, "fn": "f", "block": 3, "lines": [6], "state": dict(st, out="[]", c="'a'")},
            {"fr": 2, "fn": "f", "block": 4, "lines": [7], "state": dict(st, out="[6]", c="'a'")},
            {"fr": 2, "fn": "f", "block": 3, "lines": [6], "state": dict(st, out="[6]", c="'b'")},
            {"fr": 2, "fn": "f", "block": 4, "lines": [7], "state": dict(st, out="[6, 6]", c="'b'")},
            {"fr": 2, "fn": "f", "block": 3, "lines": [6], "state": dict(st, out="[6, 6]", c="'b'")},
            {"fr": 2, "fn": "f", "block": 5, "lines": [8], "state": dict(st, out="[6, 6]", c="'b'")},
        ])
        runs = block_states(C, {0: F.SRC_C}, fn="fact")
        self.assertEqual([(r["fr"], r["lines"], r["state"]) for r in runs],
                         [(7, [2], {"n": "2"}), (7, [4], {"n": "2"}), (8, [2], {"n": "1"}), (8, [3], {"n": "1"})])
        runs = block_states(B, {0: F.SRC_B}, fn="f")            # the handler is a block of its own
        self.assertEqual([r["lines"] for r in runs], [[6], [7], [8], [7], [8], [7], [9, 10], [11, 12], [13]])
        self.assertEqual(runs[6]["state"], {"n": "2", "total": "1", "v": "1"})

    def test_ldb_text(self):
        got = ldb_text(A, {0: F.SRC_A}, fn="f").split("\n")
        self.assertEqual(got[:6], ["[BLOCK-0]", "    out = []", "    # s='ab'\tn=3\tout=[]",
                                   "[BLOCK-1]", "    for c in s:", "    # s='ab'\tn=3\tout=[]\tc='a'"])
        self.assertEqual(got[6:9], ["[BLOCK-2]", "        out.append(g(n))", "        # s='ab'\tn=3\tout=[6]\tc='a'"])
        self.assertEqual(got[-4:], ["[BLOCK-6]", "    return out", "    # s='ab'\tn=3\tout=[6, 6]\tc='b'", ""])


class ThreadsTest(unittest.TestCase):
    """F.TRACE_T: the main thread and thread 1 interleaved; each view follows one thread."""
    def test_threads_and_numbering(self):
        t = Trace.parse(F.TRACE_T)
        self.assertEqual((t.status, t.problems, t.threads, t.thread), ("complete", [], [0, 1], 0))
        self.assertEqual(len(t.all_events), 16)
        self.assertEqual(len(t.events), 12)                        # the main thread's
        self.assertEqual([e.i for e in t.events], list(range(12)))
        self.assertEqual([e.seq for e in t.events][4:8], [4, 6, 8, 10])
        one = t.on_thread(1)
        self.assertEqual([(e.k, e.ln, e.seq, e.th) for e in one.events],
                         [("call", 2, 5, 1), ("line", 3, 7, 1), ("line", 4, 9, 1), ("return", 4, 11, 1)])
        self.assertEqual(Trace.parse(F.TRACE_T, thread=1).events, one.events)
        self.assertEqual((A.threads, [e.seq for e in A.events][:3]), ([0], [0, 1, 2]))
        self.assertEqual(Trace.parse(F.TRACE_T, thread=7).events, [])

    def test_views_follow_one_thread(self):
        t = Trace.parse(F.TRACE_T)
        self.assertEqual(t.step_into(5), 6)                         # r = work(5): the main thread's call
        self.assertEqual(t.step_over(5), 10)                        # to t.join(), thread 1 not seen
        self.assertEqual(t.step_out(7), 10)                         # from work's line 3 (main)
        self.assertEqual(t.locals_at(8), {"n": ("int", "5"), "s": ("int", "6")})
        self.assertEqual(t.stack_at(7), [(3, "work", 3), (1, "<module>", 7)])
        one = t.on_thread(1)
        self.assertEqual(one.locals_at(2), {"n": ("int", "1"), "s": ("int", "2")})
        self.assertEqual((one.step_over(1), one.step_out(1)), (2, None))   # no caller in the thread
        self.assertEqual(one.stack_at(1), [(2, "work", 3)])
        self.assertEqual(one.call_inputs("work"), [("n", ("int", "1"))])
        self.assertEqual(t.call_inputs("work"), [("n", ("int", "5"))])

    def test_converters_follow_one_thread(self):
        t = Trace.parse(F.TRACE_T)
        self.assertEqual(line_path(t), [1, 2, 5, 6, 7, 3, 4, 8])
        self.assertEqual(line_path(t.on_thread(1)), [3, 4])
        self.assertEqual(reval_next_lines(t, 6), {2})               # line 7 -> work's line 3, 0-indexed
        frames = cwm_frames(t.on_thread(1), {0: F.SRC_T}, fn="work")
        self.assertEqual(frames, [
            '<|call_sep|>{"n": "1"}<|action_sep|>def work(n):\n<|frame_sep|>',
            '<|line_sep|>{"n": ".."}<|action_sep|>    s = n + 1\n<|frame_sep|>',
            '<|line_sep|>{"n": "..", "s": "2"}<|action_sep|>    return s\n<|frame_sep|>',
            '<|return_sep|><|action_sep|>    return s\n<|arg_sep|>"2"<|frame_sep|>',
            '<|end_of_text|>'])

    def test_a_bad_thread_number_is_tampering(self):
        bad = F.TRACE_T.replace('"th": 1', '"th": -1', 1)
        self.assertEqual(Trace.parse(bad).status, "tampered")


if __name__ == "__main__":
    unittest.main()
