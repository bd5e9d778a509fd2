"""surgebox: a Python client for the surgebox sandbox daemon (standard library only).

    import surgebox
    with surgebox.Client() as c:               # a running daemon, or a private one
        r = c.run(toolchain="python3", files={"main.py": "print(6 * 7)"})
        print(r.status, r.stdout)             # ok b'42\\n'
"""
from ._daemon import PrivateDaemon, default_socket, find_surgeboxd, runtime_dir
from ._jobs import ConnectionLost, NoDaemon, Result, SurgeboxError, UnknownProfile, build_exec, exact_bytes
from ._records import RECORD_KEYS, to_dataframe
from .aio import AsyncClient
from .client import Client
from .fleet import Fleet, FleetUnsupported, parse_endpoints
from .fleet_client import AsyncFleet, FleetClient
from .progress import Progress, aprogress, progress
from .trace import Event, Trace

__version__ = "0.2.0"
__all__ = ["Client", "Fleet", "FleetClient", "AsyncFleet", "FleetUnsupported", "parse_endpoints", "AsyncClient", "Result", "SurgeboxError", "ConnectionLost", "NoDaemon", "UnknownProfile", "PrivateDaemon",
           "Progress", "progress", "aprogress", "exact_bytes", "build_exec", "default_socket",
           "find_surgeboxd", "runtime_dir", "Trace", "Event", "to_dataframe", "RECORD_KEYS"]
