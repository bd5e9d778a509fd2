"""Building exec requests from Python values, and the result type.

Everything here is pure (no I/O): bytes become base64 on the wire, the job's
fields are checked against the protocol's two forms (raw steps or toolchain).
"""
from __future__ import annotations

import base64
import binascii
import errno
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

#: A job's files: {path: str | bytes | {"content" or "content_b64", "mode"}},
#: or the protocol's list of {"path", ...} dicts.
Files = Union[Mapping[str, Union[str, bytes, Mapping[str, Any]]], Sequence[Mapping[str, Any]]]
#: A raw step: a protocol step dict ({"argv", "name", "stdin", "limits", ...}) or an argv list.
Step = Union[Mapping[str, Any], Sequence[str]]
#: Standard input: text is sent as is, bytes in base64.
Stdin = Union[str, bytes]

_JOB_FIELDS = ("steps", "toolchain", "options", "args", "files", "stdin", "stdin_b64", "limits", "outputs",
               "outputs_max_bytes", "output_encoding", "profile", "trace", "warm",
               "cases", "stop", "budget_s", "case_output_bytes", "fn_name", "compare", "checker")
# a job's test cases (PROTOCOL.md "Test cases"): the steps form puts them on its last step
_CASES_FIELDS = ("cases", "stop", "budget_s", "case_output_bytes", "fn_name", "compare", "checker")
# client-side only: never sent to the daemon ("timeout": the old name of cancel_after)
CLIENT_FIELDS = ("id", "cancel_after", "timeout")
_KNOWN_FIELDS = frozenset(_JOB_FIELDS + CLIENT_FIELDS)
_CASES_SET = frozenset(_CASES_FIELDS)


def job_of(steps: Optional[Sequence[Step]] = None, toolchain: Optional[str] = None, files: Optional[Files] = None,
           stdin: Optional[Stdin] = None, options: Optional[Mapping[str, Any]] = None,
           args: Optional[Sequence[str]] = None, limits: Optional[Mapping[str, Any]] = None,
           outputs: Optional[Sequence[str]] = None, outputs_max_bytes: Optional[int] = None,
           output_encoding: Optional[str] = None, profile: Optional[str] = None,
           cancel_after: Optional[float] = None, warm: Optional[bool] = None) -> Dict[str, Any]:
    """run()'s keyword arguments as a job dict (the form run_many takes), None (and warm=False) left out."""
    return {k: v for k, v in locals().items() if v is not None and not (k == "warm" and not v)}


def cancel_after_of(job: Mapping[str, Any], default: Optional[float]) -> Optional[float]:
    """A job's client-side cancel delay: its "cancel_after", else `default`.
    "timeout", its name before 0.2, still works with a DeprecationWarning."""
    if job.get("timeout") is not None:
        if job.get("cancel_after") is not None:
            raise ValueError("a job has both cancel_after and timeout (its old name): keep cancel_after")
        warned_rename("timeout", "cancel_after")
        return job["timeout"]
    return job.get("cancel_after", default)


def warned_rename(old: str, new: str) -> None:
    """Warn (DeprecationWarning, at the caller's caller) that `old` is now `new`."""
    warnings.warn("surgebox: %r is now %r (the client-side cancel; the sandbox's own wall-time limit "
                  "is limits={'time_s': ...})" % (old, new), DeprecationWarning, stacklevel=4)


class SurgeboxError(Exception):
    """An error response of the daemon (`code` is the protocol's stable word)."""

    def __init__(self, code: Optional[str], message: Optional[str], response: Optional[Dict[str, Any]] = None) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.response = response


class ConnectionLost(SurgeboxError):
    """The connection to the daemon broke (or the client was closed): code "connection_lost"."""

    def __init__(self, message: str) -> None:
        super().__init__("connection_lost", message)


class NoDaemon(SurgeboxError, ConnectionError):
    """No daemon answers at the socket asked for. A socket named explicitly
    (the `socket` argument or $SURGEBOX_SOCKET) is never replaced by a private
    daemon: the message names the path and the next step (as the C CLI's).
    `path`: the socket; `errno`: the connect's errno. Also a ConnectionError
    (an OSError), as the bare socket error it replaces was: code that waits
    for a daemon by catching OSError keeps working."""

    def __init__(self, path: str, named_by: Optional[str], exc: BaseException) -> None:
        self.path = path
        code = getattr(exc, "errno", None)
        if code not in (errno.ENOENT, errno.ECONNREFUSED):
            msg = "cannot connect to %s: %s" % (path, getattr(exc, "strerror", None) or exc)
        elif named_by is None:
            msg = "no daemon answers at %s (the default socket): start one with surgeboxd" % path
        else:
            msg = "no daemon answers at %s: start one with surgeboxd --socket %s, or %s" % (
                path, path, "unset SURGEBOX_SOCKET" if named_by == "environment" else "drop socket=")
        super().__init__("no_daemon", msg)
        self.errno = code  # after OSError's __init__, which resets it


class UnknownProfile(SurgeboxError):
    """The daemon knows no profile of that name (a `bad_request`): the message
    names it and how to create it."""


def error_of(resp: Any) -> SurgeboxError:
    """The exception for an error response (UnknownProfile for an unknown profile)."""
    err = resp.get("error") if isinstance(resp, dict) else None
    err = err if isinstance(err, dict) else {}
    code, message = err.get("code"), err.get("message")
    if code == "bad_request" and isinstance(message, str) and message.startswith("unknown profile"):
        return UnknownProfile(code, message, resp)
    return SurgeboxError(code, message, resp)


def _b64(data):
    return base64.b64encode(bytes(data)).decode("ascii")


def _stdin_fields(out, value):
    if value is None:
        return
    if isinstance(value, str):
        out["stdin"] = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        out["stdin_b64"] = _b64(value)
    else:
        raise TypeError("stdin must be str or bytes, not %s" % type(value).__name__)


def _file(path, spec):
    f = {"path": path}
    mode = None
    if isinstance(spec, dict):
        mode = spec.get("mode")
        unknown = set(spec) - {"content", "content_b64", "mode", "path"}
        if unknown:
            raise ValueError("files[%r]: unknown field(s) %s" % (path, ", ".join(sorted(unknown))))
        if "content_b64" in spec:
            f["content_b64"] = spec["content_b64"]
        else:
            spec = spec.get("content", "")
    if "content_b64" not in f:
        if isinstance(spec, str):
            f["content"] = spec
        elif isinstance(spec, (bytes, bytearray, memoryview)):
            f["content_b64"] = _b64(spec)
        else:
            raise TypeError("files[%r] must be str, bytes or a dict, not %s" % (path, type(spec).__name__))
    if mode is not None:
        f["mode"] = int(mode)
    return f


def _files(files):
    """{path: str|bytes|{content|content_b64, mode}} or [{path, ...}] -> protocol list."""
    if files is None:
        return None
    if isinstance(files, dict):
        return [_file(p, s) for p, s in files.items()]
    out = []
    for entry in files:
        if not isinstance(entry, dict) or "path" not in entry:
            raise TypeError("a files list holds dicts with a 'path'")
        out.append(_file(entry["path"], entry))
    return out


def _step(step):
    if isinstance(step, (list, tuple)):
        return {"argv": [str(a) for a in step]}
    if not isinstance(step, dict):
        raise TypeError("a step is a dict or an argv list, not %s" % type(step).__name__)
    s = dict(step)
    if "stdin" in s:
        stdin = s.pop("stdin")
        _stdin_fields(s, stdin)
    return s


def _case(case):
    """One test case: stdin and expected as str or bytes (bytes go as *_b64), files as for a job."""
    if not isinstance(case, Mapping):
        raise TypeError("a case is a dict, not %s" % type(case).__name__)
    c = dict(case)
    if "stdin" in c:
        _stdin_fields(c, c.pop("stdin"))
    if isinstance(c.get("expected"), (bytes, bytearray)):
        c["expected_b64"] = _b64(bytes(c.pop("expected")))
    if "files" in c:
        c["files"] = _files(c["files"])
    if "args" in c:
        c["args"] = [str(a) for a in c["args"]]
    return c


def build_exec(job: Mapping[str, Any], req_id: Union[int, str]) -> Dict[str, Any]:
    """A job (dict of run()'s keywords) -> the exec request line's object."""
    if not _KNOWN_FIELDS.issuperset(job):
        unknown = set(job) - _KNOWN_FIELDS
        raise ValueError("unknown job field(s): %s" % ", ".join(sorted(unknown)))
    if (job.get("steps") is None) == (job.get("toolchain") is None):
        raise ValueError("a job has either steps or a toolchain")
    req = {"id": req_id, "type": "exec"}
    for k in _JOB_FIELDS:
        v = job.get(k)
        if v is None:
            continue
        if k == "steps":
            req["steps"] = [_step(s) for s in v]
        elif k == "files":
            req["files"] = _files(v)
        elif k == "stdin":
            _stdin_fields(req, v)
        elif k == "args":
            req["args"] = [str(a) for a in v]
        elif k == "outputs":
            req["outputs"] = list(v)
        elif k == "cases":
            req["cases"] = [_case(c) for c in v]
        else:
            req[k] = v
    if "toolchain" not in req and not _CASES_SET.isdisjoint(req):
        last = req["steps"][-1]
        for k in _CASES_FIELDS:
            if k in req:
                last[k] = req.pop(k)
    if "toolchain" not in req:
        for k in ("options", "args", "stdin", "stdin_b64", "limits", "outputs"):
            if k in req:
                raise ValueError("%r is only valid with a toolchain (put it in a step)" % k)
    return req


def exact_bytes(step: Mapping[str, Any], stream: str = "stdout") -> bytes:
    """The exact bytes a step wrote on `stream` (stdout or stderr), as captured.

    `<stream>_b64` is present whenever the text is not exact (or was asked
    for with output_encoding="base64"); otherwise the text is exact."""
    b64 = step.get(stream + "_b64")
    if b64 is not None:
        try:
            return base64.b64decode(b64, validate=True)
        except binascii.Error as e:
            raise SurgeboxError("bad_base64", "%s_b64 from the daemon: %s" % (stream, e))
    return (step.get(stream) or "").encode("utf-8")


class Result(dict):
    """An exec response: a plain dict (json.dumps works) with helpers.

    A client-side timeout adds "client_timeout": true (the job was cancelled);
    an error response of the daemon (in run_many) has "status": "error" and
    the daemon's "error": {"code", "message"}."""

    @property
    def status(self) -> Optional[str]:
        """The job's status: ok, compile_error, runtime_error, timeout, ..., cancelled, error."""
        return self.get("status")

    @property
    def ok(self) -> bool:
        """True when the status is "ok"."""
        return self.get("status") == "ok"

    @property
    def steps(self) -> List[Dict[str, Any]]:
        """The steps that ran, each the daemon's dict (PROTOCOL.md); [] when none ran."""
        return self.get("steps") or []

    def step(self, name: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The step named `name`, or the last one that ran (None if none ran)."""
        steps = self.steps
        if name is None:
            return steps[-1] if steps else None
        for s in steps:
            if s.get("name") == name:
                return s
        return None

    def stdout_bytes(self, step: Optional[str] = None) -> bytes:
        """The exact stdout of the step named `step` (default: the last that ran)."""
        s = self.step(step)
        return exact_bytes(s, "stdout") if s else b""

    def stderr_bytes(self, step: Optional[str] = None) -> bytes:
        """The exact stderr of the step named `step` (default: the last that ran)."""
        s = self.step(step)
        return exact_bytes(s, "stderr") if s else b""

    @property
    def stdout(self) -> bytes:
        """The last step's stdout as exact bytes."""
        return self.stdout_bytes()

    @property
    def stderr(self) -> bytes:
        """The last step's stderr as exact bytes."""
        return self.stderr_bytes()

    def to_record(self, step: Optional[str] = None) -> Dict[str, Any]:
        """One flat row (str, int, float, bool or None values; the same keys
        for every Result) for a table: see surgebox/_records.py's RECORD_KEYS."""
        from ._records import record_of
        return record_of(self, step)

    def output_files(self, step: Optional[str] = None) -> Dict[str, bytes]:
        """{path: bytes} of the files returned (outputs) that came back; errors left out."""
        s = self.step(step)
        out = {}
        for o in (s or {}).get("outputs") or []:
            if "content_b64" in o:
                out[o["path"]] = base64.b64decode(o["content_b64"], validate=True)
        return out
