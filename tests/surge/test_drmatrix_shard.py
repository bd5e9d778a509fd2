#!/usr/bin/env python3
"""surgebox dr-matrix --shard I/N and surgebox merge of its shards.

  test_drmatrix_shard.py BIN_DIR DATA_DIR   a few DR items x a reduced configuration set, run
                                            unsharded and as 3 shards: the merged matrix has the
                                            unsharded run's lines (in matrix order) and prints its
                                            report; a finished shard resumes running nothing; a
                                            missing or unfinished shard is refused (label
                                            surge-data; runs sandboxes: inside the unshare wrapper)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shardcheck as sc  # noqa: E402

check = sc.check


def lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def cell(o):
    return f"{o['snippet']}/{o['config']}"


def run(bin_dir, data, work):
    d, sock = sc.start_daemon(bin_dir, work)
    # not item 2: it reads past an array, its output varies from run to run
    base = [os.path.join(bin_dir, "surgebox"), "dr-matrix", "--data", data, "--only", "0,1,4,5",
            "--compilers", "g++,clang++", "--stds", "03,11", "--opts", "O0,O2"]
    live = base + ["--socket", sock, "--no-autostart"]
    try:
        full = os.path.join(work, "full.jsonl")
        shards = [os.path.join(work, f"shard{i}.jsonl") for i in range(3)]
        report = sc.unsharded_then_shards(live, full, shards)[0].stdout
        # a finished shard run again: everything resumed, nothing appended
        before = len(lines(shards[1]))
        p = subprocess.run(live + ["--shard", "1/3", "--out", shards[1]], capture_output=True, text=True, timeout=600)
        check(p.returncode == 0 and f"({before} resumed)" in p.stderr and len(lines(shards[1])) == before,
              f"shard 1/3 again should resume its {before} cells: {p.stderr[-500:]}")
        # another shard's --out is refused
        p = subprocess.run(live + ["--shard", "0/3", "--out", shards[2]], capture_output=True, text=True, timeout=600)
        check(p.returncode != 0 and "belongs to another run" in p.stderr, f"shard 0/3 into shard 2's --out: {p.stderr}")
    finally:
        d.terminate()
        d.wait(timeout=120)
    want = lines(full)
    check(len(want) == 4 * 8, f"the unsharded run wrote {len(want)} lines, want 4 snippets x 8 configurations")
    owned = {}
    for i, s in enumerate(shards):
        m = json.load(open(s + ".shard.json"))
        check(m["command"] == "dr-matrix" and m["shard"] == i and m["shards"] == 3, f"{s}.shard.json: {m}")
        cells = m["items"]["cells"]
        check(len(cells) > 0, f"shard {i} owns nothing")
        for c in cells:
            check(c not in owned, f"cell {c} owned by shards {owned.get(c)} and {i}")
            owned[c] = i
        check(sorted(map(cell, lines(s))) == sorted(cells), f"shard {i} ran exactly its cells")
    check(sorted(owned) == sorted(map(cell, want)), "the shards own exactly the unsharded run's cells")
    merged = os.path.join(work, "merged.jsonl")
    p = sc.merge(bin_dir, merged, [shards[2], shards[0], shards[1]])  # any order
    print(p.stdout[-3000:])
    check(p.returncode == 0, f"merge exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        got = lines(merged)
        key = lambda o: json.dumps(o, sort_keys=True)  # noqa: E731
        check(sorted(map(key, got)) == sorted(map(key, want)), "the merged lines differ from the unsharded run's")
        order = [(o["snippet"], o["config"]) for o in got]
        check([s for s, _ in order] == sorted(s for s, _ in order), f"merged lines not in snippet order: {order}")
        check(order[:8] == [(order[0][0], f"{c}-C++{s}--{o}") for c in ("g++", "clang++") for s in ("03", "11")
                            for o in ("O0", "O2")], f"the first snippet's configurations not in matrix order: {order[:8]}")
        check(report in p.stdout, f"merge's report differs from the unsharded run's:\n{report}\nvs\n{p.stdout}")
        # the merged file resumed: the report again, and no daemon needed (nothing runs)
        p = subprocess.run(base + ["--out", merged, "--socket", os.path.join(work, "none.sock"), "--no-autostart"],
                           capture_output=True, text=True, timeout=600)
        check(p.returncode == 0 and p.stdout == report, f"dr-matrix on the merged file: {p.returncode} {p.stderr}")
    # refusals: a missing shard; an unfinished one
    out = os.path.join(work, "refused.jsonl")
    p = sc.merge(bin_dir, out, shards[:2])
    check(p.returncode == 2 and "shard 2/3 is missing" in p.stderr, f"missing shard: {p.returncode} {p.stderr}")
    check(not os.path.exists(out), "a refused merge wrote its --out")
    cut = os.path.join(work, "cut.jsonl")
    with open(shards[2]) as f:
        kept = f.readlines()[1:]
    with open(cut, "w") as f:
        f.writelines(kept)
    shutil.copy(shards[2] + ".shard.json", cut + ".shard.json")
    p = sc.merge(bin_dir, out, [shards[0], shards[1], cut])
    check(p.returncode == 2 and "unfinished" in p.stderr and "cut.jsonl" in p.stderr,
          f"unfinished shard: {p.returncode} {p.stderr}")
    check(not os.path.exists(out), "a refused merge wrote its --out")


def main():
    bin_dir, data = sys.argv[1:3]
    if not os.path.exists(os.path.join(data, "dr.json")):
        print(f"SKIPPED: no SURGE data at {data}")
        return sc.SKIP
    work = tempfile.mkdtemp(prefix="surgebox-drshard-")
    run(bin_dir, data, work)
    return sc.finish(work)


if __name__ == "__main__":
    sys.exit(main())
