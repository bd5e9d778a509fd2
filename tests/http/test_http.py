"""The HTTP front (issue 37) through real clients (Python's urllib and
http.client, python3-requests, curl) against a private surgeboxd on a
loopback port: SandboxFusion's /run_code field for field and its status
rules, per language (python, cpp, bash) a hello, stdin, a compile error, a
runtime error, a timeout and a memory kill; files and fetch_files; unknown
fields; /v1/ping, /v1/jobs, /metrics; 500 requests over 200 connections
with keep-alive and pipelining; the queue's 503 and the start budget's 504.
One case per ctest (http.<case>).

Expected values are written here by hand from SandboxFusion's documented
answer (sandbox/server/sandbox_api.py), never taken from the daemon."""
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpd  # noqa: E402
from httpd import Daemon, unix_call  # noqa: E402

BIN = None
ANSWER_KEYS = {"status", "message", "compile_result", "run_result", "executor_pod_name", "files", "surgebox"}
RESULT_KEYS = {"status", "execution_time", "return_code", "stdout", "stderr"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def shape(a):
    """The answer uses SandboxFusion's words only (+ "surgebox")."""
    check(set(a) == ANSWER_KEYS, "answer keys %s" % sorted(a))
    check(a["status"] in ("Success", "Failed", "SandboxError"), "status %r" % a["status"])
    check(isinstance(a["message"], str), "message not a string")
    check(isinstance(a["files"], dict), "files not an object")
    check(isinstance(a["executor_pod_name"], str), "executor_pod_name")
    for k in ("compile_result", "run_result"):
        r = a[k]
        if r is None:
            continue
        check(set(r) == RESULT_KEYS, "%s keys %s" % (k, sorted(r)))
        check(r["status"] in ("Finished", "Error", "TimeLimitExceeded"), "%s.status %r" % (k, r["status"]))
        check(isinstance(r["execution_time"], (int, float)), "execution_time")
        check(r["return_code"] is None or isinstance(r["return_code"], int), "return_code")
        check(isinstance(r["stdout"], str) and isinstance(r["stderr"], str), "stdout/stderr")
    return a


def run(d, lang, code, **kw):
    body = {"code": code, "language": lang}
    body.update(kw)
    return shape(d.run_code(body))


def expect(a, status, compile_=None, run_=None, rc="any", stdout=None):
    check(a["status"] == status, "status %s, expected %s: %s" % (a["status"], status, json.dumps(a)[:1500]))
    if compile_ is not None:
        check(a["compile_result"] is not None and a["compile_result"]["status"] == compile_,
              "compile_result %r" % (a["compile_result"],))
    if run_ == "null":
        check(a["run_result"] is None, "run_result should be null: %r" % (a["run_result"],))
    elif run_ is not None:
        check(a["run_result"] is not None and a["run_result"]["status"] == run_, "run_result %r" % (a["run_result"],))
    if rc != "any":
        got = a["run_result"]["return_code"]
        check(rc(got) if callable(rc) else got == rc, "return_code %r" % (got,))
    if stdout is not None:
        check(a["run_result"]["stdout"] == stdout, "stdout %r" % (a["run_result"]["stdout"],))


def steps(a):
    return {s["name"]: s for s in a["surgebox"]["steps"]}


# ---- per language --------------------------------------------------------

MEM_PY = "x = bytearray(400 * 1024 * 1024)\nfor i in range(0, len(x), 4096): x[i] = 1\nprint('survived')\n"


def case_python(d):
    expect(run(d, "python", "print('hello')"), "Success", run_="Finished", rc=0, stdout="hello\n")
    a = run(d, "python", "print(input()[::-1])", stdin="abc\n")
    expect(a, "Success", run_="Finished", rc=0, stdout="cba\n")
    check(a["compile_result"] is None, "python has no compile step")
    # a syntax error is Python's run-time failure: SandboxFusion runs python directly
    a = run(d, "python", "def f(:\n")
    expect(a, "Failed", run_="Finished", rc=1)
    check("SyntaxError" in a["run_result"]["stderr"], a["run_result"]["stderr"])
    a = run(d, "python", "import sys\nprint('out')\nraise ValueError('boom')\n")
    expect(a, "Failed", run_="Finished", rc=1, stdout="out\n")
    check("ValueError: boom" in a["run_result"]["stderr"], "traceback")
    a = run(d, "python", "import sys; sys.exit(7)")
    expect(a, "Failed", run_="Finished", rc=7)
    a = run(d, "python", "while True: pass", run_timeout=1)
    expect(a, "Failed", run_="TimeLimitExceeded", rc=None)
    a = run(d, "python", "import time; time.sleep(5)", run_timeout=0.5)  # a float timeout
    expect(a, "Failed", run_="TimeLimitExceeded", rc=None)
    check(steps(a)["run"]["limit_hit"] == "wall_time", "limit_hit %r" % steps(a)["run"]["limit_hit"])
    w = steps(a)["run"].get("wall_waiting") or {}
    check(w.get("process") == "program" and w.get("state") == "S", "the record says the program slept: %r" % (w,))
    a = run(d, "python", MEM_PY, memory_limit_MB=128)
    expect(a, "Failed", run_="Finished", rc=lambda r: r is not None and r != 0)
    check(steps(a)["run"]["memory_killed"] is True, "memory_killed")
    check("survived" not in a["run_result"]["stdout"], "ran past its memory limit")
    # the same program with room is a success: the limit, not the program, decided
    expect(run(d, "python", MEM_PY, memory_limit_MB=1024, run_timeout=120), "Success", rc=0, stdout="survived\n")


CPP_HELLO = r"""
#include <cstdio>
#include <thread>
#if __cplusplus != 201703L
#error not C++17
#endif
int main() {
  auto [a, b] = std::pair<int, int>(1, 2);
  std::thread t([&] { std::printf("hello %d\n", a + b); });
  t.join();
}
"""


def case_cpp(d):
    a = run(d, "cpp", CPP_HELLO)
    expect(a, "Success", compile_="Finished", run_="Finished", rc=0, stdout="hello 3\n")
    check(a["compile_result"]["return_code"] == 0, "compile rc")
    a = run(d, "cpp", "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a*b<<'\\n';}", stdin="6 7\n")
    expect(a, "Success", stdout="42\n")
    a = run(d, "cpp", "int main() { return undefined_name; }\n")
    expect(a, "Failed", compile_="Finished", run_="null")
    check(a["compile_result"]["return_code"] != 0, "compile error's return code")
    check("undefined_name" in a["compile_result"]["stderr"], "compiler's message")
    a = run(d, "cpp", "#include <cstdio>\nint main(){std::puts(\"x\");return 3;}\n")
    expect(a, "Failed", compile_="Finished", run_="Finished", rc=3, stdout="x\n")
    a = run(d, "cpp", "int main(){volatile int *p = 0; return *p;}\n")
    expect(a, "Failed", run_="Finished", rc=-11)  # SIGSEGV, as Python's subprocess says
    a = run(d, "cpp", "int main(){ for(;;); }\n", run_timeout=1)
    expect(a, "Failed", compile_="Finished", run_="TimeLimitExceeded", rc=None)
    mem = "#include <vector>\n#include <cstdio>\nint main(){std::vector<char> v(600u<<20, 1); std::printf(\"%d\\n\", v[12345]);}\n"
    a = run(d, "cpp", mem, memory_limit_MB=128)
    expect(a, "Failed", run_="Finished", rc=lambda r: r is not None and r != 0)
    check(steps(a)["run"]["memory_killed"] is True, "memory_killed")
    # compile_timeout applies to the compile step
    a = run(d, "cpp", CPP_HELLO, compile_timeout=0.05)
    expect(a, "Failed", compile_="TimeLimitExceeded", run_="null")


def case_bash(d):
    expect(run(d, "bash", "echo hello"), "Success", run_="Finished", rc=0, stdout="hello\n")
    expect(run(d, "bash", "read x; echo \"got $x\"", stdin="42\n"), "Success", stdout="got 42\n")
    a = run(d, "bash", "echo partial; exit 4")
    expect(a, "Failed", run_="Finished", rc=4, stdout="partial\n")
    a = run(d, "bash", "if then fi")  # bash's syntax error is its run-time failure
    expect(a, "Failed", run_="Finished", rc=lambda r: r != 0)
    expect(run(d, "bash", "sleep 5", run_timeout=1), "Failed", run_="TimeLimitExceeded", rc=None)
    a = run(d, "bash", "x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo ${#x}", memory_limit_MB=64)
    expect(a, "Failed", run_="Finished", rc=lambda r: r != 0)
    check(steps(a)["run"]["memory_killed"] is True, "memory_killed")


# ---- fields and rules ----------------------------------------------------

def case_fields(d):
    # unknown request fields are ignored on /run_code (clients send extra ones)
    a = run(d, "python", "print(1)", extra_field={"x": 1}, dataset="humaneval", id=17, timeout=3)
    expect(a, "Success", stdout="1\n")
    # defaults: SandboxFusion's 10 s compile and run timeouts
    lim = steps(a)["run"]["limits"]
    check(lim["time_s"] == 10 and lim["cpu_time_s"] == 10, "default run_timeout %r" % lim)
    # int and float timeouts and memory_limit_MB reach the limits
    a = run(d, "python", "print(1)", run_timeout=3, memory_limit_MB=300)
    lim = steps(a)["run"]["limits"]
    check(lim["time_s"] == 3 and lim["memory_mib"] == 300, "limits %r" % lim)
    a = run(d, "python", "print(1)", run_timeout=2.5, stdin=None, files=None, fetch_files=None)
    check(steps(a)["run"]["limits"]["time_s"] == 2.5, "float run_timeout")
    # the surgebox record
    sb = a["surgebox"]
    for k in ("status", "queue_time_s", "toolchain", "steps", "warm", "fetch_errors"):
        check(k in sb, "surgebox.%s missing" % k)
    r = steps(a)["run"]
    for k in ("cpu_time_s", "limit_hit", "memory_killed", "stdout_truncated", "stdout_sha256", "enforced"):
        check(k in r, "surgebox step %s missing" % k)
    check(sb["toolchain"]["name"] == "python3", "toolchain identity")
    # malformed requests are 422 (FastAPI's answer in SandboxFusion), never a verdict
    for body in ({"language": "python"}, {"code": "x"}, {"code": 1, "language": "python"},
                 {"code": "x", "language": "python", "run_timeout": "5"},
                 {"code": "x", "language": "python", "run_timeout": 0},
                 {"code": "x", "language": "python", "stdin": 5},
                 {"code": "x", "language": "python", "files": ["a"]},
                 {"code": "x", "language": "python", "fetch_files": "a"}):
        st, _, data = d.request("POST", "/run_code", body)
        check(st == 422, "%r: HTTP %d %s" % (body, st, data[:200]))
        check(isinstance(json.loads(data)["detail"], str), "detail")
    st, _, _ = d.request("POST", "/run_code", b"{not json")
    check(st == 422, "bad JSON: %d" % st)
    # an unknown language: SandboxError naming it
    a = run(d, "cobol", "x")
    expect(a, "SandboxError")
    check("cobol" in a["message"], a["message"])
    check(a["compile_result"] is None and a["run_result"] is None, "no results")


def case_languages_file(d):
    """A languages.json value marked missing, and one whose toolchain is not
    installed: SandboxError naming what is missing."""
    a = run(d, "lean", "theorem x : True := trivial")
    expect(a, "SandboxError")
    check("Mathlib is not packaged" in a["message"], a["message"])
    a = run(d, "java", "class Main { public static void main(String[] a) {} }")
    expect(a, "SandboxError")
    check("java" in a["message"], a["message"])
    expect(run(d, "python", "print(2)"), "Success", stdout="2\n")


def case_frameworks(d):
    """The bodies RL frameworks send, field for field as their code builds
    them (docs/http.md, "Pointing the frameworks at surgebox"): each is
    accepted and answered with SandboxFusion's words."""
    # verl, verl/utils/reward_score/sandbox_fusion/utils.py call_sandbox_api:
    # stdin is str(stdin_data), "None" when a tool call has no input
    for stdin in ("3\n", "None"):
        body = {"compile_timeout": 10, "run_timeout": 10, "code": "print(input())", "stdin": stdin,
                "memory_limit_MB": 1024, "language": "python", "files": {}, "fetch_files": []}
        st, _, data = d.request("POST", "/run_code", body, headers={"Accept": "application/json"})
        check(st == 200, "verl: %d %r" % (st, data[:300]))
        expect(shape(json.loads(data)), "Success", run_="Finished", stdout=stdin.rstrip("\n") + "\n")
    # ROLL, roll/pipeline/rlvr/rewards/code_sandbox_reward_worker.py: an extra
    # field (expected_stdout), an extra header, and the language taken from a
    # code fence's tag (python3, javascript, cpp, ...)
    for lang, code, out in (("python3", "print(input()[::-1])", "cba\n"),
                            ("javascript", "require('fs').readFileSync(0,'utf8').trim().split('').reverse()"
                                           ".join('')", None),
                            ("cpp", "#include <iostream>\nint main(){std::string s;std::cin>>s;"
                                    "std::cout<<std::string(s.rbegin(),s.rend())<<std::endl;}", "cba\n")):
        if lang == "javascript":
            code = "console.log(" + code + ")"
            out = "cba\n"
        body = {"compile_timeout": 10, "run_timeout": 10, "code": code, "language": lang, "stdin": "abc",
                "expected_stdout": "cba"}
        st, _, data = d.request("POST", "/run_code", body, headers={"eagleeye-traceid": "0f0e"})
        check(st == 200, "ROLL %s: %d %r" % (lang, st, data[:300]))
        expect(shape(json.loads(data)), "Success", stdout=out)
    # tinker-cookbook, tinker_cookbook/sandbox/sandboxfusion.py: run_timeout
    # only (an int), files base64, no compile_timeout or stdin
    body = {"code": "print(open('data.txt').read())", "language": "python", "run_timeout": 30,
            "files": {"data.txt": base64.b64encode(b"from tinker").decode()}}
    expect(shape(d.run_code(body)), "Success", stdout="from tinker\n")


def languages_file():
    tmp = tempfile.mkdtemp(prefix="sbtest-langs-")
    p = os.path.join(tmp, "languages.json")
    with open(p, "w") as f:
        json.dump({"python": {"toolchain": "python3", "source": "main.py", "warm": True},
                   "lean": {"missing": "Lean 4 with Mathlib is not packaged by Debian"},
                   "java": {"toolchain": "java", "source": "Main.java"}}, f)
    return p


def case_files(d):
    b64 = lambda b: base64.b64encode(b).decode()
    raw = bytes(range(256))
    code = ("import os\n"
            "print(open('data/in.txt').read(), open('abs.txt').read(), open('abs2.txt').read())\n"
            "print(os.path.exists('null.txt'))\n"
            "open('out.bin','wb').write(open('raw.bin','rb').read()[::-1])\n"
            "os.makedirs('sub', exist_ok=True); open('sub/o.txt','w').write('sub')\n"
            "os.symlink('/etc/passwd', 'leak')\n")
    a = run(d, "python", code,
            files={"data/in.txt": b64(b"in"), "/app/abs.txt": b64(b"abs"), "/abs2.txt": b64(b"abs2"),
                   "null.txt": None, "raw.bin": b64(raw)},
            fetch_files=["out.bin", "/app/sub/o.txt", "missing.txt", "leak"])
    expect(a, "Success", stdout="in abs abs2\nFalse\n")
    check(base64.b64decode(a["files"]["out.bin"]) == raw[::-1], "out.bin round trip")
    check(base64.b64decode(a["files"]["/app/sub/o.txt"]) == b"sub", "named as asked")
    check("missing.txt" not in a["files"] and "leak" not in a["files"], "absent/link files not in files")
    errs = {e["path"] for e in a["surgebox"]["fetch_errors"]}
    check(errs == {"missing.txt", "leak"}, "fetch_errors %r" % errs)
    # a compile error: fetch_files come back empty, said why
    a = run(d, "cpp", "int main( {", fetch_files=["x"])
    expect(a, "Failed")
    check(a["files"] == {} and a["surgebox"]["fetch_errors"][0]["path"] == "x", "no run, no files")


def case_clients(d):
    body = {"code": "print(input())", "language": "python", "stdin": "via\n"}
    # urllib
    req = urllib.request.Request(d.url + "/run_code", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        expect(shape(json.loads(r.read())), "Success", stdout="via\n")
    # python3-requests, one session (keep-alive), as the SandboxFusion SDK does
    import requests
    with requests.Session() as s:
        for i in range(5):
            r = s.post(d.url + "/run_code", json={"code": "print(%d)" % i, "language": "bash" if i % 2 else "python",
                                                 **({"code": "echo %d" % i} if i % 2 else {})}, timeout=120)
            check(r.status_code == 200, "requests: %d" % r.status_code)
            expect(shape(r.json()), "Success", stdout="%d\n" % i)
        check(s.get(d.url + "/v1/ping", timeout=30).json() == "pong", "ping via requests")
    # curl, with a body large enough that curl sends Expect: 100-continue
    big = "x = '" + "a" * 5000 + "'\nprint(len(x))\n"
    out = subprocess.run(["curl", "-sS", "--max-time", "120", "-X", "POST", d.url + "/run_code",
                          "-H", "Content-Type: application/json",
                          "--data-binary", json.dumps({"code": big, "language": "python"})],
                         capture_output=True, timeout=180)
    check(out.returncode == 0, "curl: %s" % out.stderr)
    expect(shape(json.loads(out.stdout)), "Success", stdout="5000\n")
    out = subprocess.run(["curl", "-sS", "--max-time", "30", d.url + "/v1/ping"], capture_output=True, timeout=60)
    check(out.stdout == b'"pong"', "curl ping %r" % out.stdout)


def case_endpoints(d):
    st, hd, data = d.request("GET", "/v1/ping")
    check(st == 200 and json.loads(data) == "pong", "ping %d %r" % (st, data))
    # /v1/jobs: the native request and result, the client's id given back
    st, hd, data = d.request("POST", "/v1/jobs", {"id": "mine-1", "type": "exec",
                                                  "steps": [{"name": "run", "argv": ["sh", "-c", "echo native"]}]})
    r = json.loads(data)
    check(st == 200 and r["id"] == "mine-1" and r["status"] == "ok" and r["steps"][0]["stdout"] == "native\n",
          "jobs: %d %r" % (st, data[:300]))
    st, hd, data = d.request("POST", "/v1/jobs", {"id": 2, "steps": [{"argv": ["true"]}], "bogus": 1})
    check(st == 400 and json.loads(data)["error"]["code"] == "unknown_field", "native strictness: %d %r" % (st, data))
    st, hd, data = d.request("POST", "/v1/jobs", {"id": 3, "type": "status"})
    check(st == 400, "jobs takes exec only: %d" % st)
    # /metrics: the daemon's families and the front's
    st, hd, data = d.request("GET", "/metrics")
    text = data.decode()
    check(st == 200 and "openmetrics-text" in hd["content-type"], "metrics %d %r" % (st, hd))
    for fam in ("surgebox_jobs_total", "surgebox_http_requests_total", "surgebox_http_header_timeouts_total",
                "surgebox_http_limit{name=\"max_body_bytes\"}"):
        check(fam in text, "metrics lacks " + fam)
    check(text.endswith("# EOF\n"), "metrics end")
    st, _, _ = d.request("GET", "/nope")
    check(st == 404, "404: %d" % st)
    st, _, _ = d.request("GET", "/run_code")
    check(st == 405, "405: %d" % st)
    st, _, _ = d.request("POST", "/v1/ping")
    check(st == 405, "405 ping: %d" % st)


# ---- load ----------------------------------------------------------------

def read_response(f):
    """One HTTP/1.1 response from a buffered socket file: (status, headers, body)."""
    line = f.readline()
    if not line:
        raise AssertionError("connection closed before an answer")
    status = int(line.split()[1])
    headers = {}
    while True:
        h = f.readline()
        if h in (b"\r\n", b""):
            break
        k, v = h.decode().split(":", 1)
        headers[k.strip().lower()] = v.strip()
    body = f.read(int(headers.get("content-length", "0")))
    return status, headers, body


def case_concurrency(d):
    """500 requests over 200 keep-alive connections, pipelined (2 or 3 sent
    at once on each), every answer to its own request, in order."""
    results, errors = {}, []

    def client(ci, ids):
        try:
            s = socket.create_connection((d.host, d.port), timeout=600)
            f = s.makefile("rb")
            out = b""
            for i in ids:
                body = json.dumps({"code": "echo %d" % i, "language": "bash"}).encode()
                out += (b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n" % len(body)) + body
            s.sendall(out)  # pipelined: every request before any answer
            for i in ids:
                st, hd, body = read_response(f)
                a = json.loads(body)
                results[i] = (st, a["status"], a["run_result"]["stdout"] if a["run_result"] else None)
            s.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("client %d: %r" % (ci, e))

    ids = list(range(500))
    per = [ids[i::200] for i in range(200)]
    threads = [threading.Thread(target=client, args=(ci, per[ci])) for ci in range(200)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    check(not errors, "errors: %s" % errors[:5])
    check(len(results) == 500, "answers: %d" % len(results))
    bad = [(i, r) for i, r in results.items() if r != (200, "Success", "%d\n" % i)]
    check(not bad, "wrong answers: %r" % bad[:5])
    print("500 requests over 200 connections: %.1fs" % (time.monotonic() - t0))
    check(d.metric("surgebox_http_connections_total") >= 200, "connections counted")


def case_load(d):
    """--jobs 1, --http-max-queue 3, --http-start-margin 0.5. A long job
    holds the slot; a request whose budget (0.05 + 0.1 + 0.5 s) passes while
    it waits gets 504; with the queue full, one more gets 503 and
    Retry-After; a queued request with run_timeout 1 that waited ~3 s still
    gets its own program's verdict (run_timeout counts from its start)."""
    out = {}

    def send(name, body):
        st, hd, data = d.request("POST", "/run_code", body, timeout=120)
        out[name] = (st, hd, data)

    long_ = threading.Thread(target=send, args=("long", {"code": "sleep 3; echo done", "language": "bash",
                                                       "run_timeout": 20}))
    long_.start()
    time.sleep(1.0)  # ordering only: the long job holds the one slot
    queued = threading.Thread(target=send, args=("queued", {"code": "sleep 0.3; echo fine", "language": "bash",
                                                           "run_timeout": 1, "compile_timeout": 30}))
    queued.start()
    time.sleep(0.3)
    send("late", {"code": "echo late", "language": "bash", "compile_timeout": 0.05, "run_timeout": 0.1})
    st, hd, data = out["late"]
    check(st == 504, "start budget passed: HTTP %d %r" % (st, data[:200]))
    holder = threading.Thread(target=send, args=("third", {"code": "echo third", "language": "bash"}))
    holder.start()
    time.sleep(0.3)
    send("over", {"code": "echo over", "language": "bash"})
    st, hd, data = out["over"]
    check(st == 503 and hd.get("retry-after") == "1", "queue cap: HTTP %d %r %r" % (st, hd, data[:200]))
    for t in (long_, queued, holder):
        t.join(120)
    a = json.loads(out["long"][2])
    expect(a, "Success", stdout="done\n")
    a = json.loads(out["queued"][2])
    expect(a, "Success", stdout="fine\n")
    check(a["surgebox"]["queue_time_s"] > 1.0, "it did wait: %r" % a["surgebox"]["queue_time_s"])
    expect(json.loads(out["third"][2]), "Success", stdout="third\n")
    check(d.metric("surgebox_http_start_timeouts_total") == 1, "504 counted")
    check(d.metric("surgebox_http_queue_full_total") == 1, "503 counted")


def case_warm(d):
    a = run(d, "python", "print('w')")
    expect(a, "Success", stdout="w\n")
    check(a["surgebox"]["warm"]["asked"] is True, "warm asked")
    check(a["surgebox"]["warm"]["start"].startswith("warm"), "warm start: %r" % a["surgebox"]["warm"])
    a = run(d, "bash", "echo c")
    check(a["surgebox"]["warm"]["asked"] is False, "bash is never warm")


def case_warm_off(d):
    a = run(d, "python", "print('c')")
    expect(a, "Success", stdout="c\n")
    check(a["surgebox"]["warm"] == {"asked": False, "start": "cold: --http-warm off"}, "%r" % a["surgebox"]["warm"])
    check(steps(a)["run"]["enforced"]["start"] == "cold", "ran cold")


def case_unix_unchanged(d):
    """The Unix socket keeps working beside the front."""
    r = unix_call(d.sock, {"id": "u1", "type": "exec", "steps": [{"argv": ["echo", "unix"]}]})
    check(r["status"] == "ok" and r["steps"][0]["stdout"] == "unix\n", "unix: %r" % r)
    expect(run(d, "bash", "echo http"), "Success", stdout="http\n")


def case_modes(d):
    """The basic answers in another daemon mode (--cgroup none: the memory
    bound by the daemon's poll)."""
    expect(run(d, "python", "print('m')"), "Success", stdout="m\n")
    expect(run(d, "cpp", CPP_HELLO), "Success", stdout="hello 3\n")
    a = run(d, "python", MEM_PY, memory_limit_MB=128)
    expect(a, "Failed", rc=lambda r: r is not None and r != 0)
    # without a cgroup the bound is RLIMIT_DATA first: the allocation fails
    # (MemoryError) before the daemon's poll would kill it
    check(steps(a)["run"]["memory_killed"] is True or "MemoryError" in a["run_result"]["stderr"],
          "memory refused or killed: %r" % steps(a)["run"]["status"])


def case_unprivileged(d):
    """An unprivileged daemon (started by uid 4242: user-namespace mode)
    serves the same answers."""
    expect(run(d, "python", "print(input())", stdin="u\n"), "Success", stdout="u\n")
    expect(run(d, "bash", "exit 3"), "Failed", rc=3)
    expect(run(d, "cpp", CPP_HELLO), "Success", stdout="hello 3\n")
    expect(run(d, "python", "while True: pass", run_timeout=1), "Failed", run_="TimeLimitExceeded")


def case_config_file(d):
    """The front configured by surgeboxd.conf keys alone (http, http-warm,
    http-max-requests): serving, cold, and a connection closed after two."""
    a = run(d, "python", "print('conf')")
    expect(a, "Success", stdout="conf\n")
    check(a["surgebox"]["warm"]["start"] == "cold: --http-warm off", "%r" % a["surgebox"]["warm"])
    s = socket.create_connection((d.host, d.port), timeout=30)
    s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    check(data.count(b"HTTP/1.1 200") == 2 and b"Connection: close" in data, "max requests from the file: %r" % data)


def case_sigterm(d):
    """SIGTERM while an HTTP request runs and another waits: the running one
    finishes within the grace period and is answered; the queued one is
    answered SandboxError (the daemon shut down: retry), never a verdict;
    the daemon then exits 0 and nothing listens."""
    out = {}

    def send(name, body):
        out[name] = d.request("POST", "/run_code", body, timeout=120)

    t1 = threading.Thread(target=send, args=("running", {"code": "sleep 2; echo done", "language": "bash"}))
    t1.start()
    time.sleep(0.7)  # ordering only: it holds the one slot
    t2 = threading.Thread(target=send, args=("queued", {"code": "echo never", "language": "bash"}))
    t2.start()
    time.sleep(0.5)
    d.proc.terminate()
    t1.join(60)
    t2.join(60)
    st, _, data = out["running"]
    a = json.loads(data)
    check(st == 200 and a["status"] == "Success" and a["run_result"]["stdout"] == "done\n", "running: %r" % data[:300])
    st, _, data = out["queued"]
    a = json.loads(data)
    check(st == 200 and a["status"] == "SandboxError" and "shutting down" in a["message"], "queued: %r" % data[:300])
    check(d.proc.wait(60) == 0, "exit status")
    try:
        socket.create_connection((d.host, d.port), timeout=5).close()
        check(False, "still listening")
    except OSError:
        pass


def config_file():
    tmp = tempfile.mkdtemp(prefix="sbtest-conf-")
    p = os.path.join(tmp, "surgeboxd.conf")
    with open(p, "w") as f:
        f.write("# the HTTP front from the config file\nhttp = 127.0.0.1:0\nhttp-warm = off\nhttp-max-requests = 2\n")
    return p


CASES = {
    "python": (case_python, ["--jobs", "2"]),
    "cpp": (case_cpp, ["--jobs", "2"]),
    "bash": (case_bash, ["--jobs", "2"]),
    "fields": (case_fields, ["--jobs", "2"]),
    "languages_file": (case_languages_file, ["--jobs", "1"]),
    "files": (case_files, ["--jobs", "2"]),
    "clients": (case_clients, ["--jobs", "2"]),
    "frameworks": (case_frameworks, ["--jobs", "2"]),
    "endpoints": (case_endpoints, ["--jobs", "2"]),
    "concurrency": (case_concurrency, ["--jobs", "2"]),
    "load": (case_load, ["--jobs", "1", "--http-max-queue", "3", "--http-start-margin", "0.5"]),
    "warm": (case_warm, ["--jobs", "1"]),
    "warm_off": (case_warm_off, ["--jobs", "1", "--http-warm", "off"]),
    "unix_unchanged": (case_unix_unchanged, ["--jobs", "1"]),
    "cgroup_none": (case_modes, ["--jobs", "2", "--cgroup", "none"]),
    "unprivileged": (case_unprivileged, ["--jobs", "1"]),
    "config_file": (case_config_file, ["--jobs", "1"]),
    "sigterm": (case_sigterm, ["--jobs", "1"]),
}


def main():
    global BIN
    BIN = sys.argv[1]
    name = sys.argv[2]
    fn, extra = CASES[name]
    if name == "frameworks":  # ROLL's javascript runs on node (.ci/packages: nodejs)
        httpd.TOOLCHAIN_FILES = httpd.TOOLCHAIN_FILES + ("node.json",)
    if name == "languages_file":
        extra = extra + ["--http-languages", languages_file()]
    http = ("127.0.0.1:0",)
    if name == "config_file":
        extra = extra + ["--config", config_file()]
        http = ()
    d = Daemon(BIN, *extra, http=http, user=4242 if name == "unprivileged" else None)
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
