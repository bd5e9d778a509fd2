"""The asyncio fleet (issue 39): Fleet's guarantees (fleet.py) on one event
loop, with no thread of its own.

Each Unix-socket daemon is reached through one AsyncClient connection that
carries every job sent to it (requests matched to answers by id); each HTTP
daemon through a small pool of keep-alive connections, one request at a time
each. The prober is a task of the loop. Rules as Fleet's: least outstanding;
a daemon that stops answering is taken out (its connections closed, so the
jobs in flight on it fail at once) and probed back in; a job whose daemon
failed before answering runs again elsewhere, with back-off, at most
`attempts` times; only such failures are retried, never an answer that
arrived, so each job's answer is delivered once.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _conn
from ._jobs import Result, SurgeboxError, error_of
from .aio import AsyncClient, cancel_task
from .fleet import (_ANSWER_MARGIN_S, Endpoint, EndpointSpec, FleetUnsupported, _Infra, _limits_seconds, _metric_p99,
                    answered, job_request, parse_endpoints, queue_p99_of, retry_why, sends, status_of,
                    take_or_wait, unavailable)

_HTTP_ERRORS = (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError)


class AioFleet:
    """Many daemons behind one asyncio client (module docstring). Create it
    anywhere; start() (from the loop) starts its prober; close() ends it."""

    def __init__(self, endpoints: Union[None, str, Sequence[EndpointSpec]] = None, *, probe_interval: float = 1.0,
                 probe_timeout: float = 3.0, attempts: int = 4, backoff: Sequence[float] = (0.05, 1.0),
                 answer_margin: float = _ANSWER_MARGIN_S) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        if answer_margin < 0:
            raise ValueError("answer_margin must not be negative")
        self.endpoints = parse_endpoints(endpoints)
        self.probe_interval = probe_interval
        self.probe_timeout = probe_timeout
        self.attempts = attempts
        self.backoff = tuple(backoff)
        self.answer_margin = answer_margin
        self.retries = 0  # sends beyond each job's first
        self._next = 0
        self._closed = False
        self._prober: Optional[asyncio.Future] = None
        self._came_up: Optional[asyncio.Event] = None  # set (and replaced) when a daemon comes back
        self._unix: Dict[str, AsyncClient] = {}  # a Unix-socket daemon's one connection
        self._opening: Dict[str, asyncio.Lock] = {}
        self._idle: Dict[str, List[Tuple[Any, Any]]] = {e.name: [] for e in self.endpoints}  # HTTP keep-alive
        self._inflight: Dict[str, set] = {e.name: set() for e in self.endpoints}  # HTTP writers awaiting answers

    # --- life cycle -------------------------------------------------------
    def start(self) -> None:
        """Start the prober on the running loop (again after nothing: once)."""
        if self._prober is None:
            self._came_up = asyncio.Event()
            self._prober = asyncio.ensure_future(self._probe_loop())

    async def close(self) -> None:
        """Stop the prober and close every connection (the daemons cancel jobs still running on them)."""
        self._closed = True
        if self._prober is not None:
            await cancel_task(self._prober)
        for cl in list(self._unix.values()):
            await cl.close()
        self._unix.clear()
        for name in self._idle:
            for _, w in self._idle[name]:
                w.close()
            self._idle[name] = []
            for w in list(self._inflight[name]):
                w.transport.abort()

    def status(self) -> List[Dict[str, Any]]:
        """Each daemon as this client sees it (as Fleet.status)."""
        return [status_of(e) for e in self.endpoints]

    def answer_wait(self, req: Mapping[str, Any], ep: Endpoint) -> float:
        """As Fleet.answer_wait: the job's limits + 2 x the daemon's p99 queue time + answer_margin."""
        return _limits_seconds(req) + 2.0 * ep.queue_p99 + self.answer_margin

    async def ask(self, ep: Endpoint, obj: Mapping[str, Any]) -> Dict[str, Any]:
        """One non-exec request to one Unix-socket daemon (as Fleet.ask)."""
        if ep.kind != "unix":
            raise FleetUnsupported("a %r request" % obj.get("type"), "%s is an HTTP endpoint, which serves exec "
                                   "only (/v1/jobs)" % ep.name)
        try:
            cl = await self._unix_client(ep)
            resp = await asyncio.wait_for(cl._call(dict(obj, id="fleet-ask-%x" % random.getrandbits(32))),
                                          self.probe_timeout)
            resp = await asyncio.wait_for(resp, self.probe_timeout)
        except (_Infra, OSError, asyncio.TimeoutError, SurgeboxError) as e:
            raise SurgeboxError("fleet_unavailable", "%s: %s" % (ep.name, e or type(e).__name__))
        if not isinstance(resp, dict) or resp.get("type") == "error":
            raise error_of(resp if isinstance(resp, dict) else {"error": {"code": "protocol", "message": repr(resp)}})
        return resp

    # --- health -------------------------------------------------------------
    def _take_out(self, ep: Endpoint, why: str) -> None:
        ep.failures += 1
        if not ep.up:
            return
        ep.up = False
        ep.out_since = time.monotonic()
        # its answers will not come: fail the jobs in flight on it now, to be sent elsewhere
        cl = self._unix.pop(ep.name, None)
        if cl is not None:
            cl._fail(_Infra("taken out: %s" % why))
            asyncio.ensure_future(cl.close())
        for _, w in self._idle[ep.name]:
            w.close()
        self._idle[ep.name] = []
        for w in list(self._inflight[ep.name]):
            w.transport.abort()

    def _bring_in(self, ep: Endpoint) -> None:
        if not ep.up:
            ep.up = True
            ep.out_since = None
            ep.failures = 0
            ev, self._came_up = self._came_up, asyncio.Event()
            ev.set()

    async def _probe(self, ep: Endpoint) -> Optional[str]:
        """None when ep answers within probe_timeout, else why not."""
        try:
            if ep.kind == "unix":  # a fresh connection: the shared one may be busy with large answers
                r, w = await asyncio.wait_for(asyncio.open_unix_connection(ep.name, limit=1 << 24), self.probe_timeout)
                try:
                    w.write(_conn.encode({"id": "fleet-probe", "type": "status"}))
                    line = await asyncio.wait_for(r.readline(), self.probe_timeout)
                finally:
                    w.close()
                resp = json.loads(line) if line else None
                if not isinstance(resp, dict) or resp.get("type") != "status":
                    return "odd answer to a status: %.80r" % (resp,)
                self._set_queue_p99(ep, (resp.get("queue_time") or {}).get("p99_s"))
                return None
            status, _ = await self._http(ep, "GET", "/v1/ping", b"", self.probe_timeout, pooled=False)
            if status in (401, 403):
                ep.refused = "%s refused this client's token (HTTP %d)" % (ep.name, status)
                return ep.refused
            if status != 200:
                return "HTTP %d to a ping" % status
            status, body = await self._http(ep, "GET", "/metrics", b"", self.probe_timeout, pooled=False)
            if status == 200:
                self._set_queue_p99(ep, _metric_p99(body.decode("utf-8", "replace")))
            return None
        except (_Infra, asyncio.TimeoutError) + _HTTP_ERRORS as e:
            return str(e) or type(e).__name__

    @staticmethod
    def _set_queue_p99(ep: Endpoint, p99: Any) -> None:
        value = queue_p99_of(p99)
        if value is not None:
            ep.queue_p99 = value

    async def _probe_one(self, ep: Endpoint) -> None:
        why = await self._probe(ep)
        if why is None:
            self._bring_in(ep)
        elif ep.refused is not None:  # said to its jobs, never retried
            ep.up = False
        else:
            self._take_out(ep, why)

    async def _probe_loop(self) -> None:
        while not self._closed:
            # each daemon probed at once: a hung one does not delay the others' probes
            await asyncio.gather(*(self._probe_one(e) for e in self.endpoints if e.refused is None))
            await asyncio.sleep(self.probe_interval)

    async def _pick(self, avoid: Optional[Endpoint], give_up_at: float) -> Optional[Endpoint]:
        """The daemon with the fewest of our jobs outstanding (ties in turn), its count taken."""
        while True:
            ep, wait = take_or_wait(self, avoid, give_up_at)
            if wait is None:
                return ep
            try:
                await asyncio.wait_for(self._came_up.wait(), wait)
            except asyncio.TimeoutError:
                pass

    # --- jobs ---------------------------------------------------------------
    async def one(self, user_id: Any, job: Mapping[str, Any]) -> Result:
        """Run one job (run()'s keywords) on the fleet: its Result, with "daemon" and "attempts"."""
        self.start()
        req, give_up_at = job_request(self, job)
        last_ep: Optional[Endpoint] = None
        why = "no daemon of the fleet answers"
        for attempt, pause in sends(self):
            if pause:
                await asyncio.sleep(pause)
            ep = await self._pick(last_ep, give_up_at)
            if ep is None:
                break
            last_ep = ep
            try:
                resp = await self._send(ep, req, self.answer_wait(req, ep))
            except _Infra as e:
                why = "%s: %s" % (ep.name, e)
                continue
            finally:
                ep.outstanding -= 1
            again = retry_why(resp, ep)
            if again:
                why = again
                continue
            return answered(resp, user_id, ep, attempt)
        return unavailable(user_id, self.attempts, why)

    async def _send(self, ep: Endpoint, req: Dict[str, Any], wait: float) -> Dict[str, Any]:
        if ep.kind == "unix":
            return await self._send_unix(ep, req, wait)
        status, body = await self._http(ep, "POST", "/v1/jobs", _conn.encode(req), wait)
        if status in (401, 403):
            raise SurgeboxError("unauthorized", "%s refused this client's token (HTTP %d): check the endpoint's "
                                "token or token-file" % (ep.name, status))
        if status in (502, 503, 504):
            raise _Infra("HTTP %d" % status)
        try:
            resp = json.loads(body)
        except ValueError as e:
            raise _Infra("HTTP %d with a body that is not JSON: %s" % (status, e))
        if not isinstance(resp, dict):
            raise _Infra("HTTP %d with a body that is not an object" % status)
        return resp

    async def _unix_client(self, ep: Endpoint) -> AsyncClient:
        """ep's shared connection, opened when it has none (or lost it)."""
        cl = self._unix.get(ep.name)
        if cl is not None and cl._lost is None:
            return cl
        lock = self._opening.setdefault(ep.name, asyncio.Lock())
        async with lock:
            cl = self._unix.get(ep.name)
            if cl is not None and cl._lost is None:
                return cl
            if cl is not None:
                await cl.close()
            cl = AsyncClient(ep.name, autostart=False)
            try:
                await asyncio.wait_for(cl.open(), self.probe_timeout)
            except (OSError, SurgeboxError, asyncio.TimeoutError) as e:
                await cl.close()
                self._take_out(ep, "connecting: %s" % e)
                raise _Infra("connecting: %s" % (e or type(e).__name__))
            self._unix[ep.name] = cl
            return cl

    async def _send_unix(self, ep: Endpoint, req: Dict[str, Any], wait: float) -> Dict[str, Any]:
        cl = await self._unix_client(ep)
        try:
            fut = await cl._call(req)
            # a timer that fails fut: asyncio.wait_for would add a future and a turn of the loop to each answer
            timer = cl._loop.call_later(wait, _time_out, fut)
            try:
                resp = await fut
            finally:
                timer.cancel()
        except asyncio.TimeoutError:
            self._take_out(ep, "no answer in %.1f s" % wait)
            raise _Infra("no answer in %.1f s: the daemon is called hung" % wait)
        except (_Infra, SurgeboxError, OSError) as e:  # the connection ended (or was ended by a take-out)
            self._take_out(ep, str(e))
            raise _Infra(str(e) or type(e).__name__)
        if not isinstance(resp, dict):
            raise _Infra("an answer that is not an object")
        return resp

    async def _http(self, ep: Endpoint, method: str, path: str, body: bytes, wait: float,
                    pooled: bool = True) -> Tuple[int, bytes]:
        """One HTTP/1.1 request to ep: (status, body); _Infra when the connection fails. A kept-alive
        connection the daemon closed meanwhile is replaced once, without counting as a failure."""
        head = "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Length: %d\r\n" % (method, path, ep.host, ep.port, len(body))
        if method == "POST":
            head += "Content-Type: application/json\r\n"
        if ep.token:
            head += "Authorization: Bearer %s\r\n" % ep.token
        if not pooled:
            head += "Connection: close\r\n"
        data = (head + "\r\n").encode("latin-1") + body
        idle = self._idle[ep.name]
        while True:
            reused = pooled and bool(idle)
            if reused:
                r, w = idle.pop()
            else:
                try:
                    r, w = await asyncio.wait_for(asyncio.open_connection(ep.host, ep.port, limit=1 << 24),
                                                  self.probe_timeout)
                except (OSError, asyncio.TimeoutError) as e:
                    if pooled:
                        self._take_out(ep, "connecting: %s" % e)
                    raise _Infra("connecting: %s" % (e or type(e).__name__))
            if pooled:
                self._inflight[ep.name].add(w)
            got_any = False
            try:
                w.write(data)
                await w.drain()
                status_line = await asyncio.wait_for(r.readline(), wait)
                got_any = bool(status_line)
                status, length, close = await asyncio.wait_for(_read_head(r, status_line), wait)
                answer = await asyncio.wait_for(r.readexactly(length), wait)
            except asyncio.TimeoutError:
                w.close()
                if pooled:
                    self._take_out(ep, "no answer in %.1f s" % wait)
                raise _Infra("no answer in %.1f s: the daemon is called hung" % wait)
            except _HTTP_ERRORS as e:
                w.close()
                if reused and not got_any:
                    continue
                if pooled:
                    self._take_out(ep, str(e))
                raise _Infra("%s: %s" % (type(e).__name__, e))
            finally:
                self._inflight[ep.name].discard(w)
            if close or not pooled or self._closed:
                w.close()
            else:
                idle.append((r, w))
            return status, answer


def _time_out(fut: "asyncio.Future[Any]") -> None:
    if not fut.done():
        fut.set_exception(asyncio.TimeoutError())


async def _read_head(r: asyncio.StreamReader, status_line: bytes) -> Tuple[int, int, bool]:
    """(status, Content-Length, Connection: close) of an HTTP/1.1 answer whose first line was read."""
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError("not an HTTP answer: %.60r" % status_line)
    status = int(parts[1])
    length, close = 0, False
    while True:
        line = await r.readline()
        if not line:
            raise EOFError("the connection ended inside an HTTP head")
        if line in (b"\r\n", b"\n"):
            return status, length, close
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip())
        elif name == b"connection" and value.strip().lower() == b"close":
            close = True
