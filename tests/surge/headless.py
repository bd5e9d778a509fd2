"""Debian's chromium, headless, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: commands on fd 3, answers and events on fd 4,
NUL-terminated JSON), standard library only. Loads a page and collects what
a person would call an error: uncaught exceptions, console.error/assert,
log entries of level error (CSP violations, failed loads), and JavaScript
dialogs (an alert() that ran). Run inside the unshare wrapper."""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def available():
    return shutil.which("chromium")


class Browser:
    def __init__(self, width, height):
        self.profile = tempfile.mkdtemp(prefix="sbchromium-")
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # above 4, so the child's dup2 onto 3 and 4 never clobbers one of them
        to_r, from_w = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)

        def fds():
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.w, self.r = to_w, from_r
        self.buf, self.next_id, self.events = b"", 0, []
        self.width, self.height = width, height

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for m in self.events:
            if m.get("method") == method:
                return m
        while True:
            m = self._read_message(deadline)
            self.events.append(m)
            if m.get("method") == "Page.javascriptDialogOpening":  # recorded as an error; dismissed so loading goes on
                self.send("Page.handleJavaScriptDialog", {"accept": False}, session=m.get("sessionId"))
            if m.get("method") == method:
                return m

    def open(self, url):
        """A new page showing url, loaded: its session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable", session=s)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False}, session=s)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=s)
        self.wait_event("Page.loadEventFired")
        self.send("Runtime.evaluate", {"expression": "1"}, session=s)  # drain what loading logged
        return s

    def errors(self):
        """Every error the page produced, as lines."""
        out = []
        for m in self.events:
            p, meth = m.get("params", {}), m.get("method")
            if meth == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " + json.dumps(p.get("args"))[:500])
            elif meth == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", "")[:500])
            elif meth == "Page.javascriptDialogOpening":
                out.append("dialog: " + p.get("message", ""))
        return out

    def evaluate(self, session, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate {expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, session, path):
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def close(self):
        try:
            self.send("Browser.close", timeout=20)
        except (OSError, TimeoutError, EOFError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.w, self.r):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)
