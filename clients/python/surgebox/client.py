"""surgebox.Client: the blocking client (one connection, many jobs in flight).

Not thread-safe: one thread drives a Client (use one Client per thread).
"""
from __future__ import annotations

import select
import socket as _socket
import time
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _conn
from ._jobs import (ConnectionLost, Files, Result, Stdin, Step, SurgeboxError, build_exec,
                    cancel_after_of, error_of, job_of, warned_rename)
from ._tracejob import trace_job_of, trace_of
from .trace import Trace


class _Job:
    __slots__ = ("user_id", "req", "deadline", "cancel_after", "cancel_sent", "retry_at", "attempt", "busy_since")


class Client:
    """Connects to a running surgeboxd, or starts a private one.

    socket: the daemon's socket (default: $SURGEBOX_SOCKET, else the C CLI's
      default path); private=True: always start a private daemon;
    autostart: when neither `socket` nor $SURGEBOX_SOCKET names one and none
      answers at the default path, start a private daemon (as the `surgebox`
      CLI does). A socket named explicitly that does not answer raises
      NoDaemon (naming the path and the next step), never a daemon beside it;
    surgeboxd: the daemon binary for a private daemon (else $SURGEBOXD, else PATH);
    daemon_args: extra arguments for it (e.g. ["--jobs", "4", "--cache-dir", d]);
    busy_backoff: (first, max) seconds between retries of a `busy` exec;
    busy_timeout: give up on an exec that stays `busy` this long (None: never);
    endpoints: a list of daemons (Unix sockets, http:// URLs with tokens), or
      fleet=True for $SURGEBOX_ENDPOINTS: the Client is then a FleetClient,
      these methods on surgebox.Fleet (docs/python.md, "Many daemons").
    """

    def __new__(cls, *args: Any, endpoints: Any = None, fleet: bool = False, **kw: Any) -> "Client":
        """Client(endpoints=[...]) (or fleet=True: $SURGEBOX_ENDPOINTS) is a FleetClient: the same
        methods on a fleet of daemons (fleet_client.py); without them, one daemon as before."""
        return _conn.single_or_fleet(cls, Client, "FleetClient", endpoints, fleet)

    def __init__(self, socket: Optional[str] = None, *, private: bool = False, autostart: bool = True,
                 surgeboxd: Optional[str] = None, daemon_args: Sequence[str] = (),
                 busy_backoff: Tuple[float, float] = (0.05, 2.0), busy_timeout: Optional[float] = None,
                 endpoints: Any = None, fleet: bool = False) -> None:
        self.daemon = None
        self._sock = None
        self._lines = None
        self._stash = {}
        self._dropped = set()
        self._next_id = 0
        self.busy_backoff = busy_backoff
        self.busy_timeout = busy_timeout
        self.busy_retries = 0  # how many times an exec was sent again after `busy`
        path, named_by = _conn.plan_socket(socket, private)
        if path is not None:
            try:
                self._connect(path)
            except OSError as e:
                err = _conn.connect_failed(path, named_by, autostart, e)
                if err is not None:
                    raise err from e
        if self._sock is None:
            self.daemon = _conn.start_private(surgeboxd, daemon_args)
            try:
                self._connect(self.daemon.socket)
            except BaseException:
                self.close()
                raise

    def _connect(self, path):
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            s.connect(path)
        except BaseException:
            s.close()
            raise
        self._sock = s
        self._lines = _conn.Lines(s)
        self.socket_path = path

    # --- life cycle -------------------------------------------------------
    def close(self) -> None:
        """Close the connection (the daemon cancels our running jobs); stop a private daemon."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self.daemon is not None:
            self.daemon.stop()
            self.daemon = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- wire --------------------------------------------------------------
    def _new_id(self):
        self._next_id += 1
        return self._next_id

    def _send(self, obj):
        if self._sock is None:
            raise ConnectionLost("the client is closed")
        try:
            self._sock.sendall(_conn.encode(obj))
        except OSError as e:
            raise ConnectionLost("sending to the daemon: %s" % e)

    def _read_one(self, wait):
        """One response, or None when `wait` seconds passed first (None: wait forever)."""
        lines = self._lines
        end = None if wait is None else time.monotonic() + wait
        while not lines.ready:
            if end is not None and not lines.part:  # a partial line: its rest is on its way
                left = max(0.0, end - time.monotonic())
                if not select.select([self._sock], [], [], left)[0]:
                    return None
            try:
                more = lines.fill()
            except OSError as e:
                raise ConnectionLost("reading from the daemon: %s" % e)
            if not more:
                raise ConnectionLost("the daemon closed the connection")
        try:
            return _conn.decode(lines.ready.popleft())
        except ValueError as e:
            raise ConnectionLost("the daemon sent a line that is not JSON: %s" % e)

    def _next_response(self, wanted, wait):
        """A response whose id is in `wanted` (stashing others), or None after `wait` s."""
        if self._stash:
            for wid in list(self._stash):
                if wid in wanted:
                    return self._stash.pop(wid)
        end = None if wait is None else time.monotonic() + wait
        while True:
            left = None if end is None else max(0.0, end - time.monotonic())
            resp = self._read_one(left)
            if resp is None:
                return None
            rid = resp.get("id") if isinstance(resp, dict) else None
            if rid is None:
                err = resp.get("error", {}) if isinstance(resp, dict) else {}
                raise SurgeboxError(err.get("code", "protocol"), err.get("message", repr(resp)), resp)
            if rid in wanted:
                return resp
            if rid in self._dropped:  # a job of an abandoned run_many, or its cancel
                self._dropped.discard(rid)
                continue
            self._stash[rid] = resp
            if end is not None and time.monotonic() >= end:
                return None

    def request(self, obj: Mapping[str, Any]) -> Dict[str, Any]:
        """Send one request of any type (its id is set here) and return its response dict."""
        wid = "r%d" % self._new_id()
        req = dict(obj, id=wid)
        self._send(req)
        resp = self._next_response({wid}, None)
        if resp.get("type") == "error":
            err = resp.get("error") or {}
            raise error_of(resp)
        return resp

    def ping(self) -> Dict[str, Any]:
        """The daemon's answer to a ping (its version and protocol)."""
        return self.request({"type": "ping"})

    def status(self) -> Dict[str, Any]:
        """The daemon's status: jobs running and queued, workers, uptime (PROTOCOL.md)."""
        return self.request({"type": "status"})

    def toolchains(self, profile: Optional[str] = None) -> List[Dict[str, Any]]:
        """The toolchains (of `profile`'s root when given: UnknownProfile if the daemon has none of that name)."""
        return self.request({"type": "toolchains", **({"profile": profile} if profile else {})})["toolchains"]

    # --- jobs --------------------------------------------------------------
    def run(self, steps: Optional[Sequence[Step]] = None, *, toolchain: Optional[str] = None,
            files: Optional[Files] = None, stdin: Optional[Stdin] = None,
            options: Optional[Mapping[str, Any]] = None, args: Optional[Sequence[str]] = None,
            limits: Optional[Mapping[str, Any]] = None, outputs: Optional[Sequence[str]] = None,
            outputs_max_bytes: Optional[int] = None, output_encoding: Optional[str] = None,
            profile: Optional[str] = None, cancel_after: Optional[float] = None,
            timeout: Optional[float] = None, warm: bool = False) -> Result:
        """Run one job and return its Result (raises SurgeboxError on an error response).

        Either `steps` (step dicts or argv lists) or `toolchain` (with
        `options`, `args`, `stdin`, `limits`, `outputs`); `files` as
        {path: str | bytes}; `stdin` as str or bytes; `limits` the sandbox's
        limits in the protocol's names ({"time_s": 5, "memory_mib": 256});
        `output_encoding="base64"`; `outputs_max_bytes`; `profile`.
        `cancel_after`: client-side seconds from sending (time queued in the
        daemon included), then the job is cancelled (its Result says
        "status": "cancelled", "client_timeout": true). `timeout` is its old
        name (DeprecationWarning). `warm=True`: Python steps start from the
        daemon's warm interpreter, same isolation (PROTOCOL.md "Warm
        starts"; each step's enforced.start says how it started)."""
        job = _conn.run_job(steps, toolchain, files, stdin, options, args, limits, outputs, outputs_max_bytes,
                            output_encoding, profile, cancel_after, warm, timeout)
        res = next(self.run_many([job], concurrency=1))
        if res.get("type") == "error":
            raise error_of(res)
        return res

    def run_cases(self, cases: Sequence[Mapping[str, Any]], *, steps: Optional[Sequence[Step]] = None,
                  toolchain: Optional[str] = None, files: Optional[Files] = None,
                  options: Optional[Mapping[str, Any]] = None, args: Optional[Sequence[str]] = None,
                  limits: Optional[Mapping[str, Any]] = None, stop: Optional[str] = None,
                  budget_s: Optional[float] = None, case_output_bytes: Optional[int] = None,
                  profile: Optional[str] = None, cancel_after: Optional[float] = None,
                  fn_name: Optional[str] = None, compare: Any = None, checker: Optional[Mapping[str, Any]] = None,
                  warm: bool = False) -> Result:
        """Build once, then run every test case against the program, each in a sandbox of its own,
        judged by the daemon (PROTOCOL.md "Test cases"); returns the exec Result.

        `cases`: dicts of {stdin, args, files, expected, compare, limits} (stdin and expected as str
        or bytes); with `toolchain` they belong to its run step, with `steps` to the last step.
        `stop`: "never" (default) or "first_failure"; `budget_s`: wall seconds for all the cases.
        `fn_name`: function-call cases; `compare`: every case's default mode; `checker`: the special
        judge of compare "checker" ({"toolchain", "files"}); `warm`: Python cases start warm.
        The run step's document has `cases` (each with its `verdict`), `case_counts` and
        `first_failure`; a failed build answers in the Result's `cases_not_run`."""
        job = job_of(steps, toolchain, files, None, options, args, limits, None, None, None, profile,
                     cancel_after, warm)
        job["cases"] = list(cases)
        for k, v in (("stop", stop), ("budget_s", budget_s), ("case_output_bytes", case_output_bytes),
                     ("fn_name", fn_name), ("compare", compare), ("checker", checker)):
            if v is not None:
                job[k] = v
        res = next(self.run_many([job], concurrency=1))
        if res.get("type") == "error":
            raise error_of(res)
        return res

    def trace(self, source: str, *, files: Optional[Files] = None, entry: str = "main.py",
              args: Optional[Sequence[str]] = None, stdin: Optional[Stdin] = None, toolchain: str = "python3",
              limits: Optional[Mapping[str, Any]] = None, trace_limits: Optional[Mapping[str, int]] = None,
              check: bool = True, profile: Optional[str] = None, cancel_after: Optional[float] = None) -> Trace:
        """Run `source` as `python3 ENTRY ARGS` (`toolchain` python3 or python3.N) under surgebox's
        tracer and return its parsed Trace (PROTOCOL.md "Traces"); `files` are uploaded beside it.
        `trace_limits`: the tracer's limits ({"events": 1000, "bytes": 65536, ...}). With `check`
        (default) the daemon also runs it untraced: `trace.check` says whether stdout, stderr and exit
        were equal. `trace.result` is the exec Result. SurgeboxError when no trace came back."""
        job = trace_job_of(source, files, entry, args, stdin, toolchain, limits, trace_limits, check, profile,
                           cancel_after)
        res = next(self.run_many([job], concurrency=1))
        if res.get("type") == "error":
            raise error_of(res)
        return trace_of(res)

    def run_many(self, jobs: Iterable[Mapping[str, Any]], concurrency: int = 8, *,
                 cancel_after: Optional[float] = None, timeout: Optional[float] = None) -> Iterator[Result]:
        """Yield a Result per job as each finishes (completion order).

        Each job is a dict of run()'s keywords (plus an optional "id"). Never
        more than `concurrency` jobs in flight (a job waiting to retry `busy`
        counts); `jobs` is consumed lazily, one item per freed slot. A
        Result's "id" is the job's "id" if it had one, else its index in
        `jobs`. `cancel_after` is the default client-side cancel of each job
        (`timeout`: its old name, DeprecationWarning)."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if timeout is not None:
            warned_rename("timeout", "cancel_after")
            cancel_after = timeout if cancel_after is None else cancel_after
        inflight: Dict[str, _Job] = {}
        cancels: set = set()
        try:
            for res in self._pump(iter(jobs), concurrency, cancel_after, inflight, cancels):
                yield res
        finally:
            if inflight and self._sock is not None:  # abandoned early: cancel what still runs
                try:
                    for wid, j in inflight.items():
                        if j.retry_at is None:  # else no answer is outstanding
                            self._dropped.add(wid)
                            cid = "cancel-%d" % self._new_id()
                            self._dropped.add(cid)
                            self._send({"id": cid, "type": "cancel", "target": wid})
                except ConnectionLost:
                    pass
            self._dropped |= cancels

    def _pump(self, it, concurrency, cancel_after, inflight, cancels):
        index = 0
        exhausted = False
        timed = {}  # the jobs of inflight with a deadline or a busy retry: the only ones a turn looks at
        while True:
            while not exhausted and len(inflight) < concurrency:
                try:
                    item = next(it)
                except StopIteration:
                    exhausted = True
                    break
                j = self._submit(item, index, cancel_after)
                index += 1
                inflight[j.req["id"]] = j
                if j.deadline is not None:
                    timed[j.req["id"]] = j
            if not inflight:
                return
            now = time.monotonic()
            wake = None
            finished = None
            for wid, j in timed.items():
                if j.retry_at is not None:
                    if j.deadline is not None and now >= j.deadline:
                        finished = (wid, _conn.timeout_result(j.user_id, "client timeout while the daemon was busy"))
                        break
                    if self.busy_timeout is not None and now - j.busy_since >= self.busy_timeout:
                        finished = (wid, _conn.error_result(j.user_id, {"code": "busy", "message": "still busy after %gs" % self.busy_timeout}))
                        break
                    if now >= j.retry_at:
                        j.retry_at = None
                        self.busy_retries += 1
                        self._send(j.req)
                    else:
                        wake = j.retry_at if wake is None else min(wake, j.retry_at)
                        continue
                if j.deadline is not None and not j.cancel_sent:
                    if now >= j.deadline:
                        cid = "cancel-%d" % self._new_id()
                        cancels.add(cid)
                        j.cancel_sent = True
                        self._send({"id": cid, "type": "cancel", "target": wid})
                    else:
                        wake = j.deadline if wake is None else min(wake, j.deadline)
            if finished is not None:
                del inflight[finished[0]]
                timed.pop(finished[0], None)
                yield finished[1]
                continue
            resp = self._next_response(set(inflight) | cancels if cancels else inflight,
                                       None if wake is None else max(0.0, wake - now))
            if resp is None:
                continue
            rid = resp["id"]
            if rid in cancels:
                cancels.discard(rid)  # answered, or not_found: the job was answered first
                continue
            j = inflight[rid]
            if resp.get("type") == "error" and (resp.get("error") or {}).get("code") == "busy":
                if j.busy_since is None:
                    j.busy_since = time.monotonic()
                j.retry_at = time.monotonic() + _conn.backoff(j.attempt, *self.busy_backoff)
                j.attempt += 1
                timed[rid] = j
                continue
            del inflight[rid]
            timed.pop(rid, None)
            yield self._result(j, resp)

    def _submit(self, item, index, default_cancel_after):
        job = _conn.as_job(item)
        j = _Job()
        j.user_id = job.get("id", index)
        j.cancel_after = cancel_after_of(job, default_cancel_after)
        j.req = build_exec(job, self._new_id())  # it sends none of CLIENT_FIELDS
        j.cancel_sent = False
        j.retry_at = None
        j.attempt = 0
        j.busy_since = None
        j.deadline = None if j.cancel_after is None else time.monotonic() + j.cancel_after
        self._send(j.req)
        return j

    @staticmethod
    def _result(j, resp):
        if resp.get("type") == "error":
            return _conn.error_result(j.user_id, resp.get("error"))
        res = Result(resp)
        res["id"] = j.user_id
        if j.cancel_sent and res.get("status") == "cancelled":
            res["client_timeout"] = True
        return res
