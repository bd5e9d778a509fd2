"""Line-number views of a trace: the executed-line path (CoCoNUT's target: the sequence of line
numbers a run executes, as a tracer's line events give them) and REval's answers.

REval (Chen et al., "Reasoning Runtime Behavior of a Program with LLM: How Far Are We?", ICSE 2025)
asks four questions of one run; as this module answers them, following REval's own tracer
(its `dynamics.py`: `Sandbox.add_state`, `States.get_next_line`, `States.get_coverage`):
- coverage (CCP): is line L executed? `reval_coverage`: the set of executed lines.
- path (EPP): the merged execution path is every `line` event of the file in run order, all frames
  merged into one sequence (a call's lines inline where the call happens), 0-indexed (line - 1),
  an event on the line of the one before it merged into it (REval's add_state updates the last
  state instead of adding one: a loop written on one line is one step of the path), and a frame
  that returns (settrace's `return`: a return, an unwind or a yield) on another line than the
  last state's adds a state for its return line (REval's `States.trace`: after a callee returns,
  the caller's `return g(x)` line is a step again);
  the answer for line L is the set of lines that directly follow an execution of L in that path
  (`reval_next_lines`; -1 stands for "nothing follows": the run ended, and is the whole answer
  for a line that never ran, as get_next_line answers).
- state (PSP): the value and type of each local after line L ran: the frame's locals at its next
  event after that line event (the next line, or its return / unwind / yield). `reval_state`.
- output (OP) is the entry call's return value: `Trace.events` / the views give it.

Coverage differs from REval's in what is traced, not how: REval traces the function under test
(and what it calls in the program's file); these answers cover every frame of the entry file,
module level included (its lines, and its return on the last statement's line), unless `fn`
names one function, whose frames alone are then taken.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from .trace import plain_repr

if TYPE_CHECKING:  # pragma: no cover
    from .trace import Trace


def line_path(t: "Trace", file: int = 0, fn: Optional[str] = None) -> List[int]:
    """The 1-based line numbers of every line event in file `file` (only frames of function `fn`
    if given), in run order."""
    return [e.ln for e in t.events if e.k == "line" and e.f == file and (fn is None or e.fn == fn)]


RETURNS = ("return", "unwind", "yield")  # what sys.settrace reports as a "return" event


def reval_path(t: "Trace", file: int = 0, fn: Optional[str] = None) -> List[int]:
    """REval's merged execution path, 0-indexed: every line event, a line repeated at once kept
    once, and a frame's return on another line than the last state's added as a state."""
    out: List[int] = []
    for e in t.events:
        if e.f != file or (fn is not None and e.fn != fn) or (e.k != "line" and e.k not in RETURNS):
            continue
        if not out or out[-1] != e.ln - 1:
            out.append(e.ln - 1)
    return out


def reval_coverage(t: "Trace", file: int = 0, fn: Optional[str] = None) -> Set[int]:
    """The set of executed lines, 0-indexed."""
    return set(reval_path(t, file, fn))


def reval_next_lines(t: "Trace", line: int, file: int = 0, fn: Optional[str] = None) -> Set[int]:
    """The 0-indexed lines that directly follow 0-indexed `line` in the merged path (-1: the end;
    {-1} for a line that never ran)."""
    path = reval_path(t, file, fn)
    return {(path[k + 1] if k + 1 < len(path) else -1) for k, ln in enumerate(path) if ln == line} or {-1}


def reval_state(t: "Trace", line: int, file: int = 0, nth: int = 0) -> Optional[Dict[str, Tuple[str, str]]]:
    """{name: (type, plain repr)} of the frame that ran 0-indexed `line` after its nth execution
    (counting every frame), or None if it did not run that often or the trace stops first."""
    seen = 0
    for e in t.events:
        if e.k == "line" and e.f == file and e.ln - 1 == line:
            if seen == nth:
                idx = t.frame_events(e.fr)
                p = bisect.bisect_right(idx, e.i) - 1
                if p + 1 >= len(idx):
                    return None
                return {n: (v[0], plain_repr(v[1])) for n, v in t.locals_at(idx[p + 1]).items()}
            seen += 1
    return None
