#!/usr/bin/python3
"""Functional (non-hostile) tests of surgebox-run.

    sandbox_wrapper.sh /usr/bin/python3 run_integration.py \
        --surgebox BUILD/bin/surgebox-run --progs DIR CASE

Same harness as the security tests (tests/security/sbharness.py): runs inside
the unshare wrapper, checks for leftovers after every run, exit 0 pass,
1 fail, 77 skip.
"""

import base64
import hashlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "security"))
import sbharness  # noqa: E402
from sbharness import Harness, skip  # noqa: E402

CASES = {}


def case(name):
    def deco(fn):
        CASES[name] = fn
        return fn
    return deco


class Ctx:
    def __init__(self, h, progs):
        self.h = h
        self.progs = progs

    def prog(self, name):
        p = os.path.join(self.progs, name)
        if not os.path.isfile(p):
            print("FATAL: test program %s not built (looked in %s)" % (name, self.progs))
            sys.exit(1)
        return p

    def run(self, prog, args=(), opts=(), files=None, **kw):
        app = self.h.app_dir(progs={"prog": self.prog(prog)}, files=files)
        return self.h.run(["./prog"] + list(args), opts=list(opts), app=app, **kw)


def ok_run(h, r):
    h.eq(r.get("status"), "ok", "status", r)
    h.eq(r.get("exit_code"), 0, "exit_code", r)
    h.eq(r.get("signal"), None, "signal", r)
    h.eq(r.get("limit_hit"), None, "limit_hit", r)


def dir_snapshot(d):
    snap = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            st = os.lstat(p)
            if os.path.islink(p):
                snap[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                snap[rel] = ("dir", st.st_mode & 0o7777)
            else:
                with open(p, "rb") as f:
                    snap[rel] = ("file", st.st_mode & 0o7777, hashlib.sha256(f.read()).hexdigest())
    return snap


# ------------------------------------------------------------------- cases
@case("hello")
def c_hello(ctx):
    """stdout and stderr stay separate, in JSON and plain mode."""
    h = ctx.h
    r = ctx.run("hello", opts=["--time-limit", "10"])
    ok_run(h, r)
    h.eq(r.stdout, "hello stdout\n", "stdout", r)
    h.eq(r.stderr, "hello stderr\n", "stderr", r)
    for k in ("stdout_lossy", "stderr_lossy", "stdout_truncated", "stderr_truncated",
              "pids_limit_hit"):
        h.eq(r.get(k), False, k, r)
    h.within(r.get("wall_time_s"), 0, 3, "wall_time_s of hello", r)
    h.check(isinstance(r.get("warnings"), list), "warnings is a list", r)

    plain = ctx.run("hello", opts=["--time-limit", "10"], json_doc=False)
    h.eq(plain.raw_stdout, b"hello stdout\n", "plain mode: surgebox-run's stdout", plain)
    h.check(b"hello stderr\n" in plain.raw_stderr,
            "plain mode: the program's stderr goes to surgebox-run's stderr", plain)
    h.check(b"hello stdout" not in plain.raw_stderr, "plain mode: stdout not on stderr", plain)


@case("merge")
def c_merge(ctx):
    h = ctx.h
    r = ctx.run("interleave", opts=["--merge-output"])
    ok_run(h, r)
    h.eq(r.stdout, "".join("out%d\nerr%d\n" % (i, i) for i in range(1, 6)),
         "--merge-output keeps the write order on stdout", r)
    h.eq(r.stderr, "", "stderr with --merge-output", r)
    r = ctx.run("interleave")
    ok_run(h, r)
    h.eq(r.stdout, "".join("out%d\n" % i for i in range(1, 6)), "stdout without merge", r)
    h.eq(r.stderr, "".join("err%d\n" % i for i in range(1, 6)), "stderr without merge", r)


@case("exitcode")
def c_exitcode(ctx):
    h = ctx.h
    for code in (1, 3, 42, 255):
        r = ctx.run("exitcode", [str(code)])
        h.eq(r.get("status"), "runtime_error", "status for exit %d" % code, r)
        h.eq(r.get("exit_code"), code, "exit_code", r)
        h.eq(r.get("signal"), None, "signal", r)
        h.eq(r.stdout, "exiting with %d\n" % code, "stdout", r)
    r = ctx.run("exitcode", ["0"])
    ok_run(h, r)
    # Plain mode: surgebox-run still exits 0, the sandbox worked.
    r = ctx.run("exitcode", ["3"], json_doc=False)
    h.eq(r.raw_stdout, b"exiting with 3\n", "plain mode stdout", r)


@case("signals")
def c_signals(ctx):
    h = ctx.h
    for how, sig in (("segv", "SIGSEGV"), ("abort", "SIGABRT"), ("fpe", "SIGFPE"),
                     ("kill", "SIGKILL"), ("term", "SIGTERM")):
        r = ctx.run("crash", [how])
        h.eq(r.get("status"), "signaled", "status for %s" % how, r)
        h.eq(r.get("signal"), sig, "signal name", r)
        h.eq(r.get("exit_code"), None, "exit_code of a signaled program", r)
        h.eq(r.get("limit_hit"), None, "limit_hit", r)
        h.eq(r.stdout, "about to %s\n" % how, "stdout before the crash", r)
    # Every disposition at its default and nothing blocked when the program starts: the
    # spawner, whose copy the sandbox init is, ignores SIGPIPE, which exec keeps
    # (runners/program.c resets what /proc/self/status names ignored or caught).
    r = h.run(["/bin/cat", "/proc/self/status"], opts=["--time-limit", "10"])
    ok_run(h, r)
    masks = dict(line.split(":\t", 1) for line in r.stdout.splitlines() if line.startswith("Sig") and ":\t" in line)
    for key in ("SigIgn", "SigCgt", "SigBlk"):
        h.eq(masks.get(key, "").strip(), "0" * 16, "%s of a program at its start" % key, r)


@case("stdin")
def c_stdin(ctx):
    h = ctx.h
    lines = ["line %06d caf\u00e9 \u65e5\u672c\n" % i for i in range(12000)]
    data = "".join(lines).encode()
    sdir = h.tempdir("sbstdin-")
    path = os.path.join(sdir, "input.txt")
    with open(path, "wb") as f:
        f.write(data)
    r = h.run(["/bin/cat"], opts=["--stdin", path])
    ok_run(h, r)
    h.eq(len(r.stdout.encode()), len(data), "bytes echoed by cat from --stdin", r)
    h.check(r.stdout.encode() == data, "cat output equals the --stdin file", r)
    # Without --stdin the program reads /dev/null: cat ends at once.
    r = h.run(["/bin/cat"], opts=["--time-limit", "10"])
    ok_run(h, r)
    h.eq(r.stdout, "", "cat without --stdin", r)
    h.within(r.get("wall_time_s"), 0, 3, "cat without --stdin must not wait", r)
    with open(path, "wb") as f:
        f.write(b"hello there\n")
    r = h.run(["/bin/sh", "-c", "read a b; echo \"got:$a:$b\""], opts=["--stdin", path])
    ok_run(h, r)
    h.eq(r.stdout, "got:hello:there\n", "shell read from --stdin", r)


@case("lossy")
def c_lossy(ctx):
    h = ctx.h
    r = ctx.run("binout", ["bad"])
    ok_run(h, r)
    for stream in ("stdout", "stderr"):
        s = r.get(stream)
        h.eq(r.get(stream + "_lossy"), True, stream + "_lossy for invalid UTF-8", r)
        h.check(isinstance(s, str) and "\ufffd" in s, "%s has U+FFFD replacements" % stream, r)
        if isinstance(s, str):
            collapsed = ""
            for ch in s:
                if not (ch == "\ufffd" and collapsed.endswith("\ufffd")):
                    collapsed += ch
            h.eq(collapsed, "A\ufffdB\ufffdC\ufffd",
                 "%s with replacement runs collapsed (ASCII kept, bad bytes replaced)" % stream, r)
        # the exact bytes binout wrote, recoverable (progs/binout.c)
        raw = b"A\xff\xfeB\x80C\xe2\x82"
        h.eq(r.get(stream + "_b64"), base64.b64encode(raw).decode(), stream + "_b64: the raw bytes", r)
        h.eq(r.get(stream + "_sha256"), hashlib.sha256(raw).hexdigest(), stream + "_sha256 of the raw bytes", r)
    r = ctx.run("binout", ["good"])
    ok_run(h, r)
    want = "caf\u00e9 \u65e5\u672c \U0001F600\n"
    for stream in ("stdout", "stderr"):
        h.eq(r.get(stream), want, stream + " valid UTF-8 kept as is", r)
        h.eq(r.get(stream + "_lossy"), False, stream + "_lossy for valid UTF-8", r)
        h.check(stream + "_b64" not in (r.doc or {}), stream + "_b64 absent when the text is exact", r)
        h.eq(r.get(stream + "_sha256"), hashlib.sha256(want.encode()).hexdigest(), stream + "_sha256", r)
    r = ctx.run("binout", ["good"], opts=["--output-base64"])
    ok_run(h, r)
    h.eq(r.get("stdout_b64"), base64.b64encode(want.encode()).decode(), "--output-base64: stdout_b64 always", r)


@case("accounting")
def c_accounting(ctx):
    h = ctx.h
    r = ctx.run("busy", ["0.3"], opts=["--time-limit", "20"])
    ok_run(h, r)
    cpu, wall = r.get("cpu_time_s"), r.get("wall_time_s")
    h.within(cpu, 0.28, 0.8, "cpu_time_s of a 0.3 s busy loop", r)
    h.within(r.get("user_time_s"), 0.2, 0.8, "user_time_s of a 0.3 s busy loop", r)
    h.within(r.get("sys_time_s"), 0, 0.3, "sys_time_s of a busy loop", r)
    if isinstance(cpu, (int, float)) and isinstance(wall, (int, float)):
        h.check(wall >= cpu - 0.02, "wall_time_s %r >= cpu_time_s %r (one thread)" % (wall, cpu), r)
        h.check(wall < cpu + 2.0, "wall_time_s %r not far above cpu_time_s %r" % (wall, cpu), r)

    r = ctx.run("alloc", ["100"], opts=["--time-limit", "20"])
    ok_run(h, r)
    h.eq(r.results.get("alloc"), "OK", "alloc reported", r)
    want = 100 * 1024
    h.within(r.get("max_rss_kb"), want * 0.9, want * 1.1,
             "max_rss_kb for a touched 100 MiB allocation (within 10 %)", r)
    if r.get("cgroup") == "v1":
        h.within(r.get("cgroup_peak_kb"), want * 0.9, want * 1.5,
                 "cgroup_peak_kb for a touched 100 MiB allocation", r)


@case("cgroup_entry")
def c_cgroup_entry(ctx):
    """On cgroup v2 the init is born in the job's cgroup (clone3 with
    CLONE_INTO_CGROUP, no cgroup.procs write), and the counters start at GO:
    a busy loop still measures what it burned, a trivial program almost
    nothing (the sandbox's set-up is not charged to it)."""
    h = ctx.h
    if not sbharness.have_cgroup_v2():
        skip("no cgroup2 mount")
    rel = os.uname().release.split(".")
    if (int(rel[0]), int(re.sub(r"\D.*", "", rel[1]) or 0)) < (5, 7):
        skip("kernel %s has no CLONE_INTO_CGROUP (5.7+)" % os.uname().release)
    v2 = ["--cgroup", "v2", "--time-limit", "20"]
    r = ctx.run("busy", ["0.3"], opts=v2)
    ok_run(h, r)
    h.eq(r.get("cgroup"), "v2", "backend", r)
    entry = (r.get("enforced") or {}).get("cgroup_entry") or ""
    h.check(entry.startswith("clone3(CLONE_INTO_CGROUP)"), "enforced.cgroup_entry %r names clone3" % entry, r)
    h.check("cpu.stat" in (r.get("cpu_source") or ""), "cpu_source %r is cpu.stat" % r.get("cpu_source"), r)
    h.within(r.get("cpu_time_s"), 0.28, 0.8, "cpu_time_s of a 0.3 s busy loop born inside", r)
    h.within(r.get("user_time_s"), 0.2, 0.8, "user_time_s of a 0.3 s busy loop born inside", r)
    t = ctx.run("noop", [], opts=v2)
    ok_run(h, t)
    # a static do-nothing program: well under the sandbox set-up's own CPU
    h.within(t.get("cpu_time_s"), 0, 0.02, "cpu_time_s of a trivial program born inside", t)
    h.within(t.get("sys_time_s"), 0, 0.02, "sys_time_s of a trivial program born inside", t)


GCC_BIG = "\n".join(
    "int f%d(int *a, int n) { int s = %d; for (int i = 0; i < n; i++) "
    "{ s += a[i] * %d; if (s > %d) s ^= a[(i * 7) %% n]; } return s; }" % (i, i, i + 1, 1000 + i)
    for i in range(120)) + "\nint main(void) { return 0; }\n"


@case("gcc")
def c_gcc(ctx):
    """A compiler's children (cc1, as, ld) count in the CPU time."""
    h = ctx.h
    if not os.path.exists("/usr/bin/gcc"):
        skip("/usr/bin/gcc absent")
    files = {"big.c": GCC_BIG,
             "hello.c": '#include <stdio.h>\nint main(void) { puts("hi from gcc"); return 0; }\n'}
    app = h.app_dir(files=files)
    base = h.run(["/bin/sh", "-c", "true"], app=app)
    ok_run(h, base)
    r = h.run(["/bin/sh", "-c", "gcc -O2 -c big.c -o /tmp/big.o && echo compiled"],
              opts=["--time-limit", "200", "--cpu-limit", "60"], app=app, timeout=260)
    ok_run(h, r)
    h.eq(r.stdout, "compiled\n", "gcc stdout", r)
    cpu, base_user = r.get("cpu_time_s"), base.get("user_time_s")
    if isinstance(cpu, (int, float)) and isinstance(base_user, (int, float)):
        h.check(cpu > base_user + 0.2,
                "cpu_time_s of gcc (%r) must include its children and exceed the shell "
                "alone (user %r) by a compile's worth" % (cpu, base_user), r)
    h.within(r.get("user_time_s"), 0.15, 120, "user_time_s includes cc1", r)
    r = h.run(["/bin/sh", "-c", "gcc -o /app/hello hello.c && /app/hello"],
              opts=["--time-limit", "200"], app=app, timeout=260)
    ok_run(h, r)
    h.eq(r.stdout, "hi from gcc\n", "program built and run inside the sandbox", r)


@case("python")
def c_python(ctx):
    h = ctx.h
    if not os.path.exists("/usr/bin/python3"):
        skip("/usr/bin/python3 absent")
    r = h.run(["/usr/bin/python3", "-c",
               "import json, os, sys; print(6*7); print(os.getcwd()); "
               "print(json.dumps({'v': sys.version_info[0]}))"], opts=["--time-limit", "30"])
    ok_run(h, r)
    h.eq(r.stdout, '42\n/app\n{"v": 3}\n', "python3 output", r)


@case("java")
def c_java(ctx):
    h = ctx.h
    java = "/usr/bin/java"
    if not os.path.exists(java):
        skip("/usr/bin/java absent")
    r = h.run([java, "-version"], opts=["--time-limit", "30"])
    ok_run(h, r)
    h.check("version" in r.stderr, "java -version prints its version on stderr", r)


@case("appdir")
def c_appdir(ctx):
    """--dir is copied to /app, writes inside are not written back."""
    h = ctx.h
    app = h.app_dir(files={"a.txt": "alpha\n", "sub/b.txt": "beta\n",
                           "exec.sh": "#!/bin/sh\necho script-ran\n"})
    os.chmod(os.path.join(app, "exec.sh"), 0o755)
    os.symlink("a.txt", os.path.join(app, "link"))
    before = dir_snapshot(app)
    script = ("cat a.txt sub/b.txt link; ./exec.sh; echo new > c.txt; echo more >> a.txt; "
              "rm sub/b.txt; mkdir d; cat c.txt; ls -1 | tr '\\n' ' '; echo")
    r = h.run(["/bin/sh", "-c", script], app=app)
    ok_run(h, r)
    h.eq(r.stdout, "alpha\nbeta\nalpha\nscript-ran\nnew\na.txt c.txt d exec.sh link sub \n",
         "files seen and written in /app", r)
    h.eq(dir_snapshot(app), before, "the --dir on the host after the run (no write-back)", r)
    # Each run gets a fresh copy.
    r = h.run(["/bin/sh", "-c", "cat a.txt; ls c.txt 2>&1 >/dev/null | wc -l"], app=app)
    ok_run(h, r)
    h.eq(r.stdout, "alpha\n1\n", "second run sees the original files only", r)


@case("cwd")
def c_cwd(ctx):
    h = ctx.h
    r = h.run(["/bin/pwd"])
    ok_run(h, r)
    h.eq(r.stdout, "/app\n", "working directory", r)
    r = h.run(["/bin/sh", "-c", "touch here && ls /app"])
    ok_run(h, r)
    h.eq(r.stdout, "here\n", "relative writes land in /app", r)


@case("env")
def c_env(ctx):
    h = ctx.h
    canary = "SBTEST_ENV_CANARY_VALUE_91a7"
    env = dict(os.environ)
    env["SBTEST_ENV_CANARY"] = canary
    r = h.run(["/usr/bin/env"], env=env)
    ok_run(h, r)
    vars_ = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
    path = vars_.get("PATH", "")
    h.check("/usr/bin" in path.split(":") and "/bin" in path.split(":"),
            "PATH=%r must contain /usr/bin and /bin" % path, r)
    h.check(bool(vars_.get("HOME")), "HOME must be set: %r" % vars_.get("HOME"), r)
    h.check(canary not in r.stdout and "SBTEST_ENV_CANARY" not in r.stdout,
            "surgebox-run's own environment leaked into the sandbox", r)
    r = h.run(["sh", "-c", "command -v ls"], env=env)
    ok_run(h, r)
    h.check(r.stdout.strip() in ("/bin/ls", "/usr/bin/ls"), "PATH lookup of ls: %r" % r.stdout, r)


@case("rc")
def c_rc(ctx):
    """surgebox-run's own exit code: 0 whatever the program did, 1 usage error."""
    h = ctx.h
    r = h.run(["/bin/false"])
    h.eq(r.get("status"), "runtime_error", "status of /bin/false", r)
    h.eq(r.get("exit_code"), 1, "exit_code of /bin/false", r)
    r = h.run(["/bin/false"], json_doc=False)  # expect_rc=0 is checked by run()
    for bad in (["--bogus-option"], ["--time-limit", "abc"], ["--memory-limit", "-5"],
                ["--cgroup", "v9"], ["--output-limit"]):
        r = h.run(["/bin/true"], opts=bad, json_doc=False, expect_rc=1)
        h.check(r.raw_stderr.strip() != b"", "usage error %s explains itself on stderr" % bad, r)
    # No program at all.
    r = h.run([], json_doc=False, expect_rc=1)
    # A program that does not exist: not a usage error; the run fails.
    r = h.run(["/nonexistent/program"], expect_rc=None, check_doc=False)
    h.check(r.rc in (0, 2), "surgebox-run exit code for a missing program: %r (0 or 2)" % r.rc, r)
    if r.rc == 0:
        h.check(r.doc is not None and r.get("status") != "ok",
                "a missing program must not report status ok", r)


@case("json")
def c_json(ctx):
    """The result document echoes the requested limits and names the backend."""
    h = ctx.h
    r = h.run(["/bin/true"], opts=["--time-limit", "7", "--cpu-limit", "5",
                                   "--memory-limit", "300", "--pids-limit", "33",
                                   "--output-limit", "12345"])
    ok_run(h, r)
    lim = r.get("limits") or {}
    vals = set()
    for v in lim.values():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            vals.add(float(v))
    for want in (7, 5, 300, 33, 12345):
        h.check(float(want) in vals, "limits document %r lacks the requested %s" % (lim, want), r)
    h.check(bool(r.get("enforced")), "enforced document is empty", r)


def main():
    a = sbharness.main_args(sys.argv[1:])
    if a.case not in CASES:
        print("unknown case %r; cases: %s" % (a.case, " ".join(sorted(CASES))))
        sys.exit(1)
    h = Harness("integration." + a.case, a.surgebox)
    fn = CASES[a.case]
    print("case %s: %s" % (a.case, (fn.__doc__ or "").strip()), flush=True)
    fn(Ctx(h, a.progs))
    h.finish()


if __name__ == "__main__":
    main()
