"""What the daemon-level warm tests share: a private surgeboxd (tests/cli's
PrivateDaemon) and one exec request at a time over its socket, cold or
warm, in the steps form with the python3 toolchain's environment (so that
both runs can be given the same PYTHONHASHSEED) or the toolchain form."""
import base64
import json
import os
import socket
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402,F401

SKIP = 77
PY = "/usr/bin/python3"
# toolchains/defs/python3.json's environment for /usr/bin/python3
ENV = {"PATH": "/usr/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"}


def root_top(prefix):
    """The warm daemon tests' preconditions, then a world-readable folder under /tmp for their
    trees: (SKIP, None) with why printed when they cannot run here, else (None, the folder)."""
    if os.geteuid() != 0:
        print("SKIPPED: the warm daemon tests run as root")
        return SKIP, None
    if not os.path.exists(PY):
        print("SKIPPED: no %s" % PY)
        return SKIP, None
    top = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(top, 0o755)
    return None, top


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


def seed_of(step):
    """The hash seed of the zygote that ran a warm step, or None (cold)."""
    s = start(step)  # "warm (zygote, hash seed N)"
    return s.rsplit(" ", 1)[-1].rstrip(")") if s.startswith("warm (zygote, hash seed ") else None


def cannot_run_warm_as_root():
    """A test of a private root daemon's warm steps: why it cannot run here
    (printed as SKIPPED), or None."""
    if not os.path.exists(PY):
        return "no /usr/bin/python3"
    if os.geteuid() != 0:
        return "not root (warm runs are refused in user-namespace mode)"
    return None


def one_slot_daemon(argv):
    """The start of a test of one slot's zygote (argv: BIN_DIR CACHE_DIR): a private root
    daemon with --jobs 1 and its Checks, or None after printing why it cannot run here."""
    why = cannot_run_warm_as_root()
    if why:
        print("SKIPPED: %s" % why)
        return None
    return PrivateDaemon(argv[1], argv[2], "--jobs", "1"), Checks()


class Checks:
    """check(ok, what) prints each; exit_code() the count and 0 or 1."""

    def __init__(self):
        self.fails = []

    def __call__(self, ok, what):
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            self.fails.append(what)

    def exit_code(self):
        print("%d failed" % len(self.fails))
        return 1 if self.fails else 0


class UserDaemon(PrivateDaemon):
    """surgeboxd as uid 4242 (as daemon.unprivileged_daemon starts it): the
    unprivileged, user-namespace mode; its toolchain directory empty."""

    def __init__(self, bin_dir, *extra):
        top = tempfile.mkdtemp(prefix="warm-unpriv-")
        super().__init__(bin_dir, False, "--jobs", "1", "--no-cache", "--toolchains", top, *extra, user=4242,
                         directory=top)


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
