#!/usr/bin/env python3
"""Self-check of `surgebox eval` on the shipped SURGE data (ctest label surge-data).

SURGE's own code is not available to run, so this cannot diff against it.
Instead every reference is scored against itself, wrapped like a model answer
("Output:\\n```\\n<gt>\\n```"), through the CLI over all eight files. Almost
every item must score 1; the exceptions below were computed independently in
Python from SURGE's published scoring rules and are written here literally:

- RL 23-32 (sudoku) and 47-59 (PlotNeuralNet): the references start or end
  with whitespace that extraction strips, so the difflib ratio is just below 1.
- DR 98 and 133: the references contain runs of '*' ("int*****..."), which
  extraction removes as **bold** spans, so the Jaccard is below 1.
- FL, as published, parses the *raw* prediction as JSON: the wrapped answer
  scores 0 on all 150 items. The bare reference (model "fl_raw") and the
  wrapped one under --fl-extract score 1 except on 10 items where two
  reference errors share a line: SURGE compares each with the *first*
  predicted error on that line.

Usage: crosscheck.py EVAL_CLI [DATA_DIR]   (env SURGE_DATA overrides DATA_DIR)
Exit 77 with "SKIPPED: <why>" when the data is absent."""
import json
import os
import subprocess
import sys
import tempfile

SUBSETS = ["ml", "cl", "rl", "sc", "tc", "bg", "dr", "fl"]
SIZES = {"ml": 150, "cl": 150, "rl": 60, "sc": 150, "tc": 150, "bg": 150, "dr": 200, "fl": 150}
_SUDOKU = 0.9973474801061007
NON_ONE = {  # subset -> {index: expected score} for the wrapped references
    "rl": {23: _SUDOKU, 24: _SUDOKU, 25: _SUDOKU, 26: _SUDOKU, 27: _SUDOKU, 28: _SUDOKU, 29: _SUDOKU,
           30: _SUDOKU, 31: _SUDOKU, 32: _SUDOKU,
           47: 0.9995847176079734, 48: 0.9995529727313366, 49: 0.9996629592180654, 50: 0.9996272828922848,
           51: 0.9996539792387543, 52: 0.9995393827729157, 53: 0.9996538594669436, 54: 0.9996061441512406,
           55: 0.99967958987504, 56: 0.9997058823529412, 57: 0.9996934396076027, 58: 0.9997120644975526,
           59: 0.9997440491425647},
    "dr": {98: 0.9459459459459459, 133: 0.8679245283018868},
}
FL_SAME_LINE = {34: 0.8434959349593496, 35: 0.5961538461538461, 46: 0.8333333333333334, 59: 0.8405797101449276,
                76: 0.8303174603174603, 77: 0.5, 84: 0.9333333333333332, 86: 0.875, 122: 0.9429347826086957,
                135: 0.982846902201741}
TABLE = {  # model "self": the paper-shaped columns (mean x 100)
    "RL": 99.94815187436036, "DR": 99.90693523712392,
    "ML_CPP": 100.0, "ML_Rust": 100.0, "ML_Python": 100.0, "ML_Julia": 100.0, "ML_Java": 100.0, "ML_Others": 100.0,
    "CL": 100.0, "SC": 100.0, "TC": 100.0, "BG_CPP": 100.0, "BG_Java": 100.0, "BG_Python": 100.0,
}
FL_TABLE = {False: 0.0, True: 98.78533020203514}
AVG = {False: 99.98964907939173, True: 99.90936115423462}
EPS = 1e-9

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(cli, data, preds, items, fl_extract):
    cmd = [cli, "--data", data, "--predictions", preds, "--items", items, "--json"]
    if fl_extract:
        cmd.append("--fl-extract")
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    check("not scored" not in p.stderr and "eval: model self: " not in p.stderr,
          "every prediction matched and every item of model self scored: " + p.stderr[-2000:])
    scores = {}
    with open(items) as f:
        for line in f:
            o = json.loads(line)
            scores[(o["model"], o["subset"], o["index"])] = o["score"]
    return json.loads(p.stdout), scores


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cli = sys.argv[1]
    data = os.environ.get("SURGE_DATA") or (sys.argv[2] if len(sys.argv) > 2 else "")
    missing = [s for s in SUBSETS if not os.path.isfile(os.path.join(data, s + ".json"))]
    if not data or missing:
        print(f"SKIPPED: SURGE data not found in '{data}' (missing {', '.join(missing) or 'directory'});"
              " set SURGE_DATA")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        preds = os.path.join(tmp, "preds.jsonl")
        with open(preds, "w") as f:
            for s in SUBSETS:
                with open(os.path.join(data, s + ".json")) as df:
                    ref = json.load(df)
                check(len(ref) == SIZES[s], f"{s}: {len(ref)} items, expected {SIZES[s]}")
                for i, item in enumerate(ref):
                    wrapped = "Output:\n```\n" + item["gt"] + "\n```"
                    f.write(json.dumps({"subset": s, "index": i, "model": "self", "prediction": wrapped}) + "\n")
                    if s == "fl":
                        f.write(json.dumps({"subset": s, "index": i, "model": "fl_raw", "prediction": item["gt"]}) + "\n")
        for fl_extract in (False, True):
            agg, scores = run(cli, data, preds, os.path.join(tmp, "items.jsonl"), fl_extract)
            tag = "--fl-extract" if fl_extract else "published"
            for s in SUBSETS:
                got = {i: scores.get(("self", s, i)) for i in range(SIZES[s])}
                check(all(v is not None for v in got.values()), f"{s}: every item scored")
                if s == "fl":
                    want = FL_SAME_LINE if fl_extract else {i: 0.0 for i in range(SIZES[s])}
                else:
                    want = NON_ONE.get(s, {})
                non_one = sorted(i for i, v in got.items() if v is not None and v != 1.0)
                check(non_one == sorted(want), f"{s} ({tag}): items not scoring 1: {non_one}, expected {sorted(want)}")
                for i, w in want.items():
                    check(got[i] is not None and abs(got[i] - w) <= EPS, f"{s}[{i}] ({tag}): {got[i]} != {w}")
                print(f"{s} ({tag}): {SIZES[s]} items, {len(non_one)} below 1")
            raw = {i: scores.get(("fl_raw", "fl", i)) for i in range(SIZES["fl"])}
            check(sorted(i for i, v in raw.items() if v != 1.0) == sorted(FL_SAME_LINE), "fl_raw: items below 1")
            for i, w in FL_SAME_LINE.items():
                check(raw[i] is not None and abs(raw[i] - w) <= EPS, f"fl_raw[{i}]: {raw[i]} != {w}")
            self_row = next(m for m in agg["models"] if m["model"] == "self")
            for col, w in TABLE.items():
                check(abs(self_row["scores"][col] - w) <= EPS, f"self {col} ({tag}): {self_row['scores'][col]} != {w}")
            check(abs(self_row["scores"]["FL"] - FL_TABLE[fl_extract]) <= EPS, f"self FL ({tag})")
            check(abs(self_row["avg"] - AVG[fl_extract]) <= EPS, f"self avg ({tag}): {self_row['avg']}")
            check(all(v == 0 for k, v in self_row["flags"].items() if k != "parse_failure"), f"flags: {self_row['flags']}")
            check(self_row["flags"]["parse_failure"] == (0 if fl_extract else 150), "FL parse failures")
    print(f"{0 if failures else 1} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
