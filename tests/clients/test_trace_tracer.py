#!/usr/bin/env python3
"""Cross-check: the Python tracer (toolchains/tracers/python/sbtrace.py, or $SURGEBOX_SBTRACE) on
the benign fixture programs of trace_fixtures.py, with this interpreter, must give the traces the
hand-written fixtures describe, as the client reads them: the same call/line/return/exception/
yield/resume/unwind/handled sequence (handled right before the except block's first line), the
same inputs, the same CWM text. Where the recorder may choose (the rendering of opaque builtin
objects such as a file), the comparison leaves it out. The fixtures are CPython 3.11's sequences (Debian 12's
python3). Run inside the unshare wrapper (ctest does)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
import trace_fixtures as F  # noqa: E402
from surgebox import Trace  # noqa: E402
from surgebox.trace_cwm import cwm_frames  # noqa: E402
from surgebox.trace_lines import line_path  # noqa: E402

TRACER = os.environ.get("SURGEBOX_SBTRACE") or os.path.join(SRC, "toolchains", "tracers", "python", "sbtrace.py")
_OPAQUE = re.compile(r'"<[^"]*>"')


def record(source):
    """The tracer's trace of `source` run as /tmp/.../main.py."""
    d = tempfile.mkdtemp(prefix="sbviews-")
    main = os.path.join(d, "main.py")
    with open(main, "w") as f:
        f.write(source)
    out = os.path.join(d, "trace.jsonl")
    with open(out, "wb") as sink:
        env = dict(os.environ, SURGEBOX_TRACE_FD=str(sink.fileno()), SURGEBOX_TRACE_PATHS=d)
        subprocess.run([sys.executable, TRACER, main], env=env, pass_fds=(sink.fileno(),), cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    with open(out, "rb") as f:
        return Trace.parse(f.read())


def shape(t):
    return [(e.k, e.fn, e.ln, e.fr, e.up, e.d) for e in t.events]


class TracerCrossCheck(unittest.TestCase):
    def check(self, name):
        src, hand = getattr(F, "SRC_" + name), Trace.parse(getattr(F, "TRACE_" + name))
        got = record(src)
        self.assertEqual((got.status, got.problems), ("complete", []))
        self.assertEqual(got.end.get("exit"), hand.end["exit"])
        self.assertEqual(shape(got), shape(hand))
        self.assertEqual(got.call_inputs("f"), hand.call_inputs("f"))
        norm = [_OPAQUE.sub('"<>"', s) for s in cwm_frames(got, {0: src})]
        self.assertEqual(norm, [_OPAQUE.sub('"<>"', s) for s in cwm_frames(hand, {0: src})])
        return got

    def test_a_loop_calling_a_helper(self):
        got = self.check("A")
        i = got.continue_to(0, 7)
        self.assertEqual([got.events[j].ln for j in (i, got.step_over(i), got.step_out(got.step_into(i)))], [7, 6, 6])

    def test_b_generator_and_caught_exception(self):
        self.check("B")

    def test_c_lambdas_with_comprehension_eval_recursion_uncaught(self):
        self.check("C")

    def test_coconut_published_line_paths(self):
        """CoCoNUT (seal-research/structural-code-understanding-dataset,
        Dataset/HumanEval_trace_expanded_fixed_reannotated.csv, column ExecutedLines) publishes the
        executed lines of HumanEval/0 for given calls, numbered as the program's lines (docstring
        included). The same program laid out on the same lines (the docstring's text is ours, its
        7 lines are where theirs are), traced, gives their paths through line_path."""
        src = ("from typing import List\n\n\n"
               "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
               '    """ Whether two numbers of the list are closer to each other\n' + "    doc\n" * 6 + '    """\n'
               "\n"
               "    for idx, elem in enumerate(numbers):\n"                 # 14
               "        for idx2, elem2 in enumerate(numbers):\n"           # 15
               "            if idx != idx2:\n"                              # 16
               "                distance = abs(elem - elem2)\n"             # 17
               "                if distance < threshold:\n"                 # 18
               "                    return True\n"                          # 19
               "\n"
               "    return False\n"                                         # 21
               "\n")
        self.assertEqual(src.split("\n")[13], "    for idx, elem in enumerate(numbers):")
        self.assertEqual(src.split("\n")[20], "    return False")
        published = {
            "[1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3": [
                14, 15, 16, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15,
                14, 15, 16, 17, 18, 15, 16, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 19],
            "[1.1, 2.2, 3.1, 4.1, 5.1], 1.0": [
                14, 15, 16, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15,
                14, 15, 16, 17, 18, 15, 16, 15, 16, 17, 18, 19],
            "[1.0, 2.0, 5.9, 4.0, 5.0], 0.8": [
                14, 15, 16, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15,
                14, 15, 16, 17, 18, 15, 16, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15,
                14, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 15, 16, 17, 18, 15, 16, 17, 18, 15,
                14, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 15, 16, 17, 18, 15,
                14, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 15, 14, 21],
        }
        for call, want in published.items():
            t = record(src + "has_close_elements(%s)\n" % call)
            self.assertEqual(t.status, "complete")
            self.assertEqual(line_path(t, fn="has_close_elements"), want, call)


if __name__ == "__main__":
    if not os.path.isfile(TRACER):
        print("SKIPPED: no tracer at %s (toolchains/tracers/python/sbtrace.py not in this tree)" % TRACER)
        sys.exit(77)
    if sys.version_info[:2] != (3, 11):
        # the fixtures are CPython 3.11's event sequences: 3.8 reports the generator's StopIteration
        # as an exception event in the for loop and no second line event for a with's exit
        print("SKIPPED: the fixtures are CPython 3.11's sequences, this is %d.%d" % sys.version_info[:2])
        sys.exit(77)
    unittest.main()
