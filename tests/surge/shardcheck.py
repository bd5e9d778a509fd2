"""What the shard tests share (surge.shard.*, surge.verify.shards,
slurm.regen_shards): checks that collect failures, one definition of
"timing fields", a private daemon, the run of one command unsharded then as
N shards, `surgebox merge`, and the comparison without timing fields.
"""
import json
import os
import shutil
import subprocess
import time

SKIP = 77
# what may differ between two runs of the same items: not compared
TIMING = {"cpu_time_s", "wall_time_s", "max_rss_kb", "inproc_cpu_s", "inproc_cpu_s_runs", "time"}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def strip_timing(o):
    if isinstance(o, dict):
        return {k: strip_timing(v) for k, v in o.items() if k not in TIMING}
    if isinstance(o, list):
        return [strip_timing(v) for v in o]
    return o


def load(path):
    with open(path) as f:
        return json.load(f)


def same_files(want_dir, got_dir, names, what="merged"):
    """each JSON file of names equal in both directories, timing fields removed"""
    for f in names:
        a, b = strip_timing(load(os.path.join(want_dir, f))), strip_timing(load(os.path.join(got_dir, f)))
        check(a == b, f"{what} {f} differs from the unsharded run's")


def verify_report(doc):
    """verify --benchmark surge --json's report without what the run itself did
    (references.attempted/reused/dir: a merge runs nothing) and timing fields"""
    doc = strip_timing(doc)
    refs = doc.get("references", {})
    doc["references"] = {k: v for k, v in refs.items() if k not in ("attempted", "reused", "dir")}
    return doc


def start_daemon(bin_dir, work, name="d"):
    """a private surgeboxd (own socket and cache) in work: (process, socket)"""
    sock = os.path.join(work, name + ".sock")
    log = open(os.path.join(work, name + "-daemon.log"), "w")
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--cache-dir",
                          os.path.join(work, name + "-cache"), "--jobs", "2"], stdout=log, stderr=log)
    for _ in range(2400):  # toolchain detection on an empty cache: about a minute here, more under load
        if os.path.exists(sock) or d.poll() is not None:
            break
        time.sleep(0.25)
    return d, sock


def run(argv, what, timeout=1800):
    """argv run to its end; a failure unless it exits 0"""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    check(p.returncode == 0, f"{what} exit {p.returncode}: {p.stderr[-2000:]}")
    return p


def unsharded_then_shards(argv, full_out, shard_outs, full_extra=()):
    """argv --out full_out (+ full_extra), then argv --shard i/N --out shard_outs[i] for each
    shard: (the unsharded run, the shards' runs)"""
    full = run(list(argv) + ["--out", full_out] + list(full_extra), "unsharded run")
    n = len(shard_outs)
    shards = [run(list(argv) + ["--shard", f"{i}/{n}", "--out", out], f"shard {i}/{n}")
              for i, out in enumerate(shard_outs)]
    return full, shards


def merge(bin_dir, out, parts, *extra):
    return subprocess.run([os.path.join(bin_dir, "surgebox"), "merge", "--out", out] + list(extra) + list(parts),
                          capture_output=True, text=True, timeout=600)


def finish(work):
    """the exit status: 1 with the failures (work kept), else 0 (work removed)"""
    if failures:
        print(f"{len(failures)} failures; work dir kept: {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("ok")
    return 0
