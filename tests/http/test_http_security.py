"""The HTTP front as an attack surface (issue 37), one ctest per case
(security.http_<case>, label "http;security"): oversized headers and
bodies, slow clients (headers and body), Content-Length with
Transfer-Encoding, paths leaving /app, the bearer token, a non-loopback
address without a token refused at start, the connection cap, requests per
connection, and an HTTP flood that must not starve a Unix-socket client.
Loopback only; every wait bounded."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from httpd import Daemon, unix_call  # noqa: E402

BIN = None


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def status_of(raw):
    check(raw.startswith(b"HTTP/1.1 "), "no HTTP answer: %r" % raw[:200])
    return int(raw.split(b" ", 2)[1])


def post(path, body, extra=b""):
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n"
            % (path.encode(), extra, len(body))) + body


def case_header_too_large(d):
    raw = d.raw(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n")
    check(status_of(raw) == 431, "431: %r" % raw[:100])
    raw = d.raw(b"GET /v1/ping?" + b"q" * 40000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    check(status_of(raw) == 431, "long URL: %r" % raw[:100])
    check(d.metric("surgebox_http_header_too_large_total") == 2, "counted")
    st, _, _ = d.request("GET", "/v1/ping")
    check(st == 200, "still serving")


def case_body_too_large(d):
    # announced: refused before the body is sent
    raw = d.raw(b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n")
    check(status_of(raw) == 413, "413 by Content-Length: %r" % raw[:100])
    # chunked: refused once the body passes the cap
    chunk = b"a" * 50000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\n"
    raw = d.raw(b"POST /run_code HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    check(status_of(raw) == 413, "413 chunked: %r" % raw[:100])
    check(d.metric("surgebox_http_body_too_large_total") == 2, "counted")
    # under the cap: served
    st, _, data = d.request("POST", "/run_code", {"code": "echo " + "b" * 50000 + " | wc -c", "language": "bash"})
    check(st == 200 and json.loads(data)["run_result"]["stdout"] == "50001\n", "under the cap: %d" % st)


def case_slow_clients(d):
    """--http-header-timeout 1 --http-body-timeout 1: slowloris connections
    (a header byte every 0.3 s) and a slow body are dropped; meanwhile the
    front serves others."""
    socks = []
    for _ in range(20):
        s = socket.create_connection((d.host, d.port), timeout=30)
        s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    body_sock = socket.create_connection((d.host, d.port), timeout=30)
    body_sock.sendall(b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    closed = 0
    deadline = time.monotonic() + 20  # a bound, not a timing assertion
    pending = list(socks) + [body_sock]
    while pending and time.monotonic() < deadline:
        for s in list(pending):
            try:
                s.sendall(b"X")  # one more byte: slowloris keeps each connection alive this way
                s.settimeout(0.05)
                data = s.recv(4096)
                if data == b"" or data.startswith(b"HTTP/1.1 408"):
                    pending.remove(s)
                    closed += 1
            except socket.timeout:
                pass
            except OSError:
                pending.remove(s)
                closed += 1
        st, _, _ = d.request("GET", "/v1/ping", timeout=30)
        check(st == 200, "served while slow clients wait")
        time.sleep(0.3)
    check(not pending, "%d slow connections still open" % len(pending))
    check(d.metric("surgebox_http_header_timeouts_total") >= 20, "header timeouts counted")
    check(d.metric("surgebox_http_body_timeouts_total") >= 1, "body timeout counted")
    for s in socks + [body_sock]:
        s.close()


def case_cl_te(d):
    body = b'{"code":"echo x","language":"bash"}'
    raw = d.raw(b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n"
                % len(body) + body)
    check(status_of(raw) == 400, "CL+TE: %r" % raw[:100])
    raw = d.raw(b"POST /run_code HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
                b"0\r\n\r\n")
    check(status_of(raw) == 400, "TE+CL: %r" % raw[:100])
    check(d.metric("surgebox_http_cl_te_refused_total") >= 1, "counted")
    # two Content-Lengths: refused by the parser
    raw = d.raw(b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}")
    check(status_of(raw) == 400, "CL twice: %r" % raw[:100])


def case_paths(d):
    for files in ({"../x": "eA=="}, {"a/../../x": "eA=="}, {"/app/../etc/x": "eA=="}, {"": "eA=="}, {"/": "eA=="}):
        st, _, data = d.request("POST", "/run_code", {"code": "echo", "language": "bash", "files": files})
        check(st == 400, "files %r: %d %r" % (files, st, data[:200]))
    for ff in (["../../etc/passwd"], ["x/../../y"], [".."]):
        st, _, data = d.request("POST", "/run_code", {"code": "echo", "language": "bash", "fetch_files": ff})
        check(st == 400, "fetch_files %r: %d" % (ff, st))
    check(d.metric("surgebox_http_paths_refused_total") == 8, "counted")
    # an absolute path is the sandbox's, inside /app: never the host's file
    a = d.run_code({"code": "ln -s /etc/shadow sh; mkdir -p etc; echo mine > etc/passwd", "language": "bash",
                    "fetch_files": ["/etc/passwd", "/etc/hostname", "sh", "/proc/self/environ"]})
    check(a["status"] == "Success", a["status"])
    import base64
    check(base64.b64decode(a["files"]["/etc/passwd"]) == b"mine\n", "inside /app: %r" % a["files"])
    check(set(a["files"]) == {"/etc/passwd"}, "nothing else comes back: %r" % sorted(a["files"]))
    # files land inside /app even when absolute
    a = d.run_code({"code": "cat /app/etc/x; test -e /etc/x && echo HOST", "language": "bash",
                    "files": {"/etc/x": base64.b64encode(b"in-app\n").decode()}})
    check(a["run_result"]["stdout"] == "in-app\n", "absolute file inside /app: %r" % a["run_result"])


def token_file(content="s3cret-token-0123456789", mode=0o600):
    fd, p = tempfile.mkstemp(prefix="sbtest-token-")
    os.write(fd, (content + "\n").encode())
    os.close(fd)
    os.chmod(p, mode)
    return p


def case_token(d):
    body = {"code": "echo t", "language": "bash"}
    st, hd, _ = d.request("POST", "/run_code", body)
    check(st == 401 and hd.get("www-authenticate") == "Bearer", "no token: %d" % st)
    for bad in ("Bearer wrong", "Bearer s3cret-token-012345678", "Bearer s3cret-token-01234567890",
                "bearer s3cret-token-0123456789", "s3cret-token-0123456789", "Basic czNjcmV0"):
        st, _, _ = d.request("POST", "/run_code", body, headers={"Authorization": bad})
        check(st == 401, "%r: %d" % (bad, st))
    st, _, _ = d.request("GET", "/metrics")
    check(st == 401, "metrics need the token too")
    st, _, data = d.request("POST", "/run_code", body, headers={"Authorization": "Bearer s3cret-token-0123456789"})
    check(st == 200 and json.loads(data)["run_result"]["stdout"] == "t\n", "right token: %d" % st)
    check(d.metric_auth("surgebox_http_unauthorized_total") == 8, "counted")


def case_health(d):
    """GET /v1/health is the one path served without the token (Kubernetes
    probes cannot send one): 200 and the body "ok", nothing more. Every
    other path, another method on it, a body on it, and look-alike paths
    still need the token."""
    for hdrs in (None, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer s3cret-token-0123456789"}):
        st, hd, data = d.request("GET", "/v1/health", headers=hdrs)
        check(st == 200 and data == b'"ok"', "health %r: %d %r" % (hdrs, st, data[:200]))
    st, _, data = d.request("GET", "/v1/health?probe=1")
    check(st == 200 and data == b'"ok"', "health with a query: %d" % st)
    refused = [("GET", "/v1/ping", None), ("GET", "/metrics", None), ("GET", "/v1/healthz", None),
               ("GET", "/v1/health/", None), ("GET", "/v1/health/../ping", None), ("GET", "/V1/HEALTH", None),
               ("POST", "/v1/health", {}), ("POST", "/run_code", {"code": "echo t", "language": "bash"}),
               ("POST", "/v1/jobs", {"steps": [{"argv": ["echo", "t"]}]})]
    for method, path, body in refused:
        st, _, data = d.request(method, path, body)
        check(st == 401, "%s %s without the token: %d %r" % (method, path, st, data[:200]))
    # GET with a body on the health path: not a probe, needs the token
    raw = d.raw(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
    check(status_of(raw) == 401, "health with a body: %r" % raw[:100])
    check(d.metric_auth("surgebox_http_unauthorized_total") == len(refused) + 1, "refusals counted")
    st, _, data = d.request("GET", "/v1/ping", headers={"Authorization": "Bearer s3cret-token-0123456789"})
    check(st == 200 and data == b'"pong"', "ping with the token: %d" % st)
    # without a token file the path answers the same
    plain = Daemon(BIN, "--jobs", "1")
    try:
        st, _, data = plain.request("GET", "/v1/health")
        check(st == 200 and data == b'"ok"', "health, no token file: %d %r" % (st, data[:200]))
    finally:
        plain.stop()


def case_no_token_refused(_d):
    """A non-loopback address without --http-token-file: the daemon does not
    start (exit 2, one line naming the option). Nothing is bound."""
    tmp = tempfile.mkdtemp(prefix="sbtest-http-")
    base = [os.path.join(BIN, "surgeboxd"), "--socket", os.path.join(tmp, "s.sock"), "--no-cache",
            "--toolchains", tmp]
    for addr in ("0.0.0.0:0", "[::]:0", "192.0.2.1:8080"):
        p = subprocess.run(base + ["--http", addr], capture_output=True, timeout=120)
        check(p.returncode == 2, "%s: exit %d %r" % (addr, p.returncode, p.stderr[-300:]))
        check(b"--http-token-file" in p.stderr, "names the option: %r" % p.stderr[-300:])
    # a token readable by others is refused too
    loose = token_file(mode=0o644)
    p = subprocess.run(base + ["--http", "127.0.0.1:0", "--http-token-file", loose], capture_output=True, timeout=120)
    check(p.returncode == 2 and b"chmod 600" in p.stderr, "loose token: %d %r" % (p.returncode, p.stderr[-300:]))
    short = token_file(content="short")
    p = subprocess.run(base + ["--http", "127.0.0.1:0", "--http-token-file", short], capture_output=True, timeout=120)
    check(p.returncode == 2 and b"shorter than 16" in p.stderr, "short token: %r" % p.stderr[-300:])
    p = subprocess.run(base + ["--http", "127.0.0.1:99999"], capture_output=True, timeout=120)
    check(p.returncode in (1, 2) and b"ADDR:PORT" in p.stderr, "bad address: %r" % p.stderr[-300:])


def case_connections(d):
    """--http-max-connections 5: more are closed at accept, counted; the
    first five are still served."""
    socks = [socket.create_connection((d.host, d.port), timeout=30) for _ in range(5)]
    time.sleep(0.5)  # ordering only: the daemon accepted the five
    extra = [socket.create_connection((d.host, d.port), timeout=30) for _ in range(5)]
    for s in extra:
        s.settimeout(20)
        try:
            check(s.recv(100) == b"", "an extra connection got an answer")
        except ConnectionResetError:
            pass
    for s in socks:
        s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(30)
        check(s.recv(4096).startswith(b"HTTP/1.1 200"), "kept connection served")
    check(d.metric_via(socks[0], "surgebox_http_connections_refused_total") >= 5, "counted")
    for s in socks + extra:
        s.close()


def case_max_requests(d):
    """--http-max-requests 3: the third answer says Connection: close and the
    connection ends."""
    s = socket.create_connection((d.host, d.port), timeout=30)
    s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n" * 4)
    data = b""
    s.settimeout(20)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    check(data.count(b"HTTP/1.1 200") == 3, "three answers: %r" % data)
    check(data.count(b"Connection: close") == 1, "the last says close")


def case_flood(d):
    """An HTTP flood (400 requests, 100 connections) on a daemon with 2
    slots: a Unix-socket client's job is answered while most HTTP requests
    still wait (the fair queue gives HTTP one share), and the daemon never
    runs more than its slots."""
    done = []
    lock = threading.Lock()

    def client(n):
        try:
            s = socket.create_connection((d.host, d.port), timeout=600)
            f = s.makefile("rb")
            body = json.dumps({"code": "sleep 0.05; echo f", "language": "bash"}).encode()
            s.sendall(post("/run_code", body) * n)
            for _ in range(n):
                line = f.readline()
                length = 0
                while True:
                    h = f.readline()
                    if h in (b"\r\n", b""):
                        break
                    if h.lower().startswith(b"content-length:"):
                        length = int(h.split(b":")[1])
                body = f.read(length)
                with lock:
                    done.append(line if b'"status":"Success"' in body else line + b" " + body[:200])
        except OSError as e:
            with lock:
                done.append(repr(e).encode())

    threads = [threading.Thread(target=client, args=(4,)) for _ in range(100)]
    for t in threads:
        t.start()
    time.sleep(2)  # ordering only: the flood is queued
    before = len(done)
    r = unix_call(d.sock, {"id": "u", "type": "exec", "steps": [{"argv": ["echo", "unix"]}]}, timeout=300)
    after = len(done)
    check(r["status"] == "ok" and r["steps"][0]["stdout"] == "unix\n", "unix answered: %r" % r)
    check(after < 400 - 50, "the unix job waited for the flood: %d of 400 HTTP answers before it" % after)
    st = unix_call(d.sock, {"id": "s", "type": "status"})
    check(st["running"] <= st["max_running"], "never more jobs than slots")
    for t in threads:
        t.join(900)
    bad = [x for x in done if not x.startswith(b"HTTP/1.1 200") or b" {" in x]
    check(len(done) == 400 and not bad, "every flood request answered: %d, %r" % (len(done), bad[:3]))
    print("unix job answered after %d..%d of 400 HTTP answers" % (before, after))


CASES = {
    "header_too_large": (case_header_too_large, ["--jobs", "1"]),
    "body_too_large": (case_body_too_large, ["--jobs", "1", "--http-max-body-bytes", "100000"]),
    "slow_clients": (case_slow_clients, ["--jobs", "1", "--http-header-timeout", "1", "--http-body-timeout", "1"]),
    "cl_te": (case_cl_te, ["--jobs", "1"]),
    "paths": (case_paths, ["--jobs", "1"]),
    "token": (case_token, ["--jobs", "1"]),
    "health": (case_health, ["--jobs", "1"]),
    "no_token_refused": (case_no_token_refused, None),
    "connections": (case_connections, ["--jobs", "1", "--http-max-connections", "5"]),
    "max_requests": (case_max_requests, ["--jobs", "1", "--http-max-requests", "3"]),
    "flood": (case_flood, ["--jobs", "2"]),
}


def main():
    global BIN
    BIN = sys.argv[1]
    name = sys.argv[2]
    fn, extra = CASES[name]
    if extra is None:
        fn(None)
        print("ok")
        return
    if name in ("token", "health"):
        extra = extra + ["--http-token-file", token_file()]
    d = Daemon(BIN, *extra)

    def metric_auth(m):
        st, _, data = d.request("GET", "/metrics", headers={"Authorization": "Bearer s3cret-token-0123456789"})
        for line in data.decode().splitlines():
            if line.startswith(m + " "):
                return float(line.split()[1])
        raise AssertionError("no " + m)

    def metric_via(sock, m):
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        f = sock.makefile("rb")
        n = 0
        while True:
            h = f.readline()
            if h.lower().startswith(b"content-length:"):
                n = int(h.split(b":")[1])
            if h in (b"\r\n", b""):
                break
        for line in f.read(n).decode().splitlines():
            if line.startswith(m + " "):
                return float(line.split()[1])
        raise AssertionError("no " + m)

    d.metric_auth = metric_auth
    d.metric_via = metric_via
    try:
        fn(d)
    except Exception:
        print(d.logtext()[-4000:], file=sys.stderr)
        raise
    finally:
        d.stop()
    print("ok")


if __name__ == "__main__":
    main()
