"""A warm job inherits nothing of the job before it (issue 35, finding 5).

Job A carries unique markers in its argv, in its environment (a variable's
name and value), its working directory (zygote mode) and in files of 1 KiB,
64 KiB and 1 MiB it reads; then it scans its own memory (memscan.py) and must
find every one of them (the scan's proof that it can see them). Job B runs
next on the same zygote (one slot: --jobs 1) and scans its own memory for
A's markers: it must find none. Through the daemon A and B have the same
environment (warm.c keys a zygote by the whole environment: a job of
another environment gets another zygote): the environment's and the
directory's cases are the zygote's own, tested in --zygote mode, where
jobs with different environments share one zygote.

  test_heap_scan.py --zygote            a zygote driven directly (sbzygote.py)
  test_heap_scan.py BIN CACHE [--cold]  through a private surgeboxd, warm (or
                                        the cold twin: the same jobs cold)

Before issue 35 the zygote parsed each job's request (argv, environment,
directory) in its own heap before the fork: B found A's argv and
environment there."""
import hashlib
import os
import secrets
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zygoterun  # noqa: E402

A_PROG = r'''
import sys
data = [open(p, "rb").read() for p in ("small.bin", "k64.bin", "m1.bin")]
exec(compile(open("memscan.py").read(), "memscan.py", "exec"))
'''


def markers():
    """{label: marker}: each unique to this run, ASCII (a str's and a
    bytes' copy hold the same bytes)."""
    tag = secrets.token_hex(96)  # 200 bytes or so: no object of the scan's is that size
    return {k: "SBMK%s%s" % (k.upper().replace("_", ""), tag) for k in
            ("argv", "env_name", "env_value", "cwd", "file_1k", "file_64k", "file_1m")}


def write_needles(d, m, labels):
    """needles.txt: each marker as two halves (memscan.py), not in argv:
    B's own request stays small, as an attacker's would (a big one would
    reuse the very blocks A's request left in the zygote's heap)."""
    with open(os.path.join(d, "needles.txt"), "w") as f:
        for k in labels:
            tail = m[k][12:].encode()
            f.write("%s %s %d %s\n" % (k, m[k][:12], len(tail), hashlib.sha256(tail).hexdigest()))


def a_args(m):
    """A's arguments: its marker alone, and within a longer argument."""
    return [m["argv"], "-" * 3000 + m["argv"] + "-" * 3000]


def write_files(d, m):
    """A's files in d: main.py (A), memscan.py and the three data files."""
    shutil.copy(os.path.join(HERE, "memscan.py"), os.path.join(d, "memscan.py"))
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write(A_PROG)
    for name, size, k in (("small.bin", 1024, "file_1k"), ("k64.bin", 64 << 10, "file_64k"), ("m1.bin", 1 << 20, "file_1m")):
        mk = m[k].encode()
        filler = size - 2 * len(mk)
        with open(os.path.join(d, name), "wb") as f:
            f.write(mk + b"." * (filler // 2) + mk + b"." * (filler - filler // 2))


def judge(a_out, b_out, labels, fails, what):
    """A found each of its markers (the scan sees them); B none."""
    a_found = {l.split()[1] for l in a_out.splitlines() if l.startswith("found ")}
    b_found = {l.split()[1] for l in b_out.splitlines() if l.startswith("found ")}
    print("%s: A found %s; %s" % (what, sorted(a_found), a_out.splitlines()[-1:] or a_out))
    print("%s: B found %s; %s" % (what, sorted(b_found), b_out.splitlines()[-1:] or b_out))
    if a_found != set(labels):
        fails.append("%s: job A did not see its own markers %s (the scan is blind)" % (what, sorted(set(labels) - a_found)))
    if b_found:
        fails.append("%s: job B read job A's %s" % (what, ", ".join(sorted(b_found))))


def zygote_mode():
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        print("SKIPPED: no /usr/bin/python3")
        return zygoterun.SKIP
    fails = []
    m = markers()
    labels = list(m)
    z = zygoterun.Zygote(py)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            a_dir = os.path.join(tmp, m["cwd"])
            b_dir = os.path.join(tmp, "b")
            os.mkdir(a_dir)
            os.mkdir(b_dir)
            write_files(a_dir, m)
            shutil.copy(os.path.join(HERE, "memscan.py"), os.path.join(b_dir, "memscan.py"))
            a_env = dict(z.env, **{m["env_name"]: m["env_value"], "A_LONG": "-" * 3000 + m["env_value"]})
            write_needles(a_dir, m, labels)
            write_needles(b_dir, m, labels)
            a = z.run("main.py", a_args(m), cwd=a_dir, env=a_env)
            b = z.run("memscan.py", cwd=b_dir)
            for who, r in (("A", a), ("B", b)):
                if r[0] != 0:
                    fails.append("job %s: exit %d: %r" % (who, r[0], r[2][-2000:]))
            judge(a[1].decode(), b[1].decode(), labels, fails, "zygote")
    finally:
        z.close()
    return fails


def daemon_mode(bin_dir, cache, cold):
    import daemonrun
    fails = []
    m = markers()
    # the daemon's jobs run in /app: no directory of A's choosing; and a
    # job of another environment gets another zygote (warm.c): the same
    # environment for both, the environment's case is --zygote's
    labels = [k for k in m if k not in ("cwd", "env_name", "env_value")]
    d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "1")
    try:
        c = daemonrun.Client(d.sock)
        with tempfile.TemporaryDirectory() as tmp:
            a_dir, b_dir = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            os.mkdir(a_dir)
            os.mkdir(b_dir)
            write_files(a_dir, m)
            shutil.copy(os.path.join(HERE, "memscan.py"), os.path.join(b_dir, "main.py"))
            write_needles(a_dir, m, labels)
            write_needles(b_dir, m, labels)
            # B twice (one slot, one zygote: both share A's)
            runs = [("A", c.python(daemonrun.files_of(a_dir), a_args(m), warm=not cold))]
            runs += [("B", c.python(daemonrun.files_of(b_dir), warm=not cold))]
            runs += [("B'", c.python(daemonrun.files_of(b_dir), warm=not cold))]
            outs = {}
            for who, step in runs:
                st, code, _sig, out, err = daemonrun.outcome(step)
                want = "cold" if cold else "warm ("
                if not daemonrun.start(step).startswith(want):
                    fails.append("job %s started %r, not %s" % (who, daemonrun.start(step), want))
                if (st, code) != ("ok", 0):
                    fails.append("job %s: %s exit %s: %r" % (who, st, code, err[-2000:]))
                outs[who] = out.decode(errors="replace")
            judge(outs["A"], outs["B"], labels, fails, "cold" if cold else "warm")
            judge(outs["A"], outs["B'"], labels, fails, ("cold" if cold else "warm") + " again")
        c.close()
    finally:
        d.stop()
    return fails


def main():
    if sys.argv[1:2] == ["--zygote"]:
        fails = zygote_mode()
    else:
        fails = daemon_mode(sys.argv[1], sys.argv[2], "--cold" in sys.argv[3:])
    if fails == zygoterun.SKIP:
        return fails
    for f in fails:
        print("FAIL", f)
    print("%d failures" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
