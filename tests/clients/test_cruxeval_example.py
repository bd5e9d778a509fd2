#!/usr/bin/env python3
"""clients/python/examples/cruxeval.py on self-made samples and generations,
with the verdicts and pass@k written by hand from ../shared/cruxeval/SCORING.md.
ctest runs it inside the unshare wrapper (the generations run in sandboxes)."""
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

from pyclient_env import SRC, Daemon

EXAMPLE = os.path.join(SRC, "clients", "python", "examples", "cruxeval.py")
spec = importlib.util.spec_from_file_location("cruxeval_example", EXAMPLE)
crux = importlib.util.module_from_spec(spec)
spec.loader.exec_module(crux)

SAMPLES = [
    {"code": "def f(x):\n    return x + 1", "input": "1", "output": "2", "id": "sample_0"},
    {"code": "def f(a):\n    return [a]", "input": "1", "output": "[1]", "id": "sample_1"},
    {"code": "def f(s):\n    print('noise')\n    return s.upper()", "input": "'ab'", "output": "'AB'", "id": "sample_2"},
    {"code": "def f(n):\n    while True:\n        pass", "input": "0", "output": "0", "id": "sample_3"},
    {"code": "def f(x):\n    return x", "input": "1", "output": "1", "id": "sample_4"},
]

# keys deliberately not in sample order: raw_generations must come back unchanged
OUTPUT_GENS = {
    "sample_4": ["True"],                                   # assert 1 == True passes
    "sample_0": ["2", "3", "2 +", "f(1)", "True and 2"],    # right, wrong, malformed, dropped, `(2 == True) and 2`
    "sample_1": ["(1,)", "[1]"],                            # [1] == (1,) fails
    "sample_2": ["'AB'", "\"AB\"", "f('ab')"],              # quotes do not matter; f(<input>) dropped
    "sample_3": ["f(0)", "0 if f(1) else 0"],               # dropped; calls f(1): times out
}
OUTPUT_SCORED = {
    "sample_0": [True, False, False, False],
    "sample_1": [False, True],
    "sample_2": [True, True],
    "sample_3": [False, False],  # nothing passed: [False] * n, n counting the dropped one
    "sample_4": [True],
}
# pass@1 per sample: 1 - (1 - 1/4); 1 - (1 - 1/2); 1; 0; 1.  pass@5: n - c < 5 everywhere but sample_3,
# where c = 0 and n = 2 < 5 too: 1.0 (upstream's quirk for n < k).
OUTPUT_P1 = ((((0.0 + (1 - (1 - 1 / 4))) + (1 - (1 - 1 / 2))) + 1.0) + 0.0 + 1.0) / 5 * 100
OUTPUT_P5 = 100.0

INPUT_GENS = {
    "sample_0": ["f(1)", "2", "f(1", "f(2)"],  # right, dropped (no "f("), malformed, wrong
    "sample_1": ["f(1)"],
    "sample_2": ["f('ab')", "'AB'"],           # the second has no "f(": dropped
    "sample_3": ["f(0)"],                      # times out
    "sample_4": ["f(True)"],                   # 1 == True
}
INPUT_SCORED = {
    "sample_0": [True, False, False],
    "sample_1": [True],
    "sample_2": [True],
    "sample_3": [False],
    "sample_4": [True],
}
INPUT_P1 = ((((0.0 + (1 - (1 - 1 / 3))) + 1.0) + 1.0) + 0.0 + 1.0) / 5 * 100
INPUT_P5 = 100.0


class PassAtKTest(unittest.TestCase):
    """No daemon: the formula by hand and against numpy's np.prod (upstream's
    pass_at_k); the mean as upstream's sum(xs) / len(xs) * 100."""

    def test_by_hand(self):
        self.assertEqual(crux.pass_at_k(10, 0, 1), 0.0)
        self.assertEqual(crux.pass_at_k(10, 10, 5), 1.0)
        self.assertEqual(crux.pass_at_k(4, 0, 5), 1.0)  # n < k
        self.assertEqual(crux.pass_at_k(10, 3, 1), 1 - (1 - 1 / 8) * (1 - 1 / 9) * (1 - 1 / 10))
        self.assertEqual(crux.pass_at_k(10, 2, 5), 1 - (1 - 5 / 9) * (1 - 5 / 10))
        self.assertEqual(crux.pass_at_k(0, 0, 1), 1.0)

    def test_numpy_bit_exact(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy absent from this interpreter")
        rng = random.Random(12)
        for _ in range(300):
            n = rng.choice([1, 5, 7, 8, 9, 100, 128, 129, 800, 801, 1000])
            vals = []
            for _ in range(n):
                gn = rng.randint(1, 12)
                gc = rng.randint(0, gn)
                k = rng.choice([1, 5])
                want = 1.0 if gn - gc < k else 1.0 - np.prod(1.0 - k / np.arange(gn - gc + 1, gn + 1))
                got = crux.pass_at_k(gn, gc, k)
                self.assertEqual(got, float(want), (gn, gc, k))
                vals.append(got)
            total = 0.0
            for v in vals:  # left to right, as Python's sum() in upstream's evaluate_generations
                total += v
            self.assertEqual(crux.mean_times_100(vals), total / len(vals) * 100, n)


class GenerationsCheckTest(unittest.TestCase):
    def run_example(self, gens, *extra):
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "data.jsonl")
            with open(data, "w") as f:
                f.write("\n".join(json.dumps(s) for s in SAMPLES))
            g = os.path.join(d, "g.json")
            with open(g, "w") as f:
                f.write(gens if isinstance(gens, str) else json.dumps(gens))
            # a socket nobody listens on: refusals must come before any connection
            p = subprocess.run([sys.executable, EXAMPLE, "--mode", "output", "--generations", g, "--data", data,
                                "--socket", os.path.join(d, "none.sock")] + list(extra),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            return p.returncode, p.stderr

    def test_refused_before_running(self):
        bad = [("[]", "JSON object"), ({k: v for k, v in OUTPUT_GENS.items() if k != "sample_3"}, "sample_3"),
               (dict(OUTPUT_GENS, sample_9=["1"]), "unknown sample id(s): sample_9"),
               (dict(OUTPUT_GENS, sample_1="1"), "sample_1: generations must be a list"),
               (dict(OUTPUT_GENS, sample_1=["1", 2]), "sample_1[1]"), ("{", "")]
        for gens, why in bad:
            code, err = self.run_example(gens)
            self.assertEqual(code, 1, err)
            self.assertIn(why, err)
        # a good file gets as far as connecting (and fails there: exit 2)
        code, err = self.run_example(OUTPUT_GENS)
        self.assertEqual(code, 2, err)


class EndToEndTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon("--jobs", "2")
        cls.tmp = tempfile.mkdtemp()
        cls.data = os.path.join(cls.tmp, "data.jsonl")
        with open(cls.data, "w") as f:
            f.write("\n".join(json.dumps(s) for s in SAMPLES))  # no final newline, as upstream's file

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def scored(self, mode, gens):
        g = os.path.join(self.tmp, mode + ".json")
        out = os.path.join(self.tmp, mode + ".scored.json")
        with open(g, "w") as f:
            json.dump(gens, f)
        p = subprocess.run([sys.executable, EXAMPLE, "--mode", mode, "--generations", g, "--data", self.data,
                            "--socket", self.d.sock, "--out", out, "--concurrency", "4"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return json.load(f), p.stdout

    def check(self, mode, gens, scored, p1, p5):
        res, stdout = self.scored(mode, gens)
        # every sample has fewer than 5 generations: upstream's pass@5, and beside it that it means
        # nothing (issue 36), as `surgebox verify` writes it
        self.assertEqual(list(res), ["raw_generations", "raw_scored_generations", "pass_at_1", "pass_at_5",
                                     "pass_at_k_note"])
        note = ("pass@5 is not meaningful: %d of %d samples have fewer than 5 generations, which CRUXEval's "
                "formula counts as passing (1.0)" % (len(SAMPLES), len(SAMPLES)))
        self.assertEqual(res["pass_at_k_note"], note)
        self.assertEqual(res["raw_generations"], gens)
        self.assertEqual(list(res["raw_generations"]), list(gens))
        self.assertEqual(list(res["raw_scored_generations"]), [s["id"] for s in SAMPLES])
        self.assertEqual(res["raw_scored_generations"], scored)
        self.assertEqual(res["pass_at_1"], p1)
        self.assertEqual(res["pass_at_5"], p5)
        self.assertEqual(stdout, "pass@1: %.1f\npass@5: %.1f (%s)\n" % (p1, p5, note))

    def test_output_mode(self):
        self.check("output", OUTPUT_GENS, OUTPUT_SCORED, OUTPUT_P1, OUTPUT_P5)

    def test_input_mode(self):
        self.check("input", INPUT_GENS, INPUT_SCORED, INPUT_P1, INPUT_P5)


if __name__ == "__main__":
    unittest.main(verbosity=2)
