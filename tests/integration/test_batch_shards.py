#!/usr/bin/env python3
"""surgebox batch --shard I/N and surgebox merge, against a real daemon:
the answers of 3 shards merged are the unsharded --order input run's, but
for what differs from run to run (timing, and the machinery's own
per-run fields below); a missing, a duplicated and an unfinished shard are
refused. Inside unshare (ctest), like test_batch.py whose Env it uses.
"""
import json
import os
import subprocess
import sys

from test_batch import answers, check, sleeper

# differ between two runs of the same request
PER_RUN = {"cpu_time_s", "wall_time_s", "setup_time_s", "user_time_s", "sys_time_s", "max_rss_kb", "queue_time_s",
           "started_at", "finished_at", "uid", "job", "cgroup_peak_kb"}


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in PER_RUN}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


def merge(env, out, shards):
    p = subprocess.run([os.path.join(env.bin, "surgebox"), "merge", "--out", out] + shards, capture_output=True,
                       text=True, timeout=120)
    print("merge ->", p.returncode, p.stdout, p.stderr)
    return p


def case(env):
    lines = [sleeper(f"s{i}", 0, f"o{i}") for i in range(7)]
    lines.insert(2, "{not json")                                   # an error line, keyed line:3
    lines.insert(4, {"steps": [{"argv": ["sh", "-c", "echo noid"]}]})  # no id: its line number
    inp = env.write_in(lines)
    whole = env.path("whole.jsonl")
    rc, _, err = env.run(inp, "--out", whole, "--order", "input")
    check(rc == 0, f"unsharded: {rc} {err}")
    shards = []
    for i in range(3):
        out = env.path(f"shard{i}.jsonl")
        rc, _, err = env.run(inp, "--out", out, "--shard", f"{i}/3")
        check(rc == 0, f"shard {i}/3: {rc} {err}")
        shards.append(out)
    ids = [json.load(open(s + ".shard.json"))["items"]["ids"] for s in shards]
    check(sorted(len(x) for x in ids) == [3, 3, 3], f"9 items over 3 shards: {ids}")
    check(sorted(i for x in ids for i in x) == sorted(['"s%d"' % k for k in range(7)] + ["line:3", "5"]),
          f"the items' keys: {ids}")
    merged = env.path("merged.jsonl")
    p = merge(env, merged, shards)
    check(p.returncode == 0, "merge exit code")
    a, b = answers(open(whole).read()), answers(open(merged).read())
    check([x.get("line") for x in b] == list(range(1, 10)), f"input order: {[x.get('line') for x in b]}")
    check(strip(a) == strip(b), "merged answers == the unsharded run's (per-run fields removed)")
    if strip(a) != strip(b):
        def diff(x, y, path=""):
            if isinstance(x, dict) and isinstance(y, dict):
                for k in set(x) | set(y):
                    diff(x.get(k), y.get(k), f"{path}.{k}")
            elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
                for i, (u, v) in enumerate(zip(x, y)):
                    diff(u, v, f"{path}[{i}]")
            elif x != y:
                print("differs:", path, x, y)
        diff(strip(a), strip(b))
    for name, args, needle in (("missing", shards[:2], "shard 2/3 is missing"),
                               ("duplicate", shards + [shards[1]], "both shard 1/3")):
        p = merge(env, env.path(f"m-{name}.jsonl"), args)
        check(p.returncode == 2 and needle in p.stderr, f"{name}: refused with {needle!r}")
        check(not os.path.exists(env.path(f"m-{name}.jsonl")), f"{name}: nothing written")
    # an unfinished shard: one answer lost
    text = open(shards[0]).read().splitlines()
    with open(shards[0], "w") as f:
        f.write("\n".join(text[:-1]) + "\n")
    p = merge(env, env.path("m-unfinished.jsonl"), shards)
    check(p.returncode == 2 and "shard 0/3" in p.stderr and "unfinished" in p.stderr, "unfinished shard refused")


def main():
    import test_batch  # its daemon, skip and verdict: this is one more of its cases
    test_batch.CASES["shards"] = case
    sys.argv[2:] = ["shards"]
    return test_batch.main()


if __name__ == "__main__":
    sys.exit(main())
