#!/usr/bin/env python3
"""The Python client (clients/python) against a real surgeboxd.

Run as: test_pyclient.py [unittest args], e.g. `test_pyclient.py RunTest`.
ctest runs each class inside unshare --mount --propagation private --pid
--fork --mount-proc (every program here runs in a sandbox of that daemon).
"""
import asyncio
import base64
import hashlib
import os
import sys
import time
import unittest
import warnings

from pyclient_env import SURGEBOXD, Daemon, pid_alive, private_dirs, procs_with

import surgebox

SLEEPER = {"steps": [{"name": "run", "argv": ["sleep", "30"]}]}


class WithDaemon(unittest.TestCase):
    """A class of cases sharing one daemon (2 workers) and one connection."""

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon("--jobs", "2")
        cls.c = surgebox.Client(cls.d.sock)

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        cls.d.stop()


class RunTest(WithDaemon):
    """One job at a time: both forms, bytes in and out, errors."""

    def test_steps_and_argv_lists(self):
        r = self.c.run([["sh", "-c", "echo hi; echo err >&2; exit 3"]])
        self.assertEqual(r.status, "runtime_error")
        self.assertEqual(r.steps[0]["exit_code"], 3)
        self.assertEqual(r.stdout, b"hi\n")
        self.assertEqual(r.stderr, b"err\n")
        self.assertEqual(r["id"], 0)

    def test_toolchain_form_with_args_and_text_stdin(self):
        r = self.c.run(toolchain="python3", files={"main.py": "import sys\nprint(sys.argv[1], input())\n"},
                       args=["x"], stdin="from stdin\n")
        self.assertEqual(r.status, "ok", r)
        self.assertEqual(r.stdout, b"x from stdin\n")

    def test_binary_stdin_and_files(self):
        blob = bytes(range(256)) * 3
        r = self.c.run(files={"blob.bin": blob, "run.sh": {"content": "#!/bin/sh\ncat blob.bin; cat\n", "mode": 0o755}},
                       steps=[{"name": "run", "argv": ["./run.sh"], "stdin": b"\x00\xff\x10"}])
        self.assertEqual(r.status, "ok", r)
        self.assertEqual(r.stdout, blob + b"\x00\xff\x10")
        step = r.step("run")
        self.assertTrue(step["stdout_lossy"])
        self.assertEqual(step["stdout_sha256"], hashlib.sha256(blob + b"\x00\xff\x10").hexdigest())

    def test_output_encoding_base64_and_exact_text(self):
        r = self.c.run([["printf", "caf\\303\\251"]], output_encoding="base64")
        s = r.step()
        self.assertEqual(s["stdout_b64"], base64.b64encode("café".encode()).decode())
        self.assertEqual(r.stdout, "café".encode())
        # without base64 the text is exact and no _b64 field comes
        r = self.c.run([["printf", "caf\\303\\251"]])
        self.assertNotIn("stdout_b64", r.step())
        self.assertEqual(surgebox.exact_bytes(r.step()), "café".encode())

    def test_outputs_come_back_as_bytes(self):
        r = self.c.run(steps=[{"argv": ["sh", "-c", "printf 'a\\000\\377' > out.bin; ln -s /etc/passwd link"],
                               "outputs": ["out.bin", "link", "missing"]}])
        self.assertEqual(r.output_files(), {"out.bin": b"a\x00\xff"})
        errs = [o["path"] for o in r.step()["outputs"] if "error" in o]
        self.assertEqual(errs, ["link", "missing"])
        r = self.c.run(toolchain="python3", files={"main.py": "open('o.bin','wb').write(bytes([0,1,254]))\n"},
                       outputs=["o.bin"])
        self.assertEqual(r.output_files(), {"o.bin": b"\x00\x01\xfe"})

    def test_limits(self):
        r = self.c.run(toolchain="python3", files={"main.py": "while True: pass\n"},
                       limits={"time_s": 1, "cpu_time_s": 1})
        self.assertEqual(r.status, "timeout")

    def test_error_response_raises(self):
        with self.assertRaises(surgebox.SurgeboxError) as cm:
            self.c.run([["cat", "x"]], files={"../x": "no"})
        self.assertEqual(cm.exception.code, "bad_path")
        with self.assertRaises(surgebox.SurgeboxError) as cm:
            self.c.run(toolchain="cobol-85", files={"a.cob": ""})
        self.assertEqual(cm.exception.code, "unknown_toolchain")
        with self.assertRaises(surgebox.UnknownProfile) as cm:
            self.c.run([["true"]], profile="nope")
        self.assertIn('unknown profile "nope"', str(cm.exception))
        with self.assertRaises(surgebox.UnknownProfile):
            self.c.toolchains(profile="nope")
        # the connection stays usable
        self.assertEqual(self.c.ping()["type"], "ping")

    def test_bad_job_is_refused_before_sending(self):
        with self.assertRaises(ValueError):
            self.c.run([["true"]], toolchain="python3")
        with self.assertRaises(ValueError):
            self.c.run([["true"]], args=["x"])
        with self.assertRaises(TypeError):
            self.c.run([["true"]], files={"a": 3})


class Counting:
    """An iterable that records how many items were taken, to check laziness."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.taken = 0

    def __iter__(self):
        for j in self.jobs:
            self.taken += 1
            yield j


class RunManyTest(WithDaemon):
    def test_all_results_with_their_ids(self):
        jobs = [{"steps": [["sh", "-c", "echo $((%d * 3))" % i]]} for i in range(40)]
        got = {r["id"]: r.stdout for r in self.c.run_many(jobs, concurrency=5)}
        self.assertEqual(got, {i: b"%d\n" % (i * 3) for i in range(40)})

    def test_backpressure_and_laziness(self):
        src = Counting([{"steps": [["sh", "-c", "echo %d" % i]]} for i in range(30)])
        gen = self.c.run_many(src, concurrency=4)
        self.assertEqual(src.taken, 0)  # nothing taken before the first next()
        seen = 0
        peak = 0
        for r in gen:
            seen += 1
            in_flight_before = src.taken - (seen - 1)
            peak = max(peak, in_flight_before)
            self.assertLessEqual(in_flight_before, 4)
        self.assertEqual(seen, 30)
        self.assertEqual(peak, 4)

    def test_streams_in_completion_order(self):
        jobs = [{"id": "slow", "steps": [["sleep", "8"]]}] + [{"id": "q%d" % i, "steps": [["true"]]} for i in range(5)]
        order = [r["id"] for r in self.c.run_many(jobs, concurrency=2)]
        self.assertEqual(sorted(order), sorted(j["id"] for j in jobs))
        self.assertEqual(order[-1], "slow")

    def test_error_item_does_not_stop_the_stream(self):
        jobs = [{"steps": [["true"]]}, {"steps": [["true"]], "files": {"/abs": "x"}}, {"steps": [["true"]]}]
        res = {r["id"]: r for r in self.c.run_many(jobs, concurrency=3)}
        self.assertEqual(res[1]["status"], "error")
        self.assertEqual(res[1]["error"]["code"], "bad_path")
        self.assertEqual([res[0].status, res[2].status], ["ok", "ok"])

    def test_abandoned_stream_cancels_its_jobs(self):
        gen = self.c.run_many([{"steps": [["true"]]}] + [SLEEPER] * 3, concurrency=4)
        first = next(gen)
        self.assertEqual(first.status, "ok")
        gen.close()
        # the daemon cancelled the two running sleepers (the third was queued)
        st = self.c.status()
        for _ in range(100):
            if st["running"] == 0 and st["queued"] == 0:
                break
            time.sleep(0.1)
            st = self.c.status()
        self.assertEqual((st["running"], st["queued"]), (0, 0))
        self.assertEqual(st["totals"].get("cancelled"), 3)
        self.assertEqual(self.c.run([["echo", "after"]]).stdout, b"after\n")

    def test_progress_bar(self):
        import io
        out = io.StringIO()
        jobs = [{"steps": [["true"]]}] * 5
        n = sum(1 for _ in surgebox.progress(self.c.run_many(jobs, concurrency=2), total=5, file=out))
        self.assertEqual(n, 5)
        last = out.getvalue().strip().splitlines()[-1]
        self.assertIn("5/5", last)
        self.assertIn("ok=5", last)


class CancelTest(unittest.TestCase):
    def test_cancel_after_cancels_the_job(self):
        d = Daemon("--jobs", "2")
        try:
            with surgebox.Client(d.sock) as c:
                r = c.run(SLEEPER["steps"], cancel_after=1)
                self.assertEqual(r.status, "cancelled")
                self.assertTrue(r["client_timeout"])
                self.assertEqual(r.step()["signal"], "SIGKILL")
                self.assertIn("cancelled by request", r.step()["error"])
                # per job in run_many; the others are untouched
                jobs = [dict(SLEEPER, cancel_after=1, id="t"), {"id": "q", "steps": [["echo", "fine"]]}]
                res = {x["id"]: x for x in c.run_many(jobs, concurrency=2)}
                self.assertEqual(res["t"].status, "cancelled")
                self.assertEqual(res["q"].stdout, b"fine\n")
                self.assertNotIn("client_timeout", res["q"])
                # `timeout`, the name before cancel_after, still cancels, with a DeprecationWarning
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    r = c.run(SLEEPER["steps"], timeout=1)
                self.assertEqual((r.status, r.get("client_timeout")), ("cancelled", True))
                self.assertTrue(any(w.category is DeprecationWarning and "cancel_after" in str(w.message)
                                    for w in caught), [str(w.message) for w in caught])
                st = c.status()
                self.assertEqual(st["totals"].get("cancelled"), 3)
                self.assertEqual(st["running"], 0)
        finally:
            d.stop()


class DaemonGoneTest(unittest.TestCase):
    """A daemon that dies mid-stream is an error, never a hang or a silent end."""

    def test_connection_lost(self):
        d = Daemon("--jobs", "2")
        try:
            c = surgebox.Client(d.sock)
            gen = c.run_many([{"steps": [["true"]]}, SLEEPER, SLEEPER], concurrency=3)
            self.assertEqual(next(gen).status, "ok")
            d.proc.kill()
            with self.assertRaises(surgebox.ConnectionLost):
                next(gen)
            c.close()
        finally:
            d.stop()
        d = Daemon("--jobs", "2")
        try:
            asyncio.run(self._async(d))
        finally:
            d.stop()

    async def _async(self, d):
        async with surgebox.AsyncClient(d.sock) as c:
            task = asyncio.ensure_future(c.run(SLEEPER["steps"]))
            while (await c.status())["running"] != 1:
                await asyncio.sleep(0.05)
            d.proc.kill()
            with self.assertRaises(surgebox.ConnectionLost):
                await task


class BusyTest(unittest.TestCase):
    def test_busy_is_retried(self):
        d = Daemon("--jobs", "1", "--max-queue", "1")
        try:
            with surgebox.Client(d.sock, busy_backoff=(0.05, 0.3)) as c:
                jobs = [{"steps": [["sh", "-c", "sleep 0.3; echo %d" % i]]} for i in range(6)]
                res = {r["id"]: r for r in c.run_many(jobs, concurrency=6)}
                self.assertEqual({i: r.stdout for i, r in res.items()}, {i: b"%d\n" % i for i in range(6)})
                self.assertGreater(c.busy_retries, 0)
                self.assertGreater(c.status()["rejected_busy"], 0)
                # a bounded wait gives up with the daemon's word
                c2 = surgebox.Client(d.sock, busy_timeout=0.5)
                res = list(c2.run_many([SLEEPER, SLEEPER, dict(SLEEPER, id="x")], concurrency=3, cancel_after=3))
                x = [r for r in res if r["id"] == "x"][0]
                self.assertEqual(x["status"], "error")
                self.assertEqual(x["error"]["code"], "busy")
                c2.close()
        finally:
            d.stop()


class PrivateTest(unittest.TestCase):
    def test_private_daemon_started_and_stopped(self):
        tmp, args = private_dirs()
        c = surgebox.Client(private=True, surgeboxd=SURGEBOXD, daemon_args=args)
        pid = c.daemon.pid
        sock = c.daemon.socket
        self.assertTrue(pid_alive(pid))
        self.assertEqual(c.run([["echo", "private"]]).stdout, b"private\n")
        self.assertEqual(c.status()["pid"], pid)
        c.close()
        self.assertFalse(pid_alive(pid))
        self.assertFalse(os.path.exists(os.path.dirname(sock)))

    def test_autostart_when_nothing_listens_and_env_binary(self):
        tmp, args = private_dirs()
        old = dict(os.environ)
        os.environ.pop("SURGEBOX_SOCKET", None)
        os.environ["SURGEBOX_SOCKET_DIR"] = tmp  # the default socket, here: nothing answers there
        os.environ["SURGEBOXD"] = SURGEBOXD
        try:
            with surgebox.Client(daemon_args=args) as c:
                self.assertIsNotNone(c.daemon)
                pid = c.daemon.pid
                self.assertEqual(c.run([["echo", "auto"]]).stdout, b"auto\n")
            self.assertFalse(pid_alive(pid))
            # an explicit socket is never replaced by a private daemon
            with self.assertRaises(surgebox.NoDaemon):
                surgebox.Client(os.path.join(tmp, "nobody-here.sock"))
            os.environ["SURGEBOX_SOCKET"] = os.path.join(tmp, "nobody-here.sock")
            with self.assertRaises(surgebox.NoDaemon):
                surgebox.Client(daemon_args=args)
            self.assertEqual([x for x in os.listdir(tmp) if x.startswith("surgebox-private")], [])
        finally:
            os.environ.clear()
            os.environ.update(old)

    def test_a_daemon_that_does_not_start_is_reported(self):
        tmp, _ = private_dirs()
        old = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = tmp  # where the private socket's directory goes
        try:
            with self.assertRaises(RuntimeError):
                surgebox.Client(private=True, surgeboxd="/bin/false")
        finally:
            if old is None:
                del os.environ["XDG_RUNTIME_DIR"]
            else:
                os.environ["XDG_RUNTIME_DIR"] = old
        self.assertEqual(sorted(os.listdir(tmp)), ["toolchains"])

    def test_close_stops_a_private_daemon_with_a_job_running(self):
        tmp, args = private_dirs()
        c = surgebox.Client(private=True, surgeboxd=SURGEBOXD, daemon_args=args)
        pid = c.daemon.pid
        c._send({"id": "s", "type": "exec", "steps": [{"argv": ["sleep", "31"]}]})
        for _ in range(100):
            if c.status()["running"] == 1:
                break
            time.sleep(0.1)
        self.assertEqual(c.status()["running"], 1)
        c.close()
        self.assertFalse(pid_alive(pid))
        self.assertEqual(procs_with(b"sleep\x0031"), [])


TRACED = "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out\n\n\nprint(f([1, 2]))\n"


class TraceTest(WithDaemon):
    """Client.trace / AsyncClient.trace: a parsed Trace through the daemon, checked against the
    untraced run; the trace option in run_many jobs (what batch sends)."""

    def test_trace_returns_a_parsed_trace(self):
        t = self.c.trace(TRACED)
        self.assertIsInstance(t, surgebox.Trace)
        self.assertEqual(t.status, "complete")
        self.assertEqual(t.head["files"], ["/app/main.py"])
        self.assertEqual(len(t.events), 13)
        self.assertEqual(t.events[11].k, "return")
        self.assertEqual(tuple(t.events[11].val), ("list", "#2[2, 4]"))
        self.assertEqual(t.result.stdout, b"[2, 4]\n")
        self.assertEqual(t.check, {"stdout_equal": True, "stderr_equal": True, "exit_equal": True,
                                   "trace_sealed": True})
        # a debugger view on it: step out of f's first line lands on the module's return
        self.assertEqual(t.events[t.step_out(4)].fn, "<module>")

    def test_files_args_stdin_and_limits(self):
        t = self.c.trace("import sys\nfrom h import g\nprint(g(int(input())), sys.argv[1])\n",
                         files={"h.py": "def g(x):\n    return x + 1\n"}, args=["A"], stdin="4\n",
                         trace_limits={"events": 3}, check=False)
        self.assertEqual(t.status, "truncated")
        self.assertEqual(t.end["cap"], "events")
        self.assertIsNone(t.check)
        self.assertEqual(t.result.stdout, b"5 A\n")

    def test_refused_trace_raises(self):
        with self.assertRaises(surgebox.SurgeboxError) as cm:
            self.c.trace("pass\n", trace_limits={"bytes": 10})
        self.assertEqual(cm.exception.code, "bad_limits")
        self.assertIn("trace.bytes", str(cm.exception))

    def test_trace_in_run_many_jobs(self):
        jobs = [{"id": i, "toolchain": "python3", "files": {"main.py": "print(%d)\n" % i}, "trace": {"check": True}}
                for i in range(3)]
        got = {r["id"]: r.step() for r in self.c.run_many(jobs, concurrency=3)}
        self.assertEqual(sorted(got), [0, 1, 2])
        for i, s in got.items():
            self.assertEqual(s["trace_status"], "complete")
            self.assertTrue(s["trace_check"]["stdout_equal"])
            self.assertEqual(surgebox.Trace.parse(s["trace"]).events[-1].k, "return")

    def test_async_trace(self):
        async def go():
            async with surgebox.AsyncClient(self.d.sock) as c:
                return await c.trace(TRACED)
        t = asyncio.run(go())
        self.assertEqual(t.status, "complete")
        self.assertEqual(t.result.stdout, b"[2, 4]\n")


class AsyncTest(unittest.TestCase):
    def test_async_client(self):
        d = Daemon("--jobs", "2")
        busy = Daemon("--jobs", "1", "--max-queue", "1")
        try:
            asyncio.run(self._main(d, busy))
        finally:
            d.stop()
            busy.stop()

    async def _main(self, d, busy):
        async with surgebox.AsyncClient(d.sock) as c:
            r = await c.run(files={"b.bin": b"\x00\xff"}, steps=[{"argv": ["sh", "-c", "cat b.bin; cat"],
                                                                  "stdin": b"\x01\xfe"}])
            self.assertEqual(r.stdout, b"\x00\xff\x01\xfe")
            r = await c.run(toolchain="python3", files={"main.py": "print(7 * 6)"})
            self.assertEqual(r.stdout, b"42\n")
            with self.assertRaises(surgebox.SurgeboxError):
                await c.run([["true"]], files={"../x": ""})
            with self.assertRaises(surgebox.UnknownProfile):
                await c.run([["true"]], profile="nope")
            with self.assertRaises(surgebox.UnknownProfile):
                await c.toolchains(profile="nope")

            taken = [0]

            async def gen():
                for i in range(20):
                    taken[0] += 1
                    yield {"steps": [["sh", "-c", "echo %d" % i]]}

            seen = {}
            peak = 0
            async for res in c.run_many(gen(), concurrency=3):
                peak = max(peak, taken[0] - len(seen))
                self.assertLessEqual(taken[0] - len(seen), 3)
                seen[res["id"]] = res.stdout
            self.assertEqual(seen, {i: b"%d\n" % i for i in range(20)})
            self.assertEqual(peak, 3)

            r = await c.run(SLEEPER["steps"], cancel_after=1)
            self.assertEqual((r.status, r.get("client_timeout")), ("cancelled", True))
            self.assertEqual((await c.status())["totals"].get("cancelled"), 1)

        async with surgebox.AsyncClient(busy.sock, busy_backoff=(0.05, 0.3)) as c:
            jobs = [{"steps": [["sh", "-c", "sleep 0.3; echo %d" % i]]} for i in range(5)]
            got = {}
            async for res in c.run_many(jobs, concurrency=5):
                got[res["id"]] = res.stdout
            self.assertEqual(got, {i: b"%d\n" % i for i in range(5)})
            self.assertGreater(c.busy_retries, 0)

        tmp, args = private_dirs()
        c = await surgebox.AsyncClient(private=True, surgeboxd=SURGEBOXD, daemon_args=args).open()
        pid = c.daemon.pid
        self.assertEqual((await c.run([["echo", "p"]])).stdout, b"p\n")
        await c.close()
        self.assertFalse(pid_alive(pid))


if __name__ == "__main__":
    unittest.main(verbosity=2)
