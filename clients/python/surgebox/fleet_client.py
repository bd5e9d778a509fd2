"""Client(endpoints=...) and AsyncClient(endpoints=...): a single daemon's
client API over a Fleet (issue 39), so user code switches by one argument.

    with surgebox.Client(endpoints=["/run/a.sock", "http://10.0.0.2:8080 token-file=/etc/sb.tok"]) as c:
        r = c.run(toolchain="python3", files={"main.py": "print(6 * 7)"})
        print(r.status, r.stdout, r["daemon"])

`Client(fleet=True)` reads the endpoints from $SURGEBOX_ENDPOINTS. Every
guarantee is the Fleet's (fleet.py): least outstanding, exactly-once answers,
only infrastructure failures retried. What a fleet cannot offer raises
FleetUnsupported (code "not_on_fleet") naming it: a raw `request()` (it names
no daemon) and the client-side `cancel_after` (a Fleet never cancels: bound a
job by its limits).
"""
from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from . import _conn
from ._jobs import Result, SurgeboxError
from .aio import AsyncClient
from .aio_fleet import AioFleet
from .client import Client
from .fleet import EndpointSpec, Fleet, FleetUnsupported

Endpoints = Union[None, str, Sequence[EndpointSpec]]
# the single-daemon options that choose or start one daemon: meaningless on a fleet
_SINGLE_ONLY = ("socket", "private", "surgeboxd", "daemon_args")


def _fleet_of(endpoints: Endpoints, fleet: bool, single: Mapping[str, Any], options: Dict[str, Any],
              kind: Any = Fleet) -> Any:
    named = [k for k, v in single.items() if v]
    if named:
        raise ValueError("Client(endpoints=...): %s choose a single daemon; leave them out on a fleet"
                         % ", ".join(named))
    if endpoints is None and not fleet:
        raise ValueError("a fleet needs endpoints=[...] or fleet=True (for $SURGEBOX_ENDPOINTS)")
    for k in ("busy_backoff", "busy_timeout"):  # a single daemon's busy handling: the fleet's back-off instead
        options.pop(k, None)
    return kind(endpoints, **options)


def _no_cancel_after(job: Mapping[str, Any]) -> Mapping[str, Any]:
    if job.get("cancel_after") is not None or job.get("timeout") is not None:
        raise FleetUnsupported("cancel_after (or timeout)", "a Fleet never cancels a job; bound it by its "
                               "limits (limits={'time_s': ...})")
    return job


def _fleet_status(fl: Fleet) -> Dict[str, Any]:
    """Each daemon as the client sees it, with its own status when it is a Unix socket that answers."""
    daemons = fl.status()
    for d, ep in zip(daemons, fl.endpoints):
        if ep.kind == "unix" and d["up"]:
            try:
                d["status"] = fl.ask(ep, {"type": "status"})
            except SurgeboxError as e:
                d["error"] = str(e)
    return {"type": "fleet_status", "daemons": daemons}


def _fleet_ping(fl: Fleet) -> Dict[str, Any]:
    """A ping of each Unix-socket daemon (HTTP ones are pinged by the prober): {name: answer or error}."""
    out: Dict[str, Any] = {}
    for ep in fl.endpoints:
        if ep.kind != "unix":
            out[ep.name] = {"up": ep.up}
            continue
        try:
            out[ep.name] = fl.ask(ep, {"type": "ping"})
        except SurgeboxError as e:
            out[ep.name] = {"error": str(e)}
    return {"type": "fleet_ping", "daemons": out}


def _fleet_toolchains(fl: Fleet, profile: Optional[str]) -> List[Dict[str, Any]]:
    """The toolchains of the first Unix-socket daemon that is up (a fleet's daemons are alike)."""
    for ep in fl.endpoints:
        if ep.kind == "unix" and ep.up and ep.refused is None:
            return fl.ask(ep, {"type": "toolchains", **({"profile": profile} if profile else {})})["toolchains"]
    raise FleetUnsupported("toolchains()", "no Unix-socket daemon of the fleet is up (HTTP endpoints serve "
                           "exec only)")


class FleetClient(Client):
    """What Client(endpoints=[...]) (or Client(fleet=True)) returns: Client's
    methods on a Fleet. Fleet options (probe_interval, probe_timeout,
    attempts, backoff, answer_margin) pass through; `fleet` is the Fleet."""

    def __init__(self, socket: Optional[str] = None, *, endpoints: Endpoints = None, fleet: bool = False,
                 private: bool = False, autostart: bool = True, surgeboxd: Optional[str] = None,
                 daemon_args: Sequence[str] = (), **fleet_options: Any) -> None:
        single = {"socket": socket, "private": private, "surgeboxd": surgeboxd, "daemon_args": daemon_args}
        self.daemon = None
        self.busy_retries = 0
        self.socket_path = None
        self._sock = None
        self.fleet = _fleet_of(endpoints, fleet, single, fleet_options)

    def close(self) -> None:
        """Stop the fleet's prober (each run_many closes its own connections)."""
        self.fleet.close()

    def __enter__(self) -> "FleetClient":
        """The client itself; close() at the end of the block."""
        return self

    def request(self, obj: Mapping[str, Any]) -> Dict[str, Any]:
        """Not on a fleet: a raw request names no daemon (FleetUnsupported)."""
        raise FleetUnsupported("request()", "a raw request names no daemon; use run()/run_many(), "
                               "status(), ping() or toolchains()")

    def ping(self) -> Dict[str, Any]:
        """{"type": "fleet_ping", "daemons": {name: its ping answer, or {"error": why}}}."""
        return _fleet_ping(self.fleet)

    def status(self) -> Dict[str, Any]:
        """{"type": "fleet_status", "daemons": [Fleet.status()'s entries, each with "status" (the
        daemon's own, for a Unix socket that answers)]}."""
        return _fleet_status(self.fleet)

    def toolchains(self, profile: Optional[str] = None) -> List[Dict[str, Any]]:
        """The toolchains of the fleet's first Unix-socket daemon that is up."""
        return _fleet_toolchains(self.fleet, profile)

    def run_many(self, jobs: Iterable[Mapping[str, Any]], concurrency: int = 8, *,
                 cancel_after: Optional[float] = None, timeout: Optional[float] = None) -> Iterator[Result]:
        """As Client.run_many, on the fleet: each Result exactly once, with "daemon" and "attempts"."""
        _no_cancel_after({"cancel_after": cancel_after, "timeout": timeout})
        return self.fleet.run_many((_no_cancel_after(_conn.as_job(j)) for j in jobs), concurrency)


class AsyncFleet(AsyncClient):
    """What AsyncClient(endpoints=[...]) (or AsyncClient(fleet=True)) returns:
    AsyncClient's methods on a fleet, native asyncio (aio_fleet.py): one
    AsyncClient connection per Unix-socket daemon carries all its jobs, a few
    keep-alive connections per HTTP daemon, the prober a task; no thread.
    The guarantees are Fleet's: least outstanding, exactly-once answers, only
    infrastructure failures retried. A run_many abandoned early stops
    starting jobs; close() closes the connections, so the daemons cancel the
    jobs still running. `fleet` is the AioFleet."""

    def __init__(self, socket: Optional[str] = None, *, endpoints: Endpoints = None, fleet: bool = False,
                 private: bool = False, autostart: bool = True, surgeboxd: Optional[str] = None,
                 daemon_args: Sequence[str] = (), **fleet_options: Any) -> None:
        single = {"socket": socket, "private": private, "surgeboxd": surgeboxd, "daemon_args": daemon_args}
        fleet_options.pop("max_threads", None)  # the threaded AsyncFleet's pool size: no threads now
        self.daemon = None
        self.busy_retries = 0
        self.socket_path = None
        self._writer = None
        self.fleet = _fleet_of(endpoints, fleet, single, fleet_options, AioFleet)

    async def open(self) -> "AsyncFleet":
        """Start the fleet's prober (connections open as jobs need them); returns self."""
        self.fleet.start()
        return self

    async def close(self) -> None:
        """Stop the prober and close the fleet's connections."""
        await self.fleet.close()

    async def __aenter__(self) -> "AsyncFleet":
        """The client itself; close() at the end of the block."""
        return await self.open()

    async def _run_job(self, item: Mapping[str, Any], index: int, default_cancel_after: Optional[float]) -> Result:
        job = _no_cancel_after(_conn.as_job(item))
        _no_cancel_after({"cancel_after": default_cancel_after})
        return await self.fleet.one(job.get("id", index), job)

    async def request(self, obj: Mapping[str, Any]) -> Dict[str, Any]:
        """Not on a fleet: a raw request names no daemon (FleetUnsupported)."""
        raise FleetUnsupported("request()", "a raw request names no daemon; use run()/run_many(), "
                               "status(), ping() or toolchains()")

    async def ping(self) -> Dict[str, Any]:
        """As FleetClient.ping."""
        out: Dict[str, Any] = {}
        for ep in self.fleet.endpoints:
            if ep.kind != "unix":
                out[ep.name] = {"up": ep.up}
                continue
            try:
                out[ep.name] = await self.fleet.ask(ep, {"type": "ping"})
            except SurgeboxError as e:
                out[ep.name] = {"error": str(e)}
        return {"type": "fleet_ping", "daemons": out}

    async def status(self) -> Dict[str, Any]:
        """As FleetClient.status."""
        daemons = self.fleet.status()
        for d, ep in zip(daemons, self.fleet.endpoints):
            if ep.kind == "unix" and d["up"]:
                try:
                    d["status"] = await self.fleet.ask(ep, {"type": "status"})
                except SurgeboxError as e:
                    d["error"] = str(e)
        return {"type": "fleet_status", "daemons": daemons}

    async def toolchains(self, profile: Optional[str] = None) -> List[Dict[str, Any]]:
        """As FleetClient.toolchains."""
        for ep in self.fleet.endpoints:
            if ep.kind == "unix" and ep.up and ep.refused is None:
                req = {"type": "toolchains", **({"profile": profile} if profile else {})}
                return (await self.fleet.ask(ep, req))["toolchains"]
        raise FleetUnsupported("toolchains()", "no Unix-socket daemon of the fleet is up (HTTP endpoints serve "
                               "exec only)")

    async def run_many(self, jobs: Union[Iterable[Mapping[str, Any]], AsyncIterable[Mapping[str, Any]]],
                       concurrency: int = 8, *, cancel_after: Optional[float] = None,
                       timeout: Optional[float] = None) -> AsyncIterator[Result]:
        """As AsyncClient.run_many, on the fleet: each Result exactly once, with "daemon" and "attempts"."""
        _no_cancel_after({"cancel_after": cancel_after, "timeout": timeout})
        async for res in super().run_many(jobs, concurrency):
            yield res
