#!/usr/bin/env python3
"""verify --benchmark cruxeval --shard I/N and surgebox merge: the generations
written by hand in test_verify.py, run as 3 shards through one private
daemon, merged: the scored file is byte for byte the single run's and has
the verdicts worked out by hand. Then the refusals: a missing shard, a
shard given twice, shards of other generations. Inside unshare (ctest).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from test_verify import (DATA, INPUT_GENS, INPUT_PASS, INPUT_WANT, SKIP, check_scored, fail, start_daemon, verify,
                         write)


def merge(bin_dir, out, shards):
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "merge", "--out", out] + shards, capture_output=True,
                       text=True, timeout=240)
    print("$ merge", out, "->", p.returncode, "\n", p.stdout[-1000:], p.stderr[-2000:])
    return p


def main():
    bin_dir = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIPPED: runs as root (the daemon)")
        sys.exit(SKIP)
    d = tempfile.mkdtemp(prefix="sbcrux-shards-")
    os.makedirs(os.path.join(d, "cache"))
    data = write(os.path.join(d, "data.jsonl"), DATA, lines=True)
    gens = write(os.path.join(d, "gens-in.json"), INPUT_GENS)
    own, sock = start_daemon(bin_dir, d)
    try:
        sock_args = ["--socket", sock, "--no-autostart"]
        whole = os.path.join(d, "whole.json")
        if verify(bin_dir, d, "input", gens, whole, data, extra=sock_args).returncode != 0:
            fail("the unsharded run")
        shards = []
        for i in range(3):
            out = os.path.join(d, f"shard{i}.json")
            if verify(bin_dir, d, "input", gens, out, data, extra=sock_args + ["--shard", f"{i}/3"]).returncode:
                fail(f"shard {i}/3")
            if os.path.exists(out):
                fail(f"shard {i}/3 wrote a scored file")
            shards.append(out)
        owned = [json.load(open(s + ".shard.json"))["items"]["programs"] for s in shards]
        flat = [h for o in owned for h in o]
        # 11 generations, 2 dropped by the rules, one program repeated: 8 distinct, 3/3/2
        if len(flat) != 8 or len(set(flat)) != 8 or sorted(len(o) for o in owned) != [2, 3, 3]:
            fail(f"programs per shard: {[len(o) for o in owned]}")
    finally:
        own.terminate()
        own.wait(timeout=120)
    merged = os.path.join(d, "merged.json")
    p = merge(bin_dir, merged, shards)
    if p.returncode != 0 or "pass@1: 50.0 pass@5: 100.0" not in p.stdout:
        fail(f"merge exit {p.returncode}")
    check_scored(merged, INPUT_GENS, INPUT_WANT, INPUT_PASS)
    if open(merged, "rb").read() != open(whole, "rb").read():
        fail("the merged scored file differs from the single run's")
    if os.path.exists(merged + ".progress"):
        fail("merge left its .progress behind")
    # refusals (no daemon needed: they are caught before anything is scored)
    for case, args, needle in (("missing", shards[:2], "shard 2/3 is missing"),
                               ("duplicate", shards + [shards[0]], "both shard 0/3")):
        p = merge(bin_dir, os.path.join(d, f"m-{case}.json"), args)
        if p.returncode != 2 or needle not in p.stderr or os.path.exists(os.path.join(d, f"m-{case}.json")):
            fail(f"{case}: exit {p.returncode}, stderr {p.stderr}")
    other = dict(INPUT_GENS, sample_3=["f(2)"])
    gens2 = write(os.path.join(d, "gens-other.json"), other)
    alien = os.path.join(d, "alien.json")
    p = verify(bin_dir, d, "input", gens2, alien, data, extra=["--shard", "2/3", "--no-autostart",
                                                                "--dump-requests", os.devnull])
    m = json.load(open(shards[2] + ".shard.json"))
    m2 = json.load(open(alien + ".shard.json")) if os.path.exists(alien + ".shard.json") else None
    if m2 is None or m2["generations_sha256"] == m["generations_sha256"]:
        fail("a shard of other generations records their hash")
    p = merge(bin_dir, os.path.join(d, "m-alien.json"), shards[:2] + [alien])
    if p.returncode != 2 or "generations_sha256" not in p.stderr:
        fail(f"other generations: exit {p.returncode}")
    shutil.rmtree(d, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
