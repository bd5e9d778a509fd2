"""A recorded execution trace (surgebox trace format v1, PROTOCOL.md "Traces") as a Python object.

    t = Trace.parse(text_or_bytes_or_file)
    t.status                      # complete | truncated | tampered | crashed
    t.events[5].k, t.events[5].ln
    t.locals_at(5)                # {name: (type, repr)} of event 5's frame, as of event 5
    t.stack_at(5)                 # [(fr, fn, ln), ...] innermost first
    t.coverage()                  # {line: hits} of the entry file
    t.step_over(5), t.step_out(5) # debugger views: an event index or None (trace_views.py)
    t.threads, t.on_thread(1)     # the threads seen; the same trace following thread 1

A trace follows one thread (`thread`, default 0: the main thread): `events` are that thread's
events, numbered 0, 1, 2 ... in `Event.i` (the record's own number across all threads is
`Event.seq`), so the views and converters see one thread's run; `all_events` has every thread's.

Pure functions of the records: nothing here runs the traced program. A trace
that is cut, crashed or tampered with still parses; its status says so and
`problems` lists what the parser itself found (the events up to the first
broken record are kept, so every view works on what is there).
"""
from __future__ import annotations

import bisect
import io
import json
import os
import re
from dataclasses import dataclass, replace
from typing import IO, Any, Dict, List, Optional, Tuple, Union

KINDS = ("call", "line", "return", "exception", "yield", "resume", "unwind", "handled")
STATUSES = ("complete", "truncated", "tampered", "crashed")
ENDS = ("return", "unwind", "yield")      # the frame stops running (for now, for yield)
STARTS = ("call", "resume")               # the frame (re)starts running
_CACHE_EVERY = 64


@dataclass(frozen=True)
class Event:
    """One `ev` record. `loc` maps a name to (type, repr), None for a deleted name. `i` is the
    event's index in its Trace's `events` (the thread it follows), `seq` the record's own `i`
    (across all threads), `th` its thread (0 = the main thread)."""
    i: int
    k: str
    fr: int
    up: Optional[int]
    d: int
    f: int
    ln: int
    fn: str
    loc: Optional[Dict[str, Optional[Tuple[str, str]]]] = None
    val: Optional[Tuple[str, str]] = None
    exc: Optional[Dict[str, str]] = None
    th: int = 0
    seq: int = -1


def _value(v, where):
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)):
        raise ValueError("%s: a value must be [type, repr]" % where)
    return (v[0], v[1])


def _event(rec, n):
    where = "record %d" % n
    try:
        ev = Event(i=rec["i"], k=rec["k"], fr=rec["fr"], up=rec.get("up"), d=rec["d"], f=rec["f"],
                   ln=rec["ln"], fn=rec["fn"])
    except KeyError as e:
        raise ValueError("%s: ev without %s" % (where, e))
    if ev.k not in KINDS:
        raise ValueError("%s: unknown event kind %r" % (where, ev.k))
    th = rec.get("th", 0)
    if not isinstance(th, int) or isinstance(th, bool) or th < 0:
        raise ValueError("%s: th is not a thread number" % where)
    for name in ("i", "fr", "d", "f", "ln"):
        if not isinstance(getattr(ev, name), int) or isinstance(getattr(ev, name), bool):
            raise ValueError("%s: %s is not an integer" % (where, name))
    loc = rec.get("loc")
    if loc is not None:
        if not isinstance(loc, dict):
            raise ValueError("%s: loc is not an object" % where)
        loc = {name: (None if v is None else _value(v, where)) for name, v in loc.items()}
    val = _value(rec["val"], where) if "val" in rec else None
    exc = rec.get("exc")
    if exc is not None and not (isinstance(exc, dict) and isinstance(exc.get("ty"), str)):
        raise ValueError("%s: exc is not {ty, msg}" % where)
    return Event(ev.i, ev.k, ev.fr, ev.up, ev.d, ev.f, ev.ln, ev.fn, loc, val, exc, th, ev.i)


def _lines(source):
    if hasattr(source, "read"):
        source = source.read()
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", "replace")
    return io.StringIO(source).read().split("\n")


class Trace:
    """A parsed trace: `head`, `files` (index -> path), `events` (those of the thread it follows,
    `thread`), `all_events`, `end` (the end record or None), `status` (the end's status, or
    `tampered`/`truncated` for what the parser found: see `problems`)."""

    def __init__(self, head: Dict[str, Any], files: List[str], events: List[Event], end: Optional[Dict[str, Any]],
                 problems: List[str], thread: int = 0) -> None:
        self.head = head
        self.files = files
        self.all_events = events
        self.thread = thread
        self.threads: List[int] = sorted({ev.th for ev in events} | {0})
        if self.threads == [0] and thread == 0:
            self.events = events
        else:
            self.events = [replace(ev, i=n) for n, ev in enumerate(e for e in events if e.th == thread)]
        self.end = end
        self.problems = problems
        if any(p.startswith("tampered:") for p in problems):
            self.status = "tampered"
        elif end is None:
            self.status = "truncated"
        else:
            self.status = end.get("status") if end.get("status") in STATUSES else "tampered"
        self._by_frame: Dict[int, List[int]] = {}
        for ev in self.events:
            self._by_frame.setdefault(ev.fr, []).append(ev.i)
        self._state_cache = {}

    # ---- parsing -------------------------------------------------------------------------
    def on_thread(self, thread: int) -> "Trace":
        """The same records following thread `thread` (0 = the main thread; `threads` lists them)."""
        return Trace(self.head, self.files, self.all_events, self.end, self.problems, thread)

    @classmethod
    def parse(cls, source: Union[str, bytes, IO[Any]], thread: int = 0) -> "Trace":
        """Text, bytes or a readable file of JSON Lines, following thread `thread` (0: the main
        thread). Never raises on a damaged trace; raises ValueError only when there is no head
        record at all (not a trace)."""
        head, end, files, events, problems = None, None, {}, [], []
        lines = _lines(source)
        cut = lines.pop() if lines else ""   # "" when the text ends with a newline
        if cut:
            lines.append(cut)
        for n, line in enumerate(lines, 1):
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("record %d is not an object" % n)
            except ValueError as e:
                if cut and n == len(lines):
                    problems.append("truncated: the last line is cut (%s)" % e)
                else:
                    problems.append("tampered: record %d is not JSON (%s)" % (n, e))
                break
            t = rec.get("t")
            if n == 1:
                if t != "head":
                    raise ValueError("not a surgebox trace: the first record is not a head (t=%r)" % t)
                head = rec
                files = {i: p for i, p in enumerate(rec.get("files") or [])}
                continue
            if end is not None:
                problems.append("tampered: record %d after the end record" % n)
                break
            if t == "end":
                end = rec
            elif t == "file":
                if rec.get("f") != len(files) or not isinstance(rec.get("path"), str):
                    problems.append("tampered: record %d: file %r is not the next file index %d"
                                    % (n, rec.get("f"), len(files)))
                    break
                files[rec["f"]] = rec["path"]
            elif t == "ev":
                try:
                    ev = _event(rec, n)
                except ValueError as e:
                    problems.append("tampered: %s" % e)
                    break
                if ev.i != len(events):
                    problems.append("tampered: record %d has i=%d, expected %d" % (n, ev.i, len(events)))
                    break
                if ev.f not in files:
                    problems.append("tampered: record %d names file %d before its file record" % (n, ev.f))
                    break
                events.append(ev)
            else:
                problems.append("tampered: record %d has unknown type %r" % (n, t))
                break
        if head is None:
            raise ValueError("not a surgebox trace: empty")
        if end is None and not any(p.startswith("tampered:") for p in problems):
            problems.append("truncated: no end record")
        return cls(head, [files[k] for k in range(len(files))], events, end, problems, thread)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], thread: int = 0) -> "Trace":
        """Trace.parse of the file at `path`."""
        with open(path, "rb") as f:
            return cls.parse(f.read(), thread)

    # ---- frames and state ----------------------------------------------------------------
    def frame_events(self, fr: int) -> List[int]:
        """Indices of the events of frame `fr`, in order."""
        return self._by_frame.get(fr, [])

    def last_of_frame(self, fr: int, i: int) -> Optional[int]:
        """Index of frame fr's last event at or before i, or None."""
        idx = self._by_frame.get(fr, [])
        p = bisect.bisect_right(idx, i)
        return idx[p - 1] if p else None

    def locals_at(self, i: int, fr: Optional[int] = None) -> Dict[str, Tuple[str, str]]:
        """Every local of frame `fr` (default: event i's) as of event i, its own `loc` applied:
        {name: (type, repr)}, ordered as the tracer lists them (a call's snapshot order first).
        A line event's state is the state BEFORE that line runs."""
        if fr is None:
            fr = self.events[i].fr
        idx = self._by_frame.get(fr, [])
        p = bisect.bisect_right(idx, i)
        if p == 0:
            return {}
        base = (p - 1) // _CACHE_EVERY * _CACHE_EVERY
        state = dict(self._checkpoint(fr, base))
        for pos in range(base + 1, p):
            self._apply(state, self.events[idx[pos]])
        return state

    def _checkpoint(self, fr, pos):
        """The state after the frame's event number pos (a multiple of _CACHE_EVERY), cached."""
        key = (fr, pos)
        if key not in self._state_cache:
            idx = self._by_frame[fr]
            base = pos
            while base > 0 and (fr, base) not in self._state_cache:
                base -= _CACHE_EVERY
            if (fr, base) in self._state_cache:
                state = dict(self._state_cache[(fr, base)])
            else:
                state = {}
                self._apply(state, self.events[idx[0]])
                self._state_cache[(fr, 0)] = dict(state)
            for q in range(base + 1, pos + 1):
                self._apply(state, self.events[idx[q]])
                if q % _CACHE_EVERY == 0:
                    self._state_cache[(fr, q)] = dict(state)
        return self._state_cache[key]

    @staticmethod
    def _apply(state, ev):
        if ev.loc is None:
            return
        if ev.k in STARTS:   # a full snapshot, exactly the frame's locals, in the frame's order
            state.clear()
            state.update((name, v) for name, v in ev.loc.items() if v is not None)
            return
        # any other event: a diff, or a full snapshot (after a callee returned, every
        # snapshot_every events) applied as one: a deleted name is always written as null
        for name, v in ev.loc.items():
            if v is None:
                state.pop(name, None)
            else:
                state[name] = v

    def stack_at(self, i: int) -> List[Tuple[int, str, int]]:
        """The traced call stack at event i, innermost first: [(fr, fn, ln)], each caller at the line
        of its own latest event (the line that made the call)."""
        ev = self.events[i]
        out, seen = [(ev.fr, ev.fn, ev.ln)], {ev.fr}
        up = ev.up
        while up is not None and up not in seen:
            j = self.last_of_frame(up, i)
            if j is None:
                break
            e = self.events[j]
            out.append((e.fr, e.fn, e.ln))
            seen.add(up)
            up = e.up
        return out

    def frame_end(self, fr: int, i: int) -> Optional[int]:
        """Index of the first event at or after i that ends or suspends frame fr (return, unwind,
        yield), or None when the trace stops first."""
        idx = self._by_frame.get(fr, [])
        for pos in range(bisect.bisect_left(idx, i), len(idx)):
            if self.events[idx[pos]].k in ENDS:
                return idx[pos]
        return None

    def frame_start(self, fr: int, i: int) -> Optional[int]:
        """Index of the latest event at or before i that starts or resumes frame fr."""
        idx = self._by_frame.get(fr, [])
        for pos in range(bisect.bisect_right(idx, i) - 1, -1, -1):
            if self.events[idx[pos]].k in STARTS:
                return idx[pos]
        return None

    # ---- debugger views (trace_views.py says what each one means) --------------------------
    def step_into(self, i: int) -> Optional[int]:
        """trace_views.step_into: the next line, call or resume event."""
        return _views().step_into(self, i)

    def step_over(self, i: int) -> Optional[int]:
        """trace_views.step_over: the next line of event i's frame, calls stepped over."""
        return _views().step_over(self, i)

    def step_out(self, i: int) -> Optional[int]:
        """trace_views.step_out: the caller's next event after this frame returns."""
        return _views().step_out(self, i)

    def continue_to(self, i: int, line: int, file: int = 0, cond: Any = None) -> Optional[int]:
        """trace_views.continue_to: the next line event at `line` whose state satisfies `cond`."""
        return _views().continue_to(self, i, line, file, cond)

    def back_step_into(self, i: int) -> Optional[int]:
        """trace_views.back_step_into: the previous line, call or resume event."""
        return _views().back_step_into(self, i)

    def back_step_over(self, i: int) -> Optional[int]:
        """trace_views.back_step_over: the previous line of this frame (or its caller's)."""
        return _views().back_step_over(self, i)

    def back_step_out(self, i: int) -> Optional[int]:
        """trace_views.back_step_out: the caller's event before this frame was called or resumed."""
        return _views().back_step_out(self, i)

    def back_continue_to(self, i: int, line: int, file: int = 0, cond: Any = None) -> Optional[int]:
        """trace_views.back_continue_to: the previous matching line event."""
        return _views().back_continue_to(self, i, line, file, cond)

    def call_inputs(self, fn: str = "f", nth: int = 0) -> Optional[List[Tuple[str, Tuple[str, str]]]]:
        """trace_views.call_inputs: the arguments of the nth call of `fn`."""
        return _views().call_inputs(self, fn, nth)

    def coverage(self, file: int = 0) -> Dict[int, int]:
        """{line: number of line events} for one file index."""
        cov = {}
        for ev in self.events:
            if ev.k == "line" and ev.f == file:
                cov[ev.ln] = cov.get(ev.ln, 0) + 1
        return cov


def _views():
    from . import trace_views   # imported late: trace_views imports this module
    return trace_views


# ---- values ------------------------------------------------------------------------------
_ID = re.compile(r"#\d+")
_CLOSE = {"[": "[...]", "(": "(...)", "{": "{...}"}


def plain_repr(r: str) -> str:
    """A rendered repr with the `#n` identity prefixes removed, for formats that use Python's
    plain repr. A cycle reference (`#3` alone) becomes what Python prints for one: `[...]`,
    `{...}`, or `...` for a user object. String and bytes literals are left alone."""
    opened = {}
    out, pos, n = [], 0, len(r)
    while pos < n:
        c = r[pos]
        if c in "'\"":
            end = _string_end(r, pos)
            out.append(r[pos:end])
            pos = end
            continue
        m = _ID.match(r, pos) if c == "#" else None
        if m:
            nxt = r[m.end():m.end() + 1]
            if nxt and (nxt in "[({" or nxt.isalpha() or nxt == "_"):
                opened[m.group()] = nxt
                pos = m.end()
                continue
            out.append(_CLOSE.get(opened.get(m.group(), ""), "..."))
            pos = m.end()
            continue
        out.append(c)
        pos += 1
    return "".join(out)


def _string_end(r, pos):
    q = r[pos]
    j = pos + 1
    while j < len(r):
        if r[j] == "\\":
            j += 2
            continue
        if r[j] == q:
            return j + 1
        j += 1
    return len(r)
