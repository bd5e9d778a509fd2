#!/usr/bin/env python3
"""surgebox regen --shard I/N and surgebox merge.

  test_shard_merge.py BIN_DIR DATA_DIR slice   4 shards of a SURGE slice merged == the unsharded
                                               run, timing fields removed (label surge-data;
                                               runs sandboxes: inside the unshare wrapper)
  test_shard_merge.py BIN_DIR - refusals       hand-made shard outputs: different data, profile
                                               or toolchains, duplicated, missing, unfinished
                                               shards and items owned twice are refused (unit)
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardcheck import SKIP, check, finish, load, same_files, start_daemon  # noqa: E402
import shardcheck  # noqa: E402


def merge(bin_dir, out, dirs):
    return shardcheck.merge(bin_dir, out, dirs, "--summary", os.path.join(out, "summary.json"))


# ---- slice: real runs through a private daemon ----
def slice_case(bin_dir, data, work):
    d, sock = start_daemon(bin_dir, work)
    try:
        base = [os.path.join(bin_dir, "surgebox"), "regen", "--data", data, "--subset", "dr,bg,tc",
                "--only", "0,1,2,3,4,5", "--socket", sock, "--no-autostart"]
        full = os.path.join(work, "full")
        shards = [os.path.join(work, f"shard{i}") for i in range(4)]
        shardcheck.unsharded_then_shards(base, full, shards, ["--summary", os.path.join(full, "summary.json")])
        # a second run of a finished shard resumes: nothing runs again
        p = subprocess.run(base + ["--shard", "1/4", "--out", shards[1]], capture_output=True, text=True, timeout=600)
        check(p.returncode == 0 and "\n0 items in" in p.stdout, f"shard 1/4 again should run nothing: {p.stdout[-300:]}")
    finally:
        d.terminate()
        d.wait(timeout=120)
    owned = {}
    for i, s in enumerate(shards):
        m = load(os.path.join(s, "shard.json"))
        check(m["shard"] == i and m["shards"] == 4, f"shard.json of {s}: {m['shard']}/{m['shards']}")
        for subset, idx in m["items"].items():
            for k in idx:
                check((subset, k) not in owned, f"{subset} {k} owned twice")
                owned[(subset, k)] = i
        check(sum(len(v) for v in m["items"].values()) > 0, f"shard {i} owns nothing")
    check(sorted(owned) == sorted((s, k) for s in ("dr", "bg", "tc") for k in range(6)),
          f"the shards own exactly the 18 selected items: {sorted(owned)}")
    merged = os.path.join(work, "merged")
    p = merge(bin_dir, merged, shards)
    print(p.stdout[-3000:])
    check(p.returncode == 0, f"merge exit {p.returncode}: {p.stderr}")
    same_files(full, merged, ("dr.json", "bg.json", "tc.json", "summary.json"))
    for f in ("dr.json", "bg.json", "tc.json"):
        check(sum(1 for it in load(os.path.join(full, f)) if "exec" in it) == 6, f"{f}: 6 items ran")


# ---- refusals: hand-made shards of a 4-item "dr" run ----
def item(i, ran):
    it = {"question": f"q{i}", "gt": f"published {i}"}
    if ran:
        it.update({"gt": f"ran {i}", "gt_published": f"published {i}",
                   "exec": {"status": "ok", "regenerated": True, "group": "g", "class": None, "matched": "no",
                            "jaccard": 0.5, "repeats": 1, "deterministic": True, "cpu_time_s": 0.1 * i,
                            "complete": True}})
    return it


def make_shard(root, name, index, owned, **over):
    d = os.path.join(root, name)
    os.makedirs(d)
    m = {"surgebox_shard": 1, "command": "regen", "shard": index, "shards": 2,
         "data_sha256": {"dr": "aa" * 32}, "subsets": ["dr"], "only": None,
         "options": {"repeat": 1, "inproc_time": True, "gcc9_mimic": True}, "profile": "host",
         "toolchains_sha256": "bb" * 32, "expected_share": 0.5, "items": {"dr": owned}}
    m.update(over)
    with open(os.path.join(d, "shard.json"), "w") as f:
        json.dump(m, f)
    with open(os.path.join(d, "dr.json"), "w") as f:
        json.dump([item(i, i in owned) for i in range(4)], f)
    return d


def refused(bin_dir, root, case, dirs, *needles):
    out = os.path.join(root, "out-" + case)
    p = merge(bin_dir, out, dirs)
    check(p.returncode == 2, f"{case}: merge exit {p.returncode} (want 2)")
    for n in needles:
        check(n in p.stderr, f"{case}: stderr lacks {n!r}: {p.stderr}")
    check(not os.path.exists(os.path.join(out, "dr.json")), f"{case}: a refused merge wrote {out}/dr.json")


def refusals_case(bin_dir, root):
    s0 = make_shard(root, "s0", 0, [0, 3])
    s1 = make_shard(root, "s1", 1, [1, 2])
    out = os.path.join(root, "good")
    p = merge(bin_dir, out, [s1, s0])  # any order
    check(p.returncode == 0, f"good merge exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        got = load(os.path.join(out, "dr.json"))
        check(got == [item(i, True) for i in range(4)], f"merged items: {got}")
        summ = load(os.path.join(out, "summary.json"))["dr"]
        check(summ["n"] == 4 and summ["ran"] == 4, f"summary: {summ}")
    refused(bin_dir, root, "data", [s0, make_shard(root, "s1-data", 1, [1, 2], data_sha256={"dr": "cc" * 32})],
            "data_sha256", "s0", "s1-data")
    refused(bin_dir, root, "profile", [s0, make_shard(root, "s1-prof", 1, [1, 2], profile="surge-2025")],
            '"profile"', "s1-prof")
    refused(bin_dir, root, "toolchains", [s0, make_shard(root, "s1-tc", 1, [1, 2], toolchains_sha256="dd" * 32)],
            "toolchains_sha256")
    refused(bin_dir, root, "options", [s0, make_shard(root, "s1-rep", 1, [1, 2],
                                                      options={"repeat": 3, "inproc_time": True, "gcc9_mimic": True})],
            '"options"')
    dup = make_shard(root, "s0-again", 0, [0, 3])
    refused(bin_dir, root, "duplicate", [s0, dup, s1], "both shard 0/2", "s0-again")
    refused(bin_dir, root, "missing", [s0], "shard 1/2 is missing")
    refused(bin_dir, root, "overlap", [s0, make_shard(root, "s1-over", 1, [1, 2, 3])], "dr item 3 is in both")
    unfinished = make_shard(root, "s1-unfinished", 1, [1, 2])
    items = load(os.path.join(unfinished, "dr.json"))
    del items[2]["exec"]
    with open(os.path.join(unfinished, "dr.json"), "w") as f:
        json.dump(items, f)
    refused(bin_dir, root, "unfinished", [s0, unfinished], "shard 1/2", "unfinished", "dr item 2")
    refused(bin_dir, root, "huge-count", [make_shard(root, "s-huge", 0, [0, 1, 2, 3], shards=2**31 - 1)],
            "out of range")
    os.makedirs(os.path.join(root, "plain"))
    refused(bin_dir, root, "not-a-shard", [s0, os.path.join(root, "plain")], "plain/shard.json", "not the --out of a --shard run")


def main():
    bin_dir, data, case = sys.argv[1:4]
    if case == "slice" and not os.path.exists(os.path.join(data, "dr.json")):
        print(f"SKIPPED: no SURGE data at {data}")
        return SKIP
    work = tempfile.mkdtemp(prefix="surgebox-shard-")
    if case == "slice":
        slice_case(bin_dir, data, work)
    else:
        refusals_case(bin_dir, work)
    return finish(work)


if __name__ == "__main__":
    sys.exit(main())
