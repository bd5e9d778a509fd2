#!/usr/bin/env python3
"""Warm Python (issue 25): CRUXEval's 800 reference output checks (`<code>`
then `assert <output> == f(<input>)`) per chunk, three ways interleaved
chunk by chunk (order rotated) so that the machine's drift cancels:
  fresh    one unsandboxed `python3 prog.py` per check (fork + exec), N at a time
  warm     one child per check of a zygote (toolchains/warm/python/sbzygote.py),
           N zygotes, unsandboxed: the interpreter's share of the cost alone
  harness  CRUXEval's own harness method, unsandboxed (bench/harness_baseline.py)
  surgebox `surgebox verify --benchmark cruxeval` through a daemon (cold,
           sandboxed), when --bin is given
  surgebox-warm  the same with --warm: each check a warm zygote's child in
           its own sandbox (PROTOCOL.md "Warm starts"), when --bin is given
Run inside the throw-away unshare wrapper, as root:

  unshare --mount --propagation private --pid --fork --mount-proc \\
    python3 bench/warm_python.py [--bin build] [--work W] [--copies K] [--jobs N]

Predictions: each sample's reference output (every check passes), or with
--failing two of every three replaced by a literal no program returns, as
model generations go (the issue measured two thirds failing): those checks
end with an AssertionError and its traceback. Prints the sums over chunks
and the ratios to fresh. Every path must give every check the expected
verdict; nothing here asserts a timing."""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "warm"))
import zygoterun  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_baseline  # noqa: E402

PY = "/usr/bin/python3"
expect = {}  # a check's directory: whether its prediction is right


def in_parallel(dirs, jobs, one):
    """Runs one(worker, dir) over dirs with `jobs` threads; the failures."""
    it = iter(dirs)
    lock = threading.Lock()
    failed = []

    def worker(w):
        while True:
            with lock:
                d = next(it, None)
            if d is None:
                return
            code = one(w, d)
            if (code == 0) != expect[d]:
                with lock:
                    failed.append((d, code))
    ts = [threading.Thread(target=worker, args=(w,)) for w in range(jobs)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--work")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--failing", action="store_true", help="two of every three predictions wrong")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "cruxeval", "cruxeval.jsonl"))
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="warmbench")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    samples = [json.loads(line) for line in open(a.data) if line.strip()]
    env = zygoterun.job_env()
    del env["PYTHONHASHSEED"]  # fresh: a random seed per process; warm: one per zygote
    # the bare zygotes load libsbwarm.so as the daemon's do (the short exit):
    # --bin's build, else SURGEBOX_WARM_LIB's
    lib = os.path.join(os.path.dirname(os.path.abspath(a.bin)), "lib", "surgebox", "libsbwarm.so") if a.bin else "build"
    zygotes = [zygoterun.Zygote(PY, seed=random.randrange(1, 1 << 32), lib=lib) for _ in range(a.jobs)]
    if not zygotes[0].lib:
        print("warm_python.py: no libsbwarm.so (--bin, or SURGEBOX_WARM_LIB): the bare zygotes never take the short exit",
              file=sys.stderr)
    devnull = os.open(os.devnull, os.O_RDWR)

    def fresh(_w, d):
        return subprocess.run([PY, "prog.py"], cwd=d, env=env, stdin=devnull, stdout=devnull, stderr=devnull,
                              start_new_session=True).returncode

    def warm(w, d):
        z = zygotes[w]
        z.start([PY, "prog.py"], d, [devnull, devnull, devnull])
        return zygoterun._code(z.finish()[1])

    daemon = sock = None
    paths = ["fresh", "warm", "harness"]
    if a.bin:
        sock = os.path.join(work, "d.sock")
        daemon = subprocess.Popen([os.path.join(a.bin, "surgeboxd"), "--socket", sock, "--jobs", str(a.jobs), "--quiet",
                                   "--cache-dir", os.path.join(work, "cache"), "--state-dir", os.path.join(work, "state")])
        for _ in range(600):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        else:
            sys.exit("warm_python.py: the daemon did not start")
        paths += ["surgebox", "surgebox-warm"]
    secs = {k: [] for k in paths}
    try:
        for i in range(a.copies):
            chunk = os.path.join(work, "chunk%d" % i)
            dirs, preds = [], {}
            for j, s in enumerate(samples):
                d = os.path.join(chunk, s["id"])
                os.makedirs(d)
                preds[s["id"]] = s["output"] if not a.failing or j % 3 == 0 else repr("surgebox-wrong-%d" % j)
                with open(os.path.join(d, "prog.py"), "w") as f:
                    f.write("%s\nassert %s == f(%s)%s" % (s["code"], preds[s["id"]], s["input"], " " * i))
                dirs.append(d)
                expect[d] = preds[s["id"]] == s["output"]
            gens = os.path.join(chunk, "gens.json")
            json.dump({k: [v + " " * i] for k, v in preds.items()}, open(gens, "w"))
            passing = sum(expect[d] for d in dirs)
            for path in paths[i % len(paths):] + paths[:i % len(paths)]:
                t0 = time.monotonic()
                if path.startswith("surgebox"):
                    out = os.path.join(chunk, "scored-%s.json" % path)
                    subprocess.run([os.path.join(a.bin, "surgebox"), "verify", "--benchmark", "cruxeval", "--mode",
                                    "output", "--generations", gens, "--data", a.data, "--out", out, "--socket", sock,
                                    "--no-autostart", "--jobs", str(a.jobs)] + (["--warm"] if path == "surgebox-warm" else []),
                                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    secs[path].append(time.monotonic() - t0)
                    s = json.load(open(out))
                    got = {k: v[0] for k, v in s["raw_scored_generations"].items()}
                    wrong = [k for k in preds if got.get(k) != expect[os.path.join(chunk, k)]]
                    if wrong:
                        sys.exit("warm_python.py: %s: %d verdicts differ in chunk %d, first %s"
                                 % (path, len(wrong), i, wrong[0]))
                    continue
                if path == "harness":
                    progs = [open(os.path.join(d, "prog.py")).read() for d in dirs]
                    t0 = time.monotonic()
                    verdicts = harness_baseline.run(progs, a.jobs)
                    secs[path].append(time.monotonic() - t0)
                    if verdicts != [expect[d] for d in dirs]:
                        sys.exit("warm_python.py: harness: %d verdicts differ" % sum(
                            v != expect[d] for v, d in zip(verdicts, dirs)))
                    continue
                failed = in_parallel(dirs, a.jobs, fresh if path == "fresh" else warm)
                secs[path].append(time.monotonic() - t0)
                if failed:
                    sys.exit("warm_python.py: %s: %d checks failed, first %r" % (path, len(failed), failed[0]))
            print("chunk %d: %s" % (i, ", ".join("%s %.1f s" % (k, secs[k][-1]) for k in paths)), file=sys.stderr)
    finally:
        shorts = sum(len(z.short_exits()) for z in zygotes)
        for z in zygotes:
            z.close()
        if daemon:
            daemon.terminate()
            daemon.wait()
    n = len(samples) * a.copies
    base = sum(secs["fresh"])
    print("%d checks (%d chunks of %d, %d passing each), %d at a time, %s" % (n, a.copies, len(samples), passing, a.jobs, PY))
    for k in paths:
        t = sum(secs[k])
        print("%-13s %6.1f s  %5.2f ms/check  %.2fx fresh" % (k, t, 1000 * t / n, t / base))
    print("warm / harness: %.2fx (%d of the bare zygotes' %d children took the short exit)"
          % (sum(secs["warm"]) / sum(secs["harness"]), shorts, n))
    if "surgebox" in secs:
        print("warm / surgebox cold: %.2fx" % (sum(secs["warm"]) / sum(secs["surgebox"])))
        w = sum(secs["surgebox-warm"])
        print("surgebox-warm / harness: %.2fx, / fresh: %.2fx, / surgebox cold: %.2fx"
              % (w / sum(secs["harness"]), w / base, w / sum(secs["surgebox"])))
    if not a.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
