#!/usr/bin/env python3
"""Issue 39: a profile is loaded off the daemon's loop.

Run as: test_profile_load.py BIN_DIR CASE (inside the unshare wrapper, as
root). The profile, "slow", is a stand-in built here (a few of the host's
files, as tests/surge/test_verify_profile.py builds its own): dash and its
libraries, and /usr/local/bin/gate, a toolchain whose `--version` reads a
line from /gate, a FIFO in the root. The daemon detects toolchains inside a
profile's root the first time a request names it, so the load of "slow"
cannot end before the test writes a line into the FIFO: whatever the daemon
answers before that, it answered while the load was still blocked, however
fast or slow the machine (no timing is asserted; the timeouts below only
bound a wait for an answer that must come). The test holds the FIFO open
for writing from the start, so each line it writes releases one load.
Detection's own probe timeout (30 s, toolchains/detect.c) is far beyond
how long any case keeps the gate shut.

On the old code (a0dd786) the first request naming "slow" ran the load on
the loop: no ping, status, host job or signal was answered until the gate
opened, and every case below fails.
"""
import json
import os
import shutil
import socket
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "surge"))
import test_daemon as td  # noqa: E402  the daemon and client helpers
from test_daemon import check, exec_req  # noqa: E402
from test_verify_profile import content_hash, copy_in, libraries  # noqa: E402  the stand-in's pieces

SKIP = 77
WAIT_S = 20  # bounds a wait for an answer that must come while the gate is shut

GATE_SCRIPT = """#!/bin/sh
if [ "$1" = --version ]; then read x < /gate; echo "gate version 1.0.0"; exit 0; fi
exec /bin/sh "$@"
"""

GATE_DEF = {
    "name": "gate", "language": "sh", "description": "a test's toolchain whose detection waits on /gate",
    "binaries": [{"path": "/usr/local/bin/gate", "name": "gate"}],
    "version": {"argv": ["{bin}", "--version"], "regex": "gate version ([0-9]+\\.[0-9]+\\.[0-9]+)"},
    "install": "none: a test's", "sources": [".sh"], "default_source": "main.sh", "options": {},
    "run": ["{bin}", "/app/{main}"], "env": {"PATH": "/usr/bin:/bin"},
}


def slow_profile(profiles):
    """profiles/slow: dash, cat and their libraries, /gate a FIFO, the gate toolchain."""
    top = os.path.join(profiles, "slow")
    root = os.path.join(top, "rootfs")
    for d in ("usr/bin", "usr/sbin", "usr/local/bin", "tmp", "proc", "dev"):
        os.makedirs(os.path.join(root, d))
    for prog in ("dash", "cat"):
        copy_in(root, shutil.which(prog))
        for lib in libraries(shutil.which(prog)):
            copy_in(root, lib)
    for link in ("bin", "sbin", "lib", "lib64"):
        where = os.path.join(root, link)
        if os.path.islink("/" + link):
            if not os.path.lexists(where):
                os.symlink(os.readlink("/" + link), where)
        elif os.path.isdir("/" + link) and not os.path.exists(where):
            os.makedirs(where)
    if not os.path.exists(os.path.join(root, "usr", "bin", "sh")):
        os.symlink("dash", os.path.join(root, "usr", "bin", "sh"))
    for f in ("/etc/passwd", "/etc/group"):
        copy_in(root, f)
    gate = os.path.join(root, "usr", "local", "bin", "gate")
    with open(gate, "w") as f:
        f.write(GATE_SCRIPT)
    os.chmod(gate, 0o755)
    os.mkfifo(os.path.join(root, "gate"), 0o644)
    os.makedirs(os.path.join(top, "toolchains"))
    with open(os.path.join(top, "toolchains", "gate.json"), "w") as f:
        json.dump(GATE_DEF, f)
    manifest = {"name": "slow", "format": 1, "created": "2026-11-29T00:00:00Z",
                "origin": {"suite": "bookworm", "mirror": "stand-in", "variant": "minbase", "packages": []},
                "package_versions": {"dash": "stand-in"}, "content_hash": content_hash(root),
                "notes": "a test's stand-in (tests/daemon/test_profile_load.py)"}
    with open(os.path.join(top, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return os.path.join(root, "gate")


def prof_exec(id_, text):
    """A raw job in profile slow: dash inside its root."""
    r = exec_req(id_, ["/bin/sh", "-c", "echo " + text])
    r["profile"] = "slow"
    return r


def host_exec(id_):
    return exec_req(id_, ["/bin/sh", "-c", "echo host"])


def gate_exec(id_):
    """The toolchain form: gate exists only in slow's registry, once detected."""
    return {"id": id_, "type": "exec", "toolchain": "gate", "profile": "slow",
            "files": [{"path": "main.sh", "content": "echo gated"}]}


def answers(c, ids, timeout=WAIT_S):
    """The responses to ids, whatever their order (and any other seen first)."""
    got = {}
    while not set(ids) <= set(got):
        r = c.recv(timeout)
        got[r.get("id")] = r
    return got


def ok_stdout(r, want, what):
    steps = r.get("steps") or [{}]
    check(r.get("status") == "ok" and steps[-1].get("stdout") == want,
          f"{what}: ok with stdout {want!r}: {json.dumps(r)[:600]}")


def error_of(r):
    """(code, message) of an error response, else (None, "")."""
    e = r.get("error") if r.get("type") == "error" else None
    return (e.get("code"), e.get("message", "")) if isinstance(e, dict) else (None, "")


def alive_while_shut(b, what):
    """A ping, a status and a host job on another connection, answered now."""
    try:
        check(b.call({"id": "bp", "type": "ping"}, WAIT_S).get("type") == "ping", f"{what}: ping answered")
        check(b.call({"id": "bs", "type": "status"}, WAIT_S).get("type") == "status", f"{what}: status answered")
        ok_stdout(b.call(host_exec("bh"), WAIT_S), "host\n", f"{what}: a host job")
    except (OSError, EOFError) as e:
        check(False, f"{what}: no answer while the profile loads ({e!r}): the loop is stalled")


def case_blocked(d, release):
    a, b = td.Client(d.sock), td.Client(d.sock)
    a.send(prof_exec("p1", "in-profile"))
    a.send(gate_exec("p2"))
    a.send({"id": "t1", "type": "toolchains", "profile": "slow"})
    try:
        first = a.call({"id": "a-ping", "type": "ping"}, WAIT_S)
        check(first.get("id") == "a-ping", f"the ping after parked jobs answered first: {first}")
    except (OSError, EOFError) as e:
        check(False, f"a ping after a job naming a loading profile: no answer ({e!r})")
    alive_while_shut(b, "while slow loads")
    try:
        r = a.call(prof_exec("p1", "again"), WAIT_S)  # the same id, parked: in flight
        code, msg = error_of(r)
        check(code == "bad_request" and "already in flight" in msg, f"a parked id is in flight: {r}")
        a.send(prof_exec("p3", "never"))
        a.send({"id": "c3", "type": "cancel", "target": "p3"})
        got = answers(a, ["c3", "p3"])
        check(got["c3"].get("was") == "queued", f"cancel of a parked job answers as for a queued one: {got['c3']}")
        check(got["p3"].get("status") == "cancelled",
              f"the parked job cancelled before it ran: {got['p3']}")
    except (OSError, EOFError) as e:
        check(False, f"a duplicate id and a cancel while parked: no answer ({e!r})")
    release(1)
    got = answers(a, ["p1", "p2", "t1"], 120)
    ok_stdout(got["p1"], "in-profile\n", "the parked raw job after the load")
    check((got["p1"].get("profile") or {}).get("name") == "slow",
          f"it ran in slow: {json.dumps(got['p1'])[:400]}")
    ok_stdout(got["p2"], "gated\n", "the parked toolchain job (gate detected inside slow)")
    names = [t.get("name") for t in got["t1"].get("toolchains") or []]
    check(got["t1"].get("type") == "toolchains" and names == ["gate"] and got["t1"].get("profile", {}).get("name") ==
          "slow", f"the parked toolchains request lists slow's: {json.dumps(got['t1'])[:400]}")
    ok_stdout(a.call(prof_exec("p4", "loaded"), 120), "loaded\n", "a job naming slow once it is loaded")
    a.close()
    b.close()


def case_closed(d, release):
    a, b = td.Client(d.sock), td.Client(d.sock)
    a.send(prof_exec("p1", "gone"))
    a.send(gate_exec("p2"))
    a.send({"id": "t1", "type": "toolchains", "profile": "slow"})
    a.close()  # parked jobs and a parked toolchains request of a closed connection
    h = td.Client(d.sock)  # and one that only shut down its sending side: it still waits for its answers
    h.send(prof_exec("h1", "half"))
    h.send({"id": "t2", "type": "toolchains", "profile": "slow"})
    h.s.shutdown(socket.SHUT_WR)
    alive_while_shut(b, "after a client with parked jobs left")
    release(1)
    try:
        got = answers(h, ["h1", "t2"], 120)
        ok_stdout(got["h1"], "half\n", "a half-closed client's parked job")
        check(got["t2"].get("type") == "toolchains", f"a half-closed client's parked toolchains request: {got['t2']}")
        try:
            r = h.recv(WAIT_S)
            check(False, f"nothing after its answers: {r}")
        except EOFError:
            pass  # closed once answered, as after a queued job
    except (OSError, EOFError) as e:
        check(False, f"a half-closed client with parked requests lost its answers ({e!r})")
    ok_stdout(b.call(prof_exec("p5", "after"), 120), "after\n", "a job naming slow after the load")
    check(b.call({"id": "bp2", "type": "ping"}, WAIT_S).get("type") == "ping", "the daemon still answers")
    check(d.proc.poll() is None, "the daemon is alive")
    b.close()


def case_sighup(d, release):
    a, b = td.Client(d.sock), td.Client(d.sock)
    a.send(gate_exec("p1"))  # planned from the registry of a load a SIGHUP makes stale (freed once it served)
    alive_while_shut(b, "before the SIGHUP")
    d.proc.send_signal(signal.SIGHUP)  # forgets profiles: the load in flight keeps its own
    alive_while_shut(b, "after the SIGHUP")
    a.send(prof_exec("p2", "after-hup"))  # after the SIGHUP: a load of its own, shut too
    try:
        check(a.call({"id": "a-ping", "type": "ping"}, WAIT_S).get("id") == "a-ping", "a ping after both parked jobs")
    except (OSError, EOFError) as e:
        check(False, f"a ping after a SIGHUP with loads in flight: no answer ({e!r})")
    release(2)
    got = answers(a, ["p1", "p2"], 120)
    ok_stdout(got["p1"], "gated\n", "the toolchain job parked before the SIGHUP")
    ok_stdout(got["p2"], "after-hup\n", "the job parked after the SIGHUP")
    ok_stdout(a.call(prof_exec("p3", "kept"), 120), "kept\n", "a job naming slow afterwards (no gate left to pass)")
    check(d.proc.poll() is None, "the daemon is alive")
    a.close()
    b.close()


def case_sigterm(d, release):
    a = td.Client(d.sock)
    a.send(prof_exec("p1", "never"))
    a.send({"id": "t1", "type": "toolchains", "profile": "slow"})
    try:
        check(a.call({"id": "a-ping", "type": "ping"}, WAIT_S).get("id") == "a-ping", "a ping after parked requests")
    except (OSError, EOFError) as e:
        check(False, f"a ping after parked requests: no answer ({e!r})")
    d.proc.send_signal(signal.SIGTERM)
    try:
        got = answers(a, ["p1", "t1"])
        r = got["p1"]
        check(r.get("status") == "cancelled" and "shutting down" in str(r.get("error") or ""),
              f"a parked job is answered at the drain, the load still shut: {got['p1']}")
        code, msg = error_of(got["t1"])
        check(code == "busy" and "shutting down" in msg, f"a parked toolchains request too: {got['t1']}")
    except (OSError, EOFError) as e:
        check(False, f"SIGTERM with parked requests: no answer while the load is shut ({e!r})")
    release(1)
    try:
        rc = d.proc.wait(120)
        check(rc == 0, f"the daemon exits 0 once the load ended: {rc}")
    except td.subprocess.TimeoutExpired:
        check(False, "the daemon did not exit after the load ended")
    a.close()


def case_unknown(d, release):
    a, b = td.Client(d.sock), td.Client(d.sock)
    a.send(prof_exec("p1", "later"))  # slow's load shut meanwhile
    profiles = os.environ["SURGEBOX_PROFILES"]
    try:
        r = b.call(dict(prof_exec("u1", "x"), profile="nope"), WAIT_S)
        want = 'unknown profile "nope": no profile nope in %s' % profiles
        code, msg = error_of(r)
        check(code == "bad_request" and msg.startswith(want), f"an unknown profile's error, as before: {r}")
        r = b.call(dict(prof_exec("u2", "x"), profile="../etc"), WAIT_S)
        want = 'unknown profile "../etc": bad profile name "../etc" (letters, digits and ._+- only'
        code, msg = error_of(r)
        check(code == "bad_request" and msg.startswith(want), f"a bad profile name's error, as before: {r}")
        r = b.call({"id": "u3", "type": "toolchains", "profile": "nope"}, WAIT_S)
        code, msg = error_of(r)
        check(code == "bad_request" and msg.startswith('unknown profile "nope": no profile nope in '),
              f"toolchains of an unknown profile: {r}")
    except (OSError, EOFError) as e:
        check(False, f"an unknown profile while another loads: no answer ({e!r})")
    release(1)
    ok_stdout(a.recv(120), "later\n", "the parked job after the load")
    a.close()
    b.close()


def case_default(d, release):
    """surgeboxd --profile slow: a job naming no profile waits for slow's
    load, one naming "host" does not."""
    a, b = td.Client(d.sock), td.Client(d.sock)
    a.send(exec_req("p1", ["/bin/sh", "-c", "echo default"]))  # no profile: the daemon's, slow
    try:
        r = b.call(dict(host_exec("h1"), profile="host"), WAIT_S)
        ok_stdout(r, "host\n", "a host job beside the default profile's load")
        check((r.get("profile") or {}).get("name") == "host", f"it ran on the host: {json.dumps(r)[:300]}")
        check(b.call({"id": "bp", "type": "ping"}, WAIT_S).get("type") == "ping", "a ping beside it")
    except (OSError, EOFError) as e:
        check(False, f"a daemon whose default profile loads: no answer ({e!r})")
    release(1)
    r = a.recv(120)
    ok_stdout(r, "default\n", "the job in the default profile after its load")
    check((r.get("profile") or {}).get("name") == "slow", f"it ran in slow: {json.dumps(r)[:300]}")
    a.close()
    b.close()


CASES = {"blocked": case_blocked, "closed": case_closed, "sighup": case_sighup, "sigterm": case_sigterm,
         "unknown": case_unknown, "default": case_default}


def main():
    td.BIN = sys.argv[1]
    name = sys.argv[2]
    if os.geteuid() != 0:
        print("SKIPPED: detection inside a profile's root mounts (root only, as CI and this machine)")
        sys.exit(SKIP)
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid is not 1)")
        sys.exit(2)
    tmp = tempfile.mkdtemp(prefix="sbd-profload-")
    os.chmod(tmp, 0o755)
    profiles = os.path.join(tmp, "profiles")
    os.environ["SURGEBOX_PROFILES"] = profiles
    gate = slow_profile(profiles)
    hold = os.open(gate, os.O_RDWR)  # a writer from the start: each line written releases one load

    def release(loads):
        os.write(hold, b"go\n" * loads)

    extra = ["--profile", "slow"] if name == "default" else []
    # No host toolchains: with a cache of its own the daemon would detect the
    # host's before it listens, which under ASan beside CI's other tests took
    # past td.Daemon's 10 s start (all six cases failed so in a fresh clone).
    # The host jobs here are argv jobs; the profile's registry is its own.
    d = td.Daemon("--jobs", "2", "--cache-dir", os.path.join(tmp, "cache"), *td.NO_TOOLCHAINS, *extra)
    try:
        CASES[name](d, release)
    finally:
        release(4)  # whatever a failed case left shut
        rc = d.stop() if d.proc.poll() is None else d.proc.returncode
        os.close(hold)
    # a clean exit: under ASan a leak makes it non-zero; UBSan only says so
    with open(os.path.join(d.dir, "log"), "rb") as f:  # bytes: a line may hold what a probe printed
        log = f.read().decode("utf-8", "replace")
    check(rc == 0, f"the daemon exits 0 after SIGTERM: {rc}")
    check("Sanitizer" not in log and "runtime error:" not in log, "no sanitizer report in the daemon's log")
    if td.failures:
        print("--- daemon log ---\n" + log[-4000:])
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
