"""Shared set-up of the Python client's tests: the client from the source
tree, and a surgeboxd of the build on a private socket with a private cache
and only the python3 toolchain (detection in under a second)."""
import atexit
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
BIN = os.environ.get("SURGEBOX_BIN_DIR", os.path.join(SRC, "build", "bin"))
SURGEBOXD = os.path.join(BIN, "surgeboxd")
sys.path.insert(0, os.path.join(SRC, "tests", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402


def private_dirs():
    """(tmp dir, daemon args) for a private daemon: its own cache, python3 only."""
    d = tempfile.mkdtemp(prefix="sbpy-test-")
    atexit.register(shutil.rmtree, d, True)
    os.chmod(d, 0o755)
    tc = os.path.join(d, "toolchains")
    os.mkdir(tc)
    shutil.copy(os.path.join(SRC, "toolchains", "defs", "python3.json"), tc)
    return d, ["--cache-dir", os.path.join(d, "cache"), "--toolchains", tc]


class Daemon(PrivateDaemon):
    """surgeboxd started by hand (not by the client under test), ready once
    it says so (tests/cli/private_daemon.py)."""

    def __init__(self, *args):
        d, base = private_dirs()
        super().__init__(BIN, False, *(base + list(args)), directory=d)


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def procs_with(marker):
    """Live processes (this pid namespace) whose cmdline contains marker."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and pid_alive(int(pid)):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if marker in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found
