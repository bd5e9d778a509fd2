#!/usr/bin/env python3
"""The Python client's pure parts: request building, exact bytes, progress.
No daemon; runs with any Python >= 3.8 (`test_pyclient_unit.py` or with a
path to another interpreter through ctest's pyclient.unit_py38)."""
import asyncio
import io
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
import surgebox  # noqa: E402
from surgebox import _conn  # noqa: E402


class BuildExecTest(unittest.TestCase):
    def test_steps_form(self):
        req = surgebox.build_exec({"steps": [["echo", "hi"], {"name": "b", "argv": ["cat"], "stdin": b"\x00\xff"}],
                                   "files": {"a.txt": "x", "b.bin": b"\x00\x01", "c.sh": {"content": "s", "mode": 493}},
                                   "output_encoding": "base64", "timeout": 3, "id": "mine"}, 7)
        self.assertEqual(req, {"id": 7, "type": "exec",
                               "steps": [{"argv": ["echo", "hi"]}, {"name": "b", "argv": ["cat"], "stdin_b64": "AP8="}],
                               "files": [{"path": "a.txt", "content": "x"}, {"path": "b.bin", "content_b64": "AAE="},
                                         {"path": "c.sh", "content": "s", "mode": 493}],
                               "output_encoding": "base64"})

    def test_toolchain_form(self):
        req = surgebox.build_exec({"toolchain": "gcc", "options": {"std": "c11"}, "args": [1, "b"], "stdin": b"\xff",
                                   "limits": {"time_s": 2}, "outputs": ("o",)}, "x")
        self.assertEqual(req, {"id": "x", "type": "exec", "toolchain": "gcc", "options": {"std": "c11"},
                               "args": ["1", "b"], "stdin_b64": "/w==", "limits": {"time_s": 2}, "outputs": ["o"]})

    def test_files_list_form_and_b64_kept(self):
        req = surgebox.build_exec({"steps": [["true"]], "files": [{"path": "p", "content_b64": "AA=="}]}, 1)
        self.assertEqual(req["files"], [{"path": "p", "content_b64": "AA=="}])
        # a protocol exec request as is
        req = surgebox.build_exec({"toolchain": "python3", "stdin_b64": "AP8=",
                                   "files": [{"path": "m.py", "content": ""}]}, 2)
        self.assertEqual(req, {"id": 2, "type": "exec", "toolchain": "python3", "stdin_b64": "AP8=",
                               "files": [{"path": "m.py", "content": ""}]})

    def test_refusals(self):
        for job in ({"steps": [["a"]], "toolchain": "gcc"}, {}, {"steps": [["a"]], "args": ["x"]},
                    {"steps": [["a"]], "limits": {"time_s": 1}}, {"steps": [["a"]], "timeot": 3},
                    {"steps": [["a"]], "files": {"p": {"content": "x", "mod": 1}}}):
            with self.assertRaises(ValueError, msg=job):
                surgebox.build_exec(job, 1)
        for job in ({"steps": [["a"]], "files": {"p": 3}}, {"steps": ["echo"]}, {"toolchain": "x", "stdin": 3}):
            with self.assertRaises(TypeError, msg=job):
                surgebox.build_exec(job, 1)

    def test_wire_line_is_ascii_json(self):
        line = _conn.encode({"id": 1, "s": "caf\u00e9 \ud800"})
        self.assertEqual(line, b'{"id":1,"s":"caf\\u00e9 \\ud800"}\n')


class ResultTest(unittest.TestCase):
    def test_exact_bytes(self):
        self.assertEqual(surgebox.exact_bytes({"stdout": "a\ufffdb", "stdout_b64": "YQBi/w=="}), b"a\x00b\xff")
        self.assertEqual(surgebox.exact_bytes({"stdout": "caf\u00e9"}), b"caf\xc3\xa9")
        self.assertEqual(surgebox.exact_bytes({"stderr": "e", "stdout": "o"}, "stderr"), b"e")
        with self.assertRaises(surgebox.SurgeboxError):
            surgebox.exact_bytes({"stdout_b64": "A*=="})

    def test_result_helpers(self):
        r = surgebox.Result({"status": "ok", "steps": [
            {"name": "compile", "stdout": "c"},
            {"name": "run", "stdout": "", "stdout_b64": "AP8=", "stderr": "w",
             "outputs": [{"path": "o", "content_b64": "AQI="}, {"path": "l", "error": "link"}]}]})
        self.assertTrue(r.ok)
        self.assertEqual(r.stdout, b"\x00\xff")
        self.assertEqual(r.stderr, b"w")
        self.assertEqual(r.stdout_bytes("compile"), b"c")
        self.assertEqual(r.output_files(), {"o": b"\x01\x02"})
        self.assertEqual(surgebox.Result({"status": "toolchain_missing", "steps": []}).stdout, b"")


class ProgressTest(unittest.TestCase):
    def test_plain_lines_when_not_a_tty(self):
        out = io.StringIO()
        results = [surgebox.Result({"status": s}) for s in ("ok", "timeout", "ok")]
        self.assertEqual(list(surgebox.progress(iter(results), total=3, file=out, interval=0)), results)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 3)  # one per update, the last not repeated by close()
        self.assertRegex(lines[-1], r"^surgebox 100% \|#{20}\| 3/3 \[0:00:00<~0:00:00, [0-9.]+/s\] ok=2 timeout=1$")
        self.assertNotIn("\r", out.getvalue())

    def test_without_total(self):
        out = io.StringIO()
        list(surgebox.progress(iter([surgebox.Result({"status": "ok"})]), file=out, interval=0))
        self.assertRegex(out.getvalue(), r"^surgebox 1 \[0:00:00, [0-9.]+/s\] ok=1\n$")

    def test_backoff_bounds(self):
        for a in range(40):
            d = _conn.backoff(a, 0.05, 2.0)
            self.assertGreaterEqual(d, min(2.0, 0.05 * 2 ** a) / 2)
            self.assertLessEqual(d, 2.0)


class SocketTest(unittest.TestCase):
    def test_default_socket_follows_the_c_client(self):
        old = dict(os.environ)
        try:
            os.environ["SURGEBOX_SOCKET"] = "/x/y.sock"
            self.assertEqual(surgebox.default_socket(), "/x/y.sock")
            del os.environ["SURGEBOX_SOCKET"]
            os.environ["XDG_RUNTIME_DIR"] = "/run/user/5"
            # not ours (absent here): the C rule falls back to /tmp/surgebox-<uid> (cli.python_socket)
            want = "/run/surgebox/surgebox.sock" if os.geteuid() == 0 else "/tmp/surgebox-%d/surgebox.sock" % os.geteuid()
            self.assertEqual(surgebox.default_socket(), want)
        finally:
            os.environ.clear()
            os.environ.update(old)


class ExplicitSocketTest(unittest.TestCase):
    """A socket named explicitly (argument or $SURGEBOX_SOCKET) that does not
    answer raises NoDaemon naming it and the next step, and no daemon is
    started (the fake surgeboxd would leave a mark); only the default socket
    (here in $SURGEBOX_SOCKET_DIR) starts one. No daemon runs here."""

    def setUp(self):
        self.old = dict(os.environ)
        self.t = tempfile.mkdtemp(prefix="sbpy-unit-")
        self.mark = os.path.join(self.t, "started")
        self.fake = os.path.join(self.t, "fake-surgeboxd")
        with open(self.fake, "w") as f:
            f.write("#!/bin/sh\ntouch %s\nexit 1\n" % self.mark)
        os.chmod(self.fake, 0o755)
        self.dead = os.path.join(self.t, "dead.sock")
        os.environ.pop("SURGEBOX_SOCKET", None)
        os.environ["SURGEBOXD"] = self.fake
        os.environ["SURGEBOX_SOCKET_DIR"] = self.t

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.old)
        shutil.rmtree(self.t, ignore_errors=True)

    def expect_no_daemon(self, make, hint):
        with self.assertRaises(surgebox.NoDaemon) as cm:
            make()
        e = cm.exception
        self.assertIsInstance(e, surgebox.SurgeboxError)
        self.assertEqual(e.path, self.dead)
        self.assertEqual(str(e), "no_daemon: no daemon answers at %s: start one with surgeboxd --socket %s, or %s"
                         % (self.dead, self.dead, hint))
        self.assertFalse(os.path.exists(self.mark), "a daemon was started beside an explicit socket")

    def test_argument(self):
        self.expect_no_daemon(lambda: surgebox.Client(self.dead), "drop socket=")
        self.expect_no_daemon(lambda: asyncio.run(surgebox.AsyncClient(self.dead).open()), "drop socket=")

    def test_environment(self):
        os.environ["SURGEBOX_SOCKET"] = self.dead
        self.expect_no_daemon(lambda: surgebox.Client(), "unset SURGEBOX_SOCKET")
        self.expect_no_daemon(lambda: asyncio.run(surgebox.AsyncClient().open()), "unset SURGEBOX_SOCKET")

    def test_default_socket_may_start_one(self):
        with self.assertRaises(surgebox.NoDaemon) as cm:
            surgebox.Client(autostart=False)
        self.assertEqual(cm.exception.path, os.path.join(self.t, "surgebox.sock"))
        self.assertFalse(os.path.exists(self.mark))
        with self.assertRaises(RuntimeError):  # the fake "starts" and fails: it was tried
            surgebox.Client()
        self.assertTrue(os.path.exists(self.mark))


class ErrorOfTest(unittest.TestCase):
    def test_unknown_profile(self):
        e = surgebox._jobs.error_of({"id": 1, "type": "error", "error": {
            "code": "bad_request", "message": 'unknown profile "nope": no profile nope in /p'}})
        self.assertIsInstance(e, surgebox.UnknownProfile)
        self.assertEqual(str(e), 'bad_request: unknown profile "nope": no profile nope in /p')
        e = surgebox._jobs.error_of({"id": 1, "type": "error", "error": {"code": "bad_request", "message": "x"}})
        self.assertIs(type(e), surgebox.SurgeboxError)


if __name__ == "__main__":
    unittest.main(verbosity=2)
