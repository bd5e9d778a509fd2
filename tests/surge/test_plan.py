#!/usr/bin/env python3
"""surgebox regen --plan-json: every shard's items, as the partition assigns them.

  test_plan.py BIN_DIR DATA_DIR

For N in 2, 3, 8 over the whole SURGE data: the shards' items are disjoint and
cover every item of every subset exactly once; the JSON agrees with the text
plan (item counts, expected seconds, the largest share); and the items the
JSON names for shard 1/3 of a DR slice are exactly the ones a real
`regen --shard 1/3 --dump-requests` emits requests for (same count, each request's source
quoted in the planned item, in order). Needs SURGE's data (label surge-data); runs no sandbox.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
SUBSETS = ["ml", "cl", "rl", "sc", "tc", "bg", "dr", "fl"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"{' '.join(args[1:])}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p.stdout


def main():
    bindir, data = sys.argv[1], sys.argv[2]
    if not all(os.path.exists(os.path.join(data, f"{s}.json")) for s in SUBSETS):
        print(f"SKIPPED: SURGE's data is not at {data}")
        return SKIP
    surgebox = os.path.join(bindir, "surgebox")
    sizes = {}
    for s in SUBSETS:
        with open(os.path.join(data, f"{s}.json")) as f:
            sizes[s] = len(json.load(f))
    for n in (2, 3, 8):
        doc = json.loads(run(surgebox, "regen", "--data", data, "--subset", "all", "--shard", f"0/{n}", "--plan-json"))
        text = run(surgebox, "regen", "--data", data, "--subset", "all", "--shard", f"0/{n}", "--plan")
        check(doc.get("shards") == n and len(doc.get("plan", [])) == n, f"N={n}: {n} shards in the JSON plan")
        owner = {}
        for row in doc.get("plan", []):
            named = 0
            for s, idx in row["items"].items():
                for i in idx:
                    check((s, i) not in owner, f"N={n}: {s}[{i}] in shards {owner.get((s, i))} and {row['shard']}")
                    owner[(s, i)] = row["shard"]
                    named += 1
            check(named == row["n_items"], f"N={n} shard {row['shard']}: n_items {row['n_items']} names {named}")
            m = re.search(rf"^{row['shard']}/{n}\s+(\d+)\s+([\d.]+)", text, re.M)
            check(m and int(m.group(1)) == row["n_items"] and abs(float(m.group(2)) - row["expected_s"]) < 0.06,
                  f"N={n} shard {row['shard']}: text plan says {m and m.groups()}, JSON {row['n_items']} "
                  f"{row['expected_s']:.1f}")
        every = {(s, i) for s in SUBSETS for i in range(sizes[s])}
        check(set(owner) == every, f"N={n}: items covered {len(owner)} of {len(every)}")
        m = re.search(r"largest shard: ([\d.]+)", text)
        check(m and abs(float(m.group(1)) - doc["largest_share"]) < 1e-4,
              f"N={n}: largest share text {m and m.group(1)} JSON {doc.get('largest_share')}")
    # against what a real shard run submits
    doc = json.loads(run(surgebox, "regen", "--data", data, "--subset", "dr", "--shard", "1/3", "--plan-json"))
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "req.jsonl")
        run(surgebox, "regen", "--data", data, "--subset", "dr", "--shard", "1/3", "--dump-requests", dump)
        with open(dump) as f:
            reqs = [json.loads(line) for line in f if line.strip()]
    mine = doc["plan"][1]["items"]["dr"]
    with open(os.path.join(data, "dr.json")) as f:
        dr = json.load(f)
    # a DR item is one compile-and-run request whose source is quoted in the item's question
    sources = [next((x.get("content") for x in r.get("files", []) if "content" in x), "") for r in reqs]
    check(len(reqs) == len(mine), f"dr 1/3: {len(reqs)} requests dumped, the plan names {len(mine)} items")
    off = [i for i, src in zip(mine, sources) if not src.strip() or src.strip() not in dr[i]["question"]]
    check(not off, f"dr 1/3: dumped requests whose source is not the planned item's (items {off[:5]})")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
