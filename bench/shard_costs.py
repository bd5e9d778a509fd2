#!/usr/bin/env python3
"""Measured balance of --shard I/N from one sharded regeneration (issue 15).

  shard_costs.py BIN DATA RUN_DIR... [--shards "2 4 8"]

RUN_DIR...: the --out dirs of the shards of one full regeneration (any N).
Every item's measured cost is its recorded run-step CPU time (`exec.cpu_time_s`:
compiles are not in it, nor items that did not run); for each N the partition
`regen --plan-json` gives is summed with those costs, and the largest shard's
share of the total is printed against the ideal 1/N and against the expected
share the partition balanced. Prints a table; asserts nothing.
"""
import json
import os
import subprocess
import sys


def main():
    args, ns = sys.argv[1:], [2, 4, 8]
    if "--shards" in args:
        i = args.index("--shards")
        ns = [int(x) for x in args[i + 1].split()]
        del args[i:i + 2]
    binary, data, runs = os.path.join(args[0], "surgebox"), args[1], args[2:]
    cost, ran, missing = {}, 0, 0
    for run in runs:
        for name in sorted(os.listdir(run)):
            if not name.endswith(".json") or name == "shard.json":
                continue
            with open(os.path.join(run, name)) as f:
                items = json.load(f)
            for i, it in enumerate(items):
                ex = it.get("exec")
                if not isinstance(ex, dict):
                    continue
                if isinstance(ex.get("cpu_time_s"), (int, float)):
                    cost[(name[:-5], i)] = ex["cpu_time_s"]
                    ran += 1
                else:
                    missing += 1
    total = sum(cost.values())
    print(f"measured item costs: {ran} items ran ({missing} recorded without a run), run-step CPU {total:.1f} s")
    print(f"{'N':>4}  {'largest / total':<16}  {'expected share':<15}  ideal 1/N")
    for n in ns:
        plan = json.loads(subprocess.run([binary, "regen", "--data", data, "--subset", "all", "--shard", f"0/{n}",
                                          "--plan-json"], check=True, capture_output=True, text=True).stdout)
        per = [sum(cost.get((s, i), 0.0) for s, idx in row["items"].items() for i in idx) for row in plan["plan"]]
        print(f"{n:>4}  {max(per) / total if total else 0:<16.4f}  {plan['largest_share']:<15.4f}  {1 / n:.4f}"
              f"   per shard (s): {' '.join(f'{c:.0f}' for c in per)}")


if __name__ == "__main__":
    main()
