"""Shared test harness for surgebox-run security and integration tests.

Stdlib only (runs under /usr/bin/python3). Every driver using this module must
be started through sandbox_wrapper.sh, i.e. as pid 1 of a throw-away
`unshare --mount --propagation private --pid --fork --mount-proc` namespace;
Harness() refuses to run otherwise.

A Harness runs surgebox-run, parses its result document and, after every run,
checks that nothing was left behind:
  * processes: in the wrapper's pid namespace only the driver (and processes
    the test started on purpose, like a sentinel) remain;
  * mounts: the wrapper's /proc/self/mountinfo is unchanged;
  * cgroups: no new directory named surgebox* under any cgroup hierarchy
    (every v1 hierarchy and the v2 mount) survives the run, and every cgroup
    the run's processes were seen in (outside the driver's own) is gone;
  * state: no new entries remain under /run/surgebox.
Failed checks are collected; finish() prints them and exits 1, or prints PASS.
"""

import atexit
import errno
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP_RC = 77

STATUSES = {"ok", "runtime_error", "signaled", "timeout", "memory_limit", "host_killed",
            "output_limit", "internal_error"}
LIMIT_HITS = {None, "wall_time", "cpu_time", "memory", "output", "file_size"}
STATE_DIRS = ["/run/surgebox"]


def skip(reason):
    print("SKIPPED: " + reason, flush=True)
    sys.exit(SKIP_RC)


def parse_results(text):
    """`RESULT key=value` lines -> dict (a repeated key keeps the last value)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^RESULT ([A-Za-z0-9_.:/\-\[\]]+)=(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


# ---------------------------------------------------------------- /proc views
def mountinfo():
    with open("/proc/self/mountinfo") as f:
        return f.read().splitlines()


def cgroup_mounts():
    """[(mountpoint, fstype, super_options)] for every cgroup/cgroup2 mount."""
    res = []
    for line in mountinfo():
        pre, _, post = line.partition(" - ")
        fields = pre.split()
        pfields = post.split()
        if len(fields) < 5 or len(pfields) < 3:
            continue
        if pfields[0] in ("cgroup", "cgroup2"):
            mp = fields[4].replace("\\040", " ")
            res.append((mp, pfields[0], pfields[2]))
    return res


def have_cgroup_v1(controller):
    for mp, fs, opts in cgroup_mounts():
        if fs == "cgroup" and controller in opts.split(","):
            return mp
    return None


def have_cgroup_v2():
    for mp, fs, _ in cgroup_mounts():
        if fs == "cgroup2":
            return mp
    return None


def _cg_mount_for(controllers):
    """Mount point of the hierarchy named by a /proc/PID/cgroup line's middle field."""
    for mp, fs, opts in cgroup_mounts():
        if controllers == "" and fs == "cgroup2":
            return mp
        if fs == "cgroup" and controllers:
            o = set(opts.split(","))
            if all(c in o for c in controllers.split(",")):
                return mp
    return None


def proc_cgroups(pid):
    """{(mountpoint, path)} for a pid, or empty set when it is gone."""
    res = set()
    try:
        with open("/proc/%s/cgroup" % pid) as f:
            lines = f.read().splitlines()
    except OSError:
        return res
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        mp = _cg_mount_for(parts[1])
        if mp:
            res.add((mp, parts[2]))
    return res


def surgebox_cgroup_dirs(max_depth=8):
    """Every directory under any cgroup mount with a path component surgebox*."""
    found = set()
    for mp, _, _ in cgroup_mounts():
        base_depth = mp.rstrip("/").count("/")
        for root, dirs, _files in os.walk(mp, onerror=lambda e: None):
            depth = root.rstrip("/").count("/") - base_depth
            if depth >= max_depth:
                dirs[:] = []
            rel = os.path.relpath(root, mp)
            if rel != "." and any(c.lower().startswith("surgebox") for c in rel.split("/")):
                found.add(root)
    return found


def cgroup_has_procs(path):
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return f.read().split() != []
    except OSError:
        return False


def state_entries():
    found = set()
    for d in STATE_DIRS:
        if not os.path.isdir(d):
            continue
        for root, dirs, files in os.walk(d):
            if root.count("/") - d.count("/") >= 3:
                dirs[:] = []
            for n in dirs + files:
                found.add(os.path.join(root, n))
    return found


def held_uid_lock(path):
    """A uid lease another surgebox process holds right now (a concurrent
    run elsewhere): not a leftover. Its holder unlinks it on release."""
    if os.path.dirname(path) != "/run/surgebox/uids" or not path.endswith(".lock"):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return True  # gone meanwhile: released
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)  # drops the probe lock


def live_pids():
    """{pid: (state, cmdline)} of every process visible in our /proc except us."""
    res = {}
    me = os.getpid()
    for n in os.listdir("/proc"):
        if not n.isdigit() or int(n) == me:
            continue
        try:
            with open("/proc/%s/stat" % n) as f:
                st = f.read()
            state = st[st.rindex(")") + 2:].split()[0]
            with open("/proc/%s/cmdline" % n, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            if not cmd:
                cmd = st[st.index("(") + 1:st.rindex(")")]
        except (OSError, ValueError):
            continue
        res[int(n)] = (state, cmd)
    return res


def reap_zombies():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# ------------------------------------------------------------------- results
class Run:
    def __init__(self, argv, rc, out, err, wall):
        self.argv = argv
        self.rc = rc
        self.raw_stdout = out
        self.raw_stderr = err
        self.host_wall = wall
        self.doc = None
        self.json_error = None
        self.results = {}

    @property
    def stdout(self):
        return self.doc.get("stdout", "") if self.doc else ""

    @property
    def stderr(self):
        return self.doc.get("stderr", "") if self.doc else ""

    def get(self, key, default=None):
        return self.doc.get(key, default) if self.doc else default

    def summary(self, limit=1500):
        if self.doc is None:
            return ("rc=%s, no JSON (%s); stdout=%r stderr=%r" %
                    (self.rc, self.json_error, self.raw_stdout[:limit], self.raw_stderr[:limit]))
        d = dict(self.doc)
        for k in ("stdout", "stderr"):
            v = d.get(k)
            if isinstance(v, str) and len(v) > 600:
                d[k] = v[:300] + "...<%d chars>..." % len(v) + v[-200:]
        return "rc=%s doc=%s%s" % (self.rc, json.dumps(d, sort_keys=True)[:limit * 2],
                                   (" surgebox-run stderr=%r" % self.raw_stderr[:limit]
                                    if self.raw_stderr else ""))


class Harness:
    def __init__(self, name, surgebox):
        self.name = name
        self.surgebox = surgebox
        self.failures = []
        self.echo = True  # print failed checks as they happen
        self.checks = 0
        self.tmpdirs = []
        self.keep_pids = set()
        if os.getpid() != 1:
            print("FATAL: %s must run as pid 1 of the unshare wrapper "
                  "(tests/security/sandbox_wrapper.sh); refusing to run hostile "
                  "programs outside it" % name, flush=True)
            sys.exit(1)
        if os.geteuid() != 0:
            skip("not root")
        atexit.register(self._cleanup)
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
        if not (surgebox and os.path.isfile(surgebox) and os.access(surgebox, os.X_OK)):
            print("FATAL: surgebox-run binary not found at %r" % surgebox, flush=True)
            sys.exit(1)

    # ------------------------------------------------------------- checking
    def check(self, cond, msg, run=None):
        self.checks += 1
        if not cond:
            full = msg + ("\n      run: " + run.summary() if run is not None else "")
            self.failures.append(full)
            if self.echo:
                print("  FAIL: " + full, flush=True)
        return bool(cond)

    def eq(self, actual, expected, what, run=None):
        return self.check(actual == expected, "%s: expected %r, got %r" % (what, expected, actual), run)

    def within(self, value, lo, hi, what, run=None):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi
        return self.check(ok, "%s: expected within [%s, %s], got %r" % (what, lo, hi, value), run)

    def _cleanup(self):
        for d in self.tmpdirs:
            shutil.rmtree(d, ignore_errors=True)
        self.tmpdirs = []

    def finish(self):
        self._cleanup()
        if self.failures:
            print("FAILED %s: %d of %d checks failed:" % (self.name, len(self.failures), self.checks))
            for f in self.failures:
                print("  - " + f)
            sys.stdout.flush()
            sys.exit(1)
        print("PASS %s (%d checks)" % (self.name, self.checks), flush=True)
        sys.exit(0)

    # ------------------------------------------------------------- helpers
    def tempdir(self, prefix="sbtest-"):
        d = tempfile.mkdtemp(prefix=prefix)
        os.chmod(d, 0o755)
        self.tmpdirs.append(d)
        return d

    def app_dir(self, files=None, progs=None):
        """A fresh --dir: progs {name: host binary} copied mode 0755, files {rel: bytes|str}."""
        d = self.tempdir("sbapp-")
        for name, src in (progs or {}).items():
            dst = os.path.join(d, name)
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o755)
        for rel, data in (files or {}).items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
            os.chmod(p, 0o644)
        return d

    def start_sentinel(self, uid=65534):
        """A process outside the sandbox but inside the wrapper that must survive."""
        def demote():
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        p = subprocess.Popen(["/bin/sleep", "1000"], preexec_fn=demote if uid else None,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        self.keep_pids.add(p.pid)
        return p

    def stop_sentinel(self, p):
        if p.poll() is None:
            p.kill()
        p.wait()
        self.keep_pids.discard(p.pid)

    # ------------------------------------------------------------- running
    @staticmethod
    def load_factor():
        """>= 1: how overloaded the machine is (1-min load per CPU). Wall-clock
        bounds of CPU-bound runs are stretched by it, with a printed note."""
        try:
            with open("/proc/loadavg") as f:
                load = float(f.read().split()[0])
        except (OSError, ValueError):
            return 1.0
        f = max(1.0, load / (os.cpu_count() or 1))
        if f > 1.0:
            print("  NOTE: machine load %.1f on %d CPUs: CPU-bound wall-clock bounds x%.1f"
                  % (load, os.cpu_count() or 1, f), flush=True)
        return f

    def snapshot(self):
        return self._snapshot()

    def run(self, argv, opts=(), app=None, json_doc=True, timeout=None, env=None,
            check_doc=True, expect_rc=0, leftovers=True):
        """Run surgebox-run [opts] [--dir app] [--json] -- argv; check leftovers."""
        cmd = [self.surgebox]
        if app is not None:
            cmd += ["--dir", app]
        cmd += list(opts)
        if json_doc:
            cmd.append("--json")
        cmd += ["--"] + list(argv)
        if timeout is None:
            timeout = 150
        before = self._snapshot() if leftovers else None
        watch = Watch(skip=set(self.keep_pids))
        watch.start()
        t0 = time.monotonic()
        print("  $ " + " ".join(cmd), flush=True)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            watch.stop()
            r = Run(cmd, None, out, err, time.monotonic() - t0)
            self.check(False, "surgebox-run did not finish within %ss (killed by the driver)" % timeout, r)
            self.leftover_checks(before, watch, r)
            return r
        wall = time.monotonic() - t0
        watch.stop()
        r = Run(cmd, p.returncode, out, err, wall)
        if json_doc:
            try:
                r.doc = json.loads(out.decode("utf-8"))
                if not isinstance(r.doc, dict):
                    r.json_error = "stdout is JSON but not an object"
                    r.doc = None
            except (UnicodeDecodeError, ValueError) as e:
                r.json_error = "stdout is not one JSON document: %s" % e
            if r.doc is not None:
                r.results = parse_results(r.stdout)
        if os.environ.get("SBTEST_VERBOSE"):
            print("    -> " + r.summary(4000), flush=True)
        if expect_rc is not None:
            self.eq(r.rc, expect_rc, "surgebox-run exit code", r)
        if json_doc and check_doc:
            if self.check(r.doc is not None, "result document missing", r):
                self.validate_doc(r)
        if leftovers:
            self.leftover_checks(before, watch, r)
        return r

    def validate_doc(self, r):
        d = r.doc
        types = {
            "status": str, "stdout": str, "stderr": str, "stdout_lossy": bool,
            "stderr_lossy": bool, "stdout_truncated": bool, "stderr_truncated": bool,
            "cpu_time_s": (int, float), "user_time_s": (int, float), "sys_time_s": (int, float),
            "wall_time_s": (int, float), "max_rss_kb": int,
            "pids_limit_hit": bool, "limits": dict, "enforced": dict, "cgroup": str,
            "warnings": list,
        }
        missing = [k for k in list(types) + ["exit_code", "signal", "limit_hit", "cgroup_peak_kb"]
                   if k not in d]
        self.check(not missing, "result document lacks fields %s" % missing, r)
        for k, t in types.items():
            if k in d:
                self.check(isinstance(d[k], t) and not (t is int and isinstance(d[k], bool)),
                           "field %s has type %s" % (k, type(d[k]).__name__), r)
        cp = d.get("cgroup_peak_kb")
        self.check(cp is None or (isinstance(cp, int) and not isinstance(cp, bool)),
                   "cgroup_peak_kb must be int or null", r)
        self.check(d.get("status") in STATUSES, "unknown status %r" % d.get("status"), r)
        self.check(d.get("limit_hit") in LIMIT_HITS, "unknown limit_hit %r" % d.get("limit_hit"), r)
        self.check(d.get("cgroup") in ("v1", "v2", "none"), "unknown cgroup %r" % d.get("cgroup"), r)
        ec, sig = d.get("exit_code"), d.get("signal")
        self.check(ec is None or (isinstance(ec, int) and not isinstance(ec, bool)),
                   "exit_code must be int or null", r)
        self.check(sig is None or (isinstance(sig, str) and sig.startswith("SIG")),
                   "signal must be a SIGxxx name or null", r)
        if d.get("status") == "internal_error":
            self.check(isinstance(d.get("error"), str) and d.get("error"),
                       "internal_error without an error string", r)

    # ------------------------------------------------------------- leftovers
    def _snapshot(self):
        return {
            "mountinfo": mountinfo(),
            "cgdirs": surgebox_cgroup_dirs(),
            "state": state_entries(),
            "own_cg": proc_cgroups("self"),
        }

    def leftover_checks(self, before, watch, r):
        """watch: the Watch that ran alongside (its pid namespaces identify
        this run's instances), or None."""
        if before is None:
            return
        seen_cg = watch.seen_cg if watch else set()
        ours = watch.seen_ns if watch else {own_pidns()}
        # Processes: only the driver and the processes it keeps on purpose.
        deadline = time.monotonic() + 3.0
        while True:
            reap_zombies()
            extra = {pid: v for pid, v in live_pids().items() if pid not in self.keep_pids}
            if not extra or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.check(not extra, "processes left in the wrapper's pid namespace after the run: %s"
                   % ", ".join("%d[%s] %s" % (p, s, c[:80]) for p, (s, c) in sorted(extra.items())))
        # Mounts of the wrapper's mount namespace.
        after = mountinfo()
        added = [l for l in after if l not in before["mountinfo"]]
        removed = [l for l in before["mountinfo"] if l not in after]
        self.check(not added and not removed,
                   "wrapper mount table changed: added %s removed %s" % (added, removed))
        # Cgroups: new surgebox* dirs of this run's instances must be gone; so
        # must every cgroup this run's processes were seen in (other than the
        # driver's own). Instances named surgebox-i<pid>-<pid ns inode> of a
        # pid namespace this run never had (a concurrent run elsewhere on the
        # machine) are not ours.
        deadline = time.monotonic() + 2.0
        while True:
            new = {d for d in surgebox_cgroup_dirs() - before["cgdirs"]
                   if not foreign_instance(d, ours) and not cgroup_has_procs(d)}
            own = set(before["own_cg"])
            mine = set()
            for mp, path in seen_cg:
                if (mp, path) in own or path in ("/", ""):
                    continue
                full = os.path.join(mp, path.lstrip("/"))
                if os.path.isdir(full):
                    mine.add(full)
            if (not new and not mine) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.check(not new, "new surgebox cgroup directories left behind: %s" % sorted(new))
        self.check(not mine, "cgroups of this run's processes still exist: %s" % sorted(mine))
        # The base state dir itself (/run/surgebox/state) and the uid lock
        # dir (/run/surgebox/uids) persist by design; per-instance entries
        # and uid lock files nobody holds must not.
        deadline = time.monotonic() + 2.0
        while True:
            st = {e for e in state_entries() - before["state"]
                  if not foreign_instance(e, ours) and not held_uid_lock(e)
                  and not (os.path.dirname(e) in STATE_DIRS and os.path.isdir(e)
                           and os.path.basename(e) in ("state", "uids"))}
            if not st or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.check(not st, "new entries left under %s: %s" % (STATE_DIRS, sorted(st)[:20]))


INSTANCE_RE = re.compile(r"^surgebox-i\d+-(\d+)")


def own_pidns():
    return os.stat("/proc/self/ns/pid").st_ino


def foreign_instance(path, ours):
    """True when a path names an instance (surgebox-i<pid>-<pidns inode>) of a
    pid namespace not in ours."""
    for c in path.split("/"):
        m = INSTANCE_RE.match(c)
        if m and int(m.group(1)) not in ours:
            return True
    return False


class Watch:
    """Polls every process visible in the wrapper (all of them belong to this
    test) and records their cgroups and pid namespaces while a run goes on."""

    def __init__(self, skip=()):
        self.skip = {os.getpid()} | set(skip)
        self.seen_cg = set()
        self.seen_ns = {own_pidns()}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._poll, daemon=True)

    def _poll(self):
        while not self._stop.is_set():
            try:
                for n in os.listdir("/proc"):
                    if n.isdigit() and int(n) not in self.skip:
                        self.seen_cg.update(proc_cgroups(n))
                        try:
                            self.seen_ns.add(os.stat("/proc/%s/ns/pid" % n).st_ino)
                        except OSError:
                            pass
            except OSError:
                pass
            self._stop.wait(0.005)

    def start(self):
        self._t.start()
        return self

    def stop(self):
        self._stop.set()
        self._t.join()


def errno_name(n):
    return errno.errorcode.get(n, str(n))


def main_args(argv):
    """--surgebox PATH --progs DIR CASE [extra...]"""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--surgebox", required=True)
    ap.add_argument("--progs", required=True)
    ap.add_argument("--backend", default=None, help="v1|v2|none: run with --cgroup BACKEND")
    ap.add_argument("case")
    return ap.parse_args(argv)
