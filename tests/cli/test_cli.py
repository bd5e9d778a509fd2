#!/usr/bin/env python3
"""The surgebox command line as a user meets it (issue 13): one parser for
every command, stdin and files forwarded, diagnostics shown, exit codes.

usage: test_cli.py BIN_DIR CASE [SEED]   (inside the unshare wrapper: cases
that run programs start their own daemon with a private socket and cache;
SEED, a file in the build tree, carries toolchain detection from one case's
daemon to the next: detection takes minutes on a loaded machine)."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from private_daemon import PrivateDaemon  # noqa: E402

BIN = sys.argv[1]
SEED = sys.argv[3] if len(sys.argv) > 3 else None
SURGEBOX = os.path.join(BIN, "surgebox")
failures = []

# Written by hand: the commands README documents (the table may grow).
COMMANDS = ["exec", "trace", "trace-dataset", "status", "toolchains", "ping", "batch", "regen", "bins", "report", "dr-matrix", "eval", "verify", "profile"]


_tmpdirs = []


def tmpdir():
    """A private directory, removed when the case ends."""
    d = tempfile.mkdtemp(prefix="sbcli-")
    _tmpdirs.append(d)
    return d


atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _tmpdirs])


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(why):
    print("SKIPPED: " + why)
    sys.exit(77)


def run(args, env=None, input=None, stdin=subprocess.DEVNULL, timeout=300, cwd=None):
    kw = {"input": input} if input is not None else {"stdin": stdin}
    return subprocess.run([SURGEBOX] + args, env=env, capture_output=True, timeout=timeout, cwd=cwd, **kw)


class Daemon(PrivateDaemon):
    """A private surgeboxd (own socket and compile cache); its log on stderr.
    SEED carries toolchain detection from one case's daemon to the next."""

    def __init__(self):
        cache = os.path.join(tmpdir(), "cache")
        os.makedirs(cache)
        if SEED and os.path.exists(SEED):
            shutil.copyfile(SEED, os.path.join(cache, "toolchains.json"))
        super().__init__(BIN, cache)
        self.env = dict(os.environ, SURGEBOX_SOCKET=self.sock)
        if SEED and not os.path.exists(SEED) and os.path.exists(os.path.join(cache, "toolchains.json")):
            shutil.copyfile(os.path.join(cache, "toolchains.json"), SEED + ".tmp%d" % os.getpid())
            os.replace(SEED + ".tmp%d" % os.getpid(), SEED)


def need_gxx(d):
    p = run(["toolchains", "--json"], env=d.env)
    names = [t["name"] for t in json.loads(p.stdout)["toolchains"] if t.get("available")] if p.returncode == 0 else []
    if "g++" not in names:
        skip("no g++ toolchain on this machine")


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------- no daemon

def case_help_all():
    """--help: usage on stdout, nothing on stderr, exit 0, for every command."""
    top = subprocess.run([SURGEBOX, "--help"], capture_output=True, stdin=subprocess.DEVNULL)
    check(top.returncode == 0 and top.stdout.startswith(b"usage: surgebox ") and not top.stderr,
          f"surgebox --help: {top.returncode} {top.stderr[:200]!r}")
    listed = re.findall(rb"^  ([a-z][a-z-]*) ", top.stdout.split(b"commands", 1)[-1], re.M)
    listed = [c.decode() for c in listed]
    check(set(COMMANDS) <= set(listed), f"every command listed: {listed}")
    for c in listed:
        for h in ("--help", "-h"):
            p = run([c, h])
            check(p.returncode == 0 and p.stdout.startswith(b"usage: surgebox " + c.encode()) and not p.stderr,
                  f"surgebox {c} {h}: exit {p.returncode}, stdout {p.stdout[:60]!r}, stderr {p.stderr[:200]!r}")
    for extra in (["eval", "--execute", "--help"], ["verify", "--benchmark", "cruxeval", "--help"],
                  ["verify", "--benchmark=surge", "--help"], ["verify", "--benchmark", "traces", "--help"],
                  ["verify", "--benchmark", "tests", "--help"],
                  ["profile", "list", "--help"]):
        p = run(extra)
        check(p.returncode == 0 and p.stdout.startswith(b"usage: surgebox ") and not p.stderr,
              f"surgebox {' '.join(extra)}: {p.returncode} {p.stderr[:200]!r}")
    for tool in ("surgebox", "surgebox-run"):
        p = subprocess.run([os.path.join(BIN, tool), "--version"], capture_output=True, stdin=subprocess.DEVNULL)
        check(p.returncode == 0 and re.fullmatch(rb"%s \d+\.\d+\.\d+\n" % tool.encode(), p.stdout) is not None,
              f"{tool} --version: {p.returncode} {p.stdout!r} {p.stderr!r}")
    p = subprocess.run([os.path.join(BIN, "surgebox-run"), "--help"], capture_output=True, stdin=subprocess.DEVNULL)
    check(p.returncode == 0 and p.stdout.startswith(b"usage: surgebox-run") and not p.stderr, "surgebox-run --help")


def case_unknown_option():
    """A mistake: one line on stderr naming it and pointing at --help, exit 1."""
    forms = [[c, "--no-such-option"] for c in COMMANDS if c not in ("verify", "profile")]
    forms += [["verify", "--benchmark", "cruxeval", "--no-such-option"], ["profile", "list", "--no-such-option"],
              ["verify", "--benchmark", "traces", "--no-such-option"],
              ["--no-such-option", "ping"]]
    for args in forms:
        p = run(args)
        lines = p.stderr.decode(errors="replace").splitlines()
        name = "surgebox" if args[0].startswith("-") else "surgebox " + args[0]
        check(p.returncode == 1 and len(lines) == 1 and "unknown option '--no-such-option'" in lines[0]
              and f"see {name} --help" in lines[0] and not p.stdout,
              f"surgebox {' '.join(args)}: exit {p.returncode}, stderr {lines}")
    p = subprocess.run([os.path.join(BIN, "surgebox-run"), "--no-such-option"], capture_output=True,
                       stdin=subprocess.DEVNULL)
    check(p.returncode == 1 and len(p.stderr.splitlines()) == 1, f"surgebox-run: {p.returncode} {p.stderr!r}")
    for args, what in ((["regen", "--jobs=many", "--data", "x"], "bad value 'many' for --jobs"),
                       (["exec", "--time-limit"], "needs a value"),
                       (["frobnicate"], "unknown command 'frobnicate'")):
        p = run(args)
        lines = p.stderr.decode(errors="replace").splitlines()
        check(p.returncode == 1 and len(lines) == 1 and what in lines[0], f"surgebox {' '.join(args)}: {p.returncode} {lines}")


def case_failure_status():
    """A failure that is not a usage error is exit 2 in every command."""
    t = tmpdir()
    for args in (["profile", "show", "nosuch", "--dir=" + t], ["bins", "--data", os.path.join(t, "missing.json")], ["report", t],
                 ["eval", "--data", t, "--predictions", os.path.join(t, "missing.jsonl")]):
        p = run(args)
        check(p.returncode == 2 and p.stderr, f"surgebox {' '.join(args)}: exit {p.returncode} {p.stderr[:200]!r}")


def case_json_errors():
    """Under --json an error is JSON on stdout, with the exit status in it."""
    p = run(["exec", "--json", "--no-such-option", "--", "true"])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    check(p.returncode == 1 and isinstance(doc, dict) and doc.get("exit") == 1 and "--no-such-option" in doc.get("error", ""),
          f"usage error as JSON: {p.returncode} {p.stdout!r} {p.stderr!r}")
    t = tmpdir()
    env = dict(os.environ, SURGEBOX_SOCKET=os.path.join(t, "nobody.sock"))
    for args in (["--no-autostart", "status", "--json"], ["ping", "--json"],
                 ["exec", "--no-autostart", "--json", "--", "true"]):
        p = run(args, env=env)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
        check(p.returncode == 2 and isinstance(doc, dict) and doc.get("exit") == 2 and "nobody.sock" in doc.get("error", ""),
              f"{' '.join(args)} with no daemon: {p.returncode} {p.stdout!r} {p.stderr!r}")


def case_ping_no_daemon():
    """ping asks whether a daemon answers: it never starts one."""
    t = tmpdir()
    marker = os.path.join(t, "started")
    fake = write(t, "fake-surgeboxd", f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    os.chmod(fake, 0o755)
    # the default socket (in SURGEBOX_SOCKET_DIR): the only one a daemon may be started for
    env = dict(os.environ, SURGEBOXD=fake, SURGEBOX_SOCKET_DIR=t)
    env.pop("SURGEBOX_SOCKET", None)
    p = run(["ping"], env=env)
    check(p.returncode == 2 and not os.path.exists(marker), f"ping without a daemon: exit {p.returncode}, "
          f"daemon started: {os.path.exists(marker)}, {p.stderr!r}")
    check(sorted(os.listdir(t)) == ["fake-surgeboxd"], f"nothing left behind: {os.listdir(t)}")
    p = run(["status"], env=env)  # status may start one (the embedded default): the fake runs
    check(p.returncode == 2 and os.path.exists(marker), f"status does autostart: {p.returncode} {os.path.exists(marker)}")


def case_daemon_options():
    """surgeboxd parses like every other command: generated usage on stdout for
    --help/-h (exit 0, even with a broken --config), a mistake on the command
    line or in the config file is one line naming it and pointing at --help,
    exit 1. No daemon starts: every call below ends before listening."""
    d = os.path.join(BIN, "surgeboxd")

    def daemon(args):
        return subprocess.run([d] + args, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    t = tmpdir()
    bad_conf = write(t, "bad.conf", "jobs = 2\n# a comment\nfrobnicate = 1\n")
    ref = run(["ping", "--help"]).stdout  # the layout every command's usage has
    for args in (["--help"], ["-h"], ["--config", bad_conf, "--help"]):
        p = daemon(args)
        out = p.stdout.decode()
        check(p.returncode == 0 and out.startswith("usage: surgeboxd [options]\n") and not p.stderr
              and "\noptions:\n" in out and "\noptions:\n" in ref.decode()
              and re.search(r"^      --jobs N +sandboxes at once", out, re.M)
              and re.search(r"^  -h, --help +print this help and exit$", out, re.M),
              f"surgeboxd {' '.join(args)}: exit {p.returncode}, stdout {out[:200]!r}, stderr {p.stderr[:200]!r}")
    # written by hand: the same sentences as `surgebox regen --jobs=many` etc.
    conf_val = write(t, "val.conf", "jobs = many\n")
    hint = " (see surgeboxd --help)\n"
    for args, want in ((["--jobs", "x"], "surgeboxd: bad value 'x' for --jobs" + hint),
                       (["--jobs=x"], "surgeboxd: bad value 'x' for --jobs" + hint),
                       (["--no-such-option"], "surgeboxd: unknown option '--no-such-option'" + hint),
                       (["--jobs"], "surgeboxd: option '--jobs' needs a value (N)" + hint),
                       (["--quiet=yes"], "surgeboxd: option '--quiet' takes no value" + hint),
                       (["stray"], "surgeboxd: unexpected argument 'stray'" + hint),
                       (["--config", bad_conf], f"surgeboxd: {bad_conf}:3: unknown key 'frobnicate'" + hint),
                       (["--config=" + conf_val], f"surgeboxd: {conf_val}:1: bad value 'many' for jobs" + hint)):
        p = daemon(args)
        check(p.returncode == 1 and p.stderr.decode() == want and not p.stdout,
              f"surgeboxd {' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r} (want {want!r})")
    # every key the daemon has always taken (written by hand): all accepted, so the
    # mistake reported is the last line's; the command line's own are refused as keys
    keys = ["socket = /nonexistent/s.sock", "socket-group = 0", "socket-mode = 0660", "jobs = 2", "max-queue = 5",
            "allow-uid = 1000", "allow-gid = 1000", "log-json = true", "log-file = /nonexistent/log", "quiet = yes",
            "grace = 3", "idle-timeout = 0", "max-line = 4096", "cgroup = auto", "state-dir = /nonexistent/st",
            "toolchains = /nonexistent/tc", "cache-dir = /nonexistent/c", "cache-max-mib = 10", "no-cache = false",
            "profiles-dir = /nonexistent/p", "profile = host", "uid-range = 1879048192-1879052287"]
    for last in ("frobnicate = 1", "ready-fd = 3", "config = /x", "help", "version"):
        conf = write(t, "all.conf", "\n".join(keys + [last]) + "\n")
        key = last.split(" ")[0]
        want = f"surgeboxd: {conf}:{len(keys) + 1}: unknown key '{key}'" + hint
        p = daemon(["--config", conf])
        check(p.returncode == 1 and p.stderr.decode() == want, f"every key, then {last!r}: {p.returncode} {p.stderr!r}")
    p = run(["regen", "--jobs=many", "--data", "x"])
    check(p.returncode == 1 and p.stderr == b"surgebox regen: bad value 'many' for --jobs (see surgebox regen --help)\n",
          f"the other commands' sentence: {p.stderr!r}")
    p = daemon(["--vers"])  # a unique prefix, as getopt_long and the other commands take it
    check(p.returncode == 0 and re.fullmatch(rb"surgeboxd \d+\.\d+\.\d+\n", p.stdout) is not None,
          f"surgeboxd --vers: {p.returncode} {p.stdout!r} {p.stderr!r}")


def case_python_socket():
    """The Python client's runtime directory and default socket are the C
    client's (sbd_runtime_dir/sbd_default_socket), for several environments.
    The C answer is the path `surgebox ping` (which never starts a daemon)
    reports it could not connect to."""
    if os.geteuid() != 0:
        skip("needs root (other uids, directories owned by them)")
    if os.getpid() != 1:
        skip("not inside the unshare wrapper (a private /tmp is mounted here)")
    # The tree may itself live under /tmp (a CI clone is made there): reach it
    # through binds under a private /mnt before /tmp is covered.
    src_root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "sbcli-mnt", "/mnt"], check=True)
    for d, what in (("/mnt/src", src_root), ("/mnt/bin", os.path.dirname(SURGEBOX))):
        os.mkdir(d)
        subprocess.run(["mount", "--bind", what, d], check=True)
    surgebox, pysrc = "/mnt/bin/surgebox", "/mnt/src/clients/python"
    # a private /tmp: /tmp/surgebox-<uid> of this run only (other tests use the real ones)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777", "sbcli-tmp", "/tmp"], check=True)
    uid, other = 4242, 4243
    base = tempfile.mkdtemp(prefix="sbcli-xdg-", dir="/tmp")
    os.chmod(base, 0o755)

    def mk(name, owner, mode):
        path = os.path.join(base, name)
        os.mkdir(path)
        os.chown(path, owner, owner)
        os.chmod(path, mode)
        return path
    mine = mk("mine", uid, 0o700)
    os.symlink(mine, os.path.join(base, "link"))
    envs = [("SURGEBOX_SOCKET", {"SURGEBOX_SOCKET": "/x/y.sock", "XDG_RUNTIME_DIR": mine}),
            ("private XDG_RUNTIME_DIR", {"XDG_RUNTIME_DIR": mine}),
            ("empty SURGEBOX_SOCKET", {"SURGEBOX_SOCKET": "", "XDG_RUNTIME_DIR": mine}),
            ("trailing slash", {"XDG_RUNTIME_DIR": mine + "/"}),
            ("group-writable", {"XDG_RUNTIME_DIR": mk("gw", uid, 0o770)}),
            ("someone else's", {"XDG_RUNTIME_DIR": mk("theirs", other, 0o700)}),
            ("read-only", {"XDG_RUNTIME_DIR": mk("ro", uid, 0o500)}),
            ("a link", {"XDG_RUNTIME_DIR": os.path.join(base, "link")}),
            ("relative", {"XDG_RUNTIME_DIR": "mine"}),
            ("absent", {"XDG_RUNTIME_DIR": os.path.join(base, "nosuch")}),
            ("unset", {}),
            ("SURGEBOX_SOCKET_DIR", {"SURGEBOX_SOCKET_DIR": mine, "XDG_RUNTIME_DIR": mk("xdg", uid, 0o700)}),
            ("SURGEBOX_SOCKET_DIR not private", {"SURGEBOX_SOCKET_DIR": mk("gw2", uid, 0o770)}),
            ("SURGEBOX_SOCKET_DIR relative", {"SURGEBOX_SOCKET_DIR": "mine"})]
    python = "/usr/bin/python3"  # Debian's: other uids can run it (the client's own tests use it too)
    if not os.access(python, os.X_OK):
        skip("no /usr/bin/python3")
    script = ("import sys; sys.path.insert(0, %r); import surgebox\n"
              "print(surgebox.default_socket())\n" % pysrc)

    def answers(env, as_uid):
        def become():
            if as_uid:
                os.setgroups([])
                os.setgid(as_uid)
                os.setuid(as_uid)
        full = {"PATH": os.environ["PATH"], "HOME": "/nonexistent"}
        full.update(env)
        py = subprocess.run([python, "-c", script], env=full, cwd=base, capture_output=True,
                            preexec_fn=become, timeout=60)
        c = subprocess.run([surgebox, "ping"], env=full, cwd=base, capture_output=True, preexec_fn=become, timeout=60)
        m = re.search(rb"(?:cannot connect to|no daemon answers at) (.+?)(?:: | \()", c.stderr)
        return (py.stdout.decode().strip() if py.returncode == 0 else "python failed: %r" % py.stderr[-300:],
                m.group(1).decode() if m else "no path in %r" % c.stderr)
    for what, env in envs:
        py, c = answers(env, uid)
        check(py == c, f"uid {uid}, {what}: python {py!r}, C {c!r}")
    py, c = answers({"XDG_RUNTIME_DIR": mine}, 0)
    check(py == c == "/run/surgebox/surgebox.sock", f"root: python {py!r}, C {c!r}")
    # /tmp/surgebox-<uid> refused (not private): both still name the socket in it
    os.chmod("/tmp/surgebox-%d" % uid, 0o777)
    py, c = answers({}, uid)
    check(py == c == "/tmp/surgebox-%d/surgebox.sock" % uid, f"fallback refused: python {py!r}, C {c!r}")
    # the answers checked above are not all the same one
    check(answers({"XDG_RUNTIME_DIR": mine}, uid)[1] == mine + "/surgebox.sock", "a private XDG_RUNTIME_DIR is used")


# ---------------------------------------------------------------- with a daemon

def with_daemon(fn):
    d = Daemon()
    try:
        fn(d)
    finally:
        d.stop()


def case_stdin_pipe(d):
    """Piped stdin reaches the program; --stdin - too; /dev/null is no input."""
    t = tmpdir()
    write(t, "add.py", "a, b = map(int, input().split())\nprint(a + b)\n")
    p = run(["exec", "add.py", "--", "python3", "add.py"], env=d.env, input=b"3 4\n", cwd=t)
    check(p.returncode == 0 and p.stdout == b"7\n", f"echo 3 4 | surgebox exec add.py: {p.returncode} {p.stdout!r} {p.stderr!r}")
    p = run(["exec", "--stdin", "-", "add.py", "--", "python3", "add.py"], env=d.env, input=b"5 6\n", cwd=t)
    check(p.returncode == 0 and p.stdout == b"11\n", f"--stdin -: {p.returncode} {p.stdout!r} {p.stderr!r}")
    p = run(["exec", "--", "sh", "-c", "wc -c"], env=d.env, cwd=t)  # stdin /dev/null: not read, empty
    check(p.returncode == 0 and p.stdout.strip() == b"0", f"no input from /dev/null: {p.stdout!r} {p.stderr!r}")
    # a program stuck reading a pipe nobody writes: the wall limit says where it waited
    p = run(["exec", "--time-limit", "1", "--", "python3", "-c", "import os; r, w = os.pipe(); os.read(r, 1)"], env=d.env, cwd=t)
    check(b"surgebox: timeout" in p.stderr and b"at the wall limit the program was asleep (S)" in p.stderr and
          (os.geteuid() != 0 or b"pipe_read" in p.stderr), f"a blocked reader's timeout says where: {p.stderr!r}")


def case_opt_forms(d):
    """--opt=value and --opt value, options after positionals (before --)."""
    t = tmpdir()
    write(t, "add.py", "a, b = map(int, input().split())\nprint(a + b)\n")
    write(t, "in.txt", "20 22\n")
    p = run(["exec", "add.py", "--stdin=in.txt", "--time-limit", "30", "--", "python3", "add.py"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"42\n", f"option after a FILE, --opt=value: {p.returncode} {p.stdout!r} {p.stderr!r}")
    # after --, options belong to the program
    p = run(["exec", "--", "/bin/echo", "--json", "--stdin=x"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"--json --stdin=x\n", f"after --: {p.stdout!r} {p.stderr!r}")
    # a global option after the command's name
    p = run(["status", "--socket=" + d.sock, "--json"], env=dict(os.environ, SURGEBOX_SOCKET="/nonexistent/s"))
    check(p.returncode == 0 and json.loads(p.stdout).get("type") == "status", f"--socket= after status: {p.returncode} {p.stderr!r}")


def case_paths_dir(d):
    """Relative paths keep their directories; a directory goes whole; links out are refused."""
    need_gxx(d)
    t = tmpdir()
    write(t, "proj/main.cpp", '#include "inc/util.h"\n#include <cstdio>\nint main() { std::printf("%d\\n", twice(21)); }\n')
    write(t, "proj/inc/util.h", "inline int twice(int x) { return 2 * x; }\n")
    p = run(["exec", "--toolchain", "g++", "proj"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"42\n", f"--toolchain g++ proj/ (headers): {p.returncode} {p.stdout!r} {p.stderr!r}")
    write(t, "src/a.txt", "A\n")
    write(t, "src/sub/b.txt", "B\n")
    p = run(["exec", "src/a.txt", "./src/sub/b.txt", "--", "sh", "-c", "cat src/a.txt src/sub/b.txt; ls"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"A\nB\nsrc\n", f"relative paths kept: {p.returncode} {p.stdout!r} {p.stderr!r}")
    p = run(["exec", os.path.join(t, "src", "a.txt"), "--", "cat", "a.txt"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"A\n", f"an absolute path goes under its name: {p.stdout!r} {p.stderr!r}")
    os.symlink("inc/util.h", os.path.join(t, "proj", "alias.h"))  # inside: a copy
    p = run(["exec", "proj", "--", "cat", "proj/alias.h"], env=d.env, cwd=t)
    check(p.returncode == 0 and b"twice" in p.stdout, f"a link inside the directory: {p.stdout!r} {p.stderr!r}")
    os.symlink("/etc/passwd", os.path.join(t, "proj", "leak"))
    p = run(["exec", "proj", "--", "true"], env=d.env, cwd=t)
    check(p.returncode == 1 and b"leak" in p.stderr and b"refused" in p.stderr, f"a link leaving it refused: {p.returncode} {p.stderr!r}")


def case_toolchain_env_merge(d):
    """--env/--merge-output: applied in the raw form, refused (not ignored) with --toolchain."""
    t = tmpdir()
    write(t, "a.py", "print('x')\n")
    for opt in (["--env", "A=1"], ["--merge-output"]):
        p = run(["exec", "--toolchain", "python3"] + opt + ["a.py"], env=d.env, cwd=t)
        lines = p.stderr.decode().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and opt[0] in lines[0] and not p.stdout,
              f"{opt[0]} with --toolchain refused: {p.returncode} {lines} {p.stdout!r}")
    p = run(["exec", "--env", "A=hello", "--", "sh", "-c", "echo $A"], env=d.env)
    check(p.returncode == 0 and p.stdout == b"hello\n", f"--env in the raw form: {p.stdout!r} {p.stderr!r}")
    p = run(["exec", "--merge-output", "--", "sh", "-c", "echo a; echo b >&2; echo c"], env=d.env)
    check(p.returncode == 0 and p.stdout == b"a\nb\nc\n" and not p.stderr, f"--merge-output: {p.stdout!r} {p.stderr!r}")


def case_warnings(d):
    """Plain mode: a compile's diagnostics on stderr, then the program's output."""
    need_gxx(d)
    t = tmpdir()
    write(t, "w.cpp", '#warning "careful-there"\n#include <cstdio>\nint main() { std::puts("ran"); }\n')
    for attempt in ("", " (the compile cached)"):
        p = run(["exec", "--toolchain", "g++", "w.cpp"], env=d.env, cwd=t)
        check(p.returncode == 0 and p.stdout == b"ran\n" and b"careful-there" in p.stderr,
              f"warning shown{attempt}: {p.returncode} {p.stdout!r} {p.stderr!r}")
    write(t, "f.cpp", "#include <cstdio>\nint main() { int unused_var; std::printf(\"%d\\n\", N); }\n")
    p = run(["exec", "--toolchain", "g++", "--compile-arg", "-Wall", "--compile-arg=-DN=5", "f.cpp"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"5\n" and b"unused_var" in p.stderr,
          f"--compile-arg -Wall -DN=5: {p.returncode} {p.stdout!r} {p.stderr!r}")
    write(t, "e.cpp", "int main() { return undeclared_name; }\n")
    p = run(["exec", "--toolchain", "g++", "e.cpp"], env=d.env, cwd=t)
    check(p.returncode == 0 and b"undeclared_name" in p.stderr and b"compile_error" in p.stderr and not p.stdout,
          f"compile error shown: {p.returncode} {p.stdout!r} {p.stderr!r}")


def case_exit_code(d):
    """--exit-code program passes the program's status through; the default is 0/1/2."""
    p = run(["exec", "--", "sh", "-c", "exit 7"], env=d.env)
    check(p.returncode == 0, f"default: the job ran, exit 0 (got {p.returncode})")
    p = run(["exec", "--exit-code", "program", "--", "sh", "-c", "exit 7"], env=d.env)
    check(p.returncode == 7, f"--exit-code program: 7, got {p.returncode} {p.stderr!r}")
    p = run(["exec", "--exit-code=program", "--", "sh", "-c", "echo fine"], env=d.env)
    check(p.returncode == 0 and p.stdout == b"fine\n", f"--exit-code program, success: {p.returncode}")
    p = run(["exec", "--exit-code=program", "--", "sh", "-c", "kill -TERM $$"], env=d.env)
    check(p.returncode == 128 + 15, f"killed by SIGTERM: 143, got {p.returncode} {p.stderr!r}")
    p = run(["exec", "--exit-code=sometimes", "--", "true"], env=d.env)
    check(p.returncode == 1, f"a bad mode is a usage error: {p.returncode}")


def case_status_human(d):
    """status: a human form by default, the document with --json; toolchains shows defaults."""
    p = run(["status"], env=d.env)
    out = p.stdout.decode()
    check(p.returncode == 0 and not out.startswith("{") and re.search(r"^jobs: \d+ running, \d+ queued", out, re.M),
          f"status, human: {p.returncode} {out!r}")
    p = run(["status", "--json"], env=d.env)
    check(p.returncode == 0 and json.loads(p.stdout).get("type") == "status", "status --json")
    p = run(["toolchains"], env=d.env)
    out = p.stdout.decode()
    if re.search(r"^g\+\+ ", out, re.M):
        block = out.split("\ng++ ", 1)[1].split("\n")
        # gxx.json: std defaults to c++17, opt to O0 (written by hand here)
        check(any(l.strip().startswith("--option std=c++17") for l in block[1:4]) and
              any(l.strip().startswith("--option opt=O0") for l in block[1:4]), f"g++'s options and defaults: {block[:4]}")
    else:
        check("--option" in out or "available" in out, "toolchains listed")


def case_request_ids(d):
    """Every CLI request has its own id in the daemon's log."""
    for _ in range(2):
        run(["exec", "--", "true"], env=d.env)
    ids = re.findall(r"job id=(\S+)", d.logtext())
    check(len(ids) >= 2 and len(set(ids)) == len(ids), f"distinct ids: {ids}")


def case_trace(d):
    """surgebox trace: the trace as recorded and in each format, the untraced run compared,
    stdin as exec takes it, arguments after --, one-line refusals."""
    t = tmpdir()
    write(t, "main.py", "import sys\nfrom helper import double\n\n\nn = int(input())\n"
                        "print(double(n), sys.argv[1:])\n")
    write(t, "helper.py", "def double(x):\n    y = x * 2\n    return y\n")
    p = run(["trace", "main.py", "helper.py", "--", "a", "b"], env=d.env, input=b"21\n", cwd=t)
    recs = [json.loads(x) for x in p.stdout.decode().splitlines()] if p.returncode == 0 else []
    check(p.returncode == 0 and recs and recs[0]["t"] == "head" and recs[-1] == dict(recs[-1], t="end", status="complete"),
          f"surgebox trace main.py helper.py: {p.returncode} {p.stderr!r}")
    check(recs and recs[0]["argv"] == ["/app/main.py", "a", "b"], f"the entry and ARGS: {recs[:1]!r}")
    check(any(r.get("t") == "file" and r.get("path") == "/app/helper.py" for r in recs), "helper.py traced (a file record)")
    check(any(r.get("k") == "return" and r.get("fn") == "double" and r.get("val") == ["int", "42"] for r in recs),
          "stdin reached the program: double returned 42")
    check(b"trace complete" in p.stderr and b"equal to the untraced run" in p.stderr, f"the summary line: {p.stderr!r}")
    p = run(["trace", "--format", "lines", "--stdin", "-", "main.py", "helper.py", "--", "x"], env=d.env, input=b"1\n", cwd=t)
    check(p.returncode == 0 and p.stdout.decode().split() == ["1", "2", "5", "6"], f"--format lines: {p.stdout!r} {p.stderr!r}")
    p = run(["trace", "--format", "reval", "main.py", "helper.py"], env=d.env, input=b"1\n", cwd=t)
    rv = json.loads(p.stdout) if p.returncode == 0 else {}
    check(rv.get("path") == [0, 1, 4, 5] and rv.get("coverage") == [0, 1, 4, 5], f"--format reval: {p.stdout!r} {p.stderr!r}")
    out = os.path.join(t, "cwm.txt")
    p = run(["trace", "--format=cwm", "--out", out, "main.py", "helper.py"], env=d.env, input=b"1\n", cwd=t)
    cwm = open(out).read() if os.path.exists(out) else ""
    # CWM traces a function: the first one called (double)
    check(p.returncode == 0 and p.stdout == b"" and "<|line_sep|>" in cwm and "    y = x * 2" in cwm,
          f"--format cwm --out: {p.returncode} {cwm[:200]!r} {p.stderr!r}")
    p = run(["trace", "--no-check", "--events", "2", "main.py", "helper.py"], env=d.env, input=b"1\n", cwd=t)
    last = json.loads(p.stdout.decode().splitlines()[-1]) if p.returncode == 0 else {}
    check(last.get("status") == "truncated" and last.get("cap") == "events" and b"not compared" in p.stderr,
          f"--events 2 --no-check: {last!r} {p.stderr!r}")
    # --items and --nest (issue 36): the value caps beside --value-chars, defaults 32 and 4
    write(t, "vals.py", "def f():\n    return [1, 2, 3, [[[[5]]]]]\n\n\nf()\n")
    def f_val(*flags):
        q = run(["trace", "--no-check", *flags, "vals.py"], env=d.env, cwd=t)
        recs = [json.loads(x) for x in q.stdout.decode().splitlines()] if q.returncode == 0 else []
        vals = [r.get("val") for r in recs if r.get("k") == "return" and r.get("fn") == "f"]
        return (vals[0] if vals else None), q
    val, q = f_val()
    check(val == ["list", "#1[1, 2, 3, #2[#3[#4[#5[…]]]]]"], f"the default caps (items 32, nest 4): {val!r} {q.stderr!r}")
    val, q = f_val("--items", "2", "--nest", "6")
    check(val == ["list", "#1[1, 2, …(+2 items)]"], f"--items 2: {val!r} {q.stderr!r}")
    val, q = f_val("--nest", "6")
    check(val == ["list", "#1[1, 2, 3, #2[#3[#4[#5[5]]]]]"], f"--nest 6: the whole value: {val!r} {q.stderr!r}")
    for flag in ("--items", "--nest"):
        q = run(["trace", flag, "0", "vals.py"], env=d.env, cwd=t)
        check(q.returncode == 1 and flag.encode() in q.stderr, f"{flag} 0 refused: {q.returncode} {q.stderr!r}")
    # gcc is traced (by gdb) since issue 24's C part: rustc has no tracer
    p = run(["trace", "--toolchain", "rustc", "main.py"], env=d.env, cwd=t)
    check(p.returncode == 2 and b"rustc" in p.stderr and b"python3" in p.stderr and len(p.stderr.splitlines()) == 1,
          f"--toolchain rustc refused in one line: {p.returncode} {p.stderr!r}")
    p = run(["trace", "--format", "xml", "main.py"], env=d.env, cwd=t)
    check(p.returncode == 1 and b"--format" in p.stderr, f"--format xml: {p.returncode} {p.stderr!r}")
    p = run(["trace"], env=d.env, cwd=t)
    check(p.returncode == 1 and b"FILE" in p.stderr, f"no FILE: {p.returncode} {p.stderr!r}")
    write(t, "differs.py", "import os\nprint(os.environ.get('SURGEBOX_TRACE_FD') is None and os.path.exists('/proc/self/fd/3'))\n")
    p = run(["trace", "differs.py"], env=d.env, cwd=t)
    check(p.returncode == 2 and b"STDOUT DIFFERS" in p.stderr, f"a program that sees the tracer: exit 2, said: {p.stderr!r}")


def case_messages(d):
    """Messages for people (issue 26): a mistyped toolchain, option, option value,
    command-line option or command gets the nearest name and the command to run;
    batch's malformed lines name the line, the column and the field in words."""
    need_gxx(d)
    t = tmpdir()
    src = write(t, "main.py", "print(1)\n")
    hint = "run surgebox toolchains for the installed ones; protocol: a toolchains request"
    expect = [
        (["exec", "--toolchain", "pyhton3", src], 2,
         'surgebox exec: unknown_toolchain: no toolchain named "pyhton3": did you mean "python3"? (%s)' % hint),
        (["exec", "--toolchain", "cobol-85", src], 2,
         'surgebox exec: unknown_toolchain: no toolchain named "cobol-85" (%s)' % hint),
        (["exec", "--toolchain", "g++", "--option", "stdd=c++11", src], 2,
         'surgebox exec: bad_request: g++ has no option "stdd": did you mean "std"? (it has: std, opt)'),
        (["exec", "--toolchain", "g++", "--opt", "O4", src], 2,
         "surgebox exec: bad_request: g++: opt=O4 is not one of: O0, O1, O2, O3, Os; did you mean opt=O0?"),
        (["exec", "--toolchian", "g++", src], 1,
         "surgebox exec: unknown option '--toolchian': did you mean --toolchain? (see surgebox exec --help)"),
        (["tolchains"], 1, "surgebox: unknown command 'tolchains': did you mean toolchains? (see surgebox --help)"),
    ]
    for args, rc, want in expect:
        p = run(args, env=d.env)
        got = p.stderr.decode(errors="replace").strip()
        check(p.returncode == rc and got == want, f"surgebox {' '.join(args)}: exit {p.returncode}, {got!r}, want {want!r}")
    p = run(["exec", "--json", "--toolchain", "pyhton3", src], env=d.env)
    doc = json.loads(p.stdout or b"null")
    want = 'unknown_toolchain: no toolchain named "pyhton3": did you mean "python3"? (%s)' % hint
    check(p.returncode == 2 and doc == {"error": want, "exit": 2}, f"exec --json: {p.returncode} {doc}")
    lines = ['{"toolchain":"python3","files":[{"path":"main.py","content":"print(1)"}],"limits":{"time_s":nul}}',
             '{"toolchain":"python3","files":[{"path":"main.py",content:"x"}]}',
             '{"steps":[{"argv":["a" "b"]}]}',
             '{"steps":[{"argv":["true"],}]}',
             '{"steps":[{"argv":[]}]}',
             '{"id":']
    inp = os.path.join(t, "in.jsonl")
    with open(inp, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = run(["batch", inp, "--order", "input"], env=d.env)
    got = [json.loads(x)["error"]["message"] for x in p.stdout.decode().splitlines()]
    want = ['line 1: not JSON at column 96 (in the field "limits.time_s"): not a JSON value (text goes in double quotes; '
            'the words are true, false and null)',
            'line 2: not JSON at column 51 (after the field "files[0].path"): expected a field name in double quotes',
            'line 3: not JSON at column 24 (in the field "steps[0].argv[0]"): a list needs , between its items and ] at its end',
            'line 4: not JSON at column 28 (after the field "steps[0].argv"): a , before the closing } or ] '
            '(JSON allows no trailing comma)',
            "line 5: steps[0].argv must not be empty",
            'line 6: not JSON at column 8 (in the field "id"): the line ends inside a value']
    for i, (g, w) in enumerate(zip(got, want)):
        check(g == w, f"batch line {i + 1}: {g!r}, want {w!r}")
    check(len(got) == len(want), f"batch: {len(got)} answers")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    name = sys.argv[2]
    fn = CASES[name]
    if fn.__code__.co_argcount:
        with_daemon(fn)
    else:
        fn()
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
