#!/usr/bin/env python3
"""A wall limit excuses the time a program waited for a CPU that other work
held (runners/stall.c), and nothing else.

Run as: test_stall_grace.py BIN_DIR CGROUP (auto|none), inside the unshare
wrapper (ctest). The daemon and everything it starts are pinned to one CPU,
so two CPU-bound jobs at once each get about half of it: a program that
needs c seconds of CPU takes about 2c of wall. Each limit is a multiple of c
measured alone in the same run, never a figure of this machine's speed.

- pair: two such programs, limit 0.75c/s, s the share of the CPU each got
  in the last pair (0.5 at first, less when other work on the machine
  takes some of that CPU too): past the limit (c/s of wall) and within
  twice it, the most an excuse allows. With the default grace a program
  runs past its limit only with `wall_excused_s` > 0 (never more than the
  limit), one at least ends ok that way, and one killed for wall had its
  limit's worth of CPU (or reached twice its limit); with --stall-grace 0
  they end wall_time at the limit, nothing excused.
- sleeper: `sleep` beside a spinner ends wall_time at its limit: sleeping is
  not waiting for a CPU.
- own_child: a program whose own child spins beside it on the one CPU
  waits as long, but its job's CPU filled the wall: nothing is excused
  beyond the wall its CPU left (other work's, on a loaded machine).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as td  # noqa: E402  Daemon, Client, check

SPIN = "n = %d\nx = 0\nfor i in range(n):\n    x = (x * 31 + i) %% 1000003\nprint(x)\n"
FORK_SPIN = "import os\nos.fork()\n" + SPIN
PY = "/usr/bin/python3"
ATTEMPTS = 3


def job(i, argv, limit, files=None, warm=False):
    r = td.exec_req("j%d" % i, argv, files=files, limits={"time_s": limit, "cpu_time_s": 4 * limit})
    if warm:  # a warm step is its slot's zygote's child, not the sandbox init's (stall.c finds both)
        r["warm"] = True
    return r


def run_together(sock, jobs):
    """Send every job at once on one connection; their run steps' results, in job order."""
    c = td.Client(sock)
    try:
        for j in jobs:
            c.send(j)
        got = {}
        while len(got) < len(jobs):
            r = c.recv(timeout=120)
            td.check(r.get("type") == "exec" and r.get("steps"), "a job's result, not %s" % str(r)[:300])
            got[r["id"]] = r["steps"][0]
        return [got[j["id"]] for j in jobs]
    finally:
        c.close()


def brief(s):
    return {k: s.get(k) for k in ("status", "limit_hit", "cpu_time_s", "wall_time_s", "wall_excused_s")}


def calibrate(sock):
    """n iterations of SPIN that take about 0.5 s of CPU alone, and that CPU."""
    n = 2_000_000
    for _ in range(4):
        (s,) = run_together(sock, [job(0, [PY, "-c", SPIN % n], 60)])
        td.check(s["status"] == "ok", "the calibration run ends ok: %s" % brief(s))
        c = s["cpu_time_s"]
        if 0.35 <= c <= 0.8:
            return n, c
        n = max(200_000, int(n * 0.5 / max(c, 0.01)))
    return n, c


def pair_limit(est, share):
    """0.75 of the wall a program of est CPU takes at this share of the CPU: past the limit, and
    within twice it. est is the CPU a program took in the last run that let it finish (this VM's
    speed moves by a third within minutes); share is what each of the pair got in the last pair
    (a half of the pinned CPU on a quiet machine; less where other work runs on it too: stop 55,
    a CI run beside this test gave each 0.38, and a fixed 1.3x limit left no room below 2x)."""
    return round(0.75 * est / share, 3)


def share_of(res, share):
    """The share of the CPU each program of a pair got (CPU over wall), else share."""
    got = [s["cpu_time_s"] / s["wall_time_s"] for s in res if s["wall_time_s"] > 0]
    return min(0.9, max(0.1, sum(got) / len(got))) if got else share


def case_pair(sock, sock0, n, c):
    """Each attempt's limit is pair_limit's, from the last pair's CPU and share of the same
    start (a warm program skips the interpreter's start-up: less CPU than a cold one)."""
    spin = [PY, "-c", SPIN % n]
    seen = seen_warm = False
    est, share = {False: c, True: c}, {False: 0.5, True: 0.5}
    for attempt in range(2 * ATTEMPTS):
        warm = bool(attempt % 2)
        limit = pair_limit(est[warm], share[warm])
        if warm:  # the same program as a script, started by the slot's warm interpreter
            files = [{"path": "spin.py", "content": SPIN % n}]
            res = run_together(sock, [job(i, [PY, "spin.py"], limit, files, True) for i in (1, 2)])
            for s in res:
                td.check(str(s.get("enforced", {}).get("start", "")).startswith("warm"),
                         "the script started warm: %s" % s.get("enforced", {}).get("start"))
            seen_warm = seen_warm or check_pair(res, limit, "warm")
        else:
            res = run_together(sock, [job(1, spin, limit), job(2, spin, limit)])
            seen = seen or check_pair(res, limit, "cold")
        est[warm], share[warm] = finished_cpu(res, est[warm]), share_of(res, share[warm])
        if seen and seen_warm:
            break
    td.check(seen, "in %d attempts, a program sharing the CPU ran past its wall limit, excused, and ended ok" % ATTEMPTS)
    td.check(seen_warm, "in %d attempts, a warm program sharing the CPU ran past its wall limit, excused, and ended ok"
             % ATTEMPTS)

    killed = False
    est, share = est[False], share[False]
    for attempt in range(ATTEMPTS):
        limit = pair_limit(est, share)
        res = run_together(sock0, [job(1, spin, limit), job(2, spin, limit)])
        print("pair, grace 0, limit %.3f:" % limit, [brief(s) for s in res])
        for s in res:
            td.check(s["wall_excused_s"] == 0, "--stall-grace 0 excuses nothing: %s" % brief(s))
            td.check(s["wall_time_s"] < limit + 0.5, "--stall-grace 0: killed at the wall limit: %s" % brief(s))
            killed = killed or (s["status"] == "timeout" and s["limit_hit"] == "wall_time")
        est, share = finished_cpu(res, est), share_of(res, share)
        if killed:
            break
    td.check(killed, "in %d attempts, --stall-grace 0 ended a program that shared the CPU at its wall limit" % ATTEMPTS)
    return est


def check_pair(res, limit, how):
    """The checks of one grace-5 pair; true when a program ran past its limit, excused, and ended ok."""
    seen = False
    print("pair, grace 5, %s, limit %.3f:" % (how, limit), [brief(s) for s in res])
    for s in res:
        td.check(s["wall_excused_s"] <= limit + 1e-6, "the excuse is at most the limit: %s" % brief(s))
        if s["status"] != "ok":  # killed once it had its limit's worth of CPU, or at the cap
            td.check(s["limit_hit"] == "wall_time" and (s["cpu_time_s"] >= 0.9 * limit or s["wall_time_s"] >= 1.9 * limit),
                     "the time a program waited for the CPU is not charged to it: killed for wall only once "
                     "it had 0.9x its limit of CPU, or at twice its limit: %s" % brief(s))
        if s["wall_time_s"] > limit:
            td.check(s["wall_excused_s"] > 0, "past its wall limit only by an excuse: %s" % brief(s))
            seen = seen or s["status"] == "ok"
    return seen


def finished_cpu(res, est):
    """The mean CPU of the programs that finished, else est."""
    done = [s["cpu_time_s"] for s in res if s["status"] == "ok"]
    return sum(done) / len(done) if done else est


def case_sleeper(sock, n, c):
    limit = round(max(0.5, c), 3)
    res = run_together(sock, [job(1, ["sleep", "30"], limit), job(2, [PY, "-c", SPIN % (4 * n)], 60)])
    s = res[0]
    print("sleeper beside a spinner, limit %.3f:" % limit, brief(s))
    td.check(s["status"] == "timeout" and s["limit_hit"] == "wall_time", "the sleeper ends wall_time: %s" % brief(s))
    td.check(s["wall_excused_s"] < 0.2 * limit, "sleeping is not waiting for a CPU: %s" % brief(s))
    td.check(s["wall_time_s"] < 1.2 * limit + 0.3, "the sleeper ends near its limit: %s" % brief(s))


def case_own_child(sock, n, est):
    """Limit 1.2x a program's CPU (the latest estimate); the program and its own child each
    spin that long on the one CPU, so the job needs about twice its limit of wall."""
    for attempt in range(ATTEMPTS):
        limit = round(1.2 * est, 3)
        (s,) = run_together(sock, [job(1, [PY, "-c", FORK_SPIN % n], limit)])
        print("own child beside it, limit %.3f:" % limit, brief(s))
        if s["status"] == "ok":  # faster than the estimate: the job's CPU / 2 is the next one
            est = s["cpu_time_s"] / 2
            continue
        td.check(s["limit_hit"] == "wall_time", "two spinners of one job on one CPU end wall_time: %s" % brief(s))
        # On one CPU the wall the job's CPU did not fill only grows; its processes waiting for
        # each other fill none of it. What is left is other work's (other tests on a loaded
        # machine), which is excused: never more than it (+ a clock tick of the /proc poll).
        td.check(s["wall_excused_s"] <= max(0.0, s["wall_time_s"] - s["cpu_time_s"]) + 0.03,
                 "a job's own processes earn no excuse: excused at most its wall less its CPU: %s" % brief(s))
        return
    td.check(False, "in %d attempts, a job whose two spinners share one CPU did not reach its wall limit" % ATTEMPTS)


def main():
    td.BIN = sys.argv[1]
    cgroup = sys.argv[2]
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the daemon and its sandboxes inherit it
    args = ["--jobs", "2", "--cgroup", cgroup]
    d, d0 = td.Daemon(*args), td.Daemon(*args, "--stall-grace", "0")
    try:
        n, c = calibrate(d.sock)
        print("calibration: %d iterations, %.3f s of CPU alone" % (n, c))
        est = case_pair(d.sock, d0.sock, n, c)
        case_sleeper(d.sock, n, c)
        case_own_child(d.sock, n, est)
    finally:
        d.stop()
        d0.stop()
    if td.failures:
        print("FAILED:", *td.failures, sep="\n  ")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
