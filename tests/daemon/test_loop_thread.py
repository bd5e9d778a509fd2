#!/usr/bin/env python3
"""Issue 22: nothing of a slot's teardown blocks the daemon's loop thread.

Run as: test_loop_thread.py BIN_DIR (inside the unshare wrapper, as root).
Two workers, two clients on their own connections. Client A runs, back to
back, jobs that leave 300 MB in /dev/shm and 100,000 files in /tmp: each
one's teardown (its mount namespace, its cgroup's page cache) takes a
noticeable time. Client B runs short honest jobs under a tight wall limit,
one after the other, first alone, then beside A. B's jobs must all end ok,
B's latency (request sent to answer read) beside A must stay within a
generous bound of B's latency alone (measured in the same run), and the
loop thread's longest turn (status' loop_busy_max_s) must stay short: when
the daemon cleaned a slot on the loop (7b7f37a), the next job of a slot
stalled every other client for the teardown's time. A third client's ping
round trips and B's slowest answers (queue, set-up, program) are printed.
Each connection's jobs keep to their own slot (daemon/sched.c), so A's
next job waits for A's teardown, not B.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as td  # noqa: E402  the daemon and client helpers
from test_daemon import check  # noqa: E402

HEAVY = r"""
import os   # loop-thread-heavy
for k in range(3):                       # tmpfs pages charged to the slot's cgroup
    with open("/dev/shm/fill%d" % k, "wb") as f:   # (files under the 256 MiB file size limit)
        for _ in range(100):
            f.write(b"\x5a" * (1 << 20))
for i in range(100000):                  # dentries and inodes to tear down
    os.close(os.open("/tmp/f%d" % i, os.O_CREAT | os.O_WRONLY, 0o600))
print("planted")
"""
N_HEAVY = 4
N_ALONE = 20
# B's own run takes a few ms (its wall up to 0.32 s seen at load 21 on 2
# cores); a loop stall past the limit (7b7f37a: a 0.2 s fence, then 0.3-1.7 s
# of reclaim) ended it `timeout` (with 0.2 s: 2 runs of 2 on 7b7f37a).
B_LIMITS = {"time_s": 0.5}
RATIO, SLACK_S = 3.0, 0.1   # B's p90 latency beside A <= RATIO x alone + SLACK_S
# The loop's longest turn while A runs: at most 0.14 s seen at load 21 and
# 0.04 s at load 34 on 2 cores; on 7b7f37a the fence alone held it 0.2 s,
# then came the reclaim. B's longest latency is printed, not
# asserted: on a loaded machine the kernel's own work of a teardown (RCU
# callbacks of 100k dentries, the global mount lock) can delay another
# slot's sandbox set-up in the kernel by up to a second, with the loop free.
TURN_MAX = "0.25"  # a bucket bound of surgebox_loop_busy_seconds


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.9 * len(xs)))]


def turns_over(c, bound):
    """(turns of the loop so far, how many were busy longer than bound) from
    the surgebox_loop_busy_seconds histogram; None without it."""
    text = c.call({"id": "m", "type": "metrics"}).get("text", "")
    le = {}
    for line in text.splitlines():
        if line.startswith('surgebox_loop_busy_seconds_bucket{le="'):
            le[line.split('"')[1]] = int(line.rsplit(" ", 1)[1])
    if "+Inf" not in le or bound not in le:
        return None
    return le["+Inf"], le["+Inf"] - le[bound]


def b_job(c, n):
    t = time.monotonic()
    r = c.call(td.exec_req("b%d" % n, ["/bin/true"], limits=B_LIMITS), timeout=120)
    return time.monotonic() - t, r


def main():
    td.BIN = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIPPED: the daemon tests run as root (CI and this machine are root)")
        sys.exit(td.SKIP)
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid is not 1)")
        sys.exit(2)
    d = td.Daemon("--jobs", "2", "--no-cache", *td.NO_TOOLCHAINS)
    try:
        run(d)
    finally:
        d.stop()
    if td.failures:
        print("--- daemon log ---\n" + d.logtext()[-4000:])
        sys.exit(1)
    print("PASS")


def run(d):
    a, b = td.Client(d.sock), td.Client(d.sock)
    for n in range(3):  # warm: the slots' templates and cgroups exist (a slot's
        b_job(b, 1000 + n)  # first job builds its template on the loop, ~0.3 s at load 30)
    a.call(td.exec_req("a-warm", ["python3", "-c", "pass"]), timeout=120)  # A's own slot
    alone = []
    for n in range(N_ALONE):
        lat, r = b_job(b, n)
        check(r.get("status") == "ok", f"B alone, job {n}: {r.get('status')} {r.get('steps')}")
        alone.append(lat)
    busy0 = a.call({"id": "st0", "type": "status"}).get("loop_busy_max_s")
    turns0 = turns_over(a, TURN_MAX)
    heavy, heavy_times = [], []

    def client_a():
        for n in range(N_HEAVY):
            t = time.monotonic()
            req = td.exec_req("a%d" % n, ["python3", "-c", HEAVY], limits={"memory_mib": 1024, "time_s": 60})
            heavy.append(a.call(req, timeout=300))
            heavy_times.append(time.monotonic() - t)

    pings = []

    def client_c():  # a ping is answered on the loop alone: its round trip shows the loop's stalls (printed:
        # it also carries this script's threads and the machine's load)
        c = td.Client(d.sock)
        k = 0
        while th.is_alive():
            t = time.monotonic()
            c.call({"id": "p%d" % k, "type": "ping"})
            pings.append(time.monotonic() - t)
            k += 1
            time.sleep(0.005)
        c.close()

    th = threading.Thread(target=client_a)
    th.start()
    tc = threading.Thread(target=client_c)
    tc.start()
    beside, statuses, worst = [], [], []
    n = 0
    while th.is_alive() or n < N_ALONE:
        lat, r = b_job(b, 100 + n)
        beside.append(lat)
        statuses.append(r.get("status"))
        s = (r.get("steps") or [{}])[0]
        worst.append((lat, r.get("queue_time_s"), s.get("setup_time_s"), s.get("wall_time_s"), s.get("status")))
        if r.get("status") != "ok":
            print("B beside A:", r)
        n += 1
    th.join()
    tc.join()
    st = a.call({"id": "st1", "type": "status"})
    busy1 = st.get("loop_busy_max_s")
    turns1 = turns_over(a, TURN_MAX)

    for n, r in enumerate(heavy):
        s = (r.get("steps") or [{}])[0]
        check(r.get("status") == "ok" and "planted" in s.get("stdout", ""),
              f"A's job {n} planted its files: {r.get('status')} {s.get('error')} {s.get('stderr', '')[-400:]}")
    bad = [s for s in statuses if s != "ok"]
    check(not bad, f"B's honest jobs beside A's teardown: {len(bad)} of {len(statuses)} not ok: {bad}")
    la, lb = p90(alone), p90(beside)
    print(f"A: {N_HEAVY} heavy jobs, {', '.join('%.2f' % t for t in heavy_times)} s each; "
          f"B: p90 latency alone {la * 1000:.1f} ms ({len(alone)} jobs, max {max(alone) * 1000:.1f} ms), beside A {lb * 1000:.1f} ms "
          f"({len(beside)} jobs, max {max(beside) * 1000:.1f} ms); "
          f"loop busy max: {busy0} s before, {busy1} s after (turns, over {TURN_MAX} s: {turns0} {turns1}); "
          f"ping round trip max {max(pings) * 1000:.1f} ms ({len(pings)} pings)", flush=True)
    for w in sorted(worst, key=lambda w: w[0])[-3:]:  # where B's slowest answers spent their time
        print("B's slow job: latency %.3f s, queued %s s, set-up %s s, wall %s s, %s" % w, flush=True)
    check(lb <= RATIO * la + SLACK_S,
          f"B's p90 latency beside A's teardown {lb * 1000:.1f} ms > {RATIO} x alone {la * 1000:.1f} ms + "
          f"{SLACK_S * 1000:.0f} ms")
    check(isinstance(busy1, (int, float)), f"status has no loop_busy_max_s: {busy1!r}")
    check(turns0 is not None and turns1 is not None, "metrics have no surgebox_loop_busy_seconds histogram")
    if turns0 is not None and turns1 is not None:
        long_turns = turns1[1] - turns0[1]
        check(long_turns == 0, f"the loop thread was busy longer than {TURN_MAX} s in {long_turns} of its "
              f"{turns1[0] - turns0[0]} turns while A's slots were torn down (longest since start: {busy1} s)")


if __name__ == "__main__":
    main()
