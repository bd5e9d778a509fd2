"""What tests/warm and bench/warm_python.py share: a zygote
(toolchains/warm/python/sbzygote.py) started and driven over its
SOCK_SEQPACKET socket, and the same program run cold (`python3 main.py`)
with the same environment, directory and kinds of descriptors (files)."""
import array
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SBZYGOTE = os.path.join(ROOT, "toolchains", "warm", "python", "sbzygote.py")
SKIP = 77


def pythons():
    """[(label, path)]: tests/trace's list (Debian's python3, pyenv's 3.8 ... 3.13)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "trace"))
    import tracerun
    return tracerun.pythons()


def job_env(extra=None):
    """The environment of both runs (and the zygote's start-up variables)."""
    e = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": "/tmp"}
    e.update(extra or {})
    return e


def warm_lib():
    """libsbwarm.so of the build under test (tests/warm/CMakeLists.txt sets
    SURGEBOX_WARM_LIB), or None: zygotes then end every program by Python's
    own finalisation, never by the short exit (sbzygote_body.py)."""
    lib = os.environ.get("SURGEBOX_WARM_LIB")
    return lib if lib and os.path.exists(lib) else None


class Zygote:
    def __init__(self, py="/usr/bin/python3", env=None, seed=None, lib="build"):
        """seed: the zygote's own PYTHONHASHSEED, chosen by its launcher
        (SURGEBOX_ZYGOTE_SEEDED): jobs then send an environment without one.
        lib: libsbwarm.so's path ("build": warm_lib()), loaded by the zygote
        as surgebox's daemon has it loaded, for the short exit; each child
        that takes it writes its pid to a note file (short_exits())."""
        self.py = py
        self.env = job_env(env)
        self.seed = None
        self.last_pid = None
        zenv = dict(self.env)
        if seed is not None:
            self.env.pop("PYTHONHASHSEED", None)
            zenv.update(PYTHONHASHSEED=str(seed), SURGEBOX_ZYGOTE_SEEDED="1")
        self.lib = warm_lib() if lib == "build" else lib
        self.note = None
        if self.lib:
            fd, self.note = tempfile.mkstemp(prefix="zygote-short")
            os.close(fd)
            zenv.update(SURGEBOX_ZYGOTE_LIB=self.lib, SURGEBOX_ZYGOTE_NOTE=self.note)
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen([py, SBZYGOTE], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, env=dict(zenv, SURGEBOX_ZYGOTE_FD=str(theirs.fileno())))
        theirs.close()
        if self.lib:
            ready = self.sock.recv(64)
            if ready != b"READY":
                raise RuntimeError("the zygote did not load %s: %r" % (self.lib, ready))

    def short_exits(self):
        """The pids of the children that ended by the short exit so far."""
        if not self.note:
            return set()
        with open(self.note) as f:
            return {int(x) for x in f.read().split()}

    def start(self, argv, cwd, fds, env=None):
        """Sends one job; returns the child's pid, or raises with the refusal."""
        e = self.env if env is None else env
        fields = [b"RUN", os.fsencode(cwd), b"%d" % len(argv)] + [os.fsencode(a) for a in argv]
        fields += [b"%d" % len(e)] + [os.fsencode("%s=%s" % kv) for kv in e.items()]
        self.sock.sendmsg([b"\0".join(fields)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())])
        r = self.sock.recv(1 << 16)
        if not r.startswith(b"PID "):
            raise RuntimeError(r.decode(errors="replace"))
        f = r.split()
        self.seed = f[3].decode()
        self.last_pid = int(f[1])
        return self.last_pid

    def finish(self):
        """(pid, wait status, utime, stime) of the job started last."""
        f = self.sock.recv(1 << 16).split()
        assert f[0] == b"EXIT", f
        return int(f[1]), int(f[2]), float(f[3]), float(f[4])

    def run(self, script, args=(), stdin=b"", cwd=None, env=None):
        """(exit code as subprocess gives it, stdout, stderr) of a warm job."""
        with _Files(stdin) as (i, o, e):
            self.start([self.py, script] + list(args), cwd, [i.fileno(), o.fileno(), e.fileno()], env)
            _pid, status, _u, _s = self.finish()
            return _code(status), _read(o), _read(e)

    def close(self):
        self.sock.close()
        rc = self.proc.wait(timeout=30)
        if self.note:
            os.unlink(self.note)
        return rc


def run_cold(py, script, args=(), stdin=b"", cwd=None, env=None):
    with _Files(stdin) as (i, o, e):
        # a session of its own, as a sandboxed job and a warm child have
        p = subprocess.run([py, script] + list(args), stdin=i, stdout=o, stderr=e, cwd=cwd, start_new_session=True,
                           env=job_env() if env is None else env, timeout=120)
        return p.returncode, _read(o), _read(e)


def _code(status):
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _read(f):
    f.seek(0)
    return f.read()


class _Files:
    def __init__(self, stdin):
        self.stdin = stdin

    def __enter__(self):
        self.fs = [tempfile.TemporaryFile() for _ in range(3)]
        self.fs[0].write(self.stdin)
        self.fs[0].seek(0)
        return self.fs

    def __exit__(self, *a):
        for f in self.fs:
            f.close()
