"""surgebox batch --endpoints (issue 39): a fleet of private daemons on this
machine behind the C client. Each job prints its own number, so an answer is
checked against the job it answers; every line must be answered exactly once
whatever happens to the daemons (one killed with SIGKILL, one stopped with
SIGSTOP). Run inside a throw-away pid namespace (CMakeLists.txt).

  test_fleet_cli.py BIN_DIR CASE"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from private_daemon import PrivateDaemon  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
SURGEBOX = os.path.join(BIN, "surgebox")
TMP = tempfile.mkdtemp(prefix="sbfleet-cli-")
os.chmod(TMP, 0o755)
DAEMONS = []


def daemon(*extra):
    """A daemon with only the python3 toolchain (detection in under a second) and one job at a time."""
    d = tempfile.mkdtemp(prefix="d", dir=TMP)
    os.chmod(d, 0o755)
    tc = os.path.join(d, "toolchains")
    os.mkdir(tc)
    shutil.copy(os.path.join(SRC, "toolchains", "defs", "python3.json"), tc)
    p = PrivateDaemon(BIN, None, "--toolchains", tc, "--jobs", "1", *extra, directory=d)
    DAEMONS.append(p)
    return p


def http_daemon(token, *extra):
    tok = os.path.join(TMP, "daemon-token")
    with open(tok, "w") as f:
        f.write(token + "\n")
    os.chmod(tok, 0o600)
    d = daemon("--http", "127.0.0.1:0", "--http-token-file", tok, *extra)
    m = re.search(r"HTTP on (\S+):(\d+)", d.logtext())
    d.url = "http://%s:%s" % (m.group(1), m.group(2))
    d.host, d.port = m.group(1), int(m.group(2))
    return d


def http_connections(d, token):
    """the daemon's surgebox_http_connections_total, this request's own connection not counted"""
    c = http.client.HTTPConnection(d.host, d.port, timeout=30)
    c.request("GET", "/metrics", headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    assert r.status == 200, (r.status, text[:200])
    m = re.search(r"^surgebox_http_connections_total (\d+)$", text, re.M)
    assert m, text[:400]
    return int(m.group(1)) - 1


def write_jobs(n, sleep=0.0, limits=None):
    path = os.path.join(TMP, "in-%d-%s-%s.jsonl" % (n, sleep, limits and limits.get("time_s")))
    with open(path, "w") as f:
        for i in range(n):
            src = "import time\ntime.sleep(%r)\nprint(%d)\n" % (sleep, i)
            f.write(json.dumps({"id": i, "toolchain": "python3", "files": [{"path": "main.py", "content": src}],
                                "limits": limits or {"time_s": 10}}) + "\n")
    return path


def batch(args, env_extra=None, wait=True):
    env = dict(os.environ, **(env_extra or {}))
    env.pop("SURGEBOX_SOCKET", None)
    p = subprocess.Popen([SURGEBOX, "batch", "--progress-interval", "1"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    if not wait:
        return p
    out, err = p.communicate(timeout=600)
    return p.returncode, out, err


def answers(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def check_once(lines, n, daemons=None):
    """every id 0..n-1 answered exactly once, by its own program, on a daemon of the list"""
    ids = [a["id"] for a in lines]
    assert len(ids) == len(set(ids)), "an answer delivered twice: %r" % sorted(ids)
    assert sorted(ids) == list(range(n)), "a job lost: %r" % sorted(set(range(n)) - set(ids))
    for a in lines:
        assert a.get("status") == "ok", a
        assert a["steps"][-1]["stdout"] == "%d\n" % a["id"], a
        if daemons is not None:
            assert a.get("daemon") in daemons, a


def wait_lines(path, k, proc):
    """until OUT holds k answers (the batch is mid-way), or the batch ended"""
    while proc.poll() is None:
        if os.path.exists(path) and len(open(path).read().splitlines()) >= k:
            return
        time.sleep(0.05)


def stopped_midway(p, out, k, stopped, timeout):
    """the batch p once OUT holds k answers, with daemon `stopped` SIGSTOPped (and let go after):
    the batch's stderr, its exit asserted 0"""
    wait_lines(out, k, p)
    assert p.poll() is None, "the batch ended before the stop"
    stopped.proc.send_signal(signal.SIGSTOP)
    try:
        _, err = p.communicate(timeout=timeout)
    finally:
        stopped.proc.send_signal(signal.SIGCONT)
    assert p.returncode == 0, err
    return err


def case_same_answers():
    """a batch over a fleet of 3 gives the answers of one daemon, each line naming its daemon"""
    ds = [daemon() for _ in range(3)]
    jobs = write_jobs(30, 0.05)
    one, many = os.path.join(TMP, "one.jsonl"), os.path.join(TMP, "many.jsonl")
    rc, _, err = batch([jobs, "--out", one, "--socket", ds[0].sock, "--concurrency", "2"])
    assert rc == 0, err
    rc, _, err = batch([jobs, "--out", many, "--endpoints", ",".join(d.sock for d in ds), "--concurrency", "2"])
    assert rc == 0, err
    a, b = answers(one), answers(many)
    check_once(a, 30)
    check_once(b, 30, {d.sock for d in ds})
    assert "daemon" not in a[0], "one daemon's answers stay as they were"
    by_id = {x["id"]: x for x in a}
    for x in b:
        y = by_id[x["id"]]
        assert (x["status"], x["steps"][-1]["stdout"], x["steps"][-1]["exit_code"]) == \
            (y["status"], y["steps"][-1]["stdout"], y["steps"][-1]["exit_code"]), (x, y)
    used = {x["daemon"] for x in b}
    assert used == {d.sock for d in ds}, "least outstanding spreads 6 jobs in flight over 3 daemons: %r" % used
    # the same through $SURGEBOX_ENDPOINTS, from a file in the Python client's format
    lst = os.path.join(TMP, "endpoints")
    with open(lst, "w") as f:
        f.write("# the fleet\n" + "".join("unix:%s  # daemon %d\n" % (d.sock, i) for i, d in enumerate(ds)))
    env_out = os.path.join(TMP, "env.jsonl")
    rc, _, err = batch([jobs, "--out", env_out, "--concurrency", "2"], {"SURGEBOX_ENDPOINTS": lst})
    assert rc == 0, err
    check_once(answers(env_out), 30, {d.sock for d in ds})


def case_kill9():
    """kill -9 of one daemon mid-batch: every line answered exactly once, its jobs re-run elsewhere"""
    ds = [daemon() for _ in range(3)]
    n = 60
    jobs, out = write_jobs(n, 0.3), os.path.join(TMP, "out.jsonl")
    # 6 in flight: 2 on each daemon, so the killed one has jobs in flight
    p = batch([jobs, "--out", out, "--endpoints", ",".join(d.sock for d in ds), "--concurrency", "6"], wait=False)
    wait_lines(out, 9, p)
    assert p.poll() is None, "the batch ended before the kill"
    ds[1].proc.send_signal(signal.SIGKILL)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    lines = answers(out)
    check_once(lines, n, {d.sock for d in ds})
    assert "taken out" in err and ds[1].sock in err, err
    assert any(a["attempts"] >= 2 and a["daemon"] != ds[1].sock for a in lines), \
        "the killed daemon's jobs in flight ran again elsewhere"


def case_resume():
    """an interrupted batch on a fleet resumes as on one daemon: every line once across both runs"""
    ds = [daemon() for _ in range(2)]
    n = 30
    jobs, out = write_jobs(n, 0.3), os.path.join(TMP, "out.jsonl")
    args = [jobs, "--out", out, "--endpoints", ",".join(d.sock for d in ds), "--concurrency", "4"]
    p = batch(args, wait=False)
    wait_lines(out, 5, p)
    assert p.poll() is None, "the batch ended before the interrupt"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 130, (p.returncode, err)
    first = answers(out)
    assert 5 <= len(first) < n, len(first)
    rc, _, err = batch(args)
    assert rc == 0, err
    assert "%d answered before" % len(first) in err, err
    check_once(answers(out), n, {d.sock for d in ds})


def case_sigstop():
    """a SIGSTOPped daemon is taken out (its probe unanswered) and the batch finishes on the others"""
    ds = [daemon() for _ in range(2)]
    n = 30
    jobs, out = write_jobs(n, 0.2), os.path.join(TMP, "out.jsonl")
    p = batch([jobs, "--out", out, "--endpoints", ",".join(d.sock for d in ds), "--concurrency", "4"], wait=False)
    err = stopped_midway(p, out, 4, ds[0], 600)
    check_once(answers(out), n, {d.sock for d in ds})
    assert re.search(r"daemon %s taken out \(no answer to its status probe within " % re.escape(ds[0].sock), err), err


def case_http():
    """HTTP endpoints with their token (POST /v1/jobs) beside a Unix socket: the same answers"""
    h, u = http_daemon("s3cret-token-of-the-fleet"), daemon()
    tok = os.path.join(TMP, "client-token")
    with open(tok, "w") as f:
        f.write("s3cret-token-of-the-fleet\n")
    lst = os.path.join(TMP, "endpoints")
    with open(lst, "w") as f:
        f.write("%s token-file=%s\n%s\n" % (h.url, tok, u.sock))
    jobs, out = write_jobs(20, 0.05), os.path.join(TMP, "out.jsonl")
    rc, _, err = batch([jobs, "--out", out, "--endpoints", lst, "--concurrency", "2"])
    assert rc == 0, err
    lines = answers(out)
    check_once(lines, 20, {h.url, u.sock})
    assert {a["daemon"] for a in lines} == {h.url, u.sock}, "both endpoints ran jobs"


def case_keepalive():
    """HTTP connections kept alive: N jobs through one endpoint open far fewer connections than N
    (the daemon's own count of accepted connections); a daemon that closes idle connections
    after 0.2 s still answers every job once (the pooled connection it closed is reopened)"""
    token = "keep-alive-token-0123456789"
    h = http_daemon(token)
    n = 60
    jobs, out = write_jobs(n), os.path.join(TMP, "out.jsonl")
    before = http_connections(h, token)
    rc, _, err = batch([jobs, "--out", out, "--endpoints", "%s token=%s" % (h.url, token), "--concurrency", "2"])
    assert rc == 0, err
    opened = http_connections(h, token) - before - 1  # the count before came on a connection of its own
    check_once(answers(out), n, {h.url})
    # 2 in flight, the probes (one a second) on the same pool: a handful, never one a job
    assert 1 <= opened <= 10, "%d connections for %d jobs" % (opened, n)

    for d in DAEMONS:
        d.stop()
    DAEMONS.clear()
    h = http_daemon(token, "--http-idle-timeout", "0.2")
    jobs, out = write_jobs(12, 0.3), os.path.join(TMP, "out-idle.jsonl")
    # 1 in flight while the probe's connection idles past the daemon's 0.2 s between probes
    rc, _, err = batch([jobs, "--out", out, "--endpoints", "%s token=%s" % (h.url, token), "--concurrency", "1"])
    assert rc == 0, err
    check_once(answers(out), 12, {h.url})
    assert "taken out" not in err, err
    assert re.search(r"surgebox_http_idle_timeouts_total [1-9]", metrics_text(h, token)), "no connection idled out"


def metrics_text(d, token):
    c = http.client.HTTPConnection(d.host, d.port, timeout=30)
    c.request("GET", "/metrics", headers={"Authorization": "Bearer " + token})
    text = c.getresponse().read().decode()
    c.close()
    return text


class DroppingServer:
    """A stand-in HTTP daemon on loopback that answers /v1/ping and POST /v1/jobs (each job's
    own number as its stdout) with keep-alive, but closes every connection when a second job
    request arrives on it, unanswered: what a daemon closing a kept-alive connection as the
    client reuses it looks like. It counts the answers it sent per job id."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.answered, self.dropped, self.lock = {}, 0, threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        buf, jobs_here = b"", 0
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    more = c.recv(65536)
                    if not more:
                        return
                    buf += more
                head, buf = buf.split(b"\r\n\r\n", 1)
                length = int((re.search(rb"(?i)content-length: *(\d+)", head) or [0, b"0"])[1])
                while len(buf) < length:
                    more = c.recv(65536)
                    if not more:
                        return
                    buf += more
                body, buf = buf[:length], buf[length:]
                if head.startswith(b"GET "):  # a probe
                    answer = b"# EOF\n"
                else:
                    jobs_here += 1
                    if jobs_here == 2:
                        with self.lock:
                            self.dropped += 1
                        return  # closed with the request read and unanswered
                    req = json.loads(body)
                    num = int(re.search(r"print\((\d+)\)", req["files"][0]["content"]).group(1))
                    answer = json.dumps({"type": "exec", "id": req["id"], "status": "ok",
                                         "steps": [{"name": "run", "status": "ok", "exit_code": 0,
                                                    "stdout": "%d\n" % num, "stderr": ""}]}).encode()
                    with self.lock:
                        self.answered[num] = self.answered.get(num, 0) + 1
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(answer), answer))
        finally:
            c.close()


def case_keepalive_reopen():
    """a kept-alive connection the daemon closes with the request unanswered (no byte of the
    answer read): the request goes again on a fresh connection, once; every job answered once"""
    srv = DroppingServer()
    n = 20
    jobs, out = write_jobs(n), os.path.join(TMP, "out.jsonl")
    rc, _, err = batch([jobs, "--out", out, "--endpoints", srv.url, "--concurrency", "1"])
    assert rc == 0, err
    check_once(answers(out), n, {srv.url})
    assert srv.dropped >= n // 2, "the reused connections were closed: %d" % srv.dropped
    assert srv.answered == {i: 1 for i in range(n)}, srv.answered
    assert "taken out" not in err, err
    assert all(a["attempts"] == 1 for a in answers(out)), "a re-send on a fresh connection is not an attempt"


def case_deadline():
    """a daemon stopped (SIGSTOP) while its probes are given 300 s: a job's own deadline (its
    limits + 2 x the daemon's p99 queue time + --answer-margin) takes it out; its jobs in flight
    are answered once, by the other daemon, each answer naming it"""
    ds = [daemon() for _ in range(2)]
    n = 8
    jobs, out = write_jobs(n, 0.5, {"time_s": 2}), os.path.join(TMP, "out.jsonl")
    p = batch([jobs, "--out", out, "--endpoints", ",".join(d.sock for d in ds), "--concurrency", "2",
               "--answer-margin", "1", "--probe-timeout", "300"], wait=False)
    err = stopped_midway(p, out, 1, ds[0], 120)
    lines = answers(out)
    check_once(lines, n, {d.sock for d in ds})
    assert re.search(r"daemon %s taken out \(no answer within a job's deadline" % re.escape(ds[0].sock), err), err
    assert "probe within" not in err, err
    again = [a for a in lines if a["attempts"] >= 2]
    assert again, "the stopped daemon's jobs ran again: %r" % lines
    assert all(a["daemon"] == ds[1].sock for a in again), again


def case_deadline_queue():
    """a healthy daemon with a long queue is not taken for hung: 36 jobs with a 2 s limit (a
    deadline of (2 x 2 + 1) x 2 + a 2 s margin = 12 s without a queue) sent at once to a daemon
    running one at a time wait up to ~20 s in its queue; the probes read its p99 queue time
    and the deadlines grow with it"""
    d = daemon()
    n = 36
    jobs, out = write_jobs(n, 0.4, {"time_s": 2}), os.path.join(TMP, "out.jsonl")
    rc, _, err = batch([jobs, "--out", out, "--endpoints", d.sock, "--concurrency", str(n),
                        "--answer-margin", "2"])
    assert rc == 0, err
    lines = answers(out)
    check_once(lines, n, {d.sock})
    assert "taken out" not in err, err
    assert max(a["queue_time_s"] for a in lines) > 12, "the queue was not long: %r" % lines
    assert all(a["attempts"] == 1 for a in lines), lines


def case_regen():
    """regen --only on a fleet of 2 (every toolchain, SURGE's data): the references it writes are
    those one daemon writes, both daemons ran items, each item once"""
    surge = os.environ.get("SURGE_DATA") or os.path.join(os.path.dirname(SRC), "shared", "surge")
    if not os.path.exists(os.path.join(surge, "dr.json")):
        print("SKIPPED: no SURGE data at " + surge)
        sys.exit(77)
    ds = []
    for _ in range(2):
        d = tempfile.mkdtemp(prefix="d", dir=TMP)
        os.chmod(d, 0o755)
        ds.append(PrivateDaemon(BIN, None, "--jobs", "1", directory=d))
        DAEMONS.append(ds[-1])
    env = dict(os.environ)
    env.pop("SURGEBOX_SOCKET", None)
    outs = {}
    # a profile's first use stalls a daemon's loop for seconds (toolchain detection in its root):
    # the probes are given a minute so that both daemons stay in
    for label, target in (("fleet", ["--endpoints", ",".join(d.sock for d in ds), "--probe-timeout", "60"]),
                          ("one", ["--socket", ds[0].sock])):
        outs[label] = os.path.join(TMP, "regen-" + label)
        p = subprocess.run([SURGEBOX, "regen", "--data", surge, "--subset", "dr,bg", "--only", "0,1,2,3",
                            "--out", outs[label], "--jobs", "1"] + target, capture_output=True, text=True, env=env,
                           timeout=900)
        assert p.returncode == 0, (label, p.stderr)
        if label == "fleet":
            said = dict(re.findall(r"regen: daemon (\S+): (\d+) answered", p.stderr))
            assert set(said) == {d.sock for d in ds}, p.stderr
            assert all(int(n) >= 1 for n in said.values()) and sum(int(n) for n in said.values()) == 8, p.stderr
            assert "taken out" not in p.stderr, p.stderr
    for subset in ("dr", "bg"):
        with open(os.path.join(outs["fleet"], subset + ".json")) as f:
            fleet = json.load(f)
        with open(os.path.join(outs["one"], subset + ".json")) as f:
            one = json.load(f)
        for i in range(4):
            assert fleet[i]["gt"] == one[i]["gt"], (subset, i, fleet[i]["gt"][:300], one[i]["gt"][:300])


def case_wrong_token():
    """a token the daemon refuses: one clear error, exit status 2, no retry loop"""
    h = http_daemon("the-right-token-0123456789")
    jobs, out = write_jobs(5), os.path.join(TMP, "out.jsonl")
    rc, _, err = batch([jobs, "--out", out, "--endpoints", "%s token=wrong-token" % h.url])
    assert rc == 2, (rc, err)
    assert err.count("refused this client's token (HTTP 401)") == 1, err
    assert h.url in err, err
    assert "token" in err and "taken out" not in err, err


def case_verify():
    """verify --benchmark cruxeval on a fleet of 2: the verdicts and pass@k worked out by hand
    (tests/cruxeval/test_verify.py's OUTPUT_* tables)"""
    sys.path.insert(0, os.path.join(SRC, "tests", "cruxeval"))
    import test_verify as tv
    ds = [daemon() for _ in range(2)]
    data = tv.write(os.path.join(TMP, "data.jsonl"), tv.DATA, lines=True)
    gens = tv.write(os.path.join(TMP, "gens.json"), tv.OUTPUT_GENS)
    out = os.path.join(TMP, "scored.json")
    env = dict(os.environ)
    env.pop("SURGEBOX_SOCKET", None)
    p = subprocess.run([SURGEBOX, "verify", "--benchmark", "cruxeval", "--mode", "output", "--generations", gens,
                        "--data", data, "--out", out, "--jobs", "2", "--endpoints", ",".join(d.sock for d in ds)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        r = json.load(f)
    assert r["raw_scored_generations"] == tv.OUTPUT_WANT, r["raw_scored_generations"]
    assert (r["pass_at_1"], r["pass_at_5"]) == tv.OUTPUT_PASS, r
    said = re.findall(r"verify: daemon (\S+): (\d+) answered", p.stderr)
    assert {s for s, _ in said} == {d.sock for d in ds} and sum(int(n) for _, n in said) > 0, p.stderr


def case_bad_list():
    """a bad endpoint list is refused with one line naming the entry; nothing runs"""
    ok = daemon()
    jobs = write_jobs(2)
    bad_file = os.path.join(TMP, "bad-endpoints")
    with open(bad_file, "w") as f:
        f.write("%s\n\nrelative.sock\n" % ok.sock)
    cases = [
        ("relative.sock", "endpoint 1 of the list: 'relative.sock' is neither"),
        ("ftp://h:1", "endpoint 1 of the list: 'ftp://h:1' is neither"),
        ("%s,%s" % (ok.sock, ok.sock), "endpoint 2 of the list: %s is listed twice" % ok.sock),
        ("http://127.0.0.1:99999", "port '99999'"),
        ("http://127.0.0.1:1 tokn=x", "unknown setting 'tokn=x'"),
        ("http://127.0.0.1:1 token-file=/nonexistent/tok", "token-file /nonexistent/tok"),
        ("%s token=x" % ok.sock, "a token for the Unix socket"),
        (" , ", "is empty"),
        (bad_file, "endpoints file %s line 3: 'relative.sock' is neither" % bad_file),
        (os.path.join(TMP, "nobody-listens.sock"), "no daemon of the fleet answers"),
    ]
    for spec, want in cases:
        out = os.path.join(TMP, "never.jsonl")
        rc, _, err = batch([jobs, "--out", out, "--endpoints", spec])
        assert rc == 2, (spec, rc, err)
        assert want in err, (spec, err)
        assert not os.path.exists(out) or not answers(out), (spec, "nothing runs")
    # --endpoints where it does not apply, and beside --socket
    r = subprocess.run([SURGEBOX, "--endpoints", ok.sock, "status"], capture_output=True, text=True)
    assert r.returncode == 1 and "--endpoints does not apply to 'status'" in r.stderr, r.stderr
    r = subprocess.run([SURGEBOX, "exec", "--endpoints", ok.sock, "--", "true"], capture_output=True, text=True)
    assert r.returncode == 1 and "unknown option '--endpoints'" in r.stderr, r.stderr
    rc, _, err = batch([jobs, "--socket", ok.sock, "--endpoints", ok.sock])
    assert rc == 2 and "give one of them" in err, err
    # the fleet's timing: seconds above 0, and only on a fleet
    rc, _, err = batch([jobs, "--endpoints", ok.sock, "--answer-margin", "x"])
    assert rc == 2 and "--answer-margin 'x': give seconds" in err, err
    rc, _, err = batch([jobs, "--endpoints", ok.sock, "--probe-timeout", "0"])
    assert rc == 2 and "--probe-timeout '0': give seconds" in err, err
    rc, _, err = batch([jobs, "--socket", ok.sock, "--answer-margin", "5"])
    assert rc == 2 and "--answer-margin applies to a fleet (--endpoints) only" in err, err


def main():
    case = sys.argv[2]
    try:
        globals()["case_" + case]()
    finally:
        for d in DAEMONS:
            try:
                d.proc.send_signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
            d.stop()
        shutil.rmtree(TMP, True)
    print("ok:", case)


if __name__ == "__main__":
    main()
