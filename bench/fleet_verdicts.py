#!/usr/bin/env python3
"""The same verdicts on an idle fleet and on one oversubscribed 4x (issue 39 targets 0 changes).

200 programs chosen to sit near their limits, a third each:
  cpu    python3 burning CPU to 0.6-0.75x or 1.3-1.5x of cpu_time_s 0.5 (time_s 30)
  sleep  `sleep` for 0.6-0.7x or 1.3-1.5x of the wall limit time_s 0.5
  memory python3 touching 30-38 MiB (beside its ~10 MiB) or 83-96 MiB under memory_mib 64
Two private daemons (--jobs 1 each, pinned to CPUs of their own). Idle: one
client, one job per worker slot (2 in flight). Oversubscribed: 4 clients
(threads, each Client(endpoints=)) share the same 200 programs with 2 in
flight each, 8 against 2 slots: jobs wait in the daemons' queues, and queue
time must not be charged to them. A verdict is the job's status and the
limit it hit (last step's limit_hit). Prints the verdict counts of each run
and the number of programs whose verdict changed. Asserts nothing.

    SURGEBOX_BIN_DIR=build/bin unshare --mount --propagation private --pid \\
        --fork --mount-proc python3 bench/fleet_verdicts.py [--programs 200]
"""
import argparse
import collections
import json
import threading
import time

import fleet_common as fc
import surgebox

CPU_LIMIT, WALL_LIMIT, MEM_MIB = 0.5, 0.5, 64
FACTORS_UNDER, FACTORS_OVER = (0.6, 0.65, 0.7, 0.75), (1.3, 1.4, 1.5)


def program(i):
    kind = ("cpu", "sleep", "memory")[i % 3]
    k = i // 3
    over = k % 2 == 1
    f = (FACTORS_OVER if over else FACTORS_UNDER)[k // 2 % (3 if over else 4)]
    if kind == "cpu":
        src = "import time\nwhile time.process_time() < %r:\n    pass\nprint('done')\n" % (CPU_LIMIT * f)
        return {"id": i, "toolchain": "python3", "files": {"main.py": src},
                "limits": {"cpu_time_s": CPU_LIMIT, "time_s": 30}}, kind, f
    if kind == "sleep":
        return {"id": i, "steps": [{"argv": ["sleep", "%.3f" % (WALL_LIMIT * f)],
                                    "limits": {"time_s": WALL_LIMIT}}]}, kind, f
    mib = int(MEM_MIB * f * (1.0 if over else 0.8))  # 30-38 MiB under (beside the interpreter), 83-96 over
    src = "b = bytearray(%d << 20)\nfor j in range(0, len(b), 4096):\n    b[j] = 1\nprint('done')\n" % mib
    return {"id": i, "toolchain": "python3", "files": {"main.py": src},
            "limits": {"memory_mib": MEM_MIB, "time_s": 30}}, kind, mib


def verdict(r):
    step = (r.get("steps") or [{}])[-1]
    return "%s/%s" % (r.status, step.get("limit_hit") or "-")


def run(eps, progs, clients, per_client):
    out, lock = {}, threading.Lock()

    def one(share):
        with surgebox.Client(endpoints=eps) as c:
            for r in c.run_many([p for p, _, _ in share], concurrency=per_client):
                with lock:
                    out[r["id"]] = r
    threads = [threading.Thread(target=one, args=(progs[k::clients],)) for k in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=200)
    a = ap.parse_args()
    cpus = fc.cpus_of_machine()
    progs = [program(i) for i in range(a.programs)]
    daemons = [fc.start({cpus[0]}), fc.start({cpus[-1]})]
    try:
        eps = [d.socket for d in daemons]
        idle, t_idle = run(eps, progs, 1, 2)
        busy, t_busy = run(eps, progs, 4, 2)
    finally:
        for d in daemons:
            d.stop()
    changed = []
    for p, kind, f in progs:
        i = p["id"]
        if verdict(idle[i]) != verdict(busy[i]):
            changed.append({"id": i, "kind": kind, "factor_or_mib": f, "idle": verdict(idle[i]),
                            "oversubscribed": verdict(busy[i])})
    queue = [r.get("queue_time_s") or 0 for r in busy.values()]
    print(json.dumps({"bench": "fleet_verdicts", "programs": a.programs,
                      "idle": dict(collections.Counter(verdict(r) for r in idle.values())),
                      "oversubscribed_4x": dict(collections.Counter(verdict(r) for r in busy.values())),
                      "wall_s": {"idle": round(t_idle, 1), "oversubscribed": round(t_busy, 1)},
                      "max_queue_time_s_oversubscribed": round(max(queue), 2),
                      "verdict_changes": len(changed), "target": 0, "changes": changed[:20]}, indent=1))


if __name__ == "__main__":
    main()
