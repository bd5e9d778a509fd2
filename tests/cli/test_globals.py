#!/usr/bin/env python3
"""The global options (--socket, --no-autostart, --profile) as every command
meets them (issue 21): honoured before and after a command's name by the
commands they apply to, refused with the reason by the others; a socket
named explicitly that does not answer is an error naming it, never a private
daemon beside it; only the default socket may start one.

usage: test_globals.py BIN_DIR CASE [SEED]   (inside the unshare wrapper;
SEED: toolchain detection carried from one daemon to the next, as in
test_cli.py)."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from private_daemon import PrivateDaemon  # noqa: E402

BIN = sys.argv[1]
SEED = sys.argv[3] if len(sys.argv) > 3 else None
SURGEBOX = os.path.join(BIN, "surgebox")
failures = []
_dirs = []


def tmpdir():
    d = tempfile.mkdtemp(prefix="sbglob-")  # 0700, ours: a valid SURGEBOX_SOCKET_DIR
    _dirs.append(d)
    return d


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(args, env, timeout=300):
    return subprocess.run([SURGEBOX] + args, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)


def daemon():
    cache = os.path.join(tmpdir(), "cache")
    os.makedirs(cache)
    if SEED and os.path.exists(SEED):
        shutil.copyfile(SEED, os.path.join(cache, "toolchains.json"))
    return PrivateDaemon(BIN, cache, "--jobs", "1")


def counters(sock):
    """(connections_total, jobs_done) of the daemon at sock, asked directly
    (this connection is counted too)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    s.sendall(b'{"id":"c","type":"status"}\n')
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    st = json.loads(buf)
    return st["connections_total"], st["jobs_done"]


def fake_surgeboxd(t):
    """A surgeboxd that only leaves a mark: (its path, the mark's path)."""
    mark = os.path.join(t, "daemon-started")
    path = os.path.join(t, "fake-surgeboxd")
    with open(path, "w") as f:
        f.write("#!/bin/sh\ntouch %s\nexit 1\n" % mark)
    os.chmod(path, 0o755)
    return path, mark


def one_line(p):
    return len(p.stderr.decode().strip().splitlines()) == 1


# The commands that talk to a daemon and are not benchmarks, with what each
# sends; exec's job shows in jobs_done too.
COMMANDS = [("exec", ["--", "true"]), ("status", []), ("toolchains", []), ("ping", []), ("metrics", [])]


def case_sockets():
    """--socket S before and after each command's name reaches the daemon at
    S, not the one $SURGEBOX_SOCKET names: S's counters move, the other's do
    not (beyond our own question)."""
    a, b = daemon(), daemon()
    try:
        env = dict(os.environ, SURGEBOX_SOCKET=b.sock)
        for name, rest in COMMANDS:
            for where, args in (("before", ["--socket", a.sock, name] + rest),
                                ("after", [name, "--socket", a.sock] + rest),
                                ("after, --socket=", [name, "--socket=" + a.sock] + rest)):
                a0, b0 = counters(a.sock), counters(b.sock)
                p = run(args, env)
                a1, b1 = counters(a.sock), counters(b.sock)
                jobs = 1 if name == "exec" else 0
                check(p.returncode == 0 and a1[0] - a0[0] == 2 and b1[0] - b0[0] == 1 and a1[1] - a0[1] == jobs
                      and b1[1] == b0[1], f"{name} with --socket {where} its name: exit {p.returncode}, "
                      f"S {a0}->{a1}, $SURGEBOX_SOCKET's {b0}->{b1} {p.stderr[-300:]!r}")
        # and without --socket, $SURGEBOX_SOCKET's daemon is the one asked
        a0, b0 = counters(a.sock), counters(b.sock)
        p = run(["exec", "--", "true"], env)
        a1, b1 = counters(a.sock), counters(b.sock)
        check(p.returncode == 0 and b1[1] - b0[1] == 1 and a1[1] == a0[1], f"$SURGEBOX_SOCKET: {a0}->{a1}, {b0}->{b1}")
    finally:
        a.stop()
        b.stop()


def case_dead_socket():
    """A socket named explicitly that does not answer: exit 2, one line naming
    it and the next step, and no daemon started (the fake surgeboxd leaves
    no mark). Only the default socket starts one."""
    t = tmpdir()
    fake, mark = fake_surgeboxd(t)
    dead = os.path.join(t, "dead.sock")
    base = dict(os.environ, SURGEBOXD=fake, SURGEBOX_SOCKET_DIR=t, SURGEBOX_IDLE_TIMEOUT="0")
    base.pop("SURGEBOX_SOCKET", None)
    for name, rest in COMMANDS:
        for where, args in (("before", ["--socket", dead, name] + rest), ("after", [name, "--socket", dead] + rest)):
            p = run(args, base)
            err = p.stderr.decode()
            check(p.returncode == 2 and one_line(p) and f"no daemon answers at {dead}" in err
                  and f"surgeboxd --socket {dead}" in err and "drop --socket" in err and not os.path.exists(mark),
                  f"{name}, dead --socket {where}: exit {p.returncode}, started: {os.path.exists(mark)}, {err!r}")
        p = run([name] + rest, dict(base, SURGEBOX_SOCKET=dead))
        err = p.stderr.decode()
        check(p.returncode == 2 and f"no daemon answers at {dead}" in err and "unset SURGEBOX_SOCKET" in err
              and not os.path.exists(mark), f"{name}, dead $SURGEBOX_SOCKET: exit {p.returncode}, "
              f"started: {os.path.exists(mark)}, {err!r}")
    # --no-autostart, before or after the name, on the default socket
    for name, rest in COMMANDS[:3]:
        for args in (["--no-autostart", name] + rest, [name, "--no-autostart"] + rest):
            p = run(args, base)
            check(p.returncode == 2 and not os.path.exists(mark) and os.path.join(t, "surgebox.sock") in p.stderr.decode(),
                  f"{' '.join(args)}: exit {p.returncode}, started: {os.path.exists(mark)}, {p.stderr!r}")
    # ping and metrics never start one, even for the default socket
    for name in ("ping", "metrics"):
        p = run([name], base)
        check(p.returncode == 2 and not os.path.exists(mark), f"{name} on the default socket: exit {p.returncode}, "
              f"started: {os.path.exists(mark)}, {p.stderr!r}")
    # the default socket may start one: the fake runs (and fails, said)
    p = run(["exec", "--", "true"], base)
    check(p.returncode == 2 and os.path.exists(mark), f"default socket autostarts: exit {p.returncode}, "
          f"started: {os.path.exists(mark)}, {p.stderr!r}")


def case_refused():
    """A global option where it does not apply: exit 1, one line naming the
    option and why, nothing run."""
    env = dict(os.environ)
    cases = [["--socket", "/x.sock", "profile", "list"], ["profile", "--socket", "/x.sock", "list"],
             ["profile", "list", "--socket=/x.sock"], ["--no-autostart", "profile", "list"],
             ["profile", "--no-autostart", "list"], ["--profile", "p", "profile", "list"],
             ["profile", "list", "--profile", "p"], ["--socket", "/x.sock", "merge", "--out", "/nonexistent", "a"],
             ["--no-autostart", "bins", "--help"], ["--profile", "p", "merge", "--help"],
             ["--profile", "p", "status"], ["status", "--profile", "p"], ["ping", "--profile=p"],
             ["--profile", "p", "ping"], ["metrics", "--profile", "p"], ["--profile", "p", "metrics"],
             ["--socket", "/x.sock", "eval", "--data", "/nonexistent", "/nonexistent"],
             ["--profile", "p", "eval", "--data", "/nonexistent", "/nonexistent"]]
    for args in cases:
        p = run(args, env)
        opt = next(a for a in args if a.startswith("--")).split("=")[0]
        err = p.stderr.decode()
        check(p.returncode == 1 and one_line(p) and f"{opt} does not apply to" in err and "drop it" in err
              and not p.stdout, f"{' '.join(args)}: exit {p.returncode} {err!r} {p.stdout[:100]!r}")


def case_unknown_profile():
    """--profile nope, before or after the name: exit 2, one line naming it; no job runs."""
    d = daemon()
    try:
        env = dict(os.environ, SURGEBOX_SOCKET=d.sock)
        for args in (["--profile", "nope", "exec", "--", "true"], ["exec", "--profile", "nope", "--", "true"],
                     ["exec", "--profile=nope", "--json", "--", "true"],
                     ["--profile", "nope", "toolchains"], ["toolchains", "--profile", "nope"]):
            before = counters(d.sock)
            p = run(args, env)
            after = counters(d.sock)
            text = p.stderr.decode()
            if "--json" in args:
                try:
                    text = json.loads(p.stdout)["error"]
                except (ValueError, KeyError, TypeError):
                    text = "not JSON: %r" % p.stdout
            check(p.returncode == 2 and 'unknown profile "nope"' in text and after[1] == before[1]
                  and ("--json" in args or one_line(p)), f"{' '.join(args)}: exit {p.returncode} {text!r}")
        # a profile the daemon has ("host", the machine's own root) is honoured both ways
        for args in (["--profile", "host", "exec", "--json", "--", "true"], ["exec", "--profile", "host", "--json", "--", "true"],
                     ["--profile", "host", "toolchains", "--json"], ["toolchains", "--json", "--profile", "host"]):
            p = run(args, env)
            try:
                prof = json.loads(p.stdout).get("profile") or {}
            except ValueError:
                prof = {}
            check(p.returncode == 0 and prof.get("name") == "host", f"{' '.join(args)}: exit {p.returncode} "
                  f"profile {prof!r} {p.stderr[-200:]!r}")
    finally:
        d.stop()


class FakeDaemon(threading.Thread):
    """Answers every request with the next canned response (a line of JSON)."""

    def __init__(self, sock, answers):
        super().__init__(daemon=True)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(sock)
        self.srv.listen(4)
        self.answers = list(answers)
        self.start()

    def run(self):
        while self.answers:
            c, _ = self.srv.accept()
            f = c.makefile("rb")
            line = f.readline()
            req = json.loads(line) if line else {}
            ans = dict(self.answers.pop(0), id=req.get("id"))
            c.sendall(json.dumps(ans).encode() + b"\n")
            f.close()
            c.close()


def case_plain_errors():
    """Plain exec says why a job did not run: the error text, not just its status."""
    t = tmpdir()
    sock = os.path.join(t, "fake.sock")
    step = {"name": "run", "status": "internal_error", "exit_code": None, "signal": None, "stdout": "",
            "stderr": "", "error": "move_mount /app: No such file or directory"}
    FakeDaemon(sock, [{"type": "exec", "status": "internal_error", "steps": [step]},
                      {"type": "exec", "status": "toolchain_missing", "steps": [],
                       "error": "g++-9 is not installed here; install: g++-9"},
                      {"type": "error", "error": {"code": "internal_error", "message": "out of memory"}},
                      {"type": "exec", "status": "runtime_error",
                       "steps": [{"name": "run", "status": "runtime_error", "exit_code": 127, "signal": None,
                                  "stdout": "", "stderr": "", "error": "cannot execute ./nope: No such file"}]}])
    env = dict(os.environ, SURGEBOX_SOCKET=sock)
    p = run(["exec", "--", "true"], env)
    check(p.returncode == 2 and "internal_error: move_mount /app: No such file or directory" in p.stderr.decode(),
          f"internal_error with its text: {p.returncode} {p.stderr!r}")
    p = run(["exec", "--toolchain", "g++-9", "--", "x"], env)
    check(p.returncode == 2 and "toolchain_missing: g++-9 is not installed here" in p.stderr.decode(),
          f"toolchain_missing with its text: {p.returncode} {p.stderr!r}")
    p = run(["exec", "--", "true"], env)
    check(p.returncode == 2 and "internal_error: out of memory" in p.stderr.decode(), f"error response: {p.stderr!r}")
    p = run(["exec", "--", "./nope"], env)
    check(p.returncode == 0 and "runtime_error: cannot execute ./nope: No such file (exit 127)" in p.stderr.decode(),
          f"a program that could not start: {p.returncode} {p.stderr!r}")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    try:
        CASES[sys.argv[2]]()
    finally:
        for d in _dirs:
            shutil.rmtree(d, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
