#!/usr/bin/env python3
"""Are this machine's CPUs independent? What a program's measured CPU time
becomes when another CPU is busy (stop 47: on a 2-vCPU VM whose hypervisor
shadows page tables, a compute loop gained 46 % beside a fork+exec loop,
and an exec-heavy program 50-130 %). The answer bounds what `--jobs N` > 1
measures of a program near its CPU limit, and why work moved beside a
program (a next sandbox set up ahead) is paid by that program.

Two of our own programs (bench/progs, built with the project), each run on
CPU A with its CPU time from wait4, in three conditions alternated round by
round: alone; beside a spinner on CPU B (`burn_iter` with no end in sight);
beside a fork+exec loop on CPU B (`noop` started and reaped back to back).

  compute  burn_iter N: dependent multiply-adds, no system calls
  start    noop, 200 times: spawn (exec) and exit of a static program

Prints the medians and each ratio to "alone"; asserts nothing. Runs as any
user; it runs only these programs.

  python3 bench/neighbour_cpu.py [--progs build/bench-progs] [--iters N] [--rounds R]"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def cpu_of(argv):
    """The CPU time (user + system, seconds) of one run of argv, started by
    posix_spawn (a vfork: no copy of this interpreter's memory to pay for)
    on the CPU this process is pinned to."""
    pid = os.posix_spawn(argv[0], argv, {})
    _, status, ru = os.wait4(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit("neighbour_cpu.py: %s ended with status %d" % (argv[0], status))
    return ru.ru_utime + ru.ru_stime


def starts(noop, n):
    """The CPU time of n spawns (exec and exit) of noop, summed."""
    return sum(cpu_of([noop]) for _ in range(n))


def neighbour(kind, progs, cpu):
    """A process on cpu that keeps it busy: a spinner ("spin") or a
    fork+exec loop ("fork+exec")."""
    if kind == "spin":
        argv = [os.path.join(progs, "burn_iter"), str(1 << 62)]
    else:  # a shell loop of our static no-op program
        argv = ["/bin/sh", "-c", 'while :; do "$0"; done', os.path.join(progs, "noop")]
    return subprocess.Popen(argv, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--progs", default=os.path.join("build", "bench-progs"))
    ap.add_argument("--iters", type=int, default=100_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        sys.exit("neighbour_cpu.py: needs two CPUs to run on, has %d" % len(cpus))
    for p in ("burn_iter", "noop"):
        if not os.access(os.path.join(a.progs, p), os.X_OK):
            sys.exit("neighbour_cpu.py: no %s in %s: build the project first, or give --progs" % (p, a.progs))
    here, there = cpus[0], cpus[1]
    os.sched_setaffinity(0, {here})  # what it spawns runs here; the neighbour is moved there
    compute = [os.path.join(a.progs, "burn_iter"), str(a.iters)]
    noop = os.path.join(a.progs, "noop")
    conditions = ("alone", "spin", "fork+exec")
    got = {(w, c): [] for w in ("compute", "start") for c in conditions}
    for r in range(a.rounds):
        for c in (conditions if r % 2 == 0 else conditions[::-1]):
            n = None if c == "alone" else neighbour(c, a.progs, there)
            try:
                time.sleep(0.2 if n else 0)
                got[("compute", c)].append(cpu_of(compute))
                got[("start", c)].append(starts(noop, 200) / 200)
            finally:
                if n:
                    n.kill()
                    n.wait()
    print("CPU %d measured, CPU %d the neighbour's; %d rounds, medians" % (here, there, a.rounds))
    for w, unit in (("compute", "ms"), ("start", "ms a start")):
        base = statistics.median(got[(w, "alone")])
        row = ["%s: alone %.3f %s" % (w, base * 1e3, unit)]
        for c in conditions[1:]:
            m = statistics.median(got[(w, c)])
            row.append("beside %s %.3f (%.2fx)" % (c, m * 1e3, m / base))
        print("; ".join(row))


if __name__ == "__main__":
    main()
