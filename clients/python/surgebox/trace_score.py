"""Metrics of predicted execution traces against recorded ones: pure functions, no I/O (the command
that reads files and prints the report is `trace_verify`; docs/verify.md "traces" defines each).

A trace, predicted or recorded, is compared as a list of **steps**, each `(action, state)`:
- from a surgebox trace (`steps_of_trace`): one step per event but `handled`; action
  `"k f:ln fn"` (kind, file index, line, function); state the frame's locals as of that event
  (`Trace.locals_at`, values `(type, plain repr)`), plus `<return>` / `<exception>` for a value or
  exception the event carries;
- from CWM's text (`steps_of_cwm`): one step per frame; action `"kind|source line"`; state the
  frame's locals with `..` resolved (cwmdbg's rule: the previous call/line frame's value, none
  across a call or return frame), type None; the return or exception value as `<return>` /
  `<exception>`.

Per-step scores of an aligned pair (pred, ref): action exact; state exact (same names, every value's
plain repr equal); key match (same names); key+value (names with equal plain repr / names in
either); typed value (names whose value is `value_equal` with its type / names in either). A trace's
score for a metric is the sum over aligned pairs divided by max(len(pred), len(ref)) (unpaired
steps score 0), for two alignments: positional (pred[i] with ref[i]) and LCS (the longest common
subsequence of actions; pairs are its matched steps)."""
from __future__ import annotations

import ast
import json
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from .trace import Trace, plain_repr
from .trace_cwm import ACTION_SEP, ARG_SEP, CALL_SEP, END_OF_TEXT, EXCEPTION_SEP, FRAME_SEP, LINE_SEP, RETURN_SEP

Value = Tuple[Optional[str], str]          # (type or None when the format has none, plain repr)
Step = Tuple[str, Dict[str, Value]]

STEP_METRICS = ("action_exact", "state_exact", "key_match", "key_value", "value_typed")
LCS_MAX_CELLS = 4_000_000                  # past this, LCS alignment is not computed (said, never guessed)


# ---- values ------------------------------------------------------------------------------
def _literal(r: str) -> Tuple[bool, Any]:
    try:
        return True, ast.literal_eval(r)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _same_typed(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_typed(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_typed(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b   # nan equals nan here: the repr is the same value
    return a == b


def value_equal(pred: Value, ref: Value) -> bool:
    """Semantic equality with type (REval, ExecVerify): the type names equal when both are given;
    then both reprs read as Python literals (ast.literal_eval: nothing runs) equal with the same
    types all the way down (1 != True != 1.0, {1: 2, 3: 4} == {3: 4, 1: 2}); a repr that is not a
    literal (a user object, `<function f>`) compares as its plain repr's text."""
    if pred[0] is not None and ref[0] is not None and pred[0] != ref[0]:
        return False
    p, r = plain_repr(pred[1]), plain_repr(ref[1])
    okp, vp = _literal(p)
    okr, vr = _literal(r)
    if okp and okr:
        return _same_typed(vp, vr)
    return p == r


# ---- steps -------------------------------------------------------------------------------
def steps_of_trace(t: Trace) -> List[Step]:
    """The steps of a surgebox trace (see the module's docstring)."""
    out: List[Step] = []
    for ev in t.events:
        if ev.k == "handled":
            continue
        state: Dict[str, Value] = {n: (v[0], plain_repr(v[1])) for n, v in t.locals_at(ev.i).items()}
        if ev.val is not None:
            state["<return>"] = (ev.val[0], plain_repr(ev.val[1]))
        if ev.exc is not None:
            state["<exception>"] = (ev.exc.get("ty"), ev.exc.get("msg") or "")
        out.append(("%s %d:%d %s" % (ev.k, ev.f, ev.ln, ev.fn), state))
    return out


_KINDS = ((CALL_SEP, "call"), (LINE_SEP, "line"), (RETURN_SEP, "return"), (EXCEPTION_SEP, "exception"))


def steps_of_cwm(text: str) -> Tuple[List[Step], int]:
    """The steps of a CWM trace text and the number of its frames that are not well formed (each
    still a step: action "malformed", empty state, so it scores 0 where a frame was expected)."""
    body = text.strip()
    if body.endswith(END_OF_TEXT):
        body = body[:-len(END_OF_TEXT)]
    frames = [f for f in body.split(FRAME_SEP) if f.strip()]
    steps: List[Step] = []
    bad = 0
    last: Dict[str, str] = {}
    for fr in frames:
        kind = next((k for sep, k in _KINDS if fr.startswith(sep)), None)
        head, sep, rest = fr.partition(ACTION_SEP)
        if kind is None or not sep:
            bad += 1
            steps.append(("malformed", {}))
            continue
        head = head[len(next(s for s, k in _KINDS if k == kind)):]
        if kind in ("call", "line"):
            try:
                loc = json.loads(head)
                if not isinstance(loc, dict) or not all(isinstance(v, str) for v in loc.values()):
                    raise ValueError
            except ValueError:
                bad += 1
                steps.append(("malformed", {}))
                continue
            now = {n: (last.get(n, "..") if v == ".." else v) for n, v in loc.items()}
            steps.append(("%s|%s" % (kind, rest.strip()), {n: (None, v) for n, v in now.items()}))
            last = now
            continue
        src, sep2, arg = rest.partition(ARG_SEP)
        try:
            val = json.loads(arg) if sep2 else None
            if not isinstance(val, str):
                raise ValueError
        except ValueError:
            bad += 1
            steps.append(("malformed", {}))
            continue
        steps.append(("%s|%s" % (kind, src.strip()), {"<%s>" % kind: (None, val)}))
        last = {}
    return steps, bad


# ---- one pair of steps -------------------------------------------------------------------
def step_scores(pred: Step, ref: Step) -> Dict[str, float]:
    """The five per-step scores of one aligned pair (module docstring)."""
    pa, ps = pred
    ra, rs = ref
    names = set(ps) | set(rs)
    same_text = [n for n in names if n in ps and n in rs and ps[n][1] == rs[n][1]]
    typed = [n for n in names if n in ps and n in rs and value_equal(ps[n], rs[n])]
    return {
        "action_exact": float(pa == ra),
        "state_exact": float(set(ps) == set(rs) and len(same_text) == len(names)),
        "key_match": float(set(ps) == set(rs)),
        "key_value": len(same_text) / len(names) if names else 1.0,
        "value_typed": len(typed) / len(names) if names else 1.0,
    }


# ---- alignments --------------------------------------------------------------------------
def lcs_pairs(a: Sequence[Any], b: Sequence[Any]) -> Optional[List[Tuple[int, int]]]:
    """Index pairs (i, j) of a longest common subsequence of a and b (ties: earliest in a), or None
    when len(a) * len(b) passes LCS_MAX_CELLS."""
    n, m = len(a), len(b)
    if n * m > LCS_MAX_CELLS:
        return None
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def trace_scores(pred: List[Step], ref: List[Step]) -> Dict[str, Optional[Dict[str, float]]]:
    """{"positional": {metric: score}, "lcs": {metric: score} or None (too long to align)}."""
    denom = max(len(pred), len(ref))

    def over(pairs):
        tot = {m: 0.0 for m in STEP_METRICS}
        for i, j in pairs:
            for m, v in step_scores(pred[i], ref[j]).items():
                tot[m] += v
        return {m: (tot[m] / denom if denom else 1.0) for m in STEP_METRICS}

    lcs = lcs_pairs([s[0] for s in pred], [s[0] for s in ref])
    return {"positional": over([(k, k) for k in range(min(len(pred), len(ref)))]),
            "lcs": over(lcs) if lcs is not None else None}


# ---- line paths (CoCoNUT, REval) ---------------------------------------------------------
def path_similarity(pred: Sequence[int], ref: Sequence[int]) -> Optional[float]:
    """2 x LCS / (len(pred) + len(ref)); 1.0 for two empty paths; None when too long to align."""
    if not pred and not ref:
        return 1.0
    pairs = lcs_pairs(pred, ref)
    return None if pairs is None else 2 * len(pairs) / (len(pred) + len(ref))


def coverage_prf(pred: Set[int], ref: Set[int]) -> Dict[str, float]:
    """Precision, recall and F1 of the executed-line sets (an empty set against an empty set: 1)."""
    hit = len(pred & ref)
    p = hit / len(pred) if pred else float(not ref)
    r = hit / len(ref) if ref else float(not pred)
    return {"precision": p, "recall": r, "f1": (2 * p * r / (p + r)) if p + r else 0.0}


def next_lines(path: Sequence[int]) -> Dict[int, Set[int]]:
    """For each line of a path, the set of lines that directly follow it (-1: the run ended)."""
    out: Dict[int, Set[int]] = {}
    for k, ln in enumerate(path):
        out.setdefault(ln, set()).add(path[k + 1] if k + 1 < len(path) else -1)
    return out


def next_line_accuracy(pred: Sequence[int], ref: Sequence[int]) -> float:
    """REval's next-line question over every line the reference executed: the fraction whose set of
    following lines the prediction gets exactly (1.0 for an empty reference path)."""
    r, p = next_lines(ref), next_lines(pred)
    return sum(p.get(ln) == nxt for ln, nxt in r.items()) / len(r) if r else 1.0


def path_scores(pred: Sequence[int], ref: Sequence[int]) -> Dict[str, Optional[float]]:
    """path_exact, path_similarity, coverage P/R/F1 and next_line of two line paths."""
    cov = coverage_prf(set(pred), set(ref))
    return {"path_exact": float(list(pred) == list(ref)), "path_similarity": path_similarity(pred, ref),
            "coverage_precision": cov["precision"], "coverage_recall": cov["recall"], "coverage_f1": cov["f1"],
            "next_line": next_line_accuracy(pred, ref)}

