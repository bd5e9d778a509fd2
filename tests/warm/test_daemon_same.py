"""Warm against cold through the daemon (issue 25): every program of
tests/trace/programs and exit_programs/, this directory's fingerprint, and, with
--cruxeval N, the first N CRUXEval programs with their reference outputs
(SKIP 77 without the data), each run by a private surgeboxd cold and with
"warm": true, the same PYTHONHASHSEED on both: status, exit code, signal,
stdout and stderr equal byte for byte, (the fingerprint less its session
line, a difference PROTOCOL.md lists in "Warm starts"). Every warm run
must say enforced.start "warm (...)": a warm request that ran cold fails.
The toolchain form (no PYTHONHASHSEED: the zygote's own seed) is checked
against a cold run given the seed the result reports.

Under --cgroup none and --user (the unprivileged daemon, uid 4242, and
its client), the same comparison in those modes; --user has no toolchain
form (that daemon is given no toolchains: said, not counted).

  test_daemon_same.py BIN_DIR CACHE_DIR [--cruxeval N] [--cgroup none] [--user]"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402
from test_programs import FINGERPRINT  # noqa: E402

PROGS = os.path.join(daemonrun.ROOT, "tests", "trace", "programs")
EXIT_PROGS = os.path.join(daemonrun.ROOT, "tests", "warm", "exit_programs")  # the short exit's cases (test_programs.py)
DATA = os.environ.get("CRUXEVAL_DATA", os.path.join(daemonrun.ROOT, "..", "shared", "cruxeval", "cruxeval.jsonl"))
SETS = 'print(hash("surgebox"), list({"a", "b", "c", "d", "e", "f"}))\n'


def cases():
    for name, d in [(n, os.path.join(PROGS, n)) for n in sorted(os.listdir(PROGS))] + [
            ("exit/" + n, os.path.join(EXIT_PROGS, n)) for n in sorted(os.listdir(EXIT_PROGS))]:
        args = open(os.path.join(d, "args")).read().split() if os.path.exists(os.path.join(d, "args")) else []
        stdin = open(os.path.join(d, "stdin"), "rb").read() if os.path.exists(os.path.join(d, "stdin")) else b""
        yield name, daemonrun.files_of(d), args, stdin
    # less its session line: PROTOCOL.md "Warm starts" lists it (a warm
    # program leads a session of its own: the init's cannot be joined from
    # outside its pid namespace)
    yield "fingerprint", [{"path": "main.py", "content": FINGERPRINT.replace(
        "os.getsid(0) == os.getpid(), ", "")}], [], b""


def cruxeval(n):
    with open(DATA) as f:
        for i, line in enumerate(f):
            if i >= n:
                return
            s = json.loads(line)
            prog = "%s\nassert %s == f(%s)\n" % (s["code"], s["output"], s["input"])
            yield s["id"], [{"path": "main.py", "content": prog}], [], b""


def switches(bin_dir, sock, fails):
    """The user-facing switches ask for warm starts: surgebox exec --warm,
    surgebox batch --warm, the Python client's run(warm=True)."""
    sb = os.path.join(bin_dir, "surgebox")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "main.py"), "w") as f:
            f.write("print('hi')\n")
        starts = {}
        for warm in ([], ["--warm"]):
            p = subprocess.run([sb, "exec", "--socket", sock, "--no-autostart", "--json"] + warm +
                               ["main.py", "--", daemonrun.PY, "main.py"], cwd=tmp, capture_output=True, timeout=120)
            starts[bool(warm)] = daemonrun.start(json.loads(p.stdout)["steps"][0]) if p.returncode == 0 else p.stderr
        with open(os.path.join(tmp, "in.jsonl"), "w") as f:
            f.write(json.dumps({"files": [{"path": "main.py", "content": "print(2)"}],
                                "steps": [{"argv": [daemonrun.PY, "main.py"]}]}) + "\n")
        p = subprocess.run([sb, "batch", "--socket", sock, "--no-autostart", "--warm", "in.jsonl"], cwd=tmp,
                           capture_output=True, timeout=120)
        starts["batch"] = daemonrun.start(json.loads(p.stdout)["steps"][0]) if p.returncode == 0 else p.stderr
    sys.path.insert(0, os.path.join(daemonrun.ROOT, "clients", "python"))
    import surgebox
    with surgebox.Client(sock, autostart=False) as c:
        r = c.run([[daemonrun.PY, "main.py"]], files={"main.py": "print(3)"}, warm=True)
        starts["client"] = daemonrun.start(r["steps"][0])
    for k, want in ((False, "cold"), (True, "warm ("), ("batch", "warm ("), ("client", "warm (")):
        ok = isinstance(starts[k], str) and starts[k].startswith(want)
        print("%s %s: %r" % ("ok  " if ok else "FAIL", {False: "exec", True: "exec --warm"}.get(k, k), starts[k]))
        if not ok:
            fails.append("switch %s: %r" % (k, starts[k]))


def compare(c, name, files, args, stdin, fails):
    cold = c.python(files, args, stdin)
    warm = c.python(files, args, stdin, warm=True)
    if not daemonrun.start(warm).startswith("warm ("):
        fails.append("%s: did not run warm: %s" % (name, daemonrun.start(warm) or warm))
    a, b = daemonrun.outcome(cold), daemonrun.outcome(warm)
    if a != b:
        fails.append("%s differs:\n  cold %r\n  warm %r" % (name, a, b))
    return a[0]


def run(bin_dir, sock, n_crux, toolchains):
    fails, n = [], 0
    c = daemonrun.Client(sock)
    for name, files, args, stdin in (cruxeval(n_crux) if n_crux else cases()):
        status = compare(c, name, files, args, stdin, fails)
        n += 1
        if not n_crux:
            print("%s %s (%s)" % ("FAIL" if fails and fails[-1].startswith(name) else "ok  ", name, status))
    if not n_crux and toolchains:  # the zygote's own seed, reported, is the seed the program saw
        files = [{"path": "main.py", "content": SETS}]
        warm = c.request({"toolchain": "python3", "files": files, "warm": True})["steps"][0]
        seed = warm["enforced"].get("hash_seed")
        cold = c.python(files, seed=str(seed)) if seed is not None else None
        if seed is None or daemonrun.outcome(cold)[3] != warm["stdout"].encode():
            fails.append("toolchain form: the seed %r does not give the warm output %r" % (seed, warm.get("stdout")))
        n += 1
    elif not n_crux:
        print("(no toolchain form: this daemon has no toolchains)")
    if not n_crux:
        switches(bin_dir, sock, fails)
    c.close()
    for f in fails:
        print("FAIL", f)
    print("%d programs, %d differ" % (n, len(fails)))
    sys.stdout.flush()
    return fails


def main():
    args = sys.argv[1:]
    bin_dir, cache = args[0], args[1]
    n_crux = int(args[args.index("--cruxeval") + 1]) if "--cruxeval" in args else 0
    cgroup = ["--cgroup", args[args.index("--cgroup") + 1]] if "--cgroup" in args else []
    if not os.path.exists(daemonrun.PY):
        print("SKIPPED: no /usr/bin/python3")
        return daemonrun.SKIP
    if n_crux and not os.path.exists(DATA):
        print("SKIPPED: no CRUXEval data at %s (set CRUXEVAL_DATA)" % DATA)
        return daemonrun.SKIP
    if "--user" in args:
        d = daemonrun.UserDaemon(bin_dir)
        try:
            fails = daemonrun.as_user(lambda: run(bin_dir, d.sock, n_crux, False))
        finally:
            d.stop()
    else:
        d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "1", *cgroup)
        try:
            fails = run(bin_dir, d.sock, n_crux, True)
        finally:
            d.stop()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
