#!/usr/bin/env python3
"""surgebox verify --benchmark surge --shard I/N and surgebox merge of its
shards, on a small prediction file over the shipped SURGE data.

  test_verify_shards.py BIN_DIR DATA_DIR

- 3 shards: each runs exactly the predicted items it owns (jobs counted by the
  daemon), the shards own the predicted items once each, and the merge's scored
  report equals the unsharded `verify --json` (the run's own bookkeeping,
  references.attempted/reused/dir, aside);
- a shard's --out keeps serving it with another prediction file: the items
  both files predict keep their shard, and nothing runs again;
- refused: a missing shard, a shard last run with other predictions (named),
  a prediction file changed since the shards ran.

Label surge-data; runs sandboxes: inside the unshare wrapper (ctest does).
"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "clients", "python"))
import shardcheck as sc  # noqa: E402
import surgebox  # noqa: E402

check = sc.check
scored = sc.verify_report


def write_preds(path, rows):
    with open(path, "w") as f:
        for subset, index, answer in rows:
            f.write(json.dumps({"subset": subset, "index": index, "model": "m", "prediction": answer}) + "\n")


def main():
    bin_dir, data = sys.argv[1], os.environ.get("SURGE_DATA") or sys.argv[2]
    if not all(os.path.exists(os.path.join(data, s + ".json")) for s in ("ml", "cl")):
        print(f"SKIPPED: no SURGE data in {data}")
        return sc.SKIP
    if os.geteuid() != 0:
        print("SKIPPED: runs sandboxes as root")
        return sc.SKIP
    ml, cl = (sc.load(os.path.join(data, s + ".json")) for s in ("ml", "cl"))
    py = [i for i, it in enumerate(cl) if it["custom_features"]["language"] == "Python"][:6]
    rows = [("cl", i, f"Output: `{cl[i]['gt'] if k != 2 else 'not ' + cl[i]['gt']}`") for k, i in enumerate(py)]
    if not shutil.which("julia"):  # then its item is excluded and counted, in the shards as unsharded
        rows.append(("ml", next(i for i, it in enumerate(ml) if it["custom_features"]["language"] == "Julia"), "1"))
    work = tempfile.mkdtemp(prefix="surgebox-vshard-")
    os.chmod(work, 0o755)
    # a profiles directory of its own, empty (the daemon and the commands read
    # $SURGEBOX_PROFILES): .ci/main's surge-2025 would give Julia (issue 36)
    os.environ["SURGEBOX_PROFILES"] = os.path.join(work, "profiles")
    os.mkdir(os.environ["SURGEBOX_PROFILES"])
    preds, preds2 = os.path.join(work, "preds.jsonl"), os.path.join(work, "preds2.jsonl")
    write_preds(preds, rows)
    write_preds(preds2, rows[::2])  # another model: every other item
    d, sock = sc.start_daemon(bin_dir, work)
    try:
        client = surgebox.Client(sock, autostart=False)
        jobs = lambda: client.status()["jobs_done"]  # noqa: E731
        argv = [os.path.join(bin_dir, "surgebox"), "verify", "--benchmark", "surge", "--data", data, "--subset",
                "ml,cl", "--predictions", preds, "--json", "--socket", sock, "--no-autostart"]
        full, shards = os.path.join(work, "full"), [os.path.join(work, f"shard{i}") for i in range(3)]
        before = jobs()
        one, parts = sc.unsharded_then_shards(argv, full, shards)
        ran = jobs() - before
        check(ran == 2 * len(py), f"{ran} jobs ran, want {len(py)} unsharded + {len(py)} in the shards")
        want = json.loads(one.stdout) if one.returncode == 0 else {}
        check(want.get("scored_items") == len(py), f"unsharded scored_items {want.get('scored_items')}")

        owned = {}
        for i, s in enumerate(shards):
            m = sc.load(os.path.join(s, "shard.json"))
            check(m["command"] == "verify-surge" and (m["shard"], m["shards"]) == (i, 3), f"{s}/shard.json: {m}")
            for subset, idx in m["items"].items():
                for k in idx:
                    check((subset, k) not in owned, f"{subset} {k} owned by shards {owned.get((subset, k))} and {i}")
                    owned[(subset, k)] = i
            # the shard ran its own predicted items, and none of another shard's
            for subset in m["subsets"]:
                done = {k for k, it in enumerate(sc.load(os.path.join(s, subset + ".json")))
                        if it.get("exec", {}).get("complete")}
                check(done == set(m["items"][subset]), f"shard {i}: {subset} records {sorted(done)}, owns "
                      f"{m['items'][subset]}")
            doc = json.loads(parts[i].stdout) if parts[i].returncode == 0 else {}
            check(doc.get("shard") == i and doc.get("predicted_items") == sum(map(len, m["items"].values())),
                  f"shard {i}'s report: {doc}")
        check(sorted(owned) == sorted((s, i) for s, i, _ in rows), f"the shards own exactly the predicted items: "
              f"{sorted(owned)}")
        check(len(set(owned.values())) >= 2, f"all {len(owned)} predicted items in one shard: {owned}")

        merged = os.path.join(work, "merged.json")
        p = sc.merge(bin_dir, merged, [shards[2], shards[0], shards[1]])  # any order
        print(p.stdout, p.stderr[-2000:])
        check(p.returncode == 0, f"merge exit {p.returncode}: {p.stderr}")
        got = sc.load(merged) if p.returncode == 0 else {}
        check(scored(got) == scored(want), f"merged report differs from the unsharded one:\n{json.dumps(got)}\nvs\n"
              f"{json.dumps(want)}")

        # refused: a missing shard; a shard last run with other predictions
        out = os.path.join(work, "refused.json")
        p = sc.merge(bin_dir, out, shards[:2])
        check(p.returncode == 2 and "shard 2/3 is missing" in p.stderr, f"missing shard: {p.returncode} {p.stderr}")
        argv2 = [preds2 if a == preds else a for a in argv]
        before = jobs()
        p = sc.run(argv2 + ["--shard", "1/3", "--out", shards[1]], "shard 1/3 with other predictions")
        check(jobs() == before, f"shard 1/3 with a subset of its predictions ran {jobs() - before} job(s)")
        m2 = sc.load(os.path.join(shards[1], "shard.json"))
        again = {(s, k) for s, idx in m2["items"].items() for k in idx}
        check(again == {(s, i) for s, i, _ in rows[::2] if owned.get((s, i)) == 1},
              f"shard 1/3 of the other predictions owns {sorted(again)}")
        p = sc.merge(bin_dir, out, shards)
        check(p.returncode == 2 and "predictions_sha256" in p.stderr and "shard1" in p.stderr,
              f"mixed predictions: {p.returncode} {p.stderr}")
        check(not os.path.exists(out), "a refused merge wrote its --out")
        # back to the first predictions: nothing runs, the merge is whole again
        before = jobs()
        sc.run(argv + ["--shard", "1/3", "--out", shards[1]], "shard 1/3 resumed")
        check(jobs() == before, f"shard 1/3 resumed ran {jobs() - before} job(s)")
        p = sc.merge(bin_dir, out, shards)
        check(p.returncode == 0 and scored(sc.load(out)) == scored(want), f"merge after resume: {p.stderr}")
        # the prediction file changed after the shards ran: refused, nothing written
        with open(preds, "a") as f:
            f.write("\n")
        os.unlink(out)
        p = sc.merge(bin_dir, out, shards)
        check(p.returncode == 2 and "not the prediction file the shards read" in p.stderr and not os.path.exists(out),
              f"changed predictions: {p.returncode} {p.stderr}")
    finally:
        d.terminate()
        d.wait(timeout=120)
    return sc.finish(work)


if __name__ == "__main__":
    sys.exit(main())
