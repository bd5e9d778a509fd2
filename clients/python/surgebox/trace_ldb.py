"""LDB's block-level states (Zhong et al., "Debug like a Human: A Large Language Model Debugger
via Verifying Runtime Execution Step-by-step", 2024): the program is cut into basic blocks of its
control-flow graph, and a run is shown block by block with the intermediate values at each
block's end.

Blocks come from the source's `ast` (source lines, stable across CPython versions, unlike `dis`),
cut as LDB's own tracer cuts them (FloridSleeves/LLMDebugger, programming/tracing/tracer.py: a CFG
with "separate-condition-blocks"): within one scope (module, or one function body), a block is a
maximal run of statements without a branch; an `if`/`elif`/`while`/`for` header is a block of its
own; `return`, `raise`, `break` and `continue` end a block; the body of a branch, an `else`, an
`except` handler, `finally` and the statement after a compound statement start one. `with` and
`try:` do not branch (they continue the block). A nested `def`/`class` line is a plain statement;
its body is a scope of its own. Every line a statement spans maps to its block, so a line event
anywhere in a multi-line statement lands in it.

A run of a block is a maximal sequence of line events of one frame in one block without a jump
back (a loop whose body is one block runs it once per iteration); its state is the frame's locals
at the frame's next event after the run (the state after its last line ran), plain reprs. LDB
prints a block's state after it (and before it); a condition block's "after" here is the state
once its test ran, which is the state before the branch taken.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Union

if TYPE_CHECKING:  # pragma: no cover
    from .trace import Trace

_BRANCH = (ast.If, ast.While, ast.For, ast.AsyncFor)
_JUMP = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def blocks(source: str) -> Dict[int, int]:
    """{line: block id} for every line of a statement in `source`; ids count from 0 in source
    order of block starts."""
    tree = ast.parse(source)
    cut = _Cutter()
    cut.body(tree.body, new=True)
    return cut.line_block


class _Cutter:
    """cur is None: the next statement starts a block (ids are taken lazily: no empty block)."""

    def __init__(self):
        self.line_block = {}
        self.next_id = 0
        self.cur = None

    def mark(self, first, last):
        if self.cur is None:
            self.cur = self.next_id
            self.next_id += 1
        for ln in range(first, last + 1):
            self.line_block.setdefault(ln, self.cur)

    def body(self, stmts, new):
        if new:
            self.cur = None
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, _BRANCH):             # a condition block of its own (LDB's
            self.cur = None                    # "separate-condition-blocks")
            head_end = (s.body[0].lineno - 1) if s.body else s.lineno
            self.mark(s.lineno, max(s.lineno, head_end))
            self.body(s.body, new=True)
            if s.orelse:
                self.body(s.orelse, new=True)
            self.cur = None                    # what follows starts a block
            return
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.mark(s.lineno, s.lineno)
            self.body(s.body, new=False)
            for h in s.handlers:
                self.cur = None
                self.mark(h.lineno, h.lineno)
                self.body(h.body, new=False)
            if s.orelse:
                self.body(s.orelse, new=True)
            if s.finalbody:
                self.body(s.finalbody, new=True)
            self.cur = None
            return
        if isinstance(s, (ast.With, ast.AsyncWith)):
            self.mark(s.lineno, s.body[0].lineno - 1 if s.body else s.lineno)
            self.body(s.body, new=False)
            return
        if isinstance(s, _SCOPES):
            first = min([d.lineno for d in getattr(s, "decorator_list", [])] + [s.lineno])
            body_first = s.body[0].lineno if s.body else s.lineno
            self.mark(first, max(s.lineno, body_first - 1))
            saved = self.cur
            self.body(s.body, new=True)        # a scope of its own
            self.cur = saved
            return
        self.mark(s.lineno, getattr(s, "end_lineno", s.lineno) or s.lineno)
        if isinstance(s, _JUMP):
            self.cur = None


def block_states(t: "Trace", sources: Mapping[Union[int, str], str], file: int = 0, fn: Optional[str] = None) -> List[Dict[str, Any]]:
    """LDB's view of a trace: [{"fr", "fn", "block", "lines", "state"}] in run order, one item per
    run of a block by one frame (only frames of function `fn` if given); `lines` the 1-based lines
    executed in it, `state` {name: plain repr} after it (None when the trace stops first)."""
    from .trace import plain_repr
    text = sources.get(file, sources.get(t.files[file] if file < len(t.files) else None))
    if text is None:
        raise ValueError("block_states: no source for file %d: pass sources={index or path: text}" % file)
    where = blocks(text)
    runs, open_run = [], {}
    for e in t.events:
        if e.f != file or (fn is not None and e.fn != fn):
            continue
        run = open_run.get(e.fr)
        if e.k == "line":
            b = where.get(e.ln)
            if run is not None and run["block"] == b and e.ln > run["lines"][-1]:
                run["lines"].append(e.ln)
                continue
            if run is not None:
                run["state"] = _state(t, e.i, plain_repr)
            run = {"fr": e.fr, "fn": e.fn, "block": b, "lines": [e.ln], "state": None}
            runs.append(run)
            open_run[e.fr] = run
        elif run is not None and e.k in ("return", "unwind", "yield", "exception"):
            if e.k != "exception":
                run["state"] = _state(t, e.i, plain_repr)
                del open_run[e.fr]
    return runs


def _state(t, i, plain_repr):
    return {n: plain_repr(v[1]) for n, v in t.locals_at(i).items()}


def ldb_text(t: "Trace", sources: Mapping[Union[int, str], str], file: int = 0, fn: Optional[str] = None) -> str:
    """The runs as LDB shows them to the model: `[BLOCK-k]`, the block's executed source lines, then
    a comment with the state after it, indented like the block's last line:
    `# name=value<TAB>name=value`, cut to its first and last 50 characters around `...` when it
    has 100 or more (LDB's parse_runtime_value_simple)."""
    text = sources.get(file, sources.get(t.files[file] if file < len(t.files) else None))
    src = text.split("\n")
    out = []
    for n, run in enumerate(block_states(t, sources, file, fn)):
        out.append("[BLOCK-%d]" % n)
        out.extend(src[ln - 1] for ln in run["lines"])
        if run["state"] is not None:
            last = src[run["lines"][-1] - 1]
            values = "\t".join("%s=%s" % kv for kv in run["state"].items())
            if len(values) >= 100:
                values = values[:50] + "..." + values[-50:]
            out.append(" " * (len(last) - len(last.lstrip())) + "# " + values)
    return "\n".join(out) + "\n"
