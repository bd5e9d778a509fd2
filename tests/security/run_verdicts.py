#!/usr/bin/python3
"""Security cases for the honesty of a run's verdict and its isolation from
the caller's process group (issue #11):

  session_*   the program attacks its process group (kill(0, ...),
              setpriority/ioprio_set on PRIO_PGRP 0). surgebox-run runs in
              a session of its own, together with a sentinel (uid 65534,
              like the program) in its process group: neither may be
              touched, and surgebox-run must print a proper result.
              session_user_*: the same with surgebox-run as an ordinary
              user (uid 4242, user-namespace mode), sentinel uid 4242.
  exec_*      a program that cannot be started: empty stdout/stderr, an
              `error` saying what failed and why.
  inodes_*    empty files on /tmp, /dev/shm and /app stop at the inode cap
              (tmp size in MiB x 256), with every backend.
  oom_*       memory held in tmpfs pages under a small cgroup v1 limit: the
              verdict is memory_limit, not internal_error, whether the init
              could be protected (CAP_SYS_RESOURCE) or not.

    sandbox_wrapper.sh /usr/bin/python3 run_verdicts.py \
        --surgebox BUILD/bin/surgebox-run --progs DIR [--backend v1|v2|none] CASE
"""

import ctypes
import functools
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_case  # noqa: E402
import sbharness  # noqa: E402
from run_case import USER_UID, Ctx, expect_result, expect_status, result_int  # noqa: E402
from sbharness import skip  # noqa: E402

CASES = {}
case = functools.partial(run_case.case, table=CASES)


# ------------------------------------------------------------ process groups
SENTINEL_UID = 65534  # the sandbox's uid: only the separate group protects it
_libc = ctypes.CDLL(None, use_errno=True)
SYS_ioprio_get = {"x86_64": 252, "aarch64": 31}.get(os.uname().machine)


def proc_stat(pid):
    """(state, nice) of pid from /proc/<pid>/stat, or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return rest[0], int(rest[16])  # fields 3 and 19


def ioprio(pid):
    if SYS_ioprio_get is None:
        return None
    return _libc.syscall(SYS_ioprio_get, 1, pid)  # IOPRIO_WHO_PROCESS


def run_in_session(ctx, prog_args, opts, user=None):
    """surgebox-run in a new session (its leader a sh: background jobs of a
    non-interactive sh stay in its process group), with a sentinel sleeping
    in that group. The sentinel starts 0.3 s after surgebox-run, while the
    program sleeps before its attack: ioprio_set(WHO_PGRP) stops at the
    first member it may not change (a root process), newest first, so the
    sentinel must be younger than the sandbox's root init to be reached.
    user: run surgebox-run as that uid (user-namespace mode), the sentinel
    too. Returns (Run, sentinel pid, snapshot before the run)."""
    h = ctx.h
    before = h.snapshot()
    app = h.app_dir(progs={"prog": ctx.prog("pgrp")})
    piddir = h.tempdir("sbsess-")
    pidfile = os.path.join(piddir, "sentinel.pid")
    uid = user if user is not None else SENTINEL_UID
    script = ('"$@" & sr=$!; sleep 0.3; setpriv --reuid=%d --regid=%d --clear-groups /bin/sleep 1000 '
              '</dev/null >/dev/null 2>&1 & echo $! > "$0"; wait $sr' % (uid, uid))
    cmd = ([h.surgebox, "--dir", app] + ctx.opts(*opts) + ["--json", "--", "./prog"] + list(prog_args))
    env = None
    if user is not None:
        os.chmod(os.path.dirname(h.surgebox), 0o755)
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    print("  $ setsid sh -c '<run> & <sentinel>; wait' " + " ".join(cmd), flush=True)
    p = subprocess.Popen(["/bin/sh", "-c", script, pidfile] + cmd, start_new_session=True, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
    r = sbharness.Run(p.args, p.returncode, out, err, 0)
    try:
        r.doc = json.loads(out.decode())
        r.results = sbharness.parse_results(r.stdout)
    except (UnicodeDecodeError, ValueError) as e:
        r.json_error = str(e)
    if os.environ.get("SBTEST_VERBOSE"):
        print("    -> " + r.summary(4000), flush=True)
    with open(pidfile) as f:
        sentinel = int(f.read())
    return r, sentinel, before


def end_sentinel(pid):
    """The sentinel was reparented to us (pid 1 of the wrapper): reap it."""
    for sig in (9, 18):  # SIGKILL, then SIGCONT in case it was stopped
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def session_case(ctx, attack, opts, expect, user=None):
    h = ctx.h
    r, sentinel, before = run_in_session(ctx, [attack, "1.5"], opts, user)
    st = proc_stat(sentinel)  # a killed sentinel stays a zombie until we reap it
    h.check(st is not None and st[0] not in "ZX",
            "the sentinel in surgebox-run's process group (uid %d) was killed"
            % (SENTINEL_UID if user is None else user), r)
    if st is not None and st[0] not in "ZX":
        h.check(st[0] not in "Tt", "the sentinel was stopped (state %s)" % st[0], r)
        h.eq(st[1], 0, "the sentinel's nice value (reniced by the program?)", r)
        prio = ioprio(sentinel)
        h.check(prio is None or (prio >> 13) != 3, "the sentinel's I/O class was set to idle (ioprio %r)" % prio, r)
    end_sentinel(sentinel)
    h.eq(r.rc, 0, "exit code of surgebox-run (killed or stopped by the program?) through its sh", r)
    if h.check(r.doc is not None, "surgebox-run printed no result document", r):
        h.validate_doc(r)
        expect(r)
        # The program's session and group are the sandbox init's (pid 1 in
        # the sandbox): 0 would mean their leader is outside the sandbox.
        expect_result(h, r, "sid", "1", "the program's session leader")
        expect_result(h, r, "pgid", "1", "the program's process group")
    h.leftover_checks(before, None, r)


@case("session_kill")
def c_session_kill(ctx):
    """kill(0, SIGKILL) reaches only the sandbox."""
    h = ctx.h

    def expect(r):
        expect_status(h, r, "signaled")
        h.eq(r.get("signal"), "SIGKILL", "signal (the program killed its own group)", r)
    session_case(ctx, "kill", ["--time-limit", "10"], expect)


@case("session_stop")
def c_session_stop(ctx):
    """kill(0, SIGSTOP) stops only the sandbox (which then hits its wall limit)."""
    h = ctx.h

    def expect(r):
        expect_status(h, r, "timeout", "wall_time")
    session_case(ctx, "stop", ["--time-limit", "4"], expect)


@case("session_prio")
def c_session_prio(ctx):
    """setpriority(PRIO_PGRP, 0, 19) renices only the sandbox."""
    h = ctx.h

    def expect(r):
        expect_status(h, r, "ok")
        expect_result(h, r, "survived", "yes")
    session_case(ctx, "prio", ["--time-limit", "10"], expect)


@case("session_ioprio")
def c_session_ioprio(ctx):
    """ioprio_set(IOPRIO_WHO_PGRP, 0, IDLE) touches only the sandbox."""
    h = ctx.h
    if SYS_ioprio_get is None:
        skip("ioprio_get's syscall number unknown on %s" % os.uname().machine)

    def expect(r):
        expect_status(h, r, "ok")
        expect_result(h, r, "survived", "yes")
    session_case(ctx, "ioprio", ["--time-limit", "10"], expect)


@case("session_user_kill")
def c_session_user_kill(ctx):
    """User mode: the program (our uid outside) kill(0, SIGKILL)s; surgebox-run
    and the caller's group, of the same uid, must survive."""
    h = ctx.h

    def expect(r):
        expect_status(h, r, "signaled")
        h.eq(r.get("signal"), "SIGKILL", "signal (the program killed its own group)", r)
        h.eq(r.get("cgroup"), "none", "user mode runs without a cgroup", r)
    session_case(ctx, "kill", ["--time-limit", "10"], expect, user=USER_UID)


@case("session_user_stop")
def c_session_user_stop(ctx):
    """User mode: kill(0, SIGSTOP) stops neither surgebox-run nor the caller."""
    h = ctx.h

    def expect(r):
        expect_status(h, r, "timeout", "wall_time")
    session_case(ctx, "stop", ["--time-limit", "4"], expect, user=USER_UID)


# ------------------------------------------------------------ exec failures
def exec_case(ctx, argv, files, why, opts=(), error=None, code=127):
    h = ctx.h
    app = h.app_dir(files=files)
    r = h.run(argv, opts=ctx.opts("--time-limit", "10", *opts), app=app)
    if r.doc is None:
        return
    h.eq(r.get("stdout"), "", "stdout of a program that never started", r)
    h.eq(r.get("stderr"), "", "stderr of a program that never started", r)
    h.eq(r.get("exit_code"), code, "exit_code of a program that never started (126: not executable)", r)
    h.eq(r.get("error"), error or "cannot execute %s: %s" % (argv[0], why), "error", r)


@case("exec_missing")
def c_exec_missing(ctx):
    """./nope does not exist."""
    exec_case(ctx, ["./nope"], {"other": "x"}, "No such file or directory")


@case("exec_noexec")
def c_exec_noexec(ctx):
    """./script exists without execute permission."""
    exec_case(ctx, ["./script", "arg"], {"script": "#!/bin/sh\necho ran\n"}, "Permission denied", code=126)


@case("exec_chdir")
def c_exec_chdir(ctx):
    """A working directory that does not exist: the step before exec fails."""
    exec_case(ctx, ["/bin/true"], {}, None, ["--cwd", "/nope"],
              "cannot start /bin/true: chdir failed: No such file or directory")


# ------------------------------------------------------------ tmpfs inodes
TMP_MIB = 16
INODE_CAP = TMP_MIB * 256  # the documented rule: one inode per 4 KiB of size


def inodes_case(ctx, where):
    h = ctx.h
    app = h.app_dir(progs={"prog": ctx.prog("mkfiles")})
    r = h.run(["./prog", where, "200000"], opts=ctx.opts("--tmp-size", str(TMP_MIB), "--time-limit", "60"), app=app)
    if ctx.backend and r.doc is not None:
        h.eq(r.get("cgroup"), ctx.backend, "document's cgroup backend (forced)", r)
    if r.doc is None:
        return
    h.check("capped" not in r.results, "200000 empty files fit in a %d MiB %s (no inode cap)" % (TMP_MIB, where), r)
    n = result_int(h, r, "created")
    if n is not None:
        h.within(n, 1, INODE_CAP, "empty files created in %s with --tmp-size %d" % (where, TMP_MIB), r)
    expect_result(h, r, "errno", "ENOSPC", "creation must fail for want of inodes")
    enf = run_case.enforced_value(r, "tmp_size" if where != "/app" else "app_size") or ""
    h.check("nr_inodes" in enf, "enforced document names the inode cap: %r" % enf, r)


@case("inodes_tmp", backends=True)
def c_inodes_tmp(ctx):
    """Empty files on /tmp."""
    inodes_case(ctx, "/tmp")


@case("inodes_shm", backends=True)
def c_inodes_shm(ctx):
    """Empty files on /dev/shm."""
    inodes_case(ctx, "/dev/shm")


@case("inodes_app", backends=True)
def c_inodes_app(ctx):
    """Empty files on /app (the --dir workspace tmpfs)."""
    inodes_case(ctx, "/app")


# ------------------------------------------------------------ OOM verdicts
def have_cap_sys_resource():
    """Lowering an oom_score_adj needs it; containers often drop it."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 24 & 1)  # CAP_SYS_RESOURCE = 24
    return False


def oom_case(ctx, target):
    h = ctx.h
    if not all(sbharness.have_cgroup_v1(c) for c in ("memory", "pids", "cpuacct")):
        skip("needs the cgroup v1 memory hierarchy (an OOM kill needs a memory cgroup)")
    ctx.backend = "v1"
    r = ctx.run("tmpfill", [target, "1024"], ["--memory-limit", "64", "--tmp-size", "512", "--time-limit", "30"])
    if r.doc is None:
        return
    h.check("capped_mib" not in r.results, "1 GiB of tmpfs pages under a 64 MiB memory limit", r)
    # The init's protection is not the program's: it starts at 0 (1000 where
    # the init could not be lowered) and cannot make itself immune (else the
    # OOM killer would find nothing to kill).
    cap = have_cap_sys_resource()
    expect_result(h, r, "oom_score_adj", "0" if cap else "1000", "the program's oom_score_adj")
    expect_result(h, r, "lower_adj", "EACCES", "the program lowering its oom_score_adj to -1000")
    expect_status(h, r, "memory_limit", "memory")
    h.check(r.get("error") in (None, ""), "no sandbox error for an OOM kill: %r" % r.get("error"), r)
    written = result_int(h, r, "written_mib") if "written_mib" in r.results else 0
    if written is not None:
        h.within(written, 0, 64, "MiB written to %s under a 64 MiB limit" % target, r)
    enf = run_case.enforced_value(r, "oom") or ""
    h.check(("at oom_score_adj -1000" if cap else "init not protected") in enf and "oom_control" in enf,
            "enforced document describes the OOM protection (CAP_SYS_RESOURCE %s here): %r"
            % ("held" if cap else "missing", enf), r)


@case("oom_shm")
def c_oom_shm(ctx):
    """/dev/shm filled past a 64 MiB cgroup v1 limit."""
    oom_case(ctx, "/dev/shm/fill")


@case("oom_tmp")
def c_oom_tmp(ctx):
    """/tmp filled past a 64 MiB cgroup v1 limit."""
    oom_case(ctx, "/tmp/fill")


if __name__ == "__main__":
    run_case.main(CASES)
