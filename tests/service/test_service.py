#!/usr/bin/env python3
"""surgebox as an installed service (issue 13): the daemon's command line and
config file, systemd's protocols driven by hand (socket activation, sd_notify),
the socket's group and mode, the CLI's lingering private daemon, metrics, the
runtime and cache directory fallbacks, `cmake --install` and the man pages.

Run as: test_service.py BUILD_DIR CASE. ctest wraps every case in
  unshare --mount --propagation private --pid --fork --mount-proc
so sandboxes (and the mounts some cases make) stay inside a throw-away
namespace. Every daemon gets a private --cache-dir and socket.
"""
import grp
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
BUILD = None
BIN = None
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def tmpdir(prefix="sbsvc-"):
    d = tempfile.mkdtemp(prefix=prefix)
    os.chmod(d, 0o755)
    return d


def wait_for(pred, timeout=60, step=0.05):
    """Set-up waits (not timing assertions): poll until pred() or the deadline."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(120)
        self.s.connect(path)
        self.buf = b""

    def call(self, obj):
        self.s.sendall(json.dumps(obj).encode() + b"\n")
        return self.recv()

    def recv(self):
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("daemon closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        self.s.close()


def exec_req(i, argv):
    return {"id": i, "type": "exec", "steps": [{"argv": argv}]}


def pingable(sock):
    try:
        c = Client(sock)
        ok = c.call({"id": 0, "type": "ping"})["type"] == "ping"
        c.close()
        return ok
    except (OSError, EOFError, ValueError):
        return False


def daemon_args(d):
    tc = os.path.join(d, "tc")
    os.makedirs(tc, exist_ok=True)
    return ["--cache-dir", os.path.join(d, "cache"), "--toolchains", tc]


def start_daemon(d, *args, binary=None, **kw):
    sock = os.path.join(d, "s.sock")
    log = open(os.path.join(d, "log"), "w+")
    p = subprocess.Popen([binary or os.path.join(BIN, "surgeboxd"), "--socket", sock] + daemon_args(d) + list(args),
                         stderr=log, **kw)
    if not wait_for(lambda: pingable(sock) or p.poll() is not None):
        raise RuntimeError("daemon did not start")
    if p.poll() is not None:
        log.seek(0)
        raise RuntimeError("daemon exited: " + log.read())
    return p, sock


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        return p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        return None


def run(argv, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(argv, **kw)


def as_user(uid, gid, groups, fn):
    """fn() in a forked child with these ids; its return value (an int) is the exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            os._exit(fn())
        except BaseException as e:  # noqa: BLE001
            print("child:", repr(e), flush=True)
            os._exit(99)
    _, st = os.waitpid(pid, 0)
    return os.WEXITSTATUS(st) if os.WIFEXITED(st) else 100


def need_root():
    if os.geteuid() != 0:
        print("SKIPPED: needs root (other uids and groups)")
        sys.exit(SKIP)


# ------------------------------------------------------------------ cases


def case_cli():
    """surgeboxd --help/--version on stdout with exit 0; a mistake is one line and exit 1."""
    d = os.path.join(BIN, "surgeboxd")
    p = run([d, "--help"])
    check(p.returncode == 0 and b"--idle-timeout" in p.stdout and p.stderr == b"", f"--help: {p.returncode} {p.stderr!r}")
    p = run([d, "--version"])
    check(p.returncode == 0 and re.fullmatch(rb"surgeboxd \d+\.\d+\.\d+\n", p.stdout), f"--version: {p.stdout!r}")
    p = run([d, "--x"])
    check(p.returncode == 1 and p.stdout == b"" and p.stderr == b"surgeboxd: unknown option '--x' (see surgeboxd --help)\n",
          f"unknown option: {p.returncode} {p.stderr!r}")
    p = run([d, "--jobs=abc"])
    check(p.returncode == 1 and p.stderr == b"surgeboxd: bad value 'abc' for --jobs (see surgeboxd --help)\n",
          f"bad value: {p.stderr!r}")
    p = run([d, "--jobs"])
    check(p.returncode == 1 and p.stderr.count(b"\n") == 1 and b"'--jobs' needs a value" in p.stderr,
          f"missing value: {p.stderr!r}")
    p = run([d, "--socket-mode", "999"])
    check(p.returncode == 1 and p.stderr.count(b"\n") == 1, f"bad mode: {p.stderr!r}")


def case_config():
    """--config FILE: keys mirror the long flags, '#' comments; flags override; an unknown key names file:line."""
    d = tmpdir()
    conf = os.path.join(d, "surgeboxd.conf")
    with open(conf, "w") as f:
        f.write("# settings\n\njobs = 3   # three workers\nmax-queue=7\nquiet = true\n")
    p, sock = start_daemon(d, "--config", conf)
    st = Client(sock).call({"id": 1, "type": "status"})
    check(st["workers"] == 3 and st["max_queued"] == 7, f"from the file: workers {st['workers']} queue {st['max_queued']}")
    stop(p)
    p, sock = start_daemon(d, "--config", conf, "--jobs", "2")
    st = Client(sock).call({"id": 1, "type": "status"})
    check(st["workers"] == 2 and st["max_queued"] == 7, f"flag overrides the file: {st['workers']}")
    stop(p)
    with open(conf, "w") as f:
        f.write("jobs = 2\n# fine\nfrobnicate = 1\n")
    r = run([os.path.join(BIN, "surgeboxd"), "--config", conf, "--socket", os.path.join(d, "x.sock")])
    check(r.returncode == 1 and r.stderr == f"surgeboxd: {conf}:3: unknown key 'frobnicate' (see surgeboxd --help)\n".encode(),
          f"unknown key: {r.returncode} {r.stderr!r}")
    with open(conf, "w") as f:
        f.write("jobs = many\n")
    r = run([os.path.join(BIN, "surgeboxd"), "--config", conf, "--socket", os.path.join(d, "x.sock")])
    check(r.returncode == 1 and f"{conf}:1: bad value 'many' for jobs".encode() in r.stderr, f"bad value: {r.stderr!r}")
    r = run([os.path.join(BIN, "surgeboxd"), "--config", os.path.join(d, "absent.conf")])
    check(r.returncode == 1 and b"absent.conf" in r.stderr, f"missing --config file: {r.stderr!r}")


def exec_ok(sock, text):
    c = Client(sock)
    r = c.call(exec_req("e", ["/bin/echo", text]))
    c.close()
    return r.get("status") == "ok" and r["steps"][0]["stdout"] == text + "\n"


def case_activation():
    """Socket activation and sd_notify as systemd does them: the daemon adopts fd 3
    (LISTEN_PID is its own pid), says READY=1 on an abstract NOTIFY_SOCKET, serves,
    says STOPPING=1 on SIGTERM and leaves the socket it did not create."""
    d = tmpdir()
    path = os.path.join(d, "activated.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    ls.listen(16)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    name = f"surgebox-test-notify-{os.getpid()}"
    notify.bind("\0" + name)
    notify.settimeout(120)
    log = open(os.path.join(d, "log"), "w+")
    # --socket: where a daemon that ignored LISTEN_FDS would go (never the machine's default)
    argv = [os.path.join(BIN, "surgeboxd"), "--socket", os.path.join(d, "unused.sock")] + daemon_args(d)
    pid = os.fork()
    if pid == 0:
        os.dup2(log.fileno(), 2)
        if ls.fileno() != 3:
            os.dup2(ls.fileno(), 3)
        os.set_inheritable(3, True)  # dup2 onto itself would keep close-on-exec
        env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="surgebox",
                   NOTIFY_SOCKET="@" + name)
        os.execve(argv[0], argv, env)
    ls.close()
    msgs = []
    try:
        while not any(m.startswith("READY=1") for m in msgs):
            msgs += notify.recv(4096).decode().split("\n")
    except socket.timeout:
        pass
    check("READY=1" in msgs, f"READY=1 received: {msgs}")
    check(any(m.startswith("STATUS=") and path in m for m in msgs), f"STATUS= names the socket: {msgs}")
    check(exec_ok(path, "activated"), "a job through the adopted socket")
    c = Client(path)
    r = c.call(exec_req("env", ["/bin/sh", "-c", "echo ${LISTEN_FDS:-unset}"]))
    check(r["steps"][0]["stdout"] == "unset\n", f"LISTEN_* not passed on: {r['steps'][0]}")
    c.close()
    os.kill(pid, signal.SIGTERM)
    try:
        m = notify.recv(4096).decode()
    except socket.timeout:
        m = ""
    check("STOPPING=1" in m, f"STOPPING=1 on SIGTERM: {m!r}")
    _, st = os.waitpid(pid, 0)
    check(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, f"clean exit: {st}")
    check(os.path.exists(path), "the activated socket was not unlinked")
    # LISTEN_PID of another process: not ours, the daemon binds its own --socket
    own = os.path.join(d, "own.sock")
    p = subprocess.Popen(argv[:1] + ["--socket", own] + argv[3:], env=dict(os.environ, LISTEN_FDS="1", LISTEN_PID="1"),
                         stderr=log)
    check(wait_for(lambda: pingable(own) or p.poll() is not None) and p.poll() is None, "LISTEN_PID not ours: ignored")
    stop(p)
    log.seek(0)
    print(log.read())


def case_socket_group():
    """A root daemon with --socket-group G --socket-mode 0660: a user in G (a
    supplementary group) runs a job, one outside G cannot connect; with 0666,
    the daemon itself refuses the one outside G."""
    need_root()
    d = tmpdir()
    G = 4545
    p, sock = start_daemon(d, "--socket-group", str(G), "--socket-mode", "0660")
    st = os.stat(sock)
    check(st.st_gid == G and (st.st_mode & 0o777) == 0o660, f"socket {st.st_gid} {oct(st.st_mode & 0o777)}")
    check(as_user(4242, 4343, [G], lambda: 0 if exec_ok(sock, "member") else 3) == 0, "member of G runs a job")

    def outsider():
        try:
            Client(sock)
            return 3
        except PermissionError:
            return 0
    check(as_user(4242, 4343, [], outsider) == 0, "a user outside G cannot connect")

    def outsider_cli():  # told it is not allowed and what to ask for, not just EACCES
        p = subprocess.run([os.path.join(BIN, "surgebox"), "--socket", sock, "ping"], capture_output=True, text=True)
        want = ("surgebox ping: cannot connect to %s: you are not allowed to use this daemon (its socket's mode and "
                "group keep you out): ask its administrator to add you to the socket's group (ls -l %s names it)\n"
                % (sock, sock))
        if p.returncode != 2 or p.stderr != want:
            print("surgebox ping: exit %d, %r, want %r" % (p.returncode, p.stderr, want), flush=True)
            return 3
        return 0
    check(as_user(4242, 4343, [], outsider_cli) == 0, "surgebox outside G: not allowed, ask for the socket's group")
    stop(p)
    p, sock = start_daemon(d, "--socket-group", str(G), "--socket-mode", "0666")

    def refused():
        r = Client(sock).recv()  # refused at once, before any request
        want = ("uid 4242 is not allowed to use this daemon: ask its administrator to add you to group %s (then log in "
                "again), or to allow your uid (surgeboxd --allow-uid 4242, or allow-uid = 4242 in surgeboxd.conf)" % group)
        if r.get("error", {}).get("message") != want:
            print("message %r, want %r" % (r.get("error", {}).get("message"), want), flush=True)
            return 4
        return 0 if r.get("error", {}).get("code") == "unauthorized" else 3
    try:
        group = grp.getgrgid(G).gr_name
    except KeyError:
        group = str(G)
    check(as_user(4242, 4343, [], refused) == 0, "the daemon refuses a peer outside G, naming G and --allow-uid")
    check(as_user(4242, 4343, [G], lambda: 0 if exec_ok(sock, "member") else 3) == 0, "G is let in by the daemon")
    stop(p)


def case_allow_uid():
    """A root daemon with --allow-uid U: U can connect and run a job (the socket
    is no longer 0660 root:root), others reach the daemon and are refused."""
    need_root()
    d = tmpdir()
    p, sock = start_daemon(d, "--allow-uid", "4242")
    check(as_user(4242, 4343, [], lambda: 0 if exec_ok(sock, "allowed") else 3) == 0, "--allow-uid 4242 runs a job")

    def refused():
        r = Client(sock).recv()  # refused at once, before any request
        return 0 if r.get("error", {}).get("code") == "unauthorized" else 3
    check(as_user(4243, 4343, [], refused) == 0, "another uid is refused by the daemon")
    stop(p)


def surgebox_env(d, idle, extra=()):
    """A SURGEBOXD wrapper with a private cache and toolchain directory; the
    default socket in d (SURGEBOX_SOCKET_DIR): only it may start a private daemon."""
    w = os.path.join(d, "surgeboxd-wrapper")
    with open(w, "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\" %s\n" % (os.path.join(BIN, "surgeboxd"), " ".join(daemon_args(d) + list(extra))))
    os.chmod(w, 0o755)
    env = dict(os.environ, SURGEBOXD=w, SURGEBOX_IDLE_TIMEOUT=str(idle), SURGEBOX_SOCKET_DIR=d)
    env.pop("SURGEBOX_SOCKET", None)
    return env


def daemons():
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    if b"surgeboxd\0" in f.read().split(b"\0", 1)[0] + b"\0":
                        out.append(int(p))
            except OSError:
                pass
    return out


def case_linger():
    """The CLI's private daemon lingers: a second call reuses it (same pid), its
    start-up warning goes to its log (not the terminal), pipes are not held, and after the idle
    timeout it exits cleanly and leaves no socket and no process behind."""
    d = tmpdir()
    env = surgebox_env(d, 3, ["--cgroup", "none"])  # --cgroup none: a start-up warning
    cli = [os.path.join(BIN, "surgebox")]
    pids, errs = [], []
    for i in range(3):
        r = run(cli + ["exec", "--", "/bin/echo", f"call{i}"], env=env)  # pipes: would hang if the daemon kept them
        check(r.returncode == 0 and r.stdout == f"call{i}\n".encode(), f"call {i}: {r.returncode} {r.stdout!r} {r.stderr!r}")
        errs.append(r.stderr)
        st = run(cli + ["status", "--json"], env=env)
        pids.append(json.loads(st.stdout)["pid"] if st.returncode == 0 else None)
    check(len(set(pids)) == 1 and pids[0], f"one daemon for every call: {pids}")
    # issue 36, point 18: the daemon's messages go to its log, never the
    # user's terminal (it starts again after each idle timeout); doctor shows them
    check(errs == [b"", b"", b""], f"no call prints the daemon's messages on stderr: {errs!r}")
    socks = [f for f in os.listdir(d) if ".private-" in f and not f.endswith((".lock", ".log"))]
    check(len(socks) == 1, f"its socket next to the one asked for: {os.listdir(d)}")
    gone = wait_for(lambda: not daemons(), timeout=90, step=0.2)
    check(gone, f"exited after the idle timeout: {daemons()}")
    check(not [f for f in os.listdir(d) if ".private-" in f and not f.endswith((".lock", ".log"))],
          f"socket removed: {os.listdir(d)}")
    with open(os.path.join(d, socks[0] + ".log") if socks else "/dev/null") as f:
        log = f.read()
    check("error" not in log and "handles left open" not in log, f"clean exit in its log: {log!r}")
    check("rlimits" in log or "cgroup" in log, f"its start-up warning (--cgroup none) in its log: {log!r}")
    r = run(cli + ["exec", "--", "/bin/echo", "again"], env=env)
    check(r.returncode == 0 and r.stdout == b"again\n", "a call after it left starts a new one")
    env0 = dict(env, SURGEBOX_IDLE_TIMEOUT="0")
    wait_for(lambda: not daemons(), timeout=90, step=0.2)
    r = run(cli + ["exec", "--", "/bin/echo", "once"], env=env0)
    check(r.returncode == 0 and r.stdout == b"once\n" and not daemons(), "SURGEBOX_IDLE_TIMEOUT=0: it stops with its client")


def case_linger_activity():
    """Short calls keep the lingering daemon: with a 2 s idle timeout, calls every
    0.3 s for 5 s all reach one daemon (a client that came and went between two
    of its idle checks is activity too)."""
    d = tmpdir()
    env = surgebox_env(d, 2)
    cli = [os.path.join(BIN, "surgebox")]
    pids = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5:
        r = run(cli + ["status", "--json"], env=env)
        pids.append(json.loads(r.stdout)["pid"] if r.returncode == 0 else None)
        time.sleep(0.3)  # spacing of the calls, not an assertion
    check(len(pids) > 3 and len(set(pids)) == 1 and pids[0], f"one daemon throughout: {pids}")


def case_linger_race():
    """Clients arriving while the lingering daemon times out lose no job: with a
    0.2 s idle timeout, calls spaced around it either reach the old daemon or
    start a new one."""
    d = tmpdir()
    env = surgebox_env(d, 0.2)
    cli = [os.path.join(BIN, "surgebox")]
    bad = []
    for i in range(40):
        r = run(cli + ["exec", "--", "/bin/echo", str(i)], env=env)
        if r.returncode != 0 or r.stdout != f"{i}\n".encode():
            bad.append((i, r.returncode, r.stdout, r.stderr))
        time.sleep((i % 8) * 0.05)  # spacing around the timeout, not an assertion
    check(not bad, f"every call answered: {bad[:3]}")


def case_runtime_dir():
    """An ordinary user whose inherited XDG_RUNTIME_DIR is not writable: the CLI
    and its autostarted daemon fall back to /tmp/surgebox-UID (one rule for both)."""
    need_root()
    d = tmpdir()
    home = os.path.join(d, "home")
    os.makedirs(home)
    os.chown(home, 4242, 4343)
    ro = os.path.join(d, "not-mine")
    os.makedirs(ro)
    env = surgebox_env(d, 0)
    env.update(XDG_RUNTIME_DIR=ro, HOME=home)
    env.pop("SURGEBOX_SOCKET", None)
    env.pop("SURGEBOX_SOCKET_DIR", None)  # the rule under test decides
    os.chown(os.path.join(d, "tc"), 4242, 4343)
    os.makedirs(os.path.join(d, "cache"), exist_ok=True)
    os.chown(os.path.join(d, "cache"), 4242, 4343)

    def call():
        r = run([os.path.join(BIN, "surgebox"), "exec", "--", "/bin/echo", "fallback"], env=env)
        print(r.stderr.decode(), flush=True)
        return 0 if r.returncode == 0 and r.stdout == b"fallback\n" else 3
    check(as_user(4242, 4343, [], call) == 0, "exec with an unwritable XDG_RUNTIME_DIR")
    check(os.path.isdir("/tmp/surgebox-4242") and os.stat("/tmp/surgebox-4242").st_uid == 4242, "fallback dir used")


def case_cache_fallback():
    """Root whose /var/cache cannot be written (read-only here, in this test's own
    mount namespace): the detection cache goes to $XDG_CACHE_HOME/surgebox."""
    need_root()
    d = tmpdir()
    subprocess.run(["mount", "--bind", "/var/cache", "/var/cache"], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", "/var/cache"], check=True)
    xdg = os.path.join(d, "xdg-cache")
    tc = os.path.join(d, "tc")
    os.makedirs(tc)
    sock = os.path.join(d, "s.sock")
    log = open(os.path.join(d, "log"), "w+")
    p = subprocess.Popen([os.path.join(BIN, "surgeboxd"), "--socket", sock, "--toolchains", tc, "--no-cache"],
                         env=dict(os.environ, XDG_CACHE_HOME=xdg), stderr=log)
    wait_for(lambda: pingable(sock) or p.poll() is not None)
    stop(p)
    check(os.path.isfile(os.path.join(xdg, "surgebox", "toolchains.json")), f"detection cached under {xdg}")


def case_detect_notice():
    """A detection that has to run something and takes more than a second prints
    one line saying what it does; with a warm cache it runs nothing and prints nothing."""
    d = tmpdir()
    tc = os.path.join(d, "tc")
    os.makedirs(tc)
    tool, twin = os.path.join(d, "slowmake"), os.path.join(d, "slowmake-twin")
    for t in (tool, twin):
        with open(t, "w") as f:
            f.write("#!/bin/sh\nsleep 1.5\necho 'GNU Make 4.3'\n")
        os.chmod(t, 0o755)
    with open(os.path.join(SRC, "toolchains", "defs", "make.json")) as f:
        deff = json.load(f)
    deff["name"] = "slowmake"
    # the twin declares the same name: the first wins, and the twin's version
    # is cached too (a warm start must not run it again)
    deff["binaries"] = [{"path": tool, "name": "slowmake"}, {"path": twin, "name": "slowmake"}]
    with open(os.path.join(tc, "slowmake.json"), "w") as f:
        json.dump(deff, f)
    for n, want in ((1, 1), (2, 0)):
        sock = os.path.join(d, f"s{n}.sock")
        log = open(os.path.join(d, f"log{n}"), "w+")
        p = subprocess.Popen([os.path.join(BIN, "surgeboxd"), "--socket", sock, "--toolchains", tc, "--cache-dir",
                              os.path.join(d, "cache"), "--quiet"], stderr=log)
        wait_for(lambda: pingable(sock) or p.poll() is not None, timeout=120)
        st = Client(sock).call({"id": 1, "type": "toolchains"})
        stop(p)
        log.seek(0)
        lines = [ln for ln in log.read().split("\n") if "detecting" in ln]
        check(len(lines) == want, f"start {n}: {want} notice line(s), got {lines}")
        check([t["name"] for t in st["toolchains"] if t.get("available")] == ["slowmake"], f"detected: {st}")


def case_metrics():
    """surgebox metrics after a few jobs: OpenMetrics text that a parser written
    from the spec accepts, with the counts of what ran."""
    d = tmpdir()
    p, sock = start_daemon(d)
    c = Client(sock)
    for i in range(3):
        c.call(exec_req(f"ok{i}", ["/bin/true"]))
    c.call(exec_req("fail", ["/bin/sh", "-c", "exit 3"]))
    c.close()
    r = run([os.path.join(BIN, "surgebox"), "--socket", sock, "metrics"])
    check(r.returncode == 0, f"surgebox metrics: {r.returncode} {r.stderr!r}")
    fams = parse_openmetrics(r.stdout.decode())
    jobs = fams.get("surgebox_jobs", {})
    check(jobs.get("type") == "counter", f"surgebox_jobs is a counter: {jobs.get('type')}")
    samples = {s[1].get("status"): s[2] for s in jobs.get("samples", [])}
    check(samples.get("ok") == 3 and samples.get("runtime_error") == 1, f"jobs by status: {samples}")
    for h in ("surgebox_step_cpu_seconds", "surgebox_step_wall_seconds"):
        f = fams.get(h, {})
        count = [s[2] for s in f.get("samples", []) if s[0] == h + "_count"]
        check(f.get("type") == "histogram" and count == [4], f"{h}: 4 steps observed: {f.get('type')} {count}")
    loop = fams.get("surgebox_loop_busy_seconds", {})
    turns = [s[2] for s in loop.get("samples", []) if s[0] == "surgebox_loop_busy_seconds_count"]
    check(loop.get("type") == "histogram" and turns and turns[0] >= 5,
          f"surgebox_loop_busy_seconds: every turn of the loop observed: {loop.get('type')} {turns}")
    qt = fams.get("surgebox_queue_time_seconds", {})
    qs = {(s[0], s[1].get("quantile")): s[2] for s in qt.get("samples", [])}
    check(qt.get("type") == "summary" and qs.get(("surgebox_queue_time_seconds_count", None)) == 4
          and 0 <= qs.get(("surgebox_queue_time_seconds", "0.5"), -1) <= qs.get(("surgebox_queue_time_seconds", "0.99"), -1),
          f"surgebox_queue_time_seconds: a summary of the 4 jobs' queue times, p50 <= p99: {qt}")
    for g in ("surgebox_queue_depth", "surgebox_running"):
        check(fams.get(g, {}).get("type") == "gauge" and fams[g]["samples"][0][2] == 0, f"{g} gauge 0")
    for k in ("surgebox_cache_hits", "surgebox_cache_misses"):
        check(fams.get(k, {}).get("type") == "counter", f"{k} present")
    # --help and a stray argument
    r = run([os.path.join(BIN, "surgebox"), "--socket", sock, "metrics", "--help"])
    check(r.returncode == 0 and r.stdout.startswith(b"usage: surgebox metrics"), "metrics --help")
    r = run([os.path.join(BIN, "surgebox"), "--socket", sock, "metrics", "--bogus"])
    check(r.returncode == 1 and r.stderr.count(b"\n") == 1, f"metrics --bogus: {r.stderr!r}")
    stop(p)
    r = run([os.path.join(BIN, "surgebox"), "--socket", sock, "metrics"], env=dict(os.environ, SURGEBOX_IDLE_TIMEOUT="300"))
    check(r.returncode == 2 and not daemons(), "no daemon: exit 2, none started")


# A parser of the OpenMetrics text format, written from its specification:
# families announced by TYPE (UNIT, HELP optional), samples "name{labels} value",
# histogram buckets cumulative with +Inf equal to _count, "# EOF" last.
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')
_SUFFIX = {"counter": ("_total", "_created"), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count", "_created"),
           "summary": ("", "_sum", "_count", "_created")}  # "" with a quantile label


def parse_openmetrics(text):
    check(text.endswith("# EOF\n"), "ends with '# EOF' and a newline")
    lines = text.split("\n")[:-1]
    check(lines and lines[-1] == "# EOF", "# EOF is the last line")
    fams, cur = {}, None
    for ln in lines[:-1]:
        if ln.startswith("#"):
            parts = ln.split(" ", 3)
            check(len(parts) >= 4 and parts[1] in ("TYPE", "HELP", "UNIT"), f"metadata line: {ln!r}")
            kind, name, val = parts[1], parts[2], parts[3] if len(parts) > 3 else ""
            if kind == "TYPE":
                check(name not in fams, f"family {name} announced once")
                check(val in _SUFFIX, f"known type: {ln!r}")
                fams[name] = {"type": val, "samples": []}
                cur = name
            else:
                check(name == cur, f"{kind} belongs to the current family: {ln!r}")
                if kind == "UNIT":
                    check(name.endswith("_" + val), f"a unit is the name's suffix: {ln!r}")
            continue
        m = _SAMPLE.match(ln)
        check(m is not None, f"sample line: {ln!r}")
        if not m:
            continue
        name, labels, value = m.group(1), {}, m.group(4)
        if m.group(3):
            for lm in _LABEL.finditer(m.group(3)):
                labels[lm.group(1)] = lm.group(2)
        check(cur is not None and any(name == cur + s for s in _SUFFIX[fams[cur]["type"]]),
              f"sample {name} belongs to family {cur}")
        v = float(value)
        check(v >= 0 or fams[cur]["type"] == "gauge", f"{name} not negative")
        fams[cur]["samples"].append((name, labels, v))
    for name, f in fams.items():
        if f["type"] != "histogram":
            continue
        b = [(s[1]["le"], s[2]) for s in f["samples"] if s[0] == name + "_bucket"]
        check(b and b[-1][0] == "+Inf", f"{name}: +Inf bucket last")
        check(all(b[i][1] <= b[i + 1][1] for i in range(len(b) - 1)), f"{name}: cumulative buckets")
        check(all(float(b[i][0]) < float(b[i + 1][0]) for i in range(len(b) - 1)), f"{name}: increasing bounds")
        count = [s[2] for s in f["samples"] if s[0] == name + "_count"]
        check(count and b and b[-1][1] == count[0], f"{name}: +Inf bucket = _count")
    return fams


def case_log():
    """Daemon log lines: sub-second UTC timestamps and numbers rounded to the millisecond."""
    d = tmpdir()
    p, sock = start_daemon(d, "--log-json")
    c = Client(sock)
    c.call(exec_req("j1", ["/bin/true"]))
    c.close()
    stop(p)
    with open(os.path.join(d, "log")) as f:
        lines = [json.loads(ln) for ln in f if ln.startswith("{")]
    check(lines and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ln["time"]) for ln in lines),
          f"timestamps: {[ln.get('time') for ln in lines]}")
    with open(os.path.join(d, "log")) as f:
        raw = f.read()
    job = [ln for ln in raw.split("\n") if '"event":"job"' in ln]
    check(job and re.search(r'"wall_s":\d+\.\d{3}[,}]', job[0]) and re.search(r'"cpu_s":\d+\.\d{3}[,}]', job[0]),
          f"clean numbers: {job}")


def case_install():
    """cmake --install into a temporary prefix: the binaries find their data there."""
    P = tmpdir("sbsvc-prefix-")
    r = run(["cmake", "--install", BUILD, "--prefix", P], timeout=300)
    check(r.returncode == 0, f"cmake --install: {r.stdout[-2000:]!r} {r.stderr!r}")
    for f in ("bin/surgebox", "bin/surgeboxd", "bin/surgebox-run", "share/man/man1/surgebox.1",
              "share/man/man1/surgebox-run.1", "share/man/man8/surgeboxd.8", "lib/systemd/system/surgeboxd.socket",
              "lib/systemd/system/surgeboxd.service", "share/surgebox/toolchains/gcc.json",
              "share/surgebox/profiles/surge-2025.json", "lib/sysusers.d/surgebox.conf",
              "share/surgebox/tracers/python/sbtrace.py", "share/surgebox/tracers/python/sbtrace_events.py",
              "share/surgebox/python/surgebox/trace_convert.py", "share/surgebox/warm/python/sbzygote.py",
              "share/surgebox/warm/python/sbzygote_body.py", "share/surgebox/harness/fn_harness.py", "lib/surgebox/libsbwarm.so",
              "lib/surgebox/surgebox-spawner"):
        check(os.path.exists(os.path.join(P, f)), f"installed {f}")
    with open(os.path.join(P, "lib/systemd/system/surgeboxd.service")) as f:
        unit = f.read()
    check(f"ExecStart={P}/bin/surgeboxd" in unit and "Type=notify" in unit and "Delegate=yes" in unit,
          "the service names the installed daemon")
    r = run([os.path.join(P, "bin/surgeboxd"), "--version"])
    check(r.returncode == 0 and r.stdout.startswith(b"surgeboxd "), f"P/bin/surgeboxd --version: {r.stdout!r}")
    h = run([os.path.join(P, "bin/surgebox"), "--help"])
    if b"--version" in h.stdout:  # the CLI's own --version (issue 13's parser work)
        r = run([os.path.join(P, "bin/surgebox"), "--version"])
        check(r.returncode == 0 and b"0." in r.stdout, f"P/bin/surgebox --version: {r.stdout!r}")
    # the toolchain files come from P/share: one removed there is missing from the listing
    os.unlink(os.path.join(P, "share/surgebox/toolchains/gcc.json"))
    d = tmpdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SURGEBOX")}
    w = os.path.join(d, "wrapper")  # the installed daemon with a private cache
    with open(w, "w") as f:
        f.write(f"#!/bin/sh\nexec {P}/bin/surgeboxd \"$@\" --cache-dir {d}/cache\n")
    os.chmod(w, 0o755)
    sockdir = os.path.join(d, "sock")  # the default socket lives there, nothing listens: a private daemon starts
    os.mkdir(sockdir, 0o700)
    env.update(SURGEBOXD=w, SURGEBOX_IDLE_TIMEOUT="0", SURGEBOX_SOCKET_DIR=sockdir)
    r = run([os.path.join(P, "bin/surgebox"), "toolchains", "--json"], env=env, timeout=600)
    names = [t["name"] for t in json.loads(r.stdout)["toolchains"]] if r.returncode == 0 else []
    print("toolchains from P:", names)
    check(r.returncode == 0 and "python3" in names and "gcc" not in names and "g++" in names,
          f"P/bin/surgebox toolchains reads P/share (gcc.json removed there): {names} {r.stderr[-500:]!r}")
    # a trivial exec against P/bin/surgeboxd
    p, sock = start_daemon(d, binary=os.path.join(P, "bin/surgeboxd"), env=env)
    r = run([os.path.join(P, "bin/surgebox"), "--socket", sock, "exec", "--", "/bin/echo", "installed"], env=env)
    check(r.returncode == 0 and r.stdout == b"installed\n", f"exec against P/bin/surgeboxd: {r.stdout!r} {r.stderr!r}")
    # its spawner (every sandbox init's original) is the installed static program, not the build's
    kids = [int(k) for t in os.listdir(f"/proc/{p.pid}/task")
            for k in open(f"/proc/{p.pid}/task/{t}/children").read().split()]
    exes = {os.readlink(f"/proc/{k}/exe") for k in kids if open(f"/proc/{k}/comm").read().strip() == "surgebox-spawn"}
    check(exes == {os.path.realpath(os.path.join(P, "lib/surgebox/surgebox-spawner"))}, f"the installed daemon's spawner: {exes}")
    # a warm start finds the zygote and libsbwarm.so under P (issue 25)
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write("print('warm')\n")
    r = run([os.path.join(P, "bin/surgebox"), "--socket", sock, "exec", "--warm", "--json", "main.py", "--",
             "/usr/bin/python3", "main.py"], env=env, cwd=d)
    start = json.loads(r.stdout)["steps"][0]["enforced"].get("start", "") if r.returncode == 0 else (r.stdout + r.stderr)
    # (P under /tmp too: the zygote's own /tmp is empty, its files bound beneath it by the spawner)
    want = "warm ("
    check(isinstance(start, str) and start.startswith(want), f"a warm exec against P/bin/surgeboxd: {start!r}")
    stop(p)
    shutil.rmtree(P, ignore_errors=True)


def long_options(text):
    return sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)))


def case_man():
    """Each man page renders with `man -l` without groff warnings, and names every
    long option its binary's --help lists (so they cannot drift apart)."""
    if not shutil.which("man"):
        print("SKIPPED: man is not installed")
        sys.exit(SKIP)
    pages = {"surgebox.1": "surgebox", "surgebox-run.1": "surgebox-run", "surgeboxd.8": "surgeboxd"}
    for page, binary in pages.items():
        path = os.path.join(SRC, "man", page)
        r = run(["man", "--warnings=all", "-l", path], env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
        check(r.returncode == 0 and len(r.stdout) > 1000, f"{page} renders: {r.returncode}")
        check(r.stderr == b"", f"{page}: no groff warnings: {r.stderr[:500]!r}")
        text = r.stdout.decode(errors="replace")
        text = re.sub(r".\x08", "", text)  # overstrike bold/underline
        text = text.replace("\u2010", "-").replace("\u2212", "-")
        h = run([os.path.join(BIN, binary), "--help"])
        helptext = (h.stdout + h.stderr).decode()
        opts = long_options(helptext)
        check(len(opts) > 5, f"{binary} --help lists options: {opts}")
        missing = [o for o in opts if not re.search(re.escape(o) + r"(?![\w-])", text)]
        check(not missing, f"{page} lacks {missing}")
        for section in ("EXIT STATUS", "ENVIRONMENT", "FILES"):
            check(section in text, f"{page} has {section}")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    BUILD = os.path.abspath(sys.argv[1])
    BIN = os.path.join(BUILD, "bin")
    CASES[sys.argv[2]]()
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("ok")
