"""surgebox.Fleet (issue 39): three daemons on this machine behind one client.

Each job prints its own number, so a result is checked against the job it
answers; every job must be answered exactly once whatever happens to the
daemons (one killed with SIGKILL, one restarted, one stopped with SIGSTOP).
Run inside a throw-away pid namespace (CMakeLists.txt)."""
import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

import pyclient_env as env  # noqa: F401  (puts the source tree's client first)
import surgebox
from surgebox.fleet import parse_endpoints

N_JOBS = int(os.environ.get("SURGEBOX_FLEET_JOBS", "300"))


def ready(d, timeout=60):
    """d answers a ping (the socket file exists before listen())."""
    end = time.monotonic() + timeout
    while True:
        try:
            with surgebox.Client(d.sock, autostart=False) as c:
                c.ping()
                return
        except (surgebox.SurgeboxError, OSError):
            if time.monotonic() > end or d.proc.poll() is not None:
                raise RuntimeError("daemon did not answer: " + d.logtext())
            time.sleep(0.05)


def start():
    d = env.Daemon("--jobs", "1")
    ready(d)
    return d


def restart(d):
    """Stop d (SIGTERM) and start a daemon of the same arguments on its socket."""
    d.proc.send_signal(signal.SIGTERM)
    d.proc.wait(60)
    args = list(d.proc.args)
    if "--ready-fd" in args:  # the first start's pipe: not this process's any more
        i = args.index("--ready-fd")
        del args[i:i + 2]
    d.proc = subprocess.Popen(args, stderr=d.log)


def job(i, sleep=0.0):
    src = "import time\ntime.sleep(%r)\nprint(%d)\n" % (sleep, i)
    return {"id": i, "toolchain": "python3", "files": {"main.py": src}, "limits": {"time_s": 10}}


class ParseTest(unittest.TestCase):
    def test_forms(self):
        eps = parse_endpoints("/a.sock, unix:/b.sock,http://127.0.0.1:9 token=xyz")
        self.assertEqual([e.kind for e in eps], ["unix", "unix", "http"])
        self.assertEqual([e.name for e in eps], ["/a.sock", "/b.sock", "http://127.0.0.1:9"])
        self.assertEqual(eps[2].token, "xyz")
        self.assertEqual((eps[2].host, eps[2].port), ("127.0.0.1", 9))

    def test_file_and_environment(self):
        d = env.private_dirs()[0]
        tok = os.path.join(d, "tok")
        with open(tok, "w") as f:
            f.write("s3cret\n")
        path = os.path.join(d, "endpoints")
        with open(path, "w") as f:
            f.write("# the fleet\n/x.sock\nhttp://127.0.0.2:8080 token-file=%s  # node 2\n\n" % tok)
        os.environ["SURGEBOX_ENDPOINTS"] = path
        try:
            eps = parse_endpoints(None)
        finally:
            del os.environ["SURGEBOX_ENDPOINTS"]
        self.assertEqual([e.name for e in eps], ["/x.sock", "http://127.0.0.2:8080"])
        self.assertEqual(eps[1].token, "s3cret")

    def test_bad(self):
        for bad in ["", "relative.sock", "ftp://h", "/a,/a", "http://127.0.0.1:1 tokn=x"]:
            with self.assertRaises(ValueError, msg=bad):
                parse_endpoints(bad if bad else [])


class FleetTest(unittest.TestCase):
    def setUp(self):
        self.daemons = [start() for _ in range(3)]

    def tearDown(self):
        for d in self.daemons:
            try:
                d.proc.send_signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
            d.stop()

    def check_once(self, results, n):
        ids = [r["id"] for r in results]
        self.assertEqual(len(ids), len(set(ids)), "an answer delivered twice")
        self.assertEqual(sorted(ids), list(range(n)), "a job lost")
        for r in results:
            self.assertEqual(r.status, "ok", r)
            self.assertEqual(r.stdout, b"%d\n" % r["id"], r)

    def test_spread(self):
        socks = [d.sock for d in self.daemons]
        with surgebox.Fleet(socks) as f:
            results = list(f.run_many([job(i, 0.05) for i in range(30)], concurrency=6))
        self.check_once(results, 30)
        used = {r["daemon"] for r in results}
        self.assertEqual(used, set(socks), "least-outstanding spreads 6 concurrent jobs over 3 daemons")
        self.assertTrue(all(r["attempts"] == 1 for r in results))

    def test_kill_and_restart(self):
        a, b, c = self.daemons
        results = []
        killed_at = restarted_at = None
        with surgebox.Fleet([a.sock, b.sock, c.sock], probe_interval=0.2) as f:
            for r in f.run_many((job(i, 0.02 * (i % 5)) for i in range(N_JOBS)), concurrency=20):
                results.append(r)
                if len(results) == N_JOBS // 3:
                    os.kill(a.proc.pid, signal.SIGKILL)  # in-flight jobs on a are never answered by it
                    killed_at = len(results)
                if len(results) == N_JOBS // 2:
                    restart(b)  # its in-flight jobs end with the connection: sent again
                    restarted_at = len(results)
            status = f.status()
        self.check_once(results, N_JOBS)
        after_kill = [r for r in results[killed_at + 20:]]
        self.assertFalse([r for r in after_kill if r["daemon"] == a.sock], "the killed daemon answered")
        self.assertTrue(any(r["attempts"] > 1 for r in results), "no job was sent again after the kill")
        dead = [s for s in status if s["daemon"] == a.sock][0]
        self.assertFalse(dead["up"])
        print("fleet: %d jobs, %d sent again, restarted at %d: %s" % (
            N_JOBS, sum(r["attempts"] - 1 for r in results), restarted_at, status))

    def test_hung_daemon_taken_out(self):
        a, b, c = self.daemons
        os.kill(c.proc.pid, signal.SIGSTOP)
        with surgebox.Fleet([a.sock, b.sock, c.sock], probe_interval=0.2, probe_timeout=0.5) as f:
            t0 = time.monotonic()
            results = list(f.run_many([job(i) for i in range(30)], concurrency=6))
            since = [s for s in f.status() if s["daemon"] == c.sock][0]["out_since"]
        out_after = None if since is None else since - t0
        self.check_once(results, 30)
        self.assertIsNotNone(out_after, "the stopped daemon was never taken out")
        self.assertFalse([r for r in results if r["daemon"] == c.sock])
        print("fleet: a SIGSTOPped daemon taken out %.2f s after the fleet started (probe every 0.2 s, timeout 0.5 s)" % out_after)

    def test_none_left(self):
        for d in self.daemons:
            os.kill(d.proc.pid, signal.SIGKILL)
            d.proc.wait()
        # a job waits for a daemon to come back until its deadline (its limits + answer_margin):
        # a raw job of a 1 s wall limit (time_s: 2 x 1 + 5 s) and a 1 s margin ends after about 8 s, not job()'s 110 s
        with surgebox.Fleet([d.sock for d in self.daemons], probe_interval=0.1, attempts=2,
                            backoff=(0.01, 0.02), answer_margin=1.0) as f:
            r = f.run(id=0, steps=[{"argv": ["/bin/echo", "0"], "limits": {"time_s": 1}}])
        self.assertEqual(r["type"], "error")
        self.assertEqual(r["error"]["code"], "fleet_unavailable")
        self.assertIsNone(r["daemon"])


def async_run_many(eps, jobs, concurrency, on_result=None, **options):
    """AsyncClient(endpoints=eps).run_many on a fresh loop: (results, threads seen
    beside this one at any result, the fleet's status at the end)."""
    async def main():
        out, threads = [], 0
        async with surgebox.AsyncClient(endpoints=eps, **options) as c:
            assert isinstance(c, surgebox.AsyncFleet)
            async for r in c.run_many(jobs, concurrency=concurrency):
                out.append(r)
                threads = max(threads, threading.active_count() - 1)
                if on_result:
                    on_result(out)
            return out, threads, c.fleet.status()
    return asyncio.run(main())


class AsyncFleetTest(FleetTest):
    """The same guarantees through the native asyncio fleet (aio_fleet.py), which runs no thread."""

    def test_spread(self):
        socks = [d.sock for d in self.daemons]
        results, threads, _ = async_run_many(socks, [job(i, 0.05) for i in range(30)], 6)
        self.check_once(results, 30)
        self.assertEqual({r["daemon"] for r in results}, set(socks))
        self.assertTrue(all(r["attempts"] == 1 for r in results))
        self.assertEqual(threads, 0, "the asyncio fleet started a thread")

    def test_kill_and_restart(self):
        a, b, c = self.daemons
        marks = {}

        def on_result(out):
            if len(out) == N_JOBS // 3:
                os.kill(a.proc.pid, signal.SIGKILL)
                marks["killed"] = len(out)
            if len(out) == N_JOBS // 2:
                restart(b)  # blocks the loop a moment: the jobs in flight wait, none is lost
        results, threads, status = async_run_many([a.sock, b.sock, c.sock],
                                                  (job(i, 0.02 * (i % 5)) for i in range(N_JOBS)), 20,
                                                  on_result, probe_interval=0.2)
        self.check_once(results, N_JOBS)
        self.assertFalse([r for r in results[marks["killed"] + 20:] if r["daemon"] == a.sock],
                         "the killed daemon answered")
        self.assertTrue(any(r["attempts"] > 1 for r in results), "no job was sent again after the kill")
        self.assertFalse([s for s in status if s["daemon"] == a.sock][0]["up"])
        self.assertEqual(threads, 0)

    def test_hung_daemon_taken_out(self):
        a, b, c = self.daemons
        os.kill(c.proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        results, _, status = async_run_many([a.sock, b.sock, c.sock], [job(i) for i in range(30)], 6,
                                            probe_interval=0.2, probe_timeout=0.5)
        since = [s for s in status if s["daemon"] == c.sock][0]["out_since"]
        self.check_once(results, 30)
        self.assertIsNotNone(since, "the stopped daemon was never taken out")
        self.assertFalse([r for r in results if r["daemon"] == c.sock])
        print("async fleet: a SIGSTOPped daemon taken out %.2f s after the fleet started" % (since - t0))

    def test_none_left(self):
        for d in self.daemons:
            os.kill(d.proc.pid, signal.SIGKILL)
            d.proc.wait()
        raw = {"id": 0, "steps": [{"argv": ["/bin/echo", "0"], "limits": {"time_s": 1}}]}
        results, _, _ = async_run_many([d.sock for d in self.daemons], [raw], 1, probe_interval=0.1,
                                       attempts=2, backoff=(0.01, 0.02), answer_margin=1.0)
        self.assertEqual(results[0]["error"]["code"], "fleet_unavailable")
        self.assertIsNone(results[0]["daemon"])


def mixed_job(i):
    """Job i of four kinds, each of which says i in its own way (and the expected status)."""
    kind = i % 4
    if kind == 0:
        return job(i, 0.01 * (i % 3))
    if kind == 1:
        return {"id": i, "steps": [{"argv": ["sh", "-c", "echo %d" % i], "limits": {"time_s": 10}}]}
    if kind == 2:
        return {"id": i, "toolchain": "python3", "stdin": "%d\n" % i, "limits": {"time_s": 10},
                "files": {"main.py": "import sys\nsys.stdout.write(sys.stdin.read())\n"}}
    return {"id": i, "steps": [{"argv": ["sh", "-c", "echo %d; exit 3" % i], "limits": {"time_s": 10}}]}


def mixed_status(i):
    return "runtime_error" if i % 4 == 3 else "ok"


class ManyClientsTest(unittest.TestCase):
    """Issue 39's test: N_JOBS mixed jobs from 20 clients (10 Client(endpoints=), 10 native
    AsyncClient(endpoints=), each a thread of this process) on three daemons while one is killed
    with SIGKILL and another restarted: every job answered exactly once, none lost, none twice,
    and the jobs in flight on the killed daemon answered by the others."""
    CLIENTS = 20

    def setUp(self):
        self.daemons = [start() for _ in range(3)]

    def tearDown(self):
        for d in self.daemons:
            d.stop()

    def test_20_clients_kill_and_restart(self):
        a, b, c = self.daemons
        eps = [a.sock, b.sock, c.sock]
        lock = threading.Lock()
        results, fleets, errors = [], [], []
        ready_fleets = threading.Barrier(self.CLIENTS + 1)

        def deliver(r):
            with lock:
                results.append(r)

        def sync_client(ids):
            with surgebox.Client(endpoints=eps, probe_interval=0.2) as cl:
                with lock:
                    fleets.append(cl.fleet)
                ready_fleets.wait()
                for r in cl.run_many((mixed_job(i) for i in ids), concurrency=4):
                    deliver(r)

        async def async_main(ids):
            async with surgebox.AsyncClient(endpoints=eps, probe_interval=0.2) as cl:
                with lock:
                    fleets.append(cl.fleet)
                ready_fleets.wait()
                async for r in cl.run_many((mixed_job(i) for i in ids), concurrency=4):
                    deliver(r)

        def client(k):
            ids = range(k, N_JOBS, self.CLIENTS)
            try:
                if k % 2:
                    asyncio.run(async_main(ids))
                else:
                    sync_client(ids)
            except BaseException as e:  # said by the test, not lost in a thread
                errors.append((k, e))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(self.CLIENTS)]
        for t in threads:
            t.start()
        ready_fleets.wait()

        def count():
            with lock:
                return len(results)
        while count() < N_JOBS // 3 and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        # what the clients have on a when it dies: never answered by it, each must be answered elsewhere
        in_flight_on_a = sum(e.outstanding for f in fleets for e in f.endpoints if e.name == a.sock)
        os.kill(a.proc.pid, signal.SIGKILL)
        killed_at = count()
        while count() < N_JOBS // 2 and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        restart(b)
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        ids = [r["id"] for r in results]
        self.assertEqual(len(ids), len(set(ids)), "an answer delivered twice")
        self.assertEqual(sorted(ids), list(range(N_JOBS)), "a job lost")
        for r in results:
            self.assertEqual(r.status, mixed_status(r["id"]), r)
            self.assertEqual(r.stdout, b"%d\n" % r["id"], r)
        self.assertGreater(in_flight_on_a, 0, "no job was in flight on the killed daemon: the test tested nothing")
        late = results[killed_at + 4 * self.CLIENTS:]
        self.assertFalse([r for r in late if r["daemon"] == a.sock], "the killed daemon answered")
        resent = [r for r in results if r["attempts"] > 1]
        self.assertGreaterEqual(len(resent), 1, "no job was sent again after the kill")
        print("fleet: %d jobs from %d clients; %d in flight on the killed daemon, %d sent again, "
              "answers by daemon: %s" % (N_JOBS, self.CLIENTS, in_flight_on_a, len(resent),
                                         {d: sum(1 for r in results if r["daemon"] == d) for d in eps}))


class HttpTest(unittest.TestCase):
    """An HTTP front (POST /v1/jobs with a bearer token) beside a Unix socket."""

    def setUp(self):
        sys.path.insert(0, os.path.join(env.SRC, "tests", "http"))
        import httpd
        self.tokdir = env.private_dirs()[0]
        self.tokfile = os.path.join(self.tokdir, "token")
        with open(self.tokfile, "w") as f:
            f.write("fleet-test-token-0123456789\n")
        os.chmod(self.tokfile, 0o600)
        self.web = httpd.Daemon(env.BIN, "--http-token-file", self.tokfile)
        self.unix = start()

    def tearDown(self):
        self.web.stop()
        self.unix.stop()

    def test_mixed_fleet(self):
        eps = ["%s token-file=%s" % (self.web.url, self.tokfile), self.unix.sock]
        with surgebox.Fleet(eps) as f:
            results = list(f.run_many([job(i, 0.05) for i in range(12)], concurrency=4))
        FleetTest.check_once(self, results, 12)
        self.assertEqual({r["daemon"] for r in results}, {self.web.url, self.unix.sock})

    def test_mixed_fleet_async(self):
        eps = ["%s token-file=%s" % (self.web.url, self.tokfile), self.unix.sock]
        results, threads, _ = async_run_many(eps, [job(i, 0.05) for i in range(12)], 4)
        FleetTest.check_once(self, results, 12)
        self.assertEqual({r["daemon"] for r in results}, {self.web.url, self.unix.sock})
        self.assertEqual(threads, 0)

    def test_wrong_token_async(self):
        with self.assertRaises(surgebox.SurgeboxError) as cm:
            async_run_many(["%s token=not-the-token-at-all" % self.web.url], [job(0)], 1, probe_interval=0.2)
        self.assertEqual(cm.exception.code, "unauthorized")
        self.assertIn(self.web.url, str(cm.exception))

    def test_wrong_token_is_an_error_not_a_retry_loop(self):
        t0 = time.monotonic()
        with surgebox.Fleet(["%s token=not-the-token-at-all" % self.web.url], probe_interval=0.2) as f:
            with self.assertRaises(surgebox.SurgeboxError) as cm:
                f.run(**job(0))
        self.assertEqual(cm.exception.code, "unauthorized")
        self.assertIn(self.web.url, str(cm.exception))
        self.assertIn("token", str(cm.exception))
        print("fleet: a wrong token refused after %.2f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
