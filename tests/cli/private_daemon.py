"""A private surgeboxd for one test case: its own socket in its own directory,
its log kept; ready once it says so on --ready-fd (after bind, listen and
detection: a connect never races the start). The one way the tests start a
daemon by hand: tests/cli, tests/toolchains, tests/trace, tests/warm,
tests/http (httpd.Daemon adds the HTTP front) and tests/clients build on it.

  PrivateDaemon(bin_dir, cache_dir, *extra, env=None, user=None, directory=None)

cache_dir: the --cache-dir to give (None: DIRECTORY/cache; False: none, the
daemon's own default). user: a uid to run it as (setpriv; the unprivileged,
user-namespace mode), with HOME and XDG_RUNTIME_DIR a 0700 directory of its
own where its socket goes. directory: the case's directory (default: a new
one); stop() removes it."""
import os
import select
import shutil
import subprocess
import tempfile
import time


class PrivateDaemon:
    def __init__(self, bin_dir, cache_dir=None, *extra, env=None, start_timeout=400, user=None, directory=None):
        self.dir = directory or tempfile.mkdtemp(prefix="sbtest-daemon-")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "s.sock")
        self.logpath = os.path.join(self.dir, "log")
        self.log = open(self.logpath, "w+")
        if cache_dir is None:
            cache_dir = os.path.join(self.dir, "cache")
        argv = [os.path.join(bin_dir, "surgeboxd")]
        if user is not None:
            xdg = os.path.join(self.dir, "xdg")
            os.mkdir(xdg, 0o700)
            os.chown(xdg, user, user)
            self.sock = os.path.join(xdg, "s.sock")
            env = dict(env or {"PATH": "/usr/bin:/bin"}, HOME=xdg, XDG_RUNTIME_DIR=xdg)
            seed = os.environ.get("SURGEBOX_TOOLCHAINS_SEED")
            if seed and "SURGEBOX_TOOLCHAINS_SEED" not in env:
                env["SURGEBOX_TOOLCHAINS_SEED"] = seed  # root's seed: an unprivileged daemon may read it
            argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + argv
        argv += ["--socket", self.sock]
        if cache_dir is not False:
            argv += ["--cache-dir", cache_dir]
        rfd, wfd = os.pipe()
        try:
            self.proc = subprocess.Popen(argv + list(extra) + ["--ready-fd", str(wfd)], stdin=subprocess.DEVNULL,
                                         stderr=self.log, env=env, pass_fds=(wfd,))
        finally:
            os.close(wfd)
        got = b""
        deadline = time.monotonic() + start_timeout  # a bound, not an assertion: detection may be slow
        try:
            while not got.endswith(b"\n") and select.select([rfd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                chunk = os.read(rfd, 64)
                if not chunk:
                    break
                got += chunk
        finally:
            os.close(rfd)
        if got != b"ready\n":
            text = self.logtext()
            self.stop()
            raise RuntimeError("daemon did not start: " + text)

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        """SIGTERM and wait (SIGKILL after 60 s); the directory goes (the log
        stays readable through self.log)."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)
