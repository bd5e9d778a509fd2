"""surgebox.Fleet: one client, many daemons (issue 39).

    with surgebox.Fleet(["/run/a.sock", "http://10.0.0.2:8080 token-file=/etc/sb.tok"]) as f:
        for r in f.run_many(jobs, concurrency=64):
            print(r["id"], r.status, r["daemon"])

Work goes to the daemon with the fewest jobs outstanding from this client
(Envoy's "least request"); a daemon that stops answering (a refused or
broken connection, a probe that times out, a SIGSTOPped daemon) is taken out
and probed back in every `probe_interval` seconds. A job whose daemon failed
before answering runs again elsewhere, with back-off, at most `attempts`
times; only such failures of the infrastructure are retried (a daemon's
`busy`, a lost connection, HTTP 502/503/504), never an answer that arrived,
or a job the daemon itself gave up (`cancelled`: a Fleet never cancels, so
that is a daemon shutting down), never an answer that arrived, so a job's
answer is delivered exactly once. Every Result says which daemon
ran it ("daemon") and after how many sends ("attempts"). A job no daemon
could run ends as an error Result (code "fleet_unavailable"), counted and
said, never a verdict; a token a daemon refuses is a SurgeboxError at once.

Endpoints: a list of strings or dicts ({"url": ..., "token": ...}), a
comma-separated string, a file (one endpoint a line, "#" comments), or
$SURGEBOX_ENDPOINTS (either form). An endpoint is a Unix socket path
("/run/sb.sock" or "unix:/run/sb.sock") or an HTTP URL ("http://h:p"), the
latter with "token=T" or "token-file=F" after a space.

Threads: one worker per concurrent job (each with its own connections) and
one prober. A Fleet may be used from one thread at a time.
"""
from __future__ import annotations

import http.client
import json
import os
import queue
import random
import socket as _socket
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from . import _conn
from ._jobs import Result, SurgeboxError, build_exec, error_of

EndpointSpec = Union[str, Mapping[str, str]]

# What the client waits for an answer beyond the job's own limits (the
# daemon's queue, set-up, compile cache) before it calls the daemon hung;
# a hung daemon is normally found sooner by the prober.
_ANSWER_MARGIN_S = 60.0


class FleetUnsupported(SurgeboxError):
    """What a single daemon's client offers but a fleet cannot (code "not_on_fleet")."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__("not_on_fleet", "%s is not offered on a fleet of daemons (Client(endpoints=...)): %s"
                         % (what, why))


class _Infra(Exception):
    """The daemon failed before answering: retry elsewhere."""


class Endpoint:
    """One daemon of the fleet and what this client knows of it."""

    def __init__(self, spec: EndpointSpec) -> None:
        token = None
        if isinstance(spec, Mapping):
            url = str(spec.get("url") or spec.get("socket") or "")
            token = spec.get("token")
            if spec.get("token_file"):
                token = _read_token(spec["token_file"])
        else:
            parts = str(spec).split()
            if not parts:
                raise ValueError("an empty endpoint")
            url = parts[0]
            for extra in parts[1:]:
                key, _, value = extra.partition("=")
                if key == "token":
                    token = value
                elif key == "token-file":
                    token = _read_token(value)
                else:
                    raise ValueError("endpoint %s: unknown setting %r (token=T or token-file=F)" % (url, extra))
        if url.startswith("unix:"):
            url = url[5:]
        if url.startswith("http://"):
            u = urlsplit(url)
            if not u.hostname:
                raise ValueError("endpoint %s: no host" % url)
            self.kind = "http"
            self.host, self.port = u.hostname, u.port or 80
        elif url.startswith("/"):
            self.kind = "unix"
        else:
            raise ValueError("endpoint %r: a Unix socket's absolute path or an http:// URL" % url)
        self.name = url.rstrip("/") if self.kind == "http" else url
        self.token = token
        self.outstanding = 0  # jobs of this client on it now
        self.answered = 0
        self.up = True
        self.refused: Optional[str] = None  # a permanent refusal (the token): never used again
        self.failures = 0  # in a row
        self.out_since: Optional[float] = None  # time.monotonic() when it was taken out
        self.conns: set = set()  # open sockets of workers, closed when it is taken out
        self.queue_p99 = 0.0  # the daemon's p99 queue time (s), as its last probe measured it

    def __repr__(self) -> str:
        return "Endpoint(%s, %s)" % (self.name, "up" if self.up else "out")


def _read_token(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def parse_endpoints(spec: Union[None, str, Sequence[EndpointSpec]]) -> List[Endpoint]:
    """The fleet's endpoints from a list, a comma-separated string, a file,
    or (spec None) $SURGEBOX_ENDPOINTS."""
    if spec is None:
        spec = os.environ.get("SURGEBOX_ENDPOINTS")
        if not spec:
            raise ValueError("no endpoints: pass a list, or set SURGEBOX_ENDPOINTS (a list or a file)")
    if isinstance(spec, str):
        if os.path.isfile(spec):
            with open(spec) as f:
                items = [ln.split("#", 1)[0].strip() for ln in f]
        else:
            items = [s.strip() for s in spec.split(",")]
        spec = [s for s in items if s]
    eps = [Endpoint(s) for s in spec]
    if not eps:
        raise ValueError("no endpoints in the list")
    names = [e.name for e in eps]
    if len(set(names)) != len(names):
        raise ValueError("an endpoint is listed twice")
    return eps


class _Link:
    """One worker's connection to one daemon: a request and its answer at a time."""

    def __init__(self, ep: Endpoint, timeout: float) -> None:
        self.ep = ep
        self.timeout = timeout  # the unix socket's, set again only when a wait differs (an ioctl each)
        if ep.kind == "unix":
            s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect(ep.name)
            except OSError as e:
                s.close()
                raise _Infra("connecting: %s" % e)
            self.sock = s
            self.lines = _conn.Lines(s)
            self.http = None
        else:
            self.http = http.client.HTTPConnection(ep.host, ep.port, timeout=timeout)
            try:
                self.http.connect()
            except OSError as e:
                raise _Infra("connecting: %s" % e)
            self.sock = self.http.sock

    def close(self) -> None:
        try:
            if self.http is not None:
                self.http.close()
            else:
                self.sock.close()
        except OSError:
            pass

    def ask(self, req: Dict[str, Any], wait: float) -> Dict[str, Any]:
        if self.http is not None or wait != self.timeout:
            self.sock.settimeout(wait)
            self.timeout = wait
        try:
            if self.http is None:
                self.sock.sendall(_conn.encode(req))
                lines = self.lines
                while not lines.ready:
                    if not lines.fill():
                        raise _Infra("the daemon closed the connection before answering")
                return _conn.decode(lines.ready.popleft())
            headers = {"Content-Type": "application/json"}
            if self.ep.token:
                headers["Authorization"] = "Bearer " + self.ep.token
            self.http.request("POST", "/v1/jobs", body=_conn.encode(req), headers=headers)
            resp = self.http.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise _Infra("%s: %s" % (type(e).__name__, e))
        except ValueError as e:
            raise _Infra("the daemon sent a line that is not JSON: %s" % e)
        if resp.status == 401 or resp.status == 403:
            raise SurgeboxError("unauthorized", "%s refused this client's token (HTTP %d): check the endpoint's "
                                "token or token-file" % (self.ep.name, resp.status))
        if resp.status in (502, 503, 504):
            raise _Infra("HTTP %d" % resp.status)
        try:
            return json.loads(body)
        except ValueError as e:
            raise _Infra("HTTP %d with a body that is not JSON: %s" % (resp.status, e))


def _metric_p99(text: str) -> Optional[float]:
    """surgebox_queue_time_seconds{quantile="0.99"} of a /metrics text, or None."""
    for line in text.splitlines():
        if line.startswith('surgebox_queue_time_seconds{') and 'quantile="0.99"' in line:
            try:
                return float(line.rsplit(None, 1)[1])
            except (IndexError, ValueError):
                return None
    return None


def _limits_seconds(req: Mapping[str, Any]) -> float:
    """The longest a job may take by its own limits: per step, twice its wall limit (`time_s`,
    30 s by default) + 5 s, times its cases (a step runs once per case); twice that with a
    toolchain (its compile step)."""
    total = 0.0
    steps = req.get("steps") or [req]
    for s in steps:
        lim = s.get("limits") or {}
        wall = float(lim.get("time_s") or 0)
        total += (2 * (wall if wall > 0 else 30.0) + 5) * (len(s.get("cases") or []) or 1)
    return total * (2 if req.get("toolchain") else 1)


def choose(endpoints: Sequence[Endpoint], avoid: Optional[Endpoint], turn: int) -> Optional[Endpoint]:
    """Of the daemons up, the one with the fewest of our jobs outstanding (ties by `turn`), not
    `avoid` (the last one tried) when another is up; None when none is up; SurgeboxError
    ("unauthorized") when every daemon refused our token. The caller counts the job on it."""
    live = [e for e in endpoints if e.up and e.refused is None]
    if len(live) > 1 and avoid in live:
        live.remove(avoid)
    if live:
        low = min(e.outstanding for e in live)
        ties = [e for e in live if e.outstanding == low]
        return ties[turn % len(ties)]
    if all(e.refused for e in endpoints):
        raise SurgeboxError("unauthorized", "; ".join(e.refused for e in endpoints))
    return None


def job_request(fleet: Any, job: Mapping[str, Any]) -> Tuple[Dict[str, Any], float]:
    """A fleet job's exec request (a fresh id), and until when it waits for a daemon to be up:
    as long as its answer would take."""
    req = build_exec(job, "f%x" % random.getrandbits(64))  # it sends none of CLIENT_FIELDS
    return req, time.monotonic() + _limits_seconds(req) + fleet.answer_margin


def sends(fleet: Any) -> Iterator[Tuple[int, float]]:
    """(attempt, seconds to pause before it) of each send a fleet's (Fleet's or AsyncFleet's) job may
    make, at most fleet.attempts: the first at once, each later one after a back-off and counted
    in fleet.retries."""
    yield 0, 0.0
    for attempt in range(1, fleet.attempts):
        fleet.retries += 1
        yield attempt, _conn.backoff(attempt - 1, *fleet.backoff)


def take_or_wait(fleet: Any, avoid: Optional[Endpoint], give_up_at: float) -> Tuple[Optional[Endpoint], Optional[float]]:
    """A fleet's (Fleet's or AsyncFleet's) pick: choose()'s daemon with its count taken and the turn
    moved on, and None; or no daemon and how long to wait for one to come up (None: give up)."""
    ep = choose(fleet.endpoints, avoid, fleet._next)
    if ep is not None:
        fleet._next += 1
        ep.outstanding += 1
        return ep, None
    left = give_up_at - time.monotonic()
    if left <= 0 or fleet._closed:
        return None, None
    return None, min(left, fleet.probe_interval)


def retry_why(resp: Mapping[str, Any], ep: Endpoint) -> Optional[str]:
    """Why an answer that arrived is still a failure of the infrastructure (sent again), or None."""
    if resp.get("type") == "error" and (resp.get("error") or {}).get("code") == "busy":
        return "%s: busy" % ep.name
    if resp.get("status") == "cancelled":  # we cancel nothing: the daemon gave it up (shutting down)
        return "%s: %s" % (ep.name, resp.get("error") or "cancelled by the daemon")
    return None


def answered(resp: Mapping[str, Any], user_id: Any, ep: Endpoint, attempt: int) -> Result:
    """The Result of a job `ep` answered at its `attempt`-th send (0-based)."""
    ep.answered += 1
    ep.failures = 0
    res = Result(resp) if resp.get("type") != "error" else _conn.error_result(user_id, resp.get("error"))
    res["id"] = user_id
    res["daemon"] = ep.name
    res["attempts"] = attempt + 1
    return res


def unavailable(user_id: Any, attempts: int, why: str) -> Result:
    """The Result of a job no daemon ran: an error, never a verdict."""
    res = _conn.error_result(user_id, {"code": "fleet_unavailable",
                                       "message": "no daemon ran the job after %d attempts (last: %s)"
                                       % (attempts, why)})
    res["daemon"] = None
    res["attempts"] = attempts
    return res


def status_of(e: Endpoint) -> Dict[str, Any]:
    """One daemon as this client sees it (Fleet.status's entry)."""
    return {"daemon": e.name, "up": e.up, "out_since": e.out_since, "refused": e.refused,
            "outstanding": e.outstanding, "answered": e.answered, "queue_p99_s": e.queue_p99}


def queue_p99_of(p99: Any) -> Optional[float]:
    """A probe's p99 queue time as seconds (an empty window has none: the queue is then empty);
    None when it is not a number."""
    try:
        value = float(p99) if p99 is not None else 0.0
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


class Fleet:
    """Many surgebox daemons behind one client (module docstring)."""

    def __init__(self, endpoints: Union[None, str, Sequence[EndpointSpec]] = None, *, probe_interval: float = 1.0,
                 probe_timeout: float = 3.0, attempts: int = 4, backoff: Sequence[float] = (0.05, 1.0),
                 answer_margin: float = _ANSWER_MARGIN_S) -> None:
        """answer_margin: seconds a job's answer may take beyond its own limits
        (the daemon's queue, set-up) before its daemon is called hung; also how
        long beyond them a job waits for a daemon to come back when none is up."""
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        if answer_margin < 0:
            raise ValueError("answer_margin must not be negative")
        self.answer_margin = answer_margin
        self.endpoints = parse_endpoints(endpoints)
        self.probe_interval = probe_interval
        self.probe_timeout = probe_timeout
        self.attempts = attempts
        self.backoff = tuple(backoff)
        self.retries = 0  # sends beyond each job's first
        self._lock = threading.Condition()
        self._closed = False
        self._next = 0
        self._prober = threading.Thread(target=self._probe_loop, name="surgebox-fleet-prober", daemon=True)
        self._prober.start()

    # --- life cycle -------------------------------------------------------
    def close(self) -> None:
        """Stop the prober; the workers' connections close with their run_many."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._prober.join(self.probe_interval + self.probe_timeout + 1)

    def __enter__(self) -> "Fleet":
        """The Fleet itself; close() at the end of the block."""
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def status(self) -> List[Dict[str, Any]]:
        """Each daemon as this client sees it: up or out, jobs outstanding and answered."""
        with self._lock:
            return [status_of(e) for e in self.endpoints]

    def ask(self, ep: Endpoint, obj: Mapping[str, Any]) -> Dict[str, Any]:
        """One non-exec request (ping, status, toolchains) to one Unix-socket
        daemon, its answer; SurgeboxError when it fails or is an error.
        An HTTP endpoint serves only exec (/v1/jobs): FleetUnsupported."""
        if ep.kind != "unix":
            raise FleetUnsupported("a %r request" % obj.get("type"), "%s is an HTTP endpoint, which serves exec "
                                   "only (/v1/jobs)" % ep.name)
        try:
            link = _Link(ep, self.probe_timeout)
        except _Infra as e:
            raise SurgeboxError("fleet_unavailable", "%s: %s" % (ep.name, e))
        try:
            resp = link.ask(dict(obj, id="fleet-ask"), self.probe_timeout)
        except (_Infra, ValueError) as e:
            raise SurgeboxError("fleet_unavailable", "%s: %s" % (ep.name, e))
        finally:
            link.close()
        if not isinstance(resp, dict) or resp.get("type") == "error":
            raise error_of(resp if isinstance(resp, dict) else {"error": {"code": "protocol", "message": repr(resp)}})
        return resp

    # --- health -------------------------------------------------------------
    def _take_out(self, ep: Endpoint, why: str) -> None:
        with self._lock:
            ep.failures += 1
            if not ep.up:
                return
            ep.up = False
            ep.out_since = time.monotonic()
            conns = list(ep.conns)
        for s in conns:  # its workers' answers will not come: fail them now, to be retried elsewhere
            try:
                s.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass

    def _probe(self, ep: Endpoint) -> Optional[str]:
        """None when ep answers a ping within probe_timeout, else why not."""
        try:
            link = _Link(ep, self.probe_timeout)
        except _Infra as e:
            return str(e)
        try:
            if ep.kind == "unix":  # status: alive, and its queue time
                resp = link.ask({"id": "fleet-probe", "type": "status"}, self.probe_timeout)
                if not isinstance(resp, dict) or resp.get("type") != "status":
                    return "odd answer to a status: %.80r" % (resp,)
                self._set_queue_p99(ep, (resp.get("queue_time") or {}).get("p99_s"))
                return None
            headers = {"Authorization": "Bearer " + ep.token} if ep.token else {}
            link.http.request("GET", "/v1/ping", headers=headers)
            r = link.http.getresponse()
            r.read()
            if r.status in (401, 403):
                with self._lock:
                    ep.refused = "%s refused this client's token (HTTP %d)" % (ep.name, r.status)
                return ep.refused
            if r.status != 200:
                return "HTTP %d to a ping" % r.status
            link.http.request("GET", "/metrics", headers=headers)
            r = link.http.getresponse()
            text = r.read().decode("utf-8", "replace")
            if r.status == 200:
                self._set_queue_p99(ep, _metric_p99(text))
            return None
        except (_Infra, OSError, http.client.HTTPException, ValueError) as e:
            return str(e)
        finally:
            link.close()

    def _set_queue_p99(self, ep: Endpoint, p99: Any) -> None:
        value = queue_p99_of(p99)
        if value is not None:
            with self._lock:
                ep.queue_p99 = value

    def answer_wait(self, req: Mapping[str, Any], ep: Endpoint) -> float:
        """How long this client waits for `ep`'s answer to exec request `req`
        before it calls the daemon hung (docs/python.md, "The client's
        deadline"): the job's own limits, plus twice the daemon's measured
        p99 queue time, plus answer_margin."""
        return _limits_seconds(req) + 2.0 * ep.queue_p99 + self.answer_margin

    def _probe_loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                eps = [e for e in self.endpoints if e.refused is None]
            for ep in eps:
                why = self._probe(ep)
                if why is None:
                    with self._lock:
                        if not ep.up:
                            ep.up = True
                            ep.out_since = None
                            ep.failures = 0
                            self._lock.notify_all()
                elif ep.refused is not None:  # its jobs in flight get the same refusal: said, not retried
                    with self._lock:
                        ep.up = False
                else:
                    self._take_out(ep, why)
            with self._lock:
                if not self._closed:
                    self._lock.wait(self.probe_interval)

    def _pick(self, avoid: Optional[Endpoint], give_up_at: float) -> Optional[Endpoint]:
        """The daemon with the fewest of our jobs outstanding (ties in turn), its count taken."""
        with self._lock:
            while True:
                ep, wait = take_or_wait(self, avoid, give_up_at)
                if wait is None:
                    return ep
                self._lock.wait(wait)

    # --- jobs ---------------------------------------------------------------
    def run(self, **job: Any) -> Result:
        """One job (run()'s keywords of Client) on the fleet."""
        return next(self.run_many([job], concurrency=1))

    def run_many(self, jobs: Iterable[Mapping[str, Any]], concurrency: int = 32) -> Iterator[Result]:
        """Yield a Result per job as each finishes (completion order), each exactly once.
        A Result's "id" is the job's "id" if it had one, else its index."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        done: "queue.SimpleQueue" = queue.SimpleQueue()
        stop = threading.Event()
        source = enumerate(jobs)
        taking = threading.Lock()
        exhausted = [False]

        def next_job():
            """(user id, job) of the next job, read by the worker that is free (the jobs are read
            lazily, one per free worker; no thread in between), or None when there is none left."""
            with taking:
                if exhausted[0] or stop.is_set():
                    return None
                try:
                    i, item = next(source)
                    job = _conn.as_job(item)
                except StopIteration:
                    exhausted[0] = True
                    return None
                except BaseException:  # a bad job: said, in order, and no job read after it
                    exhausted[0] = True
                    raise
                return job.get("id", i), job

        def work():
            links: Dict[str, _Link] = {}
            try:
                while not stop.is_set():
                    try:
                        item = next_job()
                    except BaseException as e:
                        done.put(("raise", e))
                        return
                    if item is None:
                        return
                    try:
                        done.put(("result", self._one(item[0], item[1], links)))
                    except BaseException as e:
                        done.put(("raise", e))
            finally:
                for link in links.values():
                    link.close()
                done.put(("worker_done", None))

        threads = [threading.Thread(target=work, daemon=True) for _ in range(concurrency)]
        for t in threads:
            t.start()
        running = concurrency
        try:
            while running:
                kind, value = done.get()
                if kind == "worker_done":
                    running -= 1
                elif kind == "raise":
                    raise value
                else:
                    yield value
        finally:
            stop.set()

    def _one(self, user_id: Any, job: Mapping[str, Any], links: Dict[str, _Link]) -> Result:
        req, give_up_at = job_request(self, job)
        last_ep: Optional[Endpoint] = None
        why = "no daemon of the fleet answers"
        for attempt, pause in sends(self):
            if pause:
                time.sleep(pause)
            ep = self._pick(last_ep, give_up_at)
            if ep is None:
                break
            last_ep = ep
            try:
                resp = self._send(ep, req, self.answer_wait(req, ep), links)
            except _Infra as e:
                why = "%s: %s" % (ep.name, e)
                continue
            finally:
                with self._lock:
                    ep.outstanding -= 1
            again = retry_why(resp, ep)
            if again:
                why = again
                continue
            with self._lock:
                return answered(resp, user_id, ep, attempt)
        return unavailable(user_id, self.attempts, why)

    def _send(self, ep: Endpoint, req: Dict[str, Any], wait: float, links: Dict[str, _Link]) -> Dict[str, Any]:
        link = links.get(ep.name)
        if link is None:
            try:
                link = links[ep.name] = _Link(ep, self.probe_timeout)
            except _Infra as e:
                self._take_out(ep, str(e))
                raise
        with self._lock:
            ep.conns.add(link.sock)
        try:
            resp = link.ask(req, wait)
        except _Infra as e:
            links.pop(ep.name, None)
            link.close()
            self._take_out(ep, str(e))
            raise
        finally:
            with self._lock:
                ep.conns.discard(link.sock)
        if not isinstance(resp, dict) or (ep.kind == "unix" and resp.get("id") != req["id"]
                                          and resp.get("type") != "error"):
            links.pop(ep.name, None)
            link.close()
            raise _Infra("an answer for another request")
        return resp
