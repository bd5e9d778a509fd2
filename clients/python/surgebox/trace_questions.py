"""Per-question answers about a recorded trace: the questions, their answers from the recording
(`gold`), and the score of a predicted answer (`score_answer`). Pure functions; docs/verify.md
"traces" defines the format. Lines are 1-based lines of the entry file (file 0) everywhere.

Questions (the `q` of an answer line):
- `coverage`: the executed lines, a list (scored: coverage precision / recall / F1);
- `path`: every executed line in run order, all frames merged (path exact, path similarity);
- `next_lines:L`: the lines that directly follow an execution of line L in that path, -1 for the
  end of the run, a list (exact as a set: REval's next-line question);
- `state:L` or `state:L:N`: the locals of the frame that ran line L, just after its Nth execution
  (N from 0, counting every frame), {name: repr} or {name: [type, repr]} (state exact, and the
  share of names whose value is `trace_score.value_equal`: typed when a type is given);
- `step_into:E`, `step_over:E`, `step_out:E`, `back_step_into:E`, `back_step_over:E`,
  `back_step_out:E` (E an event index of the recorded trace, `i`): where the debugger stops
  (trace_views), as `{"ln": line or null, "locals": {name: repr}}` (locals optional) or just the
  line (an integer, or null: it stops nowhere, the run ends first); scored: the line, and the
  locals' state exact when given."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from . import trace_views
from .trace import Trace, plain_repr
from .trace_lines import line_path, reval_state
from .trace_score import coverage_prf, next_lines, path_similarity, value_equal

STEPS = ("step_into", "step_over", "step_out", "back_step_into", "back_step_over", "back_step_out")
KINDS = ("coverage", "path", "next_lines", "state") + STEPS
GOLD_STEP_EVENTS = 20      # gold() asks the debugger questions at the first 20 line events of file 0


class BadQuestion(ValueError):
    """A question that is not one of KINDS, or whose parameters the recording does not have."""


def parse_question(q: Any) -> Tuple[str, List[int]]:
    """("kind", [integer parameters]); BadQuestion when it is not a question."""
    if not isinstance(q, str):
        raise BadQuestion("q is not a string")
    kind, *params = q.split(":")
    want = {"coverage": (0,), "path": (0,), "next_lines": (1,), "state": (1, 2)}.get(kind, (1,) if kind in STEPS else None)
    if want is None:
        raise BadQuestion("unknown question %r" % kind)
    if len(params) not in want:
        raise BadQuestion("%s takes %s parameter(s)" % (kind, " or ".join(map(str, want))))
    try:
        nums = [int(p) for p in params]
    except ValueError:
        raise BadQuestion("%r: parameters are integers" % q)
    if any(n < 0 for n in nums):
        raise BadQuestion("%r: parameters are >= 0" % q)
    return kind, nums


def answer(t: Trace, q: str) -> Any:
    """The recording's answer to question q (BadQuestion when it does not have what q names)."""
    kind, p = parse_question(q)
    path = line_path(t)
    if kind == "coverage":
        return sorted(set(path))
    if kind == "path":
        return path
    if kind == "next_lines":
        if p[0] not in path:
            raise BadQuestion("%s: line %d never ran" % (q, p[0]))
        return sorted(next_lines(path)[p[0]])
    if kind == "state":
        st = reval_state(t, p[0] - 1, 0, p[1] if len(p) > 1 else 0)
        if st is None:
            raise BadQuestion("%s: line %d did not run that often (or the trace stops first)" % (q, p[0]))
        return {n: [v[0], v[1]] for n, v in st.items()}
    if p[0] >= len(t.events):
        raise BadQuestion("%s: the trace has %d events" % (q, len(t.events)))
    j = getattr(trace_views, kind)(t, p[0])
    if j is None:
        return {"ln": None, "locals": {}}
    return {"ln": t.events[j].ln, "locals": {n: plain_repr(v[1]) for n, v in t.locals_at(j).items()}}


def gold(t: Trace) -> List[Tuple[str, Any]]:
    """A default question set with the recording's answers: coverage, path, next_lines and state
    (first execution) of every executed line, and every debugger step at the first
    GOLD_STEP_EVENTS line events of file 0."""
    path = line_path(t)
    qs = ["coverage", "path"] + ["next_lines:%d" % ln for ln in sorted(set(path))]
    qs += ["state:%d" % ln for ln in sorted(set(path)) if reval_state(t, ln - 1) is not None]
    lines = [e.i for e in t.events if e.k == "line" and e.f == 0][:GOLD_STEP_EVENTS]
    qs += ["%s:%d" % (s, i) for i in lines for s in STEPS]
    return [(q, answer(t, q)) for q in qs]


def _value(v: Any) -> Optional[Tuple[Optional[str], str]]:
    if isinstance(v, str):
        return (None, v)
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v):
        return (v[0], v[1])
    return None


def _state_scores(pred: Any, ref: Dict[str, Any]) -> Dict[str, float]:
    if not isinstance(pred, dict):
        return {"state_exact": 0.0, "value_typed": 0.0}
    refv = {n: _value(v) for n, v in ref.items()}
    predv = {n: _value(v) for n, v in pred.items()}
    names = set(refv) | set(predv)
    same = [n for n in names if predv.get(n) and refv.get(n) and plain_repr(predv[n][1]) == plain_repr(refv[n][1])]
    typed = [n for n in names if predv.get(n) and refv.get(n) and value_equal(predv[n], refv[n])]
    return {"state_exact": float(set(predv) == set(refv) and len(same) == len(names)),
            "value_typed": len(typed) / len(names) if names else 1.0}


def score_answer(q: str, pred: Any, ref: Any) -> Dict[str, Optional[float]]:
    """The scores of one predicted answer against the recording's (answer(t, q)); a prediction of
    the wrong shape scores 0 on every metric of its question."""
    kind, _ = parse_question(q)
    if kind == "coverage":
        ok = isinstance(pred, list) and all(isinstance(x, int) for x in pred)
        c = coverage_prf(set(pred) if ok else set(), set(ref))
        return {"coverage_precision": c["precision"] if ok else 0.0, "coverage_recall": c["recall"] if ok else 0.0,
                "coverage_f1": c["f1"] if ok else 0.0}
    if kind == "path":
        ok = isinstance(pred, list) and all(isinstance(x, int) for x in pred)
        return {"path_exact": float(ok and pred == ref), "path_similarity": path_similarity(pred, ref) if ok else 0.0}
    if kind == "next_lines":
        ok = isinstance(pred, list) and all(isinstance(x, int) for x in pred)
        return {"next_line": float(ok and set(pred) == set(ref))}
    if kind == "state":
        return _state_scores(pred, ref)
    if not isinstance(pred, dict):
        pred = {"ln": pred} if pred is None or isinstance(pred, int) else {}
    out: Dict[str, Optional[float]] = {"debugger_line": float("ln" in pred and pred["ln"] == ref["ln"])}
    if "locals" in pred:
        out["debugger_state"] = _state_scores(pred["locals"], ref["locals"])["state_exact"]
    return out
