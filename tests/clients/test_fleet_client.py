"""Client(endpoints=...) and AsyncClient(endpoints=...) (issue 39): a single
daemon's client API over a fleet of two Unix-socket daemons and one HTTP
daemon (loopback, a bearer token). Each job prints its own number, so a
result is checked against the job it answers: every job answered exactly
once, by a daemon it names, whatever happens to the daemons.
Run inside a throw-away pid namespace (CMakeLists.txt)."""
import asyncio
import os
import signal
import sys
import time
import unittest

import pyclient_env as env
import surgebox
from test_fleet import job, start

sys.path.insert(0, os.path.join(env.SRC, "tests", "http"))
import httpd  # noqa: E402

TOKEN = "fleet-client-token-0123456789"


def check_once(t, results, n):
    ids = [r["id"] for r in results]
    t.assertEqual(len(ids), len(set(ids)), "an answer delivered twice")
    t.assertEqual(sorted(ids), list(range(n)), "a job lost")
    for r in results:
        t.assertEqual(r.status, "ok", r)
        t.assertEqual(r.stdout, b"%d\n" % r["id"], r)
        t.assertTrue(r["daemon"], r)


class MixedFleet(unittest.TestCase):
    """Two Unix-socket daemons and one HTTP daemon."""

    def setUp(self):
        d = env.private_dirs()[0]
        self.tokfile = os.path.join(d, "token")
        with open(self.tokfile, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(self.tokfile, 0o600)
        self.web = httpd.Daemon(env.BIN, "--http-token-file", self.tokfile, "--jobs", "1")
        self.unix = [start(), start()]
        self.eps = [d.sock for d in self.unix] + ["%s token-file=%s" % (self.web.url, self.tokfile)]
        self.names = {d.sock for d in self.unix} | {self.web.url}

    def tearDown(self):
        self.web.stop()
        for d in self.unix:
            d.stop()


class ClientTest(MixedFleet):
    def test_same_methods_one_argument(self):
        with surgebox.Client(endpoints=self.eps, probe_interval=0.2) as c:
            self.assertIsInstance(c, surgebox.Client)
            r = c.run(toolchain="python3", files={"main.py": "print(6 * 7)"})
            self.assertEqual((r.status, r.stdout), ("ok", b"42\n"))
            self.assertIn(r["daemon"], self.names)
            results = list(c.run_many([job(i, 0.05) for i in range(30)], concurrency=6))
            check_once(self, results, 30)
            self.assertEqual({r["daemon"] for r in results}, self.names, "6 concurrent jobs over 3 daemons")
            self.assertIn("python3", [t["name"] for t in c.toolchains()])
            st = c.status()
            self.assertEqual([d["daemon"] for d in st["daemons"]], [d.sock for d in self.unix] + [self.web.url])
            self.assertEqual([d["status"]["type"] for d in st["daemons"][:2]], ["status", "status"])
            self.assertEqual(set(c.ping()["daemons"]), self.names)
            # what a fleet cannot offer is said, naming it
            with self.assertRaises(surgebox.FleetUnsupported) as cm:
                c.request({"type": "ping"})
            self.assertIn("request()", str(cm.exception))
            with self.assertRaises(surgebox.FleetUnsupported) as cm:
                c.run(toolchain="python3", files={"main.py": "print(1)"}, cancel_after=5)
            self.assertIn("cancel_after", str(cm.exception))
            with self.assertRaises(surgebox.FleetUnsupported):
                list(c.run_many([dict(job(0), cancel_after=5)]))

    def test_plain_client_is_still_one_daemon(self):
        with surgebox.Client(self.unix[0].sock, autostart=False) as c:
            self.assertNotIsInstance(c, surgebox.FleetClient)
            self.assertEqual(c.run(**{k: v for k, v in job(3).items() if k != "id"}).stdout, b"3\n")

    def test_environment_switch(self):
        os.environ["SURGEBOX_ENDPOINTS"] = ",".join(self.eps)
        try:
            with surgebox.Client(fleet=True) as c:
                results = list(c.run_many([job(i) for i in range(6)], concurrency=3))
        finally:
            del os.environ["SURGEBOX_ENDPOINTS"]
        check_once(self, results, 6)

    def test_wrong_token_is_an_error_not_a_retry_loop(self):
        bad = [self.web.url + " token=not-the-token-at-all"]
        with surgebox.Client(endpoints=bad, probe_interval=0.2) as c:
            with self.assertRaises(surgebox.SurgeboxError) as cm:
                c.run(**{k: v for k, v in job(0).items() if k != "id"})
            self.assertEqual(c.fleet.retries, 0, "a refused token was sent again")
        self.assertEqual(cm.exception.code, "unauthorized")
        self.assertIn(self.web.url, str(cm.exception))

    def test_killed_daemon_jobs_finish_elsewhere(self):
        victim = self.unix[0]
        results = []
        with surgebox.Client(endpoints=self.eps, probe_interval=0.2) as c:
            for r in c.run_many((job(i, 0.1) for i in range(60)), concurrency=9):
                results.append(r)
                if len(results) == 10:
                    os.kill(victim.proc.pid, signal.SIGKILL)
                    victim.proc.wait()
        check_once(self, results, 60)
        self.assertFalse([r for r in results[20:] if r["daemon"] == victim.sock], "the killed daemon answered")
        self.assertTrue(any(r["attempts"] > 1 for r in results), "no job of the killed daemon was sent again")


class AsyncTest(MixedFleet):
    def test_200_concurrent(self):
        async def main():
            async with surgebox.AsyncClient(endpoints=self.eps, probe_interval=0.2) as c:
                self.assertIsInstance(c, surgebox.AsyncFleet)
                one = await c.run(toolchain="python3", files={"main.py": "print(7)"})
                self.assertEqual(one.stdout, b"7\n")
                out = [r async for r in c.run_many([job(i) for i in range(200)], concurrency=200)]
                with self.assertRaises(surgebox.FleetUnsupported):
                    await c.request({"type": "status"})
                return out
        results = asyncio.run(main())
        check_once(self, results, 200)
        self.assertEqual({r["daemon"] for r in results}, self.names)

    def test_killed_daemon_jobs_finish_elsewhere(self):
        victim = self.unix[1]

        async def main():
            out = []
            async with surgebox.AsyncClient(endpoints=self.eps, probe_interval=0.2) as c:
                async for r in c.run_many((job(i, 0.1) for i in range(60)), concurrency=9):
                    out.append(r)
                    if len(out) == 10:
                        os.kill(victim.proc.pid, signal.SIGKILL)
            return out
        results = asyncio.run(main())
        check_once(self, results, 60)
        self.assertFalse([r for r in results[20:] if r["daemon"] == victim.sock], "the killed daemon answered")
        self.assertTrue(any(r["attempts"] > 1 for r in results), "no job of the killed daemon was sent again")

    def test_wrong_token(self):
        async def main():
            async with surgebox.AsyncClient(endpoints=[self.web.url + " token=wrong-token"]) as c:
                await c.run(toolchain="python3", files={"main.py": "print(1)"})
        with self.assertRaises(surgebox.SurgeboxError) as cm:
            asyncio.run(main())
        self.assertEqual(cm.exception.code, "unauthorized")


def sleeper(i):
    # a raw job: its limits allow 2 * 1 + 5 = 7 s (fleet.py's _limits_seconds)
    return {"id": i, "steps": [{"argv": ["sh", "-c", "sleep 0.3; echo %d" % i], "limits": {"time_s": 1}}]}


class DeadlineTest(unittest.TestCase):
    """The client's deadline counts the daemon's measured queue time: 40
    jobs of 0.3 s queued at once on a one-worker daemon wait longer than
    their limits plus a 0.5 s margin, and none is called a hung daemon."""

    def setUp(self):
        self.d = start()

    def tearDown(self):
        self.d.stop()

    def test_limits_count_cases(self):
        # per step 2 x (time_s or 30) + 5 s, once per case, twice with a toolchain: worked out by
        # hand; before, cases were not counted and a "wall_s" no request has was read
        from surgebox.fleet import _limits_seconds
        step = {"argv": ["./a.out"], "limits": {"time_s": 2}, "cases": [{"stdin": ""}] * 100}
        self.assertEqual(_limits_seconds({"steps": [step]}), 900.0)
        self.assertEqual(_limits_seconds({"steps": [{"argv": ["true"]}]}), 65.0)
        self.assertEqual(_limits_seconds({"toolchain": "c", "limits": {"time_s": 1}, "cases": [{}, {}]}), 28.0)

    def test_busy_daemon_is_not_hung(self):
        with surgebox.Client(endpoints=[self.d.sock], probe_interval=0.2, answer_margin=60) as c:
            first = list(c.run_many([sleeper(i) for i in range(40)], concurrency=40))
            end = time.monotonic() + 30
            while c.fleet.endpoints[0].queue_p99 == 0 and time.monotonic() < end:
                time.sleep(0.1)
            p99 = c.fleet.endpoints[0].queue_p99
            c.fleet.answer_margin = 0.5
            second = list(c.run_many([sleeper(i) for i in range(40)], concurrency=40))
            retries = c.fleet.retries
        print("queue p99 measured %.2f s" % p99)
        for results in (first, second):
            self.assertEqual(sorted(r["id"] for r in results), list(range(40)))
            self.assertEqual([r for r in results if r.status != "ok"], [])
        self.assertEqual(retries, 0, "a busy daemon was called hung and its jobs sent again")

    def test_http_queue_time_is_measured(self):
        # the prober reads an HTTP daemon's p99 from /metrics: 6 jobs of 0.3 s on one worker queue
        d = env.private_dirs()[0]
        tok = os.path.join(d, "token")
        with open(tok, "w") as f:
            f.write(TOKEN)
        os.chmod(tok, 0o600)
        web = httpd.Daemon(env.BIN, "--http-token-file", tok, "--jobs", "1")
        try:
            with surgebox.Client(endpoints=["%s token=%s" % (web.url, TOKEN)], probe_interval=0.2) as c:
                results = list(c.run_many([sleeper(i) for i in range(6)], concurrency=6))
                ep = c.fleet.endpoints[0]
                end = time.monotonic() + 30
                while ep.queue_p99 == 0 and time.monotonic() < end:
                    time.sleep(0.1)
                self.assertGreater(ep.queue_p99, 0, "no queue time read from /metrics")
                self.assertEqual(c.status()["daemons"][0]["queue_p99_s"], ep.queue_p99)
        finally:
            web.stop()
        self.assertEqual([r.status for r in results], ["ok"] * 6)

    def test_rule(self):
        with surgebox.Fleet([self.d.sock], answer_margin=3) as f:
            ep = f.endpoints[0]
            ep.queue_p99 = 10.0
            req = {"steps": [{"argv": ["true"], "limits": {"time_s": 4}}]}
            self.assertEqual(f.answer_wait(req, ep), (2 * 4 + 5) + 2 * 10.0 + 3)
        metrics = ('# TYPE surgebox_queue_time_seconds summary\n'
                   'surgebox_queue_time_seconds{quantile="0.5"} 0.000412\n'
                   'surgebox_queue_time_seconds{quantile="0.99"} 1.803219\n'
                   'surgebox_queue_time_seconds_sum 4.5\n')
        self.assertEqual(surgebox.fleet._metric_p99(metrics), 1.803219)
        self.assertIsNone(surgebox.fleet._metric_p99("surgebox_queue_time_seconds_sum 0\n"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
