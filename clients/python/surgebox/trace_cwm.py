"""A trace in CWM's execution-trace format (facebookresearch/cwm, PROMPTING_GUIDE.md "Trace
Prediction", and demos/cwmdbg.py, which reads it back):

    <|call_sep|>$LOCALS<|action_sep|>$SOURCE<|frame_sep|>
    <|line_sep|>$LOCALS<|action_sep|>$SOURCE<|frame_sep|>
    <|return_sep|><|action_sep|>$SOURCE<|arg_sep|>$VALUE<|frame_sep|>
    <|exception_sep|><|action_sep|>$SOURCE<|arg_sep|>$VALUE<|frame_sep|>
    ... <|end_of_text|>

$LOCALS is a JSON object of name -> repr string; a value unchanged since the previous frame of the
same scope is `".."`. cwmdbg resolves `..` by walking back through earlier frames and stops at a
call or return frame, so a scope's first observation after a callee returned (or after it was
resumed) lists every value. $SOURCE is the source line as written (indentation and newline kept,
the `  # << START_OF_TRACE` marker removed); $VALUE is the JSON string of the value's repr.
Values are plain reprs (`#n` identity prefixes stripped, see trace.plain_repr).

Mapping from surgebox events (CWM's tracer sees sys.settrace's four events; ours are finer):
call, resume -> call frame (a resumed generator is a new call under settrace); line -> line frame;
return, yield -> return frame with the value; exception -> exception frame; unwind -> return frame
with "None" (settrace reports a frame left by an exception as a return of None); handled -> no
frame (settrace has none). The exception value is rendered `Type('message')` (Type() without a
message): the record keeps str(exc), not repr(exc), so exceptions whose repr is not of that shape
(KeyError, multi-argument ones) differ from CWM's own tracer.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, List, Mapping, Optional, Union

from .trace import STARTS, plain_repr

if TYPE_CHECKING:  # pragma: no cover
    from .trace import Trace

START_MARKER = "  # << START_OF_TRACE"
FRAME_SEP, ACTION_SEP, ARG_SEP = "<|frame_sep|>", "<|action_sep|>", "<|arg_sep|>"
CALL_SEP, LINE_SEP, RETURN_SEP, EXCEPTION_SEP = "<|call_sep|>", "<|line_sep|>", "<|return_sep|>", "<|exception_sep|>"
TRACE_CONTEXT_START, END_OF_TEXT = "<|trace_context_start|>", "<|end_of_text|>"


def entry_frame(t: "Trace", fn: Optional[str] = None) -> Optional[int]:
    """The frame a CWM trace starts at: the first call of fn, or by default the first call of a
    function from module level (CRUXEval's `f(input)`). None if there is none."""
    for ev in t.events:
        if ev.k != "call":
            continue
        if fn is not None:
            if ev.fn == fn:
                return ev.fr
        elif ev.fn != "<module>" and ev.up is not None and t.frame_events(ev.up) \
                and t.events[t.frame_events(ev.up)[0]].fn == "<module>":
            return ev.fr
    return None


def _source_line(sources, t, ev):
    text = sources.get(ev.f, sources.get(t.files[ev.f] if ev.f < len(t.files) else None))
    if text is None:
        raise ValueError("to_cwm: no source for file %d (%s): pass sources={index or path: text}"
                         % (ev.f, t.files[ev.f] if ev.f < len(t.files) else "?"))
    lines = text.split("\n")
    line = lines[ev.ln - 1] if 0 < ev.ln <= len(lines) else ""
    if line.endswith(START_MARKER):
        line = line[:-len(START_MARKER)]
    return line + "\n"


def _exc_value(exc):
    msg = exc.get("msg") or ""
    return "%s(%s)" % (exc["ty"], repr(msg) if msg else "")


def cwm_frames(t: "Trace", sources: Mapping[Union[int, str], str], fn: Optional[str] = None) -> List[str]:
    """The CWM frames of the entry frame's run (from its call to its return or unwind, callees
    included) as a list of strings, each ending with <|frame_sep|>; the last item is
    <|end_of_text|> when the entry frame's end is in the trace."""
    entry = entry_frame(t, fn)
    if entry is None:
        return []
    first = t.frame_events(entry)[0]
    shown = {}         # fr -> {name: repr} of its last observation
    clean = set()      # frames whose '..' cwmdbg can still resolve (no call/return frame since)
    out = []
    for ev in t.events[first:]:
        if ev.k == "handled":
            continue
        src = _source_line(sources, t, ev)
        if ev.k in STARTS or ev.k == "line":
            now = {n: plain_repr(v[1]) for n, v in t.locals_at(ev.i).items()}
            prev = shown.get(ev.fr, {}) if ev.fr in clean and ev.k == "line" else {}
            obs = {n: (".." if prev.get(n) == v else v) for n, v in now.items()}
            shown[ev.fr] = now
            sep = CALL_SEP if ev.k in STARTS else LINE_SEP
            out.append(sep + json.dumps(obs) + ACTION_SEP + src + FRAME_SEP)
            clean = {ev.fr}
            continue
        if ev.k == "exception":
            arg = _exc_value(ev.exc or {"ty": "Exception"})
            out.append(EXCEPTION_SEP + ACTION_SEP + src + ARG_SEP + json.dumps(arg) + FRAME_SEP)
            continue
        arg = plain_repr(ev.val[1]) if ev.val is not None else "None"
        out.append(RETURN_SEP + ACTION_SEP + src + ARG_SEP + json.dumps(arg) + FRAME_SEP)
        clean = set()
        if ev.fr == entry and ev.k in ("return", "unwind"):
            out.append(END_OF_TEXT)
            break
    return out


def to_cwm(t: "Trace", sources: Mapping[Union[int, str], str], fn: Optional[str] = None) -> str:
    """The CWM trace text (the frames joined), as the model is trained to produce it after the
    prompt `cwm_prompt`."""
    return "".join(cwm_frames(t, sources, fn))


def cwm_prompt(context: str) -> str:
    """The trace-prediction prompt for a source context carrying a `# << START_OF_TRACE` marker."""
    return "<|begin_of_text|>" + TRACE_CONTEXT_START + context + FRAME_SEP
