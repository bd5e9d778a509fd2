"""The zygote's requests: what it refuses (nothing runs, the zygote stays
and serves the next job) and a script that cannot be opened (the same
message and exit status 2 as `python3 main.py`)."""
import array
import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zygoterun  # noqa: E402

PY = "/usr/bin/python3"


def refused(z, argv, env=None, nfds=3):
    with tempfile.TemporaryFile() as f:
        try:
            z.start(argv, "/tmp", [f.fileno()] * nfds, env)
        except RuntimeError as e:
            return str(e)
        z.finish()
        return None


def malformed_daemon_requests(z):
    """The daemon's requests ("SBX", served by libsbwarm's loop in C,
    runners/warm_serve.c), malformed: nothing runs; the init's socket (the
    fourth descriptor), where it came, hears FAIL then EXIT; one whose init
    dies before its GO hears nothing; the zygote serves on (main's run)."""
    fail = []
    with tempfile.TemporaryFile() as f:
        # no descriptor at all: nobody to tell
        z.sock.sendmsg([b"SBX\0"])
        for what, n in (("four descriptors", 4), ("six, the init gone before its GO", 6)):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            fds = [f.fileno()] * 3 + [theirs.fileno()] + [f.fileno()] * (n - 4)
            z.sock.sendmsg([b"SBX\0"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            theirs.close()
            if n == 6:
                ours.shutdown(socket.SHUT_WR)  # the zygote's wait for GO ends: nothing to say
            ours.settimeout(30)
            heard = []
            try:
                while True:
                    m = ours.recv(4096)
                    if not m:
                        break
                    heard.append(m)
            except socket.timeout:
                fail.append("%s: the zygote neither answered nor closed the init's socket" % what)
            ours.close()
            want = 2 if n == 4 else 0  # FAIL, EXIT
            print("%s %s: %d messages on the init's socket" % ("ok  " if len(heard) == want else "FAIL", what, len(heard)))
            if len(heard) != want:
                fail.append("%s: %d messages on the init's socket, not %d" % (what, len(heard), want))
    return fail


def main():
    if not os.path.exists(PY):
        print("SKIPPED: no /usr/bin/python3")
        return zygoterun.SKIP
    fail = []
    z = zygoterun.Zygote(PY)
    cases = [
        ("interpreter options", [PY, "-c", "print(1)"], None, 3),
        ("another interpreter", ["/usr/bin/perl", "main.py"], None, 3),
        ("a start-up variable differs", [PY, "main.py"], zygoterun.job_env({"PYTHONOPTIMIZE": "1"}), 3),
        ("LANG differs", [PY, "main.py"], zygoterun.job_env({"LANG": "C"}), 3),
        ("two descriptors", [PY, "main.py"], None, 2),
        ("no argv", [PY], None, 3),
    ]
    for what, argv, env, nfds in cases:
        why = refused(z, argv, env, nfds)
        print("%s %s: %s" % ("ok  " if why else "FAIL", what, why))
        if not why or not why.startswith("REFUSED "):
            fail.append("%s: not refused (%r)" % (what, why))
    # garbage on the socket: refused, the zygote still serves
    z.sock.sendmsg([b"\xff\0garbage"])
    r = z.sock.recv(4096)
    if not r.startswith(b"REFUSED "):
        fail.append("garbage: %r" % r)
    if z.lib:
        fail += malformed_daemon_requests(z)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "main.py"), "w") as f:
            f.write("print('still serving')\n")
        warm = z.run("main.py", cwd=d)
        if warm != (0, b"still serving\n", b""):
            fail.append("after the refusals: %r" % (warm,))
        cold_missing = zygoterun.run_cold(PY, "missing.py", cwd=d)
        warm_missing = z.run("missing.py", cwd=d)
        print("missing script: cold %r warm %r" % (cold_missing, warm_missing))
        if cold_missing != warm_missing or cold_missing[0] != 2:
            fail.append("a missing script: cold %r warm %r" % (cold_missing, warm_missing))
    if z.close() != 0:
        fail.append("the zygote did not end with 0 when its socket closed")
    for f in fail:
        print("FAIL", f)
    print("%d failures" % len(fail))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
