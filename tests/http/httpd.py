"""A private surgeboxd with an HTTP front on a loopback port the kernel
chooses (--http 127.0.0.1:0, the port read from its log), for one test case;
and small HTTP helpers on the standard library. Shared by test_http.py,
test_http_security.py and bench/http_run_code.py."""
import http.client
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tests", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402
# the toolchain files /run_code's starting languages need: detection of only
# these keeps the daemon's start short
TOOLCHAIN_FILES = ("python3.json", "gxx.json", "bash.json")


class Daemon(PrivateDaemon):
    def __init__(self, bin_dir, *extra, http=("127.0.0.1:0",), start_timeout=300, user=None):
        directory = tempfile.mkdtemp(prefix="sbtest-http-")
        os.chmod(directory, 0o755)
        self.tcdir = os.path.join(directory, "toolchains")
        os.mkdir(self.tcdir)
        for f in TOOLCHAIN_FILES:
            shutil.copy(os.path.join(SRC, "toolchains", "defs", f), self.tcdir)
        if user is not None:  # an unprivileged daemon: uid 0 of a user namespace of its own
            for p in (directory, self.tcdir):
                os.chown(p, user, user)
        args = ["--toolchains", self.tcdir]
        for h in http:
            args += ["--http", h]
        super().__init__(bin_dir, None, *(args + list(extra)), start_timeout=start_timeout, user=user,
                         directory=directory)
        m = re.search(r"HTTP on (\S+):(\d+)", self.logtext())
        self.host = m.group(1).strip("[]")
        self.port = int(m.group(2))
        self.url = "http://%s:%d" % (m.group(1), self.port)

    def conn(self, timeout=120):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, headers dict lowercased, body bytes) on a fresh connection."""
        c = self.conn(timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def run_code(self, body, **kw):
        st, hd, data = self.request("POST", "/run_code", body, **kw)
        if st != 200:
            raise AssertionError("HTTP %d: %s" % (st, data[:500]))
        return json.loads(data)

    def raw(self, data, timeout=30, read_until_close=True):
        """Send bytes on a fresh TCP connection, read what comes back until
        the daemon closes (or timeout): the bytes."""
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        try:
            if data:
                s.sendall(data)
            out = b""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    chunk = s.recv(65536)
                except (socket.timeout, ConnectionResetError):
                    break
                if not chunk:
                    break
                out += chunk
                if not read_until_close and b"\r\n\r\n" in out:
                    break
            return out
        finally:
            s.close()

    def metric(self, name):
        st, _, data = self.request("GET", "/metrics")
        for line in data.decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        raise AssertionError("no metric " + name)


def unix_call(sock, req, timeout=120):
    """One native request over the Unix socket: the answer."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock)
    try:
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return json.loads(buf)
    finally:
        s.close()
