#!/usr/bin/env python3
"""The C client's CPU per job (issue 39: <= 0.2 ms), two CLIs A/B: `surgebox
batch` over N trivial jobs (`true`, 16 in flight, as bench/fleet_client_cpu.py
runs it) through one private daemon (--jobs 2), OLD and NEW interleaved round
by round (order alternating) so that the machine's drift cancels. Each run's
user and system CPU come from wait4 (the whole process). Prints per CLI the
mean user, system and total ms per job, and NEW/OLD. Nothing asserted.

    SURGEBOX_BIN_DIR=build/bin unshare --mount --propagation private --pid \\
        --fork --mount-proc python3 bench/batch_cpu_ab.py OLD_CLI NEW_CLI [N [ROUNDS]]
"""
import json
import os
import statistics
import sys
import tempfile

import fleet_common as fc

CONC = 16


def batch_cpu(cli, sock, jobs, n):
    """(user ms, system ms) per job of one `cli batch` run."""
    (user, system), answers = fc.batch_rusage(cli, jobs, ["--socket", sock], CONC)
    got = sum(1 for a in answers if a.get("status") == "ok")
    if got != n:
        raise SystemExit("batch_cpu_ab: %s: %d of %d jobs ok" % (cli, got, n))
    return user / n, system / n


def main():
    old, new = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    d = fc.start(jobs=2)
    try:
        with tempfile.TemporaryDirectory(prefix="sbab-") as tmp:
            jobs = os.path.join(tmp, "jobs.jsonl")
            with open(jobs, "w") as f:
                for i in range(n):
                    f.write(json.dumps({"id": i, "steps": [{"argv": ["true"]}]}) + "\n")
            batch_cpu(new, d.socket, jobs, n)  # warm-up: the daemon's slots made
            got = {"old": [], "new": []}
            for r in range(rounds):
                order = (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old))
                for name, cli in order:
                    got[name].append(batch_cpu(cli, d.socket, jobs, n))
    finally:
        d.stop()
    with open("/proc/loadavg") as f:
        print("load:", f.read().strip())
    means = {}
    for name in ("old", "new"):
        u = statistics.mean(x[0] for x in got[name])
        s = statistics.mean(x[1] for x in got[name])
        means[name] = u + s
        print("%s: user %.3f system %.3f total %.3f ms per job (rounds: %s)" % (
            name, u, s, u + s, ", ".join("%.3f" % (a + b) for a, b in got[name])))
    print("new/old total: %.3f" % (means["new"] / means["old"]))


if __name__ == "__main__":
    main()
