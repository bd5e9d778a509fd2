"""A private surgeboxd for one test case: its own socket in its own directory,
the cache directory it is given, its log kept; ready once it says so on
--ready-fd. Shared by tests/cli and tests/toolchains."""
import os
import select
import shutil
import subprocess
import tempfile
import time


class PrivateDaemon:
    def __init__(self, bin_dir, cache_dir, *extra, env=None, start_timeout=400):
        self.dir = tempfile.mkdtemp(prefix="sbtest-daemon-")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "s.sock")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        rfd, wfd = os.pipe()
        try:
            self.proc = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", self.sock,
                                          "--cache-dir", cache_dir, "--ready-fd", str(wfd)] + list(extra),
                                         stdin=subprocess.DEVNULL, stderr=self.log, env=env, pass_fds=(wfd,))
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
        """SIGTERM and wait; the directory goes (the log stays readable through self.log)."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(60)
        shutil.rmtree(self.dir, ignore_errors=True)
