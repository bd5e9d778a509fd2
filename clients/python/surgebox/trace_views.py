"""Debugger views on a recorded trace: from any event index, where would a debugger stop next
(or, backwards, where did it stop before)? Each returns an event index, or None when the trace
has no such event (it ended, or was cut). Pure functions of a `Trace`.

Definitions (F = the frame of event i, D = event i's depth `d`):
- step_into(i): the next event that is a `line`, `call` or `resume` (any frame).
- step_over(i): the next `line` event of F. A `yield` does not end it (bdb's `next` in a generator):
  once F is resumed, its next line. If no line of F follows (F returns or unwinds, or is never
  resumed, or resumed only to be closed), the first `line` event at a depth < D after the first
  yield passed, else after F's return or unwind: the caller's next line (for an exception, the
  line of the handler that caught it in a caller; for a yield, the consumer's next line). Calls
  made meanwhile (other frames) are stepped over.
- step_out(i): the first event of any kind at a depth < D after F's next return, unwind or yield
  (i itself if it is one): the caller's next event.
- continue_to(i, line, file=0, cond=None): the next `line` event at that line whose frame's state
  (the locals before the line runs) satisfies cond.
- back_* mirror these: back_step_into = the previous line/call/resume event; back_step_over = the
  previous `line` event of F (across a resume, to the line before the yield), or if F's call (at c)
  comes first, the last `line` event before c at a depth < D (the caller's line that called F);
  back_step_out = the last event before F's latest call or resume at a depth < D;
  back_continue_to = the previous matching line event.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from .trace import plain_repr

if TYPE_CHECKING:  # pragma: no cover
    from .trace import Trace

_INTO = ("line", "call", "resume")


def step_into(t: "Trace", i: int) -> Optional[int]:
    """The next line, call or resume event (any frame): see the module's definitions."""
    for j in range(i + 1, len(t.events)):
        if t.events[j].k in _INTO:
            return j
    return None


def back_step_into(t: "Trace", i: int) -> Optional[int]:
    """The previous line, call or resume event: see the module's definitions."""
    for j in range(i - 1, -1, -1):
        if t.events[j].k in _INTO:
            return j
    return None


def step_over(t: "Trace", i: int) -> Optional[int]:
    """The next line of event i's frame, calls stepped over: see the module's definitions."""
    ev = t.events[i]
    idx = t.frame_events(ev.fr)
    first_yield = i if ev.k == "yield" else None
    r = i if ev.k in ("return", "unwind") else None
    for j in idx[bisect.bisect_right(idx, i):]:
        if r is not None:
            break
        k = t.events[j].k
        if k == "line":
            return j
        if k == "yield" and first_yield is None:
            first_yield = j
        elif k in ("return", "unwind"):
            r = j
    # No line of F follows: F ended, or was never resumed, or only to be closed (GeneratorExit).
    # The caller (or consumer) took over at the first yield passed, else at F's end.
    r = first_yield if first_yield is not None else r
    return None if r is None else _next_shallower(t, r, ev.d, "line")


def back_step_over(t: "Trace", i: int) -> Optional[int]:
    """The previous line of event i's frame (or its caller's): see the module's definitions."""
    ev = t.events[i]
    idx = t.frame_events(ev.fr)
    c = i if ev.k == "call" else None
    for j in reversed(idx[:bisect.bisect_left(idx, i)] if c is None else []):
        k = t.events[j].k
        if k == "line":
            return j
        if k == "call":
            c = j
            break
    return None if c is None else _prev_shallower(t, c, ev.d, "line")


def step_out(t: "Trace", i: int) -> Optional[int]:
    """The caller's next event after this frame returns: see the module's definitions."""
    ev = t.events[i]
    r = t.frame_end(ev.fr, i)
    return None if r is None else _next_shallower(t, r, ev.d, None)


def back_step_out(t: "Trace", i: int) -> Optional[int]:
    """The caller's event before this frame was called or resumed: see the module's definitions."""
    ev = t.events[i]
    c = t.frame_start(ev.fr, i)
    return None if c is None else _prev_shallower(t, c, ev.d, None)


def _next_shallower(t, r, depth, kind):
    for j in range(r + 1, len(t.events)):
        e = t.events[j]
        if e.d < depth and (kind is None or e.k == kind):
            return j
    return None


def _prev_shallower(t, c, depth, kind):
    for j in range(c - 1, -1, -1):
        e = t.events[j]
        if e.d < depth and (kind is None or e.k == kind):
            return j
    return None


def condition(spec: Union[None, str, Callable[[Dict[str, str]], Any]]) -> Optional[Callable[[Dict[str, str]], Any]]:
    """A state condition: a callable taking {name: repr} (the frame's locals, rendered values as
    the trace has them), or a string `name == repr` (whitespace around `==` ignored; the repr is
    compared with and without `#n` identity prefixes), or None (always true)."""
    if spec is None or callable(spec):
        return spec
    name, sep, want = spec.partition("==")
    name, want = name.strip(), want.strip()
    if not sep or not name.isidentifier() or not want:
        raise ValueError("condition %r: expected `name == repr`, e.g. `x == [1, 2]`" % spec)

    def check(state):
        got = state.get(name)
        return got is not None and (got == want or plain_repr(got) == want)
    return check


def _matches(t, j, line, file, cond):
    e = t.events[j]
    if e.k != "line" or e.ln != line or e.f != file:
        return False
    return cond is None or bool(cond({n: v[1] for n, v in t.locals_at(j).items()}))


def continue_to(t: "Trace", i: int, line: int, file: int = 0, cond: Union[None, str, Callable[[Dict[str, str]], Any]] = None) -> Optional[int]:
    """The next line event at `line` of `file` whose state satisfies `cond` (see condition)."""
    cond = condition(cond)
    for j in range(i + 1, len(t.events)):
        if _matches(t, j, line, file, cond):
            return j
    return None


def back_continue_to(t: "Trace", i: int, line: int, file: int = 0, cond: Union[None, str, Callable[[Dict[str, str]], Any]] = None) -> Optional[int]:
    """The previous line event at `line` of `file` whose state satisfies `cond`."""
    cond = condition(cond)
    for j in range(i - 1, -1, -1):
        if _matches(t, j, line, file, cond):
            return j
    return None


def call_inputs(t: "Trace", fn: str = "f", nth: int = 0) -> Optional[List[Tuple[str, Tuple[str, str]]]]:
    """What was the input: the arguments of the nth call of a function named fn, as
    [(name, (type, repr))] in parameter order (the call event's snapshot order: the tracer lists a
    call's locals in co_varnames order, parameters first; at a call only parameters are bound).
    None when there is no such call in the trace."""
    seen = 0
    for ev in t.events:
        if ev.k == "call" and ev.fn == fn:
            if seen == nth:
                return list((ev.loc or {}).items())
            seen += 1
    return None


def input_repr(t: "Trace", fn: str = "f", nth: int = 0) -> Optional[str]:
    """CRUXEval's input string for that call: the arguments' plain reprs joined by ', '
    (`'abc', 3`); None when there is no such call. Keyword-only and *args parameters are not
    told apart (the record does not say which a parameter is)."""
    args = call_inputs(t, fn, nth)
    if args is None:
        return None
    return ", ".join(plain_repr(v[1]) for _, v in args if v is not None)
