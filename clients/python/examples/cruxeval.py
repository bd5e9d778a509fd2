#!/usr/bin/env python3
"""CRUXEval verification with the surgebox Python client.

    cruxeval.py --mode output|input --generations GENS.json [--out SCORED.json]
                [--data cruxeval.jsonl] [--socket PATH] [--concurrency N]

Follows ../shared/cruxeval/SCORING.md (CRUXEval's published scoring):
- output mode: a generation containing the text "f(<input>)" is dropped;
  input mode: one not containing "f(" is dropped; dropped ones are not run
  and leave no entry in the sample's list;
- every other generation g runs as its own sandboxed Python 3 program
  `<code>\\nassert <output> == <g>\\n` (/usr/bin/python3, 3 s wall limit);
  it passes when the program exits 0 (no exception, no timeout, no crash);
- a sample none of whose generations passed scores [False] * n (n counts
  the dropped ones too);
- pass@k per sample as upstream (1.0 if n - c < k, else
  1 - prod_{j=n-c+1..n} (1 - k/j), left to right), the mean over the samples
  as upstream's evaluate_generations.py computes it, `sum(xs) / len(xs) *
  100` (Python's left-to-right sum), so the floats are upstream's to the
  last bit.

The generations file is checked before anything runs: it must be an object
whose keys are exactly the data's sample ids (upstream asserts every sample
is present; a missing one would otherwise score n = 0, i.e. pass@k = 1.0)
and whose values are lists of strings. Identical programs run once.
Exit codes: 0 done, 1 usage / bad input, 2 a sandbox or the daemon failed.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import surgebox
except ImportError:  # run from the source tree
    sys.path.insert(0, os.path.dirname(HERE))
    import surgebox

TIME_LIMIT_S = 3
PYTHON = "/usr/bin/python3"


def default_data():
    env = os.environ.get("CRUXEVAL_DATA")
    if env:
        return env
    # <project>/clients/python/examples -> <project>/../shared/cruxeval
    project = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    return os.path.join(os.path.dirname(project), "shared", "cruxeval", "cruxeval.jsonl")


def load_data(path):
    samples = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            d = json.loads(line)
            for k in ("code", "input", "output", "id"):
                if not isinstance(d.get(k), str):
                    raise ValueError("%s:%d: %r missing or not a string" % (path, n, k))
            samples.append(d)
    return samples


def check_generations(gens, samples):
    """None if the file is usable, else why not (nothing has run yet)."""
    if not isinstance(gens, dict):
        return "the generations file must hold a JSON object {sample_id: [generation, ...]}"
    ids = [s["id"] for s in samples]
    known = set(ids)
    unknown = [k for k in gens if k not in known]
    if unknown:
        return "unknown sample id(s): %s" % ", ".join(unknown[:5])
    missing = [i for i in ids if i not in gens]
    if missing:
        return "%d sample(s) without generations (upstream requires all): %s" % (
            len(missing), ", ".join(missing[:5]))
    for k, v in gens.items():
        if not isinstance(v, list):
            return "%s: generations must be a list" % k
        for i, g in enumerate(v):
            if not isinstance(g, str):
                return "%s[%d]: a generation must be a string" % (k, i)
    return None


def kept(mode, sample, g):
    if mode == "output":
        return "f(" + sample["input"] + ")" not in g
    return "f(" in g


def program(sample, g):
    return sample["code"] + "\nassert " + sample["output"] + " == " + g + "\n"


def job(prog):
    return {"files": {"main.py": prog},
            "steps": [{"name": "run", "argv": [PYTHON, "main.py"], "limits": {"time_s": TIME_LIMIT_S}}]}


def pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    prod = 1.0
    for j in range(n - c + 1, n + 1):  # np.prod: a sequential product
        prod *= 1.0 - k / j
    return 1.0 - prod


def mean_times_100(values):
    values = list(values)
    return sum(values) / len(values) * 100  # upstream: sum(pass_at_1s) / len(pass_at_1s) * 100


def score(samples, gens, verdicts):
    """verdicts: {(sample id, index): bool} for the generations that ran."""
    scored = {}
    for s in samples:
        gs = gens[s["id"]]
        res = [verdicts[(s["id"], i)] for i in range(len(gs)) if (s["id"], i) in verdicts]
        if True not in res:
            res = [False] * len(gs)
        scored[s["id"]] = res
    p1 = mean_times_100([pass_at_k(len(r), sum(r), 1) for r in scored.values()])
    p5 = mean_times_100([pass_at_k(len(r), sum(r), 5) for r in scored.values()])
    out = {"raw_generations": gens, "raw_scored_generations": scored, "pass_at_1": p1, "pass_at_5": p5}
    below = sum(len(r) < 5 for r in scored.values())
    if below:  # upstream's figure is kept; what it means is said beside it (as `surgebox verify` does)
        out["pass_at_k_note"] = (f"pass@5 is not meaningful: {below} of {len(scored)} samples have fewer than 5 "
                                 "generations, which CRUXEval's formula counts as passing (1.0)")
    return out


def verify(client, mode, samples, gens, concurrency=8, show_progress=True):
    by_program = {}  # program text -> [(sample id, index)]: identical programs run once
    for s in samples:
        for i, g in enumerate(gens[s["id"]]):
            if kept(mode, s, g):
                by_program.setdefault(program(s, g), []).append((s["id"], i))
    progs = list(by_program)
    jobs = (dict(job(p), id=n) for n, p in enumerate(progs))
    results = client.run_many(jobs, concurrency=concurrency)
    if show_progress:
        results = surgebox.progress(results, total=len(progs), desc="cruxeval-" + mode)
    verdicts = {}
    for r in results:
        st = r.get("status")
        if st in ("internal_error", "error"):  # the sandbox, not the generation, failed
            raise RuntimeError("program %d: %s: %s" % (r["id"], st, r.get("error") or r.step() and r.step().get("error")))
        for key in by_program[progs[r["id"]]]:
            verdicts[key] = st == "ok"
    return verdicts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("output", "input"), required=True)
    ap.add_argument("--generations", required=True)
    ap.add_argument("--out")
    ap.add_argument("--data", default=None, help="cruxeval.jsonl (default: $CRUXEVAL_DATA or ../shared/cruxeval)")
    ap.add_argument("--socket", help="a running daemon's socket (default: the usual one, else a private daemon)")
    ap.add_argument("--surgeboxd", help="the daemon binary for a private daemon")
    ap.add_argument("--daemon-arg", action="append", default=[], help="an extra argument for a private daemon")
    ap.add_argument("--concurrency", type=int, default=max(2, 2 * (os.cpu_count() or 1)))
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(argv)
    try:
        samples = load_data(a.data or default_data())
        with open(a.generations, encoding="utf-8") as f:
            gens = json.load(f)
    except (OSError, ValueError) as e:
        print("cruxeval: %s" % e, file=sys.stderr)
        return 1
    why = check_generations(gens, samples)
    if why:
        print("cruxeval: %s: %s" % (a.generations, why), file=sys.stderr)
        return 1
    try:
        with surgebox.Client(a.socket, surgeboxd=a.surgeboxd, daemon_args=a.daemon_arg) as c:
            verdicts = verify(c, a.mode, samples, gens, a.concurrency, not a.no_progress)
    except (OSError, RuntimeError, surgebox.SurgeboxError) as e:
        print("cruxeval: %s" % e, file=sys.stderr)
        return 2
    out = score(samples, gens, verdicts)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(out, f)
    print("pass@1: %.1f\npass@5: %.1f%s" % (out["pass_at_1"], out["pass_at_5"],
                                            f" ({out['pass_at_k_note']})" if "pass_at_k_note" in out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
