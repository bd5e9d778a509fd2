"""Shared set-up of the Python client's tests: the client from the source
tree, and a surgeboxd of the build on a private socket with a private cache
and only the python3 toolchain (detection in under a second)."""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
BIN = os.environ.get("SURGEBOX_BIN_DIR", os.path.join(SRC, "build", "bin"))
SURGEBOXD = os.path.join(BIN, "surgeboxd")


def private_dirs():
    """(tmp dir, daemon args) for a private daemon: its own cache, python3 only."""
    d = tempfile.mkdtemp(prefix="sbpy-test-")
    atexit.register(shutil.rmtree, d, True)
    os.chmod(d, 0o755)
    tc = os.path.join(d, "toolchains")
    os.mkdir(tc)
    shutil.copy(os.path.join(SRC, "toolchains", "defs", "python3.json"), tc)
    return d, ["--cache-dir", os.path.join(d, "cache"), "--toolchains", tc]


class Daemon:
    """surgeboxd started by hand (not by the client under test)."""

    def __init__(self, *args):
        self.dir, base = private_dirs()
        self.sock = os.path.join(self.dir, "s.sock")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc = subprocess.Popen([SURGEBOXD, "--socket", self.sock] + base + list(args), stderr=self.log)
        # Ready when it answers a ping, not when the socket file appears:
        # the file exists between bind() and listen(), when a connect is
        # refused (pyclient.daemon_gone flaked on that).
        deadline = time.monotonic() + 60
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("daemon did not start: " + self.logtext())
            time.sleep(0.02)

    def answers(self):
        """True once the daemon answers a ping on its socket."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(10)
                s.connect(self.sock)
                s.sendall(b'{"id":"ready","type":"ping"}\n')
                got = b""
                while not got.endswith(b"\n"):
                    chunk = s.recv(4096)
                    if not chunk:
                        return False
                    got += chunk
                return json.loads(got).get("id") == "ready"
        except (OSError, ValueError):
            return False

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


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
