"""Finding the daemon's socket, and starting a private daemon.

Mirrors the C client (client/client.c, common/runtime_paths.c): socket from
the argument, else $SURGEBOX_SOCKET (both explicit: never replaced by a
private daemon), else <runtime dir>/surgebox.sock; a private
daemon is `surgeboxd --socket <runtime dir>/surgebox-private-XXXXXX/surgebox.sock
--ready-fd N --quiet --grace 2` found via the explicit path, else $SURGEBOXD,
else PATH. tests/cli (cli.python_socket) compares these answers with the C ones.
"""
from __future__ import annotations

import ctypes
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from typing import Optional, Sequence


def _private_dir_ok(path):
    """Ours, a real directory (not a link), nobody else may write it, we can."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022
            and os.access(path, os.W_OK | os.X_OK))


def runtime_dir() -> str:
    """Where sockets live, by the C side's one rule (sbu_socket_dir):
    $SURGEBOX_SOCKET_DIR when set (an absolute directory of ours nobody else
    can write, else OSError); /run/surgebox as root; else $XDG_RUNTIME_DIR if it is an absolute directory of ours that
    nobody else can write; else /tmp/surgebox-<uid> (created 0700, refused with
    OSError unless it is a real directory of ours that nobody else can write)."""
    own = os.environ.get("SURGEBOX_SOCKET_DIR")
    if own:
        if own.startswith("/") and _private_dir_ok(own):
            return own
        raise OSError("SURGEBOX_SOCKET_DIR=%s is not an absolute private directory of uid %d" % (own, os.geteuid()))
    if os.geteuid() == 0:
        return "/run/surgebox"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and xdg.startswith("/") and _private_dir_ok(xdg):
        return xdg
    d = "/tmp/surgebox-%d" % os.geteuid()
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    if not _private_dir_ok(d):
        raise OSError("%s is not a private directory of uid %d" % (d, os.geteuid()))
    return d


def default_socket() -> str:
    """$SURGEBOX_SOCKET if set and not empty, else <runtime dir>/surgebox.sock
    (sbu_default_socket: in $SURGEBOX_SOCKET_DIR or /tmp/surgebox-<uid> even
    when that directory is refused)."""
    env = os.environ.get("SURGEBOX_SOCKET")
    if env:
        return env
    try:
        d = runtime_dir()
    except OSError:
        d = os.environ.get("SURGEBOX_SOCKET_DIR") or "/tmp/surgebox-%d" % os.geteuid()
    return d + "/surgebox.sock"


def find_surgeboxd(explicit: Optional[str] = None) -> str:
    """The surgeboxd binary: `explicit`, else $SURGEBOXD, else surgeboxd on
    PATH (FileNotFoundError naming the next step when there is none)."""
    cand = explicit or os.environ.get("SURGEBOXD") or "surgeboxd"
    if os.sep in cand:
        if os.access(cand, os.X_OK):
            return cand
        raise FileNotFoundError("surgeboxd not executable: %s" % cand)
    found = shutil.which(cand)
    if not found:
        raise FileNotFoundError("surgeboxd not found on PATH (pass surgeboxd=... or set $SURGEBOXD)")
    return found


def _libc_prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(prctl):
    # runs in the child between fork and exec: only the function looked up in
    # the parent (no dlopen here). If the thread that started it dies, the
    # daemon gets SIGTERM (PR_SET_PDEATHSIG = 1); a new session keeps a Ctrl-C
    # to our process group from reaching it: we stop it ourselves.
    def hook():
        if prctl is not None:
            prctl(1, signal.SIGTERM, 0, 0, 0)
    return hook


class PrivateDaemon:
    """A surgeboxd of our own on a private socket, stopped by stop()."""

    def __init__(self, surgeboxd: Optional[str] = None, args: Sequence[str] = (), start_timeout: float = 1800.0,
                 wait: bool = True) -> None:
        self.binary = find_surgeboxd(surgeboxd)
        base = runtime_dir()  # as the C client's embedded daemon (start_embedded)
        try:
            os.mkdir(base, 0o755)
        except FileExistsError:
            pass
        self.dir = tempfile.mkdtemp(prefix="surgebox-private-", dir=base)
        self.socket = os.path.join(self.dir, "surgebox.sock")
        rfd, wfd = os.pipe()
        argv = [self.binary, "--socket", self.socket, "--ready-fd", str(wfd), "--quiet", "--grace", "2"]
        argv += [str(a) for a in args]
        try:
            self.proc = subprocess.Popen(argv, pass_fds=(wfd,), stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=_die_with_parent(_libc_prctl()))
        except BaseException:
            os.close(rfd)
            os.close(wfd)
            self._remove_dir()
            raise
        os.close(wfd)
        self._ready_fd = rfd
        self.start_timeout = start_timeout
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Block until the daemon says "ready" or exits (EOF: only it holds the pipe's write end).
        Its first toolchain detection can take minutes of wall time on a loaded machine, so
        start_timeout only bounds a daemon that hangs."""
        rfd = self._ready_fd
        timed_out = False
        try:
            got = b""
            deadline = time.monotonic() + self.start_timeout
            while not got.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([rfd], [], [], left)[0]:
                    timed_out = True
                    break
                chunk = os.read(rfd, 64)
                if not chunk:
                    break
                got += chunk
        finally:
            os.close(rfd)
        if got != b"ready\n":
            self.stop()
            if timed_out:
                raise RuntimeError("the private daemon (%s) did not say it was ready within %g s; see its messages "
                                   "above" % (self.binary, self.start_timeout))
            raise RuntimeError("the private daemon (%s) did not start; see its messages above" % self.binary)

    @property
    def pid(self) -> int:
        """The daemon's process id."""
        return self.proc.pid

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM (it drains its jobs), SIGKILL after `grace` seconds; then remove its socket."""
        p = self.proc
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.proc = None
        self._remove_dir()

    def _remove_dir(self):
        try:
            os.unlink(self.socket)
        except OSError:
            pass
        try:
            os.rmdir(self.dir)
        except OSError:
            pass
