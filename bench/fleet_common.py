"""What the fleet benches share (issue 39): private daemons pinned to CPUs,
and the CPU a process tree used. Run inside the throw-away wrapper
(unshare --mount --propagation private --pid --fork --mount-proc) with
SURGEBOX_BIN_DIR=BUILD/bin."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))

import surgebox  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def surgeboxd():
    bin_dir = os.environ.get("SURGEBOX_BIN_DIR") or os.path.join(HERE, "..", "build", "bin")
    return os.path.join(bin_dir, "surgeboxd")


def pin(pid, cpus):
    """Every thread of pid on `cpus` (what it forks later inherits the mask of its thread)."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass


def start(cpus=None, jobs=1, extra=()):
    """A private surgeboxd with `jobs` worker slots, pinned to `cpus` (a set) when given."""
    d = surgebox.PrivateDaemon(surgeboxd=surgeboxd(), args=["--jobs", str(jobs)] + list(extra))
    if cpus is not None:
        pin(d.pid, cpus)
    return d


def tree_cpu(pid):
    """utime+stime of pid and of its reaped children, seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK


def cpus_of_machine():
    return sorted(os.sched_getaffinity(0))


def batch_rusage(cli, jobs, target, concurrency):
    """One `cli batch JOBS` run over `target` (["--socket", A] or ["--endpoints", "A,B"]) with `concurrency`
    in flight: (user ms, system ms) of the whole process from wait4 (it forks nothing), and its answers.
    An exit other than 0 ends the bench with batch's last words."""
    import json
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="sbcpu-") as tmp:
        out = os.path.join(tmp, "out.jsonl")
        env = dict(os.environ)
        env.pop("SURGEBOX_SOCKET", None)
        p = subprocess.Popen([cli, "batch", jobs, "--out", out, "--concurrency", str(concurrency),
                              "--progress-interval", "3600"] + list(target),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("%s batch %s: exit %d: %s" % (cli, target[0], os.waitstatus_to_exitcode(status),
                                                           err[-400:]))
        with open(out) as f:
            answers = [json.loads(ln) for ln in f if ln.strip()]
    return (1e3 * ru.ru_utime, 1e3 * ru.ru_stime), answers
