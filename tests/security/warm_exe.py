"""A warm program's /proc/self/exe is no file of the host's (issue 35,
finding 6), through a private surgeboxd with two worker slots.

  lock     job A (warm) takes flock(LOCK_EX|LOCK_NB) on /proc/self/exe and
           holds it; meanwhile the host's own flock(LOCK_EX|LOCK_NB) on the
           real interpreter file (this harness, root, no job code) still
           succeeds, and job B, in the other slot, takes the same lock on its
           own /proc/self/exe;
  inotify  job A (warm) watches /proc/self/exe (every event); the host opens
           and reads the real interpreter file several times; A sees no event;
  leftlock a lock held on the zygote's executable when the slot's next job
           comes (a job's, left in flight; here the harness's in its stead):
           that job still locks its own /proc/self/exe (the daemon replaced
           the zygote). No cold twin: a cold job has no zygote.
  refused  an interpreter beneath a mount under /usr (a tmpfs the harness
           mounts in its own mount namespace, a copy of python3 in it),
           which the zygote's overlays do not serve: the step runs cold,
           saying why (before, warm on the host's inode). No cold twin.

Before issue 35 a zygote ran the host's interpreter, so both failed: A's lock
was on the host's inode (blocking the host and slot B: a covert channel and a
denial of service) and A's watch saw every host read. With --cold the same
checks on cold jobs (the twin: what warm must match). SURGEBOX_POOL=0 in the
environment gives the .pool0 twin (every job builds its own root). With
--user the daemon runs unprivileged (uid 4242, user-namespace mode) and the
checks run as that uid.

  warm_exe.py BIN_DIR CACHE_DIR lock|inotify [--cold] [--user]
  warm_exe.py BIN_DIR CACHE_DIR leftlock|refused [--user]"""
import fcntl
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "warm"))
import daemonrun  # noqa: E402

SUBMOUNT = "/usr/local/lib/sbtest-warm-exe"  # the refused case's mount
HOLD_S = 8  # how long job A holds its lock or watch (the harness needs ~1 s)

HOLD = r'''
import fcntl, sys, time
f = open("/proc/self/exe", "rb")
try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError as e:
    print("held", e.errno)
    sys.exit(0)
print("held OK", flush=True)
time.sleep(HOLD_S)
'''.replace("HOLD_S", str(HOLD_S))

TRY = r'''
import fcntl
f = open("/proc/self/exe", "rb")
try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("try OK")
except BlockingIOError:
    print("try EWOULDBLOCK")
'''

WATCH = r'''
import ctypes, os, select, struct, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
wd = libc.inotify_add_watch(fd, b"/proc/self/exe", 0xfff)  # IN_ALL_EVENTS
print("watch", "OK" if fd >= 0 and wd >= 0 else "errno %d" % ctypes.get_errno(), flush=True)
events = []
end = time.monotonic() + HOLD_S
while time.monotonic() < end:
    if select.select([fd], [], [], 0.1)[0]:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            continue
        off = 0
        while off < len(buf):
            _wd, mask, _cookie, n = struct.unpack_from("iIII", buf, off)
            events.append(hex(mask))
            off += 16 + n
print("events", len(events), " ".join(events[:8]))
'''.replace("HOLD_S", str(HOLD_S))


def job_pids():
    """Processes running a job's Python program: a cold python3 /app/main.py,
    or a warm one (the zygote's command line, its parent not the spawner)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/stat" % p) as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open("/proc/%s/comm" % ppid) as f:
                parent = f.read().strip()
        except (OSError, IndexError):
            continue
        if b"/app/main.py" in cmd or (b"sbzygote.py" in cmd and parent != "surgebox-spawn"):
            out.append(int(p))
    return out


def zygote_pids():
    """The zygotes: sbzygote.py processes whose parent is the spawner."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if b"sbzygote.py" not in f.read():
                    continue
            with open("/proc/%s/stat" % p) as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open("/proc/%s/comm" % ppid) as f:
                if f.read().strip() == "surgebox-spawn":
                    out.append(int(p))
        except (OSError, IndexError):
            pass
    return out


def wait_until(cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    print("FAIL timed out waiting for %s" % what)
    return False


def holds_flock():
    pids = set(job_pids())
    with open("/proc/locks") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 4 and parts[1] == "FLOCK" and parts[3] == "WRITE" and int(parts[4]) in pids:
                return True
    return False


def watches():
    for pid in job_pids():
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:inotify":
                    with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                        if "inotify wd:" in f.read():
                            return True
        except OSError:
            continue
    return False


def stdout_of(step):
    return daemonrun.outcome(step)[3].decode(errors="replace")


def checks(sock, case, warm):
    fails = []

    def check(cond, what):
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        sys.stdout.flush()
        if not cond:
            fails.append(what)

    mode = "warm" if warm else "cold"
    real = os.path.realpath(daemonrun.PY)
    a_conn, b_conn = daemonrun.Client(sock), daemonrun.Client(sock)
    # each slot's zygote started (and the job of that start done) first: the
    # test's window then holds A's lock or watch, not a zygote's start-up
    for c in (a_conn, b_conn):
        c.send({"files": [{"path": "main.py", "content": "import time\ntime.sleep(1)\n"}],
                "steps": [{"argv": [daemonrun.PY, "/app/main.py"], "env": dict(daemonrun.ENV, PYTHONHASHSEED="0")}],
                "warm": warm})
    for c in (a_conn, b_conn):
        c.receive()
    step = {"argv": [daemonrun.PY, "/app/main.py"], "env": dict(daemonrun.ENV, PYTHONHASHSEED="0"),
            "output_encoding": "base64", "limits": {"time_s": HOLD_S + 20}}
    if case == "lock":
        a_conn.send({"files": [{"path": "main.py", "content": HOLD}], "steps": [step], "warm": warm})
        if wait_until(holds_flock, "job A's flock on its /proc/self/exe"):
            with open(real, "rb") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(f, fcntl.LOCK_UN)
                    host = "OK"
                except BlockingIOError:
                    host = "EWOULDBLOCK"
            check(host == "OK", "the host's flock(LOCK_EX|LOCK_NB) on %s while job A holds its /proc/self/exe: %s"
                  % (real, host))
            b = b_conn.request({"files": [{"path": "main.py", "content": TRY}], "steps": [step], "warm": warm})["steps"][0]
            check(daemonrun.start(b).startswith(mode), "job B ran %s: %s" % (mode, daemonrun.start(b)))
            check(stdout_of(b).strip() == "try OK",
                  "job B (the other slot) locks its own /proc/self/exe while A holds A's: %r" % stdout_of(b))
        a = a_conn.receive()["steps"][0]
        check(daemonrun.start(a).startswith(mode), "job A ran %s: %s" % (mode, daemonrun.start(a)))
        check(a.get("status") == "ok" and stdout_of(a).strip() == "held OK",
              "job A locked its /proc/self/exe: %s %r" % (a.get("status"), stdout_of(a)))
        enf = (a.get("enforced") or {}).get("file_locks") or ""
        check("/proc/self/exe" in enf, "enforced.file_locks says what a warm step's /proc/self/exe is: %r" % enf)
    elif case == "leftlock":
        # a lock on the zygote's executable when the slot's next job comes:
        # what a job can leave in flight (its locked descriptor parked in an
        # SCM_RIGHTS cycle) until the kernel's collector runs; held here by
        # the harness in the job's stead (a job's cycle is mostly collected
        # before the next job starts, so a job's own would test nothing)
        for k in range(3):
            a_conn.request({"files": [{"path": "main.py", "content": "print(1)\n"}], "steps": [step], "warm": warm})
            held = []
            for z in zygote_pids():
                fd = os.open("/proc/%d/exe" % z, os.O_RDONLY | os.O_CLOEXEC)
                held.append(fd)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:  # the other slot's zygote runs the same file
                    check(False, "round %d: zygote %d's executable is locked already: the zygotes share it" % (k, z))
            check(len(held) >= 1, "round %d: the harness locks the executable of %d zygote(s)" % (k, len(held)))
            t = a_conn.request({"files": [{"path": "main.py", "content": TRY}], "steps": [step], "warm": warm})["steps"][0]
            check(daemonrun.start(t).startswith(mode) and stdout_of(t).strip() == "try OK",
                  "round %d: the slot's next job (%s) locks its /proc/self/exe: %r" % (k, daemonrun.start(t), stdout_of(t)))
            for fd in held:
                os.close(fd)
    elif case == "refused":
        # an interpreter the zygote's overlays cannot serve (beneath a mount
        # under /usr, made by the harness before the daemon started): never
        # warm on the host's inode; cold, saying why
        argv0 = os.path.join(SUBMOUNT, "python3")
        r = a_conn.request({"files": [{"path": "main.py", "content": "print(1)\n"}], "warm": True,
                            "steps": [dict(step, argv=[argv0, "/app/main.py"])]})["steps"][0]
        check(daemonrun.start(r).startswith("cold (warm refused: "),
              "%s (beneath the mount %s) runs cold, saying why: %s" % (argv0, SUBMOUNT, daemonrun.start(r)))
    else:
        a_conn.send({"files": [{"path": "main.py", "content": WATCH}], "steps": [step], "warm": warm})
        if wait_until(watches, "job A's inotify watch on its /proc/self/exe"):
            for _ in range(3):  # the host opens and reads its interpreter (benign: no job code)
                with open(real, "rb") as f:
                    f.read(1 << 20)
                os.stat(real)
                time.sleep(0.2)
        a = a_conn.receive()["steps"][0]
        out = stdout_of(a)
        check(daemonrun.start(a).startswith(mode), "job A ran %s: %s" % (mode, daemonrun.start(a)))
        check(a.get("status") == "ok" and out.startswith("watch OK\n"), "job A watches its /proc/self/exe: %r" % out)
        check("events 0" in out, "job A saw no event while the host read %s: %r" % (real, out.strip()))
        enf = (a.get("enforced") or {}).get("file_watches") or ""
        check("/proc/self/exe" in enf, "enforced.file_watches says what a warm step's /proc/self/exe is: %r" % enf)
    a_conn.close()
    b_conn.close()
    return fails


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[2] not in ("lock", "inotify", "leftlock", "refused") or (
            args[2] in ("leftlock", "refused") and "--cold" in args):
        print(__doc__)
        return 2
    bin_dir, cache, case = args[0], args[1], args[2]
    warm = "--cold" not in args
    user = "--user" in args
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid %d, not 1)" % os.getpid())
        return 2
    if os.geteuid() != 0:
        print("SKIPPED: not root (a private daemon and the host's own lock need root)")
        return daemonrun.SKIP
    if not os.path.exists(daemonrun.PY):
        print("SKIPPED: no %s" % daemonrun.PY)
        return daemonrun.SKIP
    if case == "refused":  # in this test's own mount namespace (the unshare wrapper's)
        import shutil
        import subprocess
        os.makedirs(SUBMOUNT, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "sbtest", SUBMOUNT], check=True)
        shutil.copy2(os.path.realpath(daemonrun.PY), os.path.join(SUBMOUNT, "python3"))
    if user:
        d = daemonrun.UserDaemon(bin_dir, "--jobs", "2")
    else:
        d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "2")
    try:
        if user:
            fails = daemonrun.as_user(lambda: checks(d.sock, case, warm))
        else:
            fails = checks(d.sock, case, warm)
    finally:
        d.stop()
    print("FAILED: %d check(s)" % len(fails) if fails else "PASSED")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
