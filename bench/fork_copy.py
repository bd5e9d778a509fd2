#!/usr/bin/env python3
"""Stop 43's choice for the sandbox init, measured (a ratio against the
static copy, in the same run, rounds interleaved): what starting and ending
one init costs when it is

  static copy   a fork of a static process (surgebox-spawner since stop 43)
  dynamic copy  a fork of a process with surgeboxd's libraries mapped
                (the spawner before: an exec of our own binary)
  static exec   a vfork + exec of a small static program (the init as a
                program of its own; tried and dropped)

each child writing PAGES data pages, as an init does. Runs no sandbox and
nothing hostile: these are our own do-nothing programs.

    python3 bench/fork_copy.py [--bin build/bin] [--n 1000] [--pages 10] [--rounds 3]"""
import argparse
import json
import os
import statistics
import subprocess


def run(cmd):
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--pages", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    st, dyn = os.path.join(a.bin, "bench_fork_copy_static"), os.path.join(a.bin, "bench_fork_copy")
    noop = os.path.join(a.bin, "..", "bench-progs", "noop")
    ways = {"static copy": [st, "fork", str(a.n), str(a.pages)],
            "dynamic copy": [dyn, "fork", str(a.n), str(a.pages)],
            "static exec": [dyn, "exec", str(a.n), noop]}
    got = {k: [] for k in ways}
    for r in range(a.rounds):
        for name in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
            got[name].append(run(ways[name]))
    base = statistics.median(x["wall_ms"] for x in got["static copy"])
    out = {}
    for name, xs in got.items():
        wall = statistics.median(x["wall_ms"] for x in xs)
        cpu = statistics.median(x["cpu_ms"] for x in xs)
        out[name] = {"wall_ms": round(wall, 3), "cpu_ms": round(cpu, 3), "vs_static_copy": round(wall / base, 2)}
        print("%-13s wall %.3f ms  cpu %.3f ms  %.2fx the static copy" % (name, wall, cpu, wall / base))
    print(json.dumps({"bench": "fork_copy", "n": a.n, "pages": a.pages, "rounds": a.rounds, "ways": out}))


if __name__ == "__main__":
    main()
