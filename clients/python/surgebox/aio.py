"""surgebox.AsyncClient: the asyncio client (one connection, many jobs in flight)."""
from __future__ import annotations

import asyncio
import collections
from typing import Any, AsyncIterable, AsyncIterator, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _conn
from ._tracejob import trace_job_of, trace_of
from .trace import Trace
from ._jobs import (ConnectionLost, Files, Result, Stdin, Step, SurgeboxError, build_exec,
                    cancel_after_of, error_of, warned_rename)


async def cancel_task(task: "asyncio.Future[Any]") -> None:
    """Cancel an asyncio task and wait for its end, whatever it raises."""
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):
        pass


class AsyncClient:
    """As surgebox.Client, for asyncio. Use `async with AsyncClient(...) as c`
    (or `await AsyncClient(...).open()` and `await c.close()`)."""

    def __new__(cls, *args: Any, endpoints: Any = None, fleet: bool = False, **kw: Any) -> "AsyncClient":
        """As Client's: with endpoints (or fleet=True) an AsyncFleet (fleet_client.py)."""
        return _conn.single_or_fleet(cls, AsyncClient, "AsyncFleet", endpoints, fleet)

    def __init__(self, socket: Optional[str] = None, *, private: bool = False, autostart: bool = True,
                 surgeboxd: Optional[str] = None, daemon_args: Sequence[str] = (),
                 busy_backoff: Tuple[float, float] = (0.05, 2.0), busy_timeout: Optional[float] = None,
                 endpoints: Any = None, fleet: bool = False) -> None:
        self._opts = (socket, private, autostart, surgeboxd, tuple(daemon_args))
        self.busy_backoff = busy_backoff
        self.busy_timeout = busy_timeout
        self.busy_retries = 0
        self.daemon = None
        self._reader = self._writer = self._task = self._loop = None
        self._waiters = {}
        self._next_id = 0
        self._lost = None

    async def open(self) -> "AsyncClient":
        """Connect (or start a private daemon, as Client does); returns self."""
        socket, private, autostart, surgeboxd, daemon_args = self._opts
        path, named_by = _conn.plan_socket(socket, private)
        if path is not None:
            try:
                await self._connect(path)
            except OSError as e:
                err = _conn.connect_failed(path, named_by, autostart, e)
                if err is not None:
                    raise err from e
        if self._writer is None:
            # started from the loop's thread (its death signal follows that
            # thread); the wait for "ready" blocks, so it runs off the loop
            self.daemon = _conn.start_private(surgeboxd, daemon_args, wait=False)
            try:
                await asyncio.get_event_loop().run_in_executor(None, self.daemon.wait_ready)
                await self._connect(self.daemon.socket)
            except BaseException:
                await self.close()
                raise
        self._task = asyncio.ensure_future(self._read_loop())
        return self

    async def _connect(self, path):
        # responses can be large (outputs, 8 MiB streams in base64): no line cap of our own
        self._reader, self._writer = await asyncio.open_unix_connection(path, limit=1 << 30)
        if hasattr(self._writer.transport, "max_size"):  # asyncio's recv size (256 KiB): under malloc's
            self._writer.transport.max_size = _conn.CHUNK    # mmap threshold, no mmap/munmap an answer
        self._loop = asyncio.get_event_loop()
        self.socket_path = path

    async def close(self) -> None:
        """Close the connection (the daemon cancels our running jobs); stop a private daemon."""
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (OSError, AttributeError):
                pass
            self._writer = None
        if self._task is not None:
            await cancel_task(self._task)
            self._task = None
        if self.daemon is not None:
            d, self.daemon = self.daemon, None
            await asyncio.get_event_loop().run_in_executor(None, d.stop)

    async def __aenter__(self) -> "AsyncClient":
        return await self.open()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _read_loop(self):
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    raise ConnectionLost("the daemon closed the connection")
                if not line.endswith(b"\n"):
                    raise ConnectionLost("the connection ended inside a line")
                try:
                    resp = _conn.decode(line)
                except ValueError as e:
                    raise ConnectionLost("the daemon sent a line that is not JSON: %s" % e)
                rid = resp.get("id") if isinstance(resp, dict) else None
                fut = self._waiters.pop(rid, None)
                if rid is None:
                    err = resp.get("error", {}) if isinstance(resp, dict) else {}
                    raise SurgeboxError(err.get("code", "protocol"), err.get("message", repr(resp)), resp)
                if fut is not None and not fut.done():
                    fut.set_result(resp)
        except asyncio.CancelledError:
            self._fail(ConnectionLost("the client is closed"))
            raise
        except Exception as e:  # every waiter learns why
            self._fail(e if isinstance(e, SurgeboxError) else ConnectionLost(str(e)))

    def _fail(self, exc):
        self._lost = exc
        waiters, self._waiters = self._waiters, {}
        for fut in waiters.values():
            if not fut.done():
                fut.set_exception(exc)

    def _new_id(self):
        self._next_id += 1
        return self._next_id

    async def _call(self, obj):
        """Send obj (its id set) and return the future of its response."""
        if self._lost is not None:
            raise self._lost
        if self._writer is None:
            raise ConnectionLost("the client is not open")
        fut = self._loop.create_future()
        self._waiters[obj["id"]] = fut
        self._writer.write(_conn.encode(obj))
        await self._writer.drain()
        return fut

    async def request(self, obj: Mapping[str, Any]) -> Dict[str, Any]:
        """Send one request of any type (its id is set here) and return its response dict."""
        req = dict(obj, id="r%d" % self._new_id())
        resp = await (await self._call(req))
        if resp.get("type") == "error":
            err = resp.get("error") or {}
            raise error_of(resp)
        return resp

    async def ping(self) -> Dict[str, Any]:
        """As Client.ping."""
        return await self.request({"type": "ping"})

    async def status(self) -> Dict[str, Any]:
        """As Client.status."""
        return await self.request({"type": "status"})

    async def toolchains(self, profile: Optional[str] = None) -> List[Dict[str, Any]]:
        """As Client.toolchains."""
        return (await self.request({"type": "toolchains", **({"profile": profile} if profile else {})}))["toolchains"]

    async def run(self, steps: Optional[Sequence[Step]] = None, *, toolchain: Optional[str] = None,
                  files: Optional[Files] = None, stdin: Optional[Stdin] = None,
                  options: Optional[Mapping[str, Any]] = None, args: Optional[Sequence[str]] = None,
                  limits: Optional[Mapping[str, Any]] = None, outputs: Optional[Sequence[str]] = None,
                  outputs_max_bytes: Optional[int] = None, output_encoding: Optional[str] = None,
                  profile: Optional[str] = None, cancel_after: Optional[float] = None,
                  timeout: Optional[float] = None, warm: bool = False) -> Result:
        """As Client.run: one job, its Result; SurgeboxError on an error response."""
        job = _conn.run_job(steps, toolchain, files, stdin, options, args, limits, outputs, outputs_max_bytes,
                            output_encoding, profile, cancel_after, warm, timeout)
        res = await self._run_job(job, 0, None)
        if res.get("type") == "error":
            raise error_of(res)
        return res

    async def trace(self, source: str, *, files: Optional[Files] = None, entry: str = "main.py",
                    args: Optional[Sequence[str]] = None, stdin: Optional[Stdin] = None, toolchain: str = "python3",
                    limits: Optional[Mapping[str, Any]] = None, trace_limits: Optional[Mapping[str, int]] = None,
                    check: bool = True, profile: Optional[str] = None,
                    cancel_after: Optional[float] = None) -> Trace:
        """As Client.trace: `source` run as `python3 ENTRY ARGS` under the tracer, its parsed Trace."""
        job = trace_job_of(source, files, entry, args, stdin, toolchain, limits, trace_limits, check, profile,
                           cancel_after)
        res = await self._run_job(job, 0, None)
        if res.get("type") == "error":
            raise error_of(res)
        return trace_of(res)

    async def _run_job(self, item, index, default_cancel_after):
        job = _conn.as_job(item)
        user_id = job.get("id", index)
        cancel_after = cancel_after_of(job, default_cancel_after)
        req = build_exec(job, self._new_id())  # it sends none of CLIENT_FIELDS
        loop = self._loop
        deadline = None if cancel_after is None else loop.time() + cancel_after
        attempt = 0
        busy_since = None
        while True:
            fut = await self._call(req)
            try:
                if deadline is None:  # a cancel of this task cancels fut too: its waiter is popped below
                    resp = await fut
                else:
                    resp = await asyncio.wait_for(asyncio.shield(fut), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                cancel = {"id": "cancel-%d" % self._new_id(), "type": "cancel", "target": req["id"]}
                cfut = await self._call(cancel)
                resp = await fut  # the cancelled exec (or its answer, if it won the race)
                await cfut
                res = Result(resp)
                res["id"] = user_id
                if res.get("status") == "cancelled":
                    res["client_timeout"] = True
                return res
            except asyncio.CancelledError:
                # our caller gave up: the job must not go on running for nobody
                self._waiters.pop(req["id"], None)
                if self._writer is not None and self._lost is None:
                    cid = "cancel-%d" % self._new_id()
                    self._writer.write(_conn.encode({"id": cid, "type": "cancel", "target": req["id"]}))
                raise
            if resp.get("type") != "error":
                res = Result(resp)
                res["id"] = user_id
                return res
            err = resp.get("error") or {}
            if err.get("code") != "busy":
                return _conn.error_result(user_id, err)
            if busy_since is None:
                busy_since = loop.time()
            if self.busy_timeout is not None and loop.time() - busy_since >= self.busy_timeout:
                return _conn.error_result(user_id, {"code": "busy", "message": "still busy after %gs" % self.busy_timeout})
            delay = _conn.backoff(attempt, *self.busy_backoff)
            attempt += 1
            if deadline is not None and loop.time() + delay >= deadline:
                await asyncio.sleep(max(0.0, deadline - loop.time()))
                return _conn.timeout_result(user_id, "client timeout while the daemon was busy")
            await asyncio.sleep(delay)
            self.busy_retries += 1

    async def run_many(self, jobs: Union[Iterable[Mapping[str, Any]], AsyncIterable[Mapping[str, Any]]],
                       concurrency: int = 8, *, cancel_after: Optional[float] = None,
                       timeout: Optional[float] = None) -> AsyncIterator[Result]:
        """Async generator of Results as jobs finish; at most `concurrency` in flight;
        `jobs` (an iterable or async iterable) consumed lazily. As Client.run_many."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if timeout is not None:
            warned_rename("timeout", "cancel_after")
            cancel_after = timeout if cancel_after is None else cancel_after
        if hasattr(jobs, "__aiter__"):
            ait = jobs.__aiter__()

            async def next_item():
                try:
                    return True, await ait.__anext__()
                except StopAsyncIteration:
                    return False, None
        else:
            it = iter(jobs)

            async def next_item():
                try:
                    return True, next(it)
                except StopIteration:
                    return False, None
        pending = set()
        # tasks in the order they finished, not yielded yet: each task's done callback appends it
        # and wakes run_many (asyncio.wait would add and remove a callback on every pending task
        # for each Result)
        finished = collections.deque()
        wake = [None]

        def on_done(t):
            finished.append(t)
            if wake[0] is not None and not wake[0].done():
                wake[0].set_result(None)
        loop = asyncio.get_event_loop()
        index = 0
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < concurrency:
                    more, item = await next_item()
                    if not more:
                        exhausted = True
                        break
                    t = loop.create_task(self._run_job(item, index, cancel_after))
                    t.add_done_callback(on_done)
                    pending.add(t)
                    index += 1
                if not pending:
                    return
                if not finished:
                    wake[0] = loop.create_future()
                    try:
                        await wake[0]
                    finally:
                        wake[0] = None
                t = finished.popleft()
                pending.discard(t)
                yield t.result()
        finally:
            for t in pending:  # abandoned early: each task cancels its job
                t.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
