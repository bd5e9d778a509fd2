"""surgebox batch writes each answer's bytes as its daemon sent them (issue
39: the client's CPU per job), byte for byte what it wrote when it printed
the parsed answer again: the daemon's line with the request's own id in
place of the one batch sent and ,"line":N appended (on a fleet,
,"daemon":NAME,"attempts":N before it); an error answer's message names its
line. The reference is the daemon's own line for the same request, read here
from its socket; the jobs write what a JSON printer must escape (quotes,
backslashes, slashes, control bytes, DEL, non-ASCII, bytes that are not
UTF-8, NULs, a long output). Fields that differ run to run (times, sizes, the
uid, the pool's state) are masked on both sides; everything else must match.

  test_batch_bytes.py BIN_DIR CASE   (completion | input_order | fleet)

Run inside a throw-away pid namespace (CMakeLists.txt)."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from private_daemon import PrivateDaemon  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="sbbytes-")
os.chmod(TMP, 0o755)

HOSTILE = r'printf "caf\303\251 \"q\" back\\\\slash a/b </script> \001\037\177 \377\376 tab\tend\n"'
# (line's request, the id's JSON text as batch must print it: written by hand)
ITEMS = [
    ({"steps": [{"argv": ["sh", "-c", HOSTILE + "; " + HOSTILE + " >&2"]}]}, b"1"),
    ({"id": 7, "steps": [{"argv": ["sh", "-c", "printf 'x\\000y'; exit 3"]}]}, b"7"),
    ({"id": "a/b", "steps": [{"argv": ["seq", "1", "3000"]}]}, b'"a/b"'),
    ({"id": "\u00e9\"q\\", "steps": [{"argv": ["sh", "-c", "kill -9 $$"]}]}, b'"\xc3\xa9\\"q\\\\"'),
    ({"id": -12, "steps": [{"argv": ["true"], "limits": {"time_s": 2.5, "memory_mib": 256}}]}, b"-12"),
    ({"steps": [{"argv": []}]}, b"6"),  # the daemon refuses it: an error answer, its message names the line
]
VOLATILE = re.compile(rb'"(cpu_time_s|user_time_s|sys_time_s|wall_time_s|setup_time_s|queue_time_s|max_rss_kb|'
                      rb'cgroup_peak_kb|uid)":(-?[0-9.e+-]+|null)|"(pool|start)":"[^"]*"')


def mask(b):
    return VOLATILE.sub(lambda m: b'"' + (m.group(1) or m.group(3)) + b'":~', b)


def daemon_lines(sock):
    """{line number: the daemon's answer line} for ITEMS, sent as batch sends them (a string id)."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    for n, (req, _) in enumerate(ITEMS, 1):
        r = {k: v for k, v in req.items() if k != "id"}
        r["type"] = "exec"
        r["id"] = str(n)
        s.sendall(json.dumps(r).encode() + b"\n")
    buf, got = b"", {}
    while len(got) < len(ITEMS):
        chunk = s.recv(1 << 16)
        assert chunk, "the daemon closed the connection after %d answers" % len(got)
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            got[int(json.loads(line)["id"])] = line
    s.close()
    return got


def expected(n, raw, answer):
    """What batch must write for line n, from the daemon's raw line."""
    head = b'{"id":"%d",' % n
    assert raw.startswith(head), raw[:80]
    body = raw[len(head) - 1:-1]  # from the comma after the id to before the last }
    if answer.get("type") == "error":  # batch names the line in the message
        assert body.count(b'"message":"') == 1, body
        body = body.replace(b'"message":"', b'"message":"line %d: ' % n)
    if "daemon" in answer:
        body += b',"daemon":' + json.dumps(answer["daemon"]).encode() + b',"attempts":%d' % answer["attempts"]
    return b'{"id":' + ITEMS[n - 1][1] + body + b',"line":%d}' % n


def main():
    case = sys.argv[2]
    tc = os.path.join(TMP, "toolchains")  # raw steps only: no toolchain to detect
    os.mkdir(tc)
    d = PrivateDaemon(BIN, None, "--toolchains", tc, "--jobs", "2")
    try:
        ref = daemon_lines(d.sock)
        inp, out = os.path.join(TMP, "in.jsonl"), os.path.join(TMP, "out.jsonl")
        with open(inp, "w") as f:
            for req, _ in ITEMS:
                f.write(json.dumps(req) + "\n")
        target = ["--endpoints", d.sock] if case == "fleet" else ["--socket", d.sock, "--no-autostart"]
        order = ["--order", "input"] if case == "input_order" else []
        p = subprocess.run([os.path.join(BIN, "surgebox"), "batch", inp, "--out", out, "--concurrency", "3"] + target +
                           order, capture_output=True, timeout=300)
        # exit 2: the refused line is the daemon's error, a failure of surgebox's kind (said on stderr)
        assert p.returncode in (0, 2) and b"6 answered now" in p.stderr, (p.returncode, p.stderr)
        with open(out, "rb") as f:
            data = f.read()
        assert data.endswith(b"\n"), data[-100:]
        lines = data[:-1].split(b"\n")
        assert len(lines) == len(ITEMS), len(lines)
        seen = []
        for line in lines:
            answer = json.loads(line)
            n = answer["line"]
            seen.append(n)
            want = expected(n, ref[n], answer)
            assert mask(line) == mask(want), "line %d differs:\n%r\n%r" % (n, mask(line)[:600], mask(want)[:600])
        assert sorted(seen) == list(range(1, len(ITEMS) + 1)), seen
        if case == "input_order":
            assert seen == list(range(1, len(ITEMS) + 1)), seen
        # the hostile bytes came through: not a test of nothing
        first = json.loads(lines[seen.index(1)])
        assert first["steps"][0]["stdout_lossy"] is True and "\u00e9" in first["steps"][0]["stdout"], first["steps"][0]
        assert json.loads(lines[seen.index(6)])["type"] == "error"
    finally:
        d.stop()
        shutil.rmtree(TMP, True)
    print("ok:", case)


if __name__ == "__main__":
    main()
