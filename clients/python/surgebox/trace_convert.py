"""`python3 -m surgebox.trace_convert --format lines|reval|cwm [--out FILE]`: one recorded trace
converted, for `surgebox trace --format` (the C command line calls this module so that each
converter has one implementation, the one `Trace` users and its tests share).

Standard input is one JSON object: {"trace": the JSON Lines text, "sources": {"/app/main.py": its
source text, ...}} (sources are needed by cwm only). Formats, all of the entry file (file 0):
- lines: the executed line numbers (`trace_lines.line_path`), one per line;
- reval: {"path": REval's merged 0-indexed path, "coverage": its executed lines, sorted,
  "next_lines": {line: the lines that follow it, -1 for the end}} as one JSON line;
- cwm: CWM's trace text (`trace_cwm.to_cwm`) of the entry's module frame.
Exit status 1 with one line on stderr when the input cannot be read."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List

from .trace import Trace
from .trace_cwm import to_cwm
from .trace_lines import line_path, reval_coverage, reval_next_lines, reval_path


def convert(fmt: str, trace_text: str, sources: Dict[str, str]) -> str:
    """The trace in format `fmt` ("lines", "reval" or "cwm") as text ending in a newline."""
    t = Trace.parse(trace_text)
    if fmt == "lines":
        return "".join("%d\n" % ln for ln in line_path(t))
    if fmt == "reval":
        path: List[int] = reval_path(t)
        nxt: Dict[str, Any] = {str(ln): sorted(reval_next_lines(t, ln)) for ln in sorted(set(path))}
        return json.dumps({"path": path, "coverage": sorted(reval_coverage(t)), "next_lines": nxt}) + "\n"
    if fmt == "cwm":
        return to_cwm(t, sources) + "\n"
    raise ValueError("unknown format %r (lines, reval, cwm)" % fmt)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m surgebox.trace_convert")
    ap.add_argument("--format", required=True, choices=["lines", "reval", "cwm"])
    ap.add_argument("--out", help="write here instead of standard output")
    a = ap.parse_args(argv)
    try:
        doc = json.load(sys.stdin)
        text = convert(a.format, doc["trace"], doc.get("sources") or {})
    except (ValueError, KeyError, TypeError) as e:
        print("surgebox trace: cannot convert the trace to %s: %s" % (a.format, e), file=sys.stderr)
        return 1
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
