"""What the daemon-level warm tests share: a private surgeboxd (tests/cli's
PrivateDaemon) and one exec request at a time over its socket, cold or
warm, in the steps form with the python3 toolchain's environment (so that
both runs can be given the same PYTHONHASHSEED) or the toolchain form."""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402,F401

SKIP = 77
PY = "/usr/bin/python3"
# toolchains/defs/python3.json's environment for /usr/bin/python3
ENV = {"PATH": "/usr/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"}


def files_of(directory):
    out = []
    for dirpath, _dirs, names in os.walk(directory):
        for n in names:
            full = os.path.join(dirpath, n)
            with open(full, "rb") as f:
                data = f.read()
            out.append({"path": os.path.relpath(full, directory), "content_b64": base64.b64encode(data).decode()})
    return out


class Client:
    def __init__(self, sock):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(sock)
        self.buf = b""
        self.n = 0

    def request(self, req):
        self.send(req)
        return self.receive()

    def status(self):
        self.n += 1
        self.s.sendall((json.dumps({"id": self.n, "type": "status"}) + "\n").encode())
        return self.receive()

    def send(self, req):
        self.n += 1
        req = dict(req, id=self.n, type="exec")
        self.s.sendall((json.dumps(req) + "\n").encode())

    def receive(self):
        while b"\n" not in self.buf:
            c = self.s.recv(1 << 20)
            if not c:
                raise RuntimeError("the daemon closed the connection")
            self.buf += c
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def python(self, files, args=(), stdin=b"", warm=False, seed="0", limits=None, extra_env=None):
        """main.py (in files) run as python3 /app/main.py ARGS; the step's result."""
        env = dict(ENV, **({"PYTHONHASHSEED": seed} if seed is not None else {}), **(extra_env or {}))
        step = {"argv": [PY, "/app/main.py"] + list(args), "env": env,
                "stdin_b64": base64.b64encode(stdin).decode(), "output_encoding": "base64"}
        if limits:
            step["limits"] = limits
        r = self.request({"files": files, "steps": [step], "warm": warm})
        return r["steps"][0] if r.get("steps") else r

    def close(self):
        self.s.close()


def outcome(step):
    """(status, exit code, signal, stdout bytes, stderr bytes)"""
    return (step.get("status"), step.get("exit_code"), step.get("signal"),
            base64.b64decode(step.get("stdout_b64") or ""), base64.b64decode(step.get("stderr_b64") or ""))


def start(step):
    return (step.get("enforced") or {}).get("start", "")


class UserDaemon:
    """surgeboxd as uid 4242 (as daemon.unprivileged_daemon starts it): the
    unprivileged, user-namespace mode."""

    def __init__(self, bin_dir, *extra):
        self.top = tempfile.mkdtemp(prefix="warm-unpriv-")
        os.chmod(self.top, 0o755)
        xdg = os.path.join(self.top, "xdg")
        os.mkdir(xdg, 0o700)
        os.chown(xdg, 4242, 4242)
        self.sock = os.path.join(xdg, "s.sock")
        env = {"PATH": "/usr/bin:/bin", "HOME": xdg, "XDG_RUNTIME_DIR": xdg}
        self.proc = subprocess.Popen(["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
                                      os.path.join(bin_dir, "surgeboxd"), "--socket", self.sock, "--jobs", "1",
                                      "--no-cache", "--toolchains", self.top] + list(extra), env=env, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(self.sock) and self.proc.poll() is None:
            time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(60)
        shutil.rmtree(self.top, ignore_errors=True)


def as_user(fn):
    """fn() in a child run by uid 4242 (the unprivileged daemon's socket is
    its own); its failures counted by the exit status."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(4242)
            os.setuid(4242)
            code = 1 if fn() else 0
        finally:
            sys.stdout.flush()
            os._exit(code)
    _, st = os.waitpid(pid, 0)
    return [] if st == 0 else ["as uid 4242 (above)"]
