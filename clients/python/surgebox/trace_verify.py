"""`python3 -m surgebox.trace_verify --references DIR --predictions P [--out REPORT.json]` and
`... --references DIR --gold-out ANSWERS.jsonl`: predicted traces or per-question answers scored
against the traces `surgebox trace-dataset` recorded in DIR (its index.jsonl and traces/), for
`surgebox verify --benchmark traces`, which runs this module (one implementation, the client's).

Prediction lines (JSON Lines, docs/verify.md "traces"):
  {"id": ITEM, "trace": "<a surgebox trace, JSON Lines text>"}
  {"id": ITEM, "cwm": "<CWM trace text>"}
  {"id": ITEM, "q": QUESTION, "answer": ANSWER}            (trace_questions)
Every line is accounted for: blank lines are skipped and counted, everything else is a prediction
or counted as bad (not JSON, not an object, no id, an id not in DIR, a second trace for an item, a
bad question, a question the recording cannot answer, no trace/cwm/q field). A reference item with
no prediction is "missing": it scores 0 on the trace metrics. References whose trace is not
complete (truncated, tampered, crashed, or no trace) are not scored, and counted.

Output: the report as JSON (--out, else none) and one line per figure on standard output.
Exit status: 0 scored, 1 usage, 2 DIR cannot be read (said on stderr)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import trace_questions as tq
from .trace import Trace
from .trace_cwm import to_cwm
from .trace_lines import line_path
from .trace_score import STEP_METRICS, path_scores, steps_of_cwm, steps_of_trace, trace_scores

PATH_METRICS = ("path_exact", "path_similarity", "coverage_precision", "coverage_recall", "coverage_f1", "next_line")


class References:
    """DIR/index.jsonl and the traces it names, parsed on first use."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.items: Dict[str, Dict[str, Any]] = {}
        self.order: List[str] = []
        path = os.path.join(root, "index.jsonl")
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                rec = json.loads(line)
                if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
                    raise ValueError("%s line %d: not an index record {\"id\", ...}" % (path, n))
                self.items[rec["id"]] = rec
                self.order.append(rec["id"])
        self._traces: Dict[str, Trace] = {}

    def complete(self, item: str) -> bool:
        return self.items[item].get("trace_status") == "complete"

    def trace(self, item: str) -> Trace:
        if item not in self._traces:
            self._traces[item] = Trace.load(os.path.join(self.root, self.items[item]["trace"]))
        return self._traces[item]

    def sources(self, item: str) -> Dict[str, str]:
        return {"/app/" + f["path"]: f["content"] for f in self.items[item].get("files") or []}


def _mean(xs: List[Optional[float]]) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


class Tally:
    """The predictions file read line by line, each line counted once."""

    BAD = ("not_json", "not_object", "no_id", "unknown_id", "duplicate_trace", "no_prediction_field",
           "bad_question", "unanswerable_question", "reference_not_complete")

    def __init__(self) -> None:
        self.lines = self.blank = 0
        self.bad = {k: 0 for k in self.BAD}
        self.first_bad: Dict[str, str] = {}
        self.traces: Dict[str, Tuple[str, str]] = {}        # item -> ("trace"|"cwm", text)
        self.answers: List[Tuple[str, str, Any]] = []       # (item, q, answer)

    def count_bad(self, why: str, where: str) -> None:
        self.bad[why] += 1
        self.first_bad.setdefault(why, where)


def read_predictions(path: str, refs: References) -> Tally:
    tally = Tally()
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            tally.lines += 1
            where = "line %d" % n
            if not raw.strip():
                tally.blank += 1
                continue
            try:
                rec = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                tally.count_bad("not_json", where)
                continue
            if not isinstance(rec, dict):
                tally.count_bad("not_object", where)
                continue
            item = rec.get("id")
            if not isinstance(item, str):
                tally.count_bad("no_id", where)
                continue
            where += " (%s)" % item
            if item not in refs.items:
                tally.count_bad("unknown_id", where)
                continue
            if not refs.complete(item):
                tally.count_bad("reference_not_complete", where)
                continue
            kind = next((k for k in ("trace", "cwm") if isinstance(rec.get(k), str)), None)
            if kind:
                if item in tally.traces:
                    tally.count_bad("duplicate_trace", where)
                else:
                    tally.traces[item] = (kind, rec[kind])
            elif "q" in rec and "answer" in rec:
                try:
                    tq.parse_question(rec["q"])
                except tq.BadQuestion:
                    tally.count_bad("bad_question", where)
                    continue
                tally.answers.append((item, rec["q"], rec["answer"]))
            else:
                tally.count_bad("no_prediction_field", where)
    return tally


def score_traces(refs: References, tally: Tally, scored: List[str]) -> Dict[str, Any]:
    """The trace metrics over every scored reference item (a missing prediction scores 0)."""
    per: Dict[str, Dict[str, Any]] = {}
    valid = []
    lcs_skipped = 0
    for item in scored:
        if item not in tally.traces:
            per[item] = {"missing": True}
            continue
        kind, text = tally.traces[item]
        ref_t = refs.trace(item)
        if kind == "trace":
            try:
                pred_t = Trace.parse(text)
                ok = not pred_t.problems
                pred_steps = steps_of_trace(pred_t)
                pred_path: Optional[List[int]] = line_path(pred_t)
            except ValueError:
                ok, pred_steps, pred_path = False, [], []
            ref_steps = steps_of_trace(ref_t)
        else:
            pred_steps, bad = steps_of_cwm(text)
            ok, pred_path = bad == 0 and bool(pred_steps), None
            ref_steps, _ = steps_of_cwm(to_cwm(ref_t, refs.sources(item)))
        valid.append(float(ok))
        s: Dict[str, Any] = {"format": kind, "format_valid": ok}
        s.update(trace_scores(pred_steps, ref_steps))
        if s["lcs"] is None:
            lcs_skipped += 1
        if pred_path is not None:
            s["paths"] = path_scores(pred_path, line_path(ref_t))
            if s["paths"]["path_similarity"] is None:
                lcs_skipped += 1
        per[item] = s
    out: Dict[str, Any] = {"items": len(scored), "predicted": len(scored) - sum("missing" in v for v in per.values()),
                           "format_valid": _mean(valid), "lcs_skipped": lcs_skipped}
    for align in ("positional", "lcs"):
        out[align] = {m: _mean([0.0 if "missing" in v else (v[align] or {}).get(m) for v in per.values()])
                      for m in STEP_METRICS}
    ours = [v for v in per.values() if "missing" in v or "paths" in v]
    if any("paths" in v for v in per.values()):
        out["paths"] = {m: _mean([0.0 if "missing" in v else v["paths"][m] for v in ours]) for m in PATH_METRICS}
    out["per_item"] = per
    return out


def score_answers(refs: References, tally: Tally) -> Dict[str, Any]:
    """Each answered question scored; the mean of each metric over the questions that have it."""
    sums: Dict[str, List[Optional[float]]] = {}
    by_kind: Dict[str, int] = {}
    seen = set()
    for item, q, pred in tally.answers:
        if (item, q) in seen:
            tally.count_bad("duplicate_trace", "%s %s (an answer given twice)" % (item, q))
            continue
        seen.add((item, q))
        try:
            ref = tq.answer(refs.trace(item), q)
        except tq.BadQuestion as e:
            tally.count_bad("unanswerable_question", "%s: %s" % (item, e))
            continue
        kind = q.split(":")[0]
        by_kind[kind] = by_kind.get(kind, 0) + 1
        for m, v in tq.score_answer(q, pred, ref).items():
            sums.setdefault(m, []).append(v)
    return {"answered": sum(by_kind.values()), "by_question": by_kind,
            "metrics": {m: _mean(v) for m, v in sorted(sums.items())}}


def verify(refs: References, tally: Tally) -> Dict[str, Any]:
    scored = [i for i in refs.order if refs.complete(i)]
    not_complete: Dict[str, int] = {}
    for i in refs.order:
        if not refs.complete(i):
            st = refs.items[i].get("trace_status") or "no trace"
            not_complete[st] = not_complete.get(st, 0) + 1
    answered_items = {a[0] for a in tally.answers}
    report: Dict[str, Any] = {
        "references": len(refs.order), "scored_references": len(scored), "references_not_complete": not_complete,
        "prediction_lines": tally.lines, "blank_lines": tally.blank,
        "json_valid": _mean([0.0] * tally.bad["not_json"] + [1.0] * (tally.lines - tally.blank - tally.bad["not_json"])),
    }
    if tally.traces or not tally.answers:
        report["traces"] = score_traces(refs, tally, scored)
    if tally.answers:
        report["questions"] = score_answers(refs, tally)
    predicted = set(tally.traces) | answered_items
    report["missing"] = [i for i in scored if i not in predicted]
    report["bad_predictions"] = {k: v for k, v in tally.bad.items() if v}
    report["first_bad"] = tally.first_bad
    return report


def _fmt(v: Optional[float]) -> str:
    return "n/a" if v is None else "%.4f" % v


def summary_lines(r: Dict[str, Any]) -> List[str]:
    out = ["references: %d, scored %d%s" % (r["references"], r["scored_references"],
                                             "".join(", %d %s (not scored)" % (n, st) for st, n in
                                                     sorted(r["references_not_complete"].items())))]
    out.append("prediction lines: %d (%d blank), json_valid %s" % (r["prediction_lines"], r["blank_lines"],
                                                                   _fmt(r["json_valid"])))
    t = r.get("traces")
    if t:
        out.append("traces: %d predicted of %d, format_valid %s" % (t["predicted"], t["items"], _fmt(t["format_valid"])))
        for align in ("positional", "lcs"):
            out.append("  %-10s " % align + " ".join("%s %s" % (m, _fmt(t[align][m])) for m in STEP_METRICS))
        if "paths" in t:
            out.append("  paths      " + " ".join("%s %s" % (m, _fmt(t["paths"][m])) for m in PATH_METRICS))
        if t["lcs_skipped"]:
            out.append("  LCS not computed for %d items (longer than %d cells): their LCS scores are left out"
                       % (t["lcs_skipped"], 4_000_000))
    q = r.get("questions")
    if q:
        out.append("questions: %d answered (%s)" % (q["answered"], ", ".join("%s %d" % kv for kv in sorted(q["by_question"].items()))))
        out.append("  " + " ".join("%s %s" % (m, _fmt(v)) for m, v in q["metrics"].items()))
    if r["missing"]:
        out.append("missing: %d items have no prediction (first: %s)" % (len(r["missing"]), r["missing"][0]))
    for k, v in r["bad_predictions"].items():
        out.append("bad predictions: %d %s (first: %s)" % (v, k, r["first_bad"][k]))
    return out


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m surgebox.trace_verify")
    ap.add_argument("--references", required=True)
    ap.add_argument("--predictions")
    ap.add_argument("--out")
    ap.add_argument("--gold-out")
    a = ap.parse_args(argv)
    try:
        refs = References(a.references)
    except (OSError, ValueError) as e:
        print("verify: cannot read the references %s: %s (the --out of surgebox trace-dataset)" % (a.references, e),
              file=sys.stderr)
        return 2
    if a.gold_out:
        with open(a.gold_out, "w", encoding="utf-8") as f:
            for item in refs.order:
                if refs.complete(item):
                    for q, ans in tq.gold(refs.trace(item)):
                        f.write(json.dumps({"id": item, "q": q, "answer": ans}) + "\n")
        return 0
    if not a.predictions:
        print("verify: --predictions FILE is required (or --gold-out FILE)", file=sys.stderr)
        return 1
    try:
        tally = read_predictions(a.predictions, refs)
        report = verify(refs, tally)
    except OSError as e:
        print("verify: cannot read %s: %s" % (a.predictions, e), file=sys.stderr)
        return 2
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.out)
    sys.stdout.write("".join(line + "\n" for line in summary_lines(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
