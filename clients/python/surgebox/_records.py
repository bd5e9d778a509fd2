"""Results as flat rows (Result.to_record) and as a pandas DataFrame.

A row has the same keys for every Result, so a list of rows is a table
whatever mix of statuses it holds. The step columns describe one step: the
one named, else the last that ran (where a failed compile shows). Streams
are text: the exact bytes decoded as UTF-8, with "stdout_lossy" true when
that needed replacement characters (the exact bytes: Result.stdout).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Tuple

from ._jobs import exact_bytes

if TYPE_CHECKING:  # pragma: no cover
    import pandas

#: The keys of every row, in column order.
RECORD_KEYS = ("id", "status", "error", "client_timeout", "steps", "step", "step_status", "exit_code", "signal",
               "limit_hit", "cpu_time_s", "wall_time_s", "max_rss_kb", "stdout", "stdout_lossy",
               "stdout_truncated", "stderr", "stderr_lossy", "stderr_truncated")
_STEP_KEYS = ("exit_code", "signal", "limit_hit", "cpu_time_s", "wall_time_s", "max_rss_kb")


def _text(step: Mapping[str, Any], stream: str) -> Tuple[str, bool]:
    data = exact_bytes(step, stream)
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


def record_of(result: Mapping[str, Any], step: Optional[str] = None) -> Dict[str, Any]:
    """The flat row of one Result (see the module's docstring and RECORD_KEYS)."""
    row: Dict[str, Any] = dict.fromkeys(RECORD_KEYS)
    row["id"] = result.get("id")
    row["status"] = result.get("status")
    err = result.get("error")
    if isinstance(err, dict):
        err = ("%s: %s" % (err.get("code"), err.get("message"))) if err else None
    row["error"] = err
    row["client_timeout"] = bool(result.get("client_timeout"))
    steps = result.get("steps") or []
    row["steps"] = len(steps)
    chosen = None
    if step is None:
        chosen = steps[-1] if steps else None
    else:
        chosen = next((s for s in steps if s.get("name") == step), None)
    if chosen is not None:
        row["step"] = chosen.get("name")
        row["step_status"] = chosen.get("status")
        for k in _STEP_KEYS:
            row[k] = chosen.get(k)
        for stream in ("stdout", "stderr"):
            row[stream], row[stream + "_lossy"] = _text(chosen, stream)
            row[stream + "_truncated"] = bool(chosen.get(stream + "_truncated"))
    return row


def to_dataframe(results: Iterable[Any], step: Optional[str] = None) -> "pandas.DataFrame":
    """A pandas DataFrame with one row per Result (Result.to_record's
    columns, in RECORD_KEYS order). Needs pandas (not a dependency of
    surgebox): ImportError naming `pip install pandas` when it is missing."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("surgebox.to_dataframe needs pandas, which is not installed: "
                          "pip install pandas (or use [r.to_record() for r in results])") from e
    return pandas.DataFrame([record_of(r, step) for r in results], columns=list(RECORD_KEYS))
