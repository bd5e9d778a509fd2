#!/usr/bin/env python3
"""CRUXEval output mode through `surgebox verify`, against the same programs
run unsandboxed, interleaved so that the machine's drift cancels (issues 12
and 16). Run inside the throw-away unshare wrapper, as root:

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/cruxeval.py --bin B --work W [--copies K] [--jobs N]
                              [--data FILE] [--pools "8 0"] [--out FILE]

Generations: each sample's reference output K times (default 10: 8,000
checks), the i-th copy followed by i spaces, so the programs are distinct
texts and all pass. Copy i of every sample is chunk i (800 programs). For
each chunk, in an order rotated from chunk to chunk:
  baseline   bench_baseline replays the very requests verify sends
             (`--dump-requests`): fork/exec of /usr/bin/python3, no sandbox,
             N at a time; timed by its own span of the jobs, without its
             start-up (the surgebox side is timed as a whole client run);
  pool P     `surgebox verify` (a client process per chunk, as a user runs
             it) through a daemon with --jobs N --pool P, started once
             beforehand (its start-up is not counted).
Prints and writes the sums over chunks, their ratios, and the per-chunk
ratios' median and range. The programs are CRUXEval's own (non-hostile)
functions with their reference outputs. Nothing here asserts a timing."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "cruxeval",
                                                   "cruxeval.jsonl"))
    ap.add_argument("--pools", default="8 0", help="one daemon per value of --pool")
    ap.add_argument("--out")
    a = ap.parse_args()
    pools = a.pools.split()
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)
    samples = [json.loads(line) for line in open(a.data) if line.strip()]
    surgebox, baseline = os.path.join(a.bin, "surgebox"), os.path.join(a.bin, "bench_baseline")

    daemons = {}
    for p in pools:
        sock = os.path.join(a.work, "d%s.sock" % p)
        daemons[p] = (subprocess.Popen([os.path.join(a.bin, "surgeboxd"), "--socket", sock, "--jobs", str(a.jobs),
                                        "--quiet", "--cache-dir", os.path.join(a.work, "cache%s" % p),
                                        "--state-dir", os.path.join(a.work, "state%s" % p), "--pool", p]), sock)
    for p, (d, sock) in daemons.items():
        for _ in range(600):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        else:
            sys.exit("cruxeval.py: daemon --pool %s did not start" % p)

    paths = ["baseline"] + ["pool %s" % p for p in pools]
    secs = {k: [] for k in paths}
    proc_secs = []
    programs = {p: 0 for p in pools}
    passed = {p: 0 for p in pools}
    try:
        for i in range(a.copies):
            chunk = os.path.join(a.work, "chunk%d" % i)
            os.makedirs(chunk)
            gens = os.path.join(chunk, "gens.json")
            json.dump({s["id"]: [s["output"] + " " * i] for s in samples}, open(gens, "w"))
            base_cmd = [surgebox, "verify", "--benchmark", "cruxeval", "--mode", "output", "--generations", gens,
                        "--data", a.data]
            subprocess.run(base_cmd + ["--dump-requests", os.path.join(chunk, "requests.jsonl")], check=True,
                           stdout=subprocess.DEVNULL)
            order = paths[i % len(paths):] + paths[:i % len(paths)]
            for path in order:
                t0 = time.monotonic()
                if path == "baseline":
                    subprocess.run([baseline, "--requests", os.path.join(chunk, "requests.jsonl"), "--jobs",
                                    str(a.jobs), "--out", os.path.join(chunk, "baseline.json"), "--work",
                                    os.path.join(chunk, "bl")], check=True, stdout=subprocess.DEVNULL)
                    proc_secs.append(time.monotonic() - t0)
                    b = json.load(open(os.path.join(chunk, "baseline.json")))
                    # its own span of the jobs: bench_baseline's start-up (toolchain
                    # detection, ~1.5 s) would flatter the sandbox
                    secs[path].append(b["wall_s"])
                    if b["failed"] or b["timeout"]:
                        sys.exit("cruxeval.py: the unsandboxed replay of chunk %d failed: %s" % (i, b))
                    continue
                p = path.split()[1]
                out = os.path.join(chunk, "scored%s.json" % p)
                subprocess.run(base_cmd + ["--out", out, "--socket", daemons[p][1], "--no-autostart", "--jobs",
                                           str(a.jobs)], check=True, stdout=subprocess.DEVNULL,
                               stderr=open(os.path.join(chunk, "verify%s.log" % p), "w"))
                secs[path].append(time.monotonic() - t0)
                s = json.load(open(out))
                n = sum(len(v) for v in s["raw_scored_generations"].values())
                ok = sum(sum(v) for v in s["raw_scored_generations"].values())
                programs[p] += n
                passed[p] += ok
            print("chunk %d: %s" % (i, ", ".join("%s %.1f s" % (k, secs[k][-1]) for k in paths)), file=sys.stderr)
    finally:
        for d, _ in daemons.values():
            d.terminate()
            d.wait()

    res = {"benchmark": "cruxeval", "jobs": a.jobs, "programs": programs[pools[0]], "chunks": a.copies,
           "baseline_s": sum(secs["baseline"]), "baseline_process_s": sum(proc_secs), "paths": {}}
    for p in pools:
        k = "pool %s" % p
        per = [s / b for s, b in zip(secs[k], secs["baseline"])]
        res["paths"][p] = {"programs": programs[p], "passed": passed[p], "surgebox_s": sum(secs[k]), "ratio": sum(secs[k]) / sum(secs["baseline"]),
                           "chunk_ratio_median": statistics.median(per), "chunk_ratio_range": [min(per), max(per)]}
    print("baseline (no sandbox): %d programs, %.1f s" % (res["programs"], res["baseline_s"]))
    for p, r in res["paths"].items():
        print("surgebox --pool %s:    %.1f s, ratio %.2fx (chunks: median %.2fx, %.2f-%.2fx)" %
              (p, r["surgebox_s"], r["ratio"], r["chunk_ratio_median"], *r["chunk_ratio_range"]))
    for p in pools:
        print("--pool %s: passed %d of %d" % (p, passed[p], programs[p]))
    if a.out:
        json.dump(res, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
