"""What the blocking and asyncio clients share: opening, the wire's lines, ids, busy back-off."""
import collections
import errno
import json
import os
import random

from ._daemon import PrivateDaemon, default_socket
from ._jobs import NoDaemon, Result, job_of

_AUTOSTART_ERRNOS = (errno.ENOENT, errno.ECONNREFUSED)


_ENCODER = json.JSONEncoder(separators=(",", ":"))  # once: json.dumps with separators= makes one a call
_DECODE = json.JSONDecoder().decode
# a recv's size: under malloc's mmap threshold (a 1 MiB recv cost an mmap,
# an mremap and a munmap an answer); answers that arrive together are split
CHUNK = 1 << 16


def encode(obj):
    # ASCII JSON: no lone surrogate or odd code point can make an invalid line
    return (_ENCODER.encode(obj) + "\n").encode("ascii")


def decode(line):
    """One answer line (bytes) as json.loads reads it: UTF-8, ValueError when it is not JSON."""
    return _DECODE(line.decode("utf-8", "surrogatepass"))


class Lines:
    """The lines a stream socket receives (without their newlines): a recv
    of up to CHUNK bytes at a time, split at newlines; a line longer than
    a recv is joined once, when its end arrives. `ready`: whole lines not
    taken yet (popleft); `part`: the pieces of the line still arriving."""
    __slots__ = ("sock", "ready", "part")

    def __init__(self, sock):
        self.sock = sock
        self.ready = collections.deque()
        self.part = []

    def fill(self):
        """One recv, its whole lines added to `ready`; False when the peer
        closed the connection (a socket error is raised as it is)."""
        chunk = self.sock.recv(CHUNK)
        if not chunk:
            return False
        if b"\n" not in chunk:
            self.part.append(chunk)
            return True
        lines = chunk.split(b"\n")
        if self.part:
            self.part.append(lines[0])
            lines[0] = b"".join(self.part)
            self.part = []
        rest = lines.pop()
        if rest:
            self.part.append(rest)
        self.ready.extend(lines)
        return True


def single_or_fleet(cls, single, fleet_class, endpoints, fleet):
    """Client's and AsyncClient's __new__: `single` itself called with endpoints (or fleet=True) is
    fleet_client.py's `fleet_class` (FleetClient, AsyncFleet); else, and for a subclass, cls."""
    if cls is single and (endpoints is not None or fleet):
        from . import fleet_client
        return object.__new__(getattr(fleet_client, fleet_class))
    return object.__new__(cls)


def plan_socket(socket_path, private):
    """(path to try first or None, how it was named: "argument", "environment",
    or None for the default socket, the only one a private daemon may replace)."""
    if private:
        return None, None
    if socket_path:
        return socket_path, "argument"
    if os.environ.get("SURGEBOX_SOCKET"):
        return os.environ["SURGEBOX_SOCKET"], "environment"
    return default_socket(), None


def connect_failed(path, named_by, autostart, exc):
    """After a failed connect to path: None when a private daemon may start,
    else the exception to raise (NoDaemon for a connect error)."""
    if not isinstance(exc, OSError):
        return exc
    if named_by is None and autostart and may_autostart(exc):
        return None
    return NoDaemon(path, named_by, exc)


def start_private(surgeboxd, daemon_args, wait=True):
    return PrivateDaemon(surgeboxd=surgeboxd, args=daemon_args, wait=wait)


def may_autostart(exc):
    return isinstance(exc, OSError) and exc.errno in _AUTOSTART_ERRNOS


def backoff(attempt, base, cap):
    """Seconds before retry number `attempt` (0-based) of a busy exec: exponential, jittered."""
    return min(cap, base * (2 ** min(attempt, 30))) * (0.5 + random.random() / 2)


def as_job(item):
    """A run_many item: a dict of run()'s keywords (or a protocol exec request)."""
    if not isinstance(item, dict):
        raise TypeError("run_many items are dicts (run()'s keywords), not %s" % type(item).__name__)
    job = dict(item)
    job.pop("type", None)  # a protocol request as is
    return job


def run_job(steps, toolchain, files, stdin, options, args, limits, outputs, outputs_max_bytes, output_encoding,
            profile, cancel_after, warm, timeout):
    """run()'s arguments (Client, AsyncClient, and both on a fleet) as the job dict run_many takes;
    `timeout` (cancel_after's old name) kept for run_many's warning, or a fleet's refusal."""
    job = job_of(steps, toolchain, files, stdin, options, args, limits, outputs, outputs_max_bytes,
                 output_encoding, profile, cancel_after, warm)
    if timeout is not None:
        job["timeout"] = timeout
    return job


def error_result(user_id, error):
    return Result({"id": user_id, "type": "error", "status": "error", "error": error})


def timeout_result(user_id, why):
    return Result({"id": user_id, "type": "exec", "status": "cancelled", "steps": [],
                   "client_timeout": True, "error": why})
