"""A traced run as a job, and its Trace out of the Result (what Client.trace and
AsyncClient.trace share; pure, no I/O)."""
from __future__ import annotations

import base64
from typing import Any, Dict, Mapping, Optional, Sequence

from ._jobs import Files, Result, Stdin, SurgeboxError
from .trace import Trace


def trace_job_of(source: str, files: Optional[Files], entry: str, args: Optional[Sequence[str]],
                 stdin: Optional[Stdin], toolchain: str, limits: Optional[Mapping[str, Any]],
                 trace_limits: Optional[Mapping[str, int]], check: bool, profile: Optional[str],
                 cancel_after: Optional[float]) -> Dict[str, Any]:
    """The job running `source` as `python3 ENTRY ARGS` under the tracer (ENTRY first among the files)."""
    if isinstance(files, (list, tuple)):
        raise TypeError("trace(): files as {path: content}, the entry comes first")
    all_files: Dict[str, Any] = {entry: source}
    for path, content in (files or {}).items():
        if path == entry:
            raise ValueError("trace(): %r is the entry; pass its source as the first argument" % entry)
        all_files[path] = content
    opt: Dict[str, Any] = dict(trace_limits or {})
    if check:
        opt["check"] = True
    job: Dict[str, Any] = {"toolchain": toolchain, "files": all_files, "trace": opt or True}
    for k, v in (("args", args), ("stdin", stdin), ("limits", limits), ("profile", profile),
                 ("cancel_after", cancel_after)):
        if v is not None:
            job[k] = v
    return job


def trace_of(res: Result) -> Trace:
    """The traced step's Trace, with `.result` (the exec Result) and `.check` (the daemon's comparison
    with the untraced run, None when not asked). SurgeboxError when the job produced no trace."""
    step = res.steps[-1] if res.steps else None
    if step is None or "trace_status" not in step:
        raise SurgeboxError(res.get("status"), "no trace: the job ended %s%s" % (
            res.get("status"), (": " + str(res.get("error") or (step or {}).get("error"))) if
            (res.get("error") or (step or {}).get("error")) else ""), res)
    text = step.get("trace")
    if text is None:
        text = base64.b64decode(step.get("trace_b64") or "").decode("utf-8", "replace")
    t = Trace.parse(text)
    t.result = res  # type: ignore[attr-defined]
    t.check = step.get("trace_check")  # type: ignore[attr-defined]
    return t
