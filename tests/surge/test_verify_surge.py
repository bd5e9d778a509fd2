#!/usr/bin/env python3
"""surgebox verify --benchmark surge on the shipped SURGE data: only the
predicted items run, bad input runs nothing, --json keeps stdout to one JSON
document, --out resumes, and an item whose toolchain is absent here (Julia,
Lean 4) is excluded and counted, never scored against the published "gt".

  test_verify_surge.py BIN_DIR DATA_DIR

Jobs are counted by the daemon (status "jobs_done") of a private surgeboxd
started through clients/python. Run inside the unshare wrapper (ctest does).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "clients", "python"))
import surgebox  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


class Run:
    def __init__(self, bin_dir, client, tmp):
        self.cli = os.path.join(bin_dir, "surgebox")
        self.client = client
        self.env = dict(os.environ, SURGEBOX_SOCKET=client.socket_path)
        self.tmp = tmp

    def jobs_done(self):
        return self.client.status()["jobs_done"]

    def verify(self, args, max_jobs):
        """Runs verify; stops it (a failure) as soon as the daemon ran more than max_jobs."""
        before = self.jobs_done()
        out, err = os.path.join(self.tmp, "stdout"), os.path.join(self.tmp, "stderr")
        with open(out, "w") as fo, open(err, "w") as fe:
            p = subprocess.Popen([self.cli, "verify", "--benchmark", "surge"] + args, stdout=fo, stderr=fe,
                                 env=self.env)
            while p.poll() is None:
                if self.jobs_done() - before > max_jobs:
                    p.kill()
                    p.wait()
                    check(False, f"{args}: more than {max_jobs} job(s) ran")
                    break
                time.sleep(0.5)
        ran = self.jobs_done() - before
        stdout, stderr = open(out).read(), open(err).read()
        print(f"$ verify {' '.join(args)}\n  exit {p.returncode}, {ran} job(s)\n  stderr: {stderr[-1500:]}", flush=True)
        return p.returncode, stdout, stderr, ran


def main():
    bin_dir, data = sys.argv[1], os.environ.get("SURGE_DATA") or sys.argv[2]
    if not all(os.path.exists(os.path.join(data, s + ".json")) for s in ("ml", "cl", "fl")):
        print(f"SKIPPED: no SURGE data in {data}")
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("SKIPPED: runs sandboxes as root")
        sys.exit(SKIP)
    ml, cl = (json.load(open(os.path.join(data, s + ".json"))) for s in ("ml", "cl"))
    # three Python CL items (they run), one Julia ML item and one FL item
    # (Lean 4): their toolchains are absent here, so they are excluded
    py = [i for i, it in enumerate(cl) if it["custom_features"]["language"] == "Python"][:3]
    julia = next(i for i, it in enumerate(ml) if it["custom_features"]["language"] == "Julia")
    if shutil.which("julia") or shutil.which("lean"):
        print("SKIPPED: Julia or Lean 4 is installed here: no item with a missing toolchain")
        sys.exit(SKIP)
    tmp = tempfile.mkdtemp(prefix="sbvs-")
    os.chmod(tmp, 0o755)
    # a profiles directory of its own, empty: .ci/main's surge-2025 (Julia
    # 1.5) in the default one would run the Julia item (issue 36)
    os.environ["SURGEBOX_PROFILES"] = os.path.join(tmp, "profiles")
    os.mkdir(os.environ["SURGEBOX_PROFILES"])
    preds = os.path.join(tmp, "preds.jsonl")
    with open(preds, "w") as f:
        for k, i in enumerate(py):  # the published answer, except for the second item
            answer = cl[i]["gt"] if k != 1 else "certainly not " + cl[i]["gt"]
            f.write(json.dumps({"subset": "cl", "index": i, "model": "m", "prediction": f"Output: `{answer}`"}) + "\n")
        f.write(json.dumps({"subset": "ml", "index": julia, "model": "m", "prediction": ml[julia]["gt"]}) + "\n")
        f.write(json.dumps({"subset": "fl", "index": 1, "model": "m", "prediction": "{}"}) + "\n")
    common = ["--data", data, "--subset", "ml,cl,fl", "--predictions", preds]
    out = os.path.join(tmp, "out")
    with surgebox.Client(private=True, surgeboxd=os.path.join(bin_dir, "surgeboxd"),
                         daemon_args=["--jobs", "2", "--cache-dir", os.path.join(tmp, "cache")]) as client:
        r = Run(bin_dir, client, tmp)

        # bad arguments or predictions: one error, exit 1 (2 for a file that
        # cannot be read, docs/cli.md's EXIT STATUS), nothing run, nothing written
        bad = os.path.join(tmp, "bad.jsonl")
        cases = {
            "unknown flag": common + ["--out", out, "--frobnicate"],
            "missing predictions file": ["--data", data, "--predictions", os.path.join(tmp, "absent.jsonl"), "--out", out],
            "malformed line": common[:-1] + [bad, "--out", out],
            "no such item": common[:-1] + [bad + "2", "--out", out],
            "bad --by": common + ["--by", "colour", "--out", out],
        }
        with open(bad, "w") as f:
            f.write(open(preds).read() + "{not json\n")
        with open(bad + "2", "w") as f:
            f.write(open(preds).read() + json.dumps({"subset": "cl", "index": len(cl) + 5, "prediction": "1"}) + "\n")
        for what, args in cases.items():
            rc, stdout, stderr, ran = r.verify(args, 0)
            want = 2 if what == "missing predictions file" else 1
            check(rc == want, f"{what}: exit {rc}, expected {want}")
            check(ran == 0, f"{what}: {ran} job(s) ran")
            check(stdout == "", f"{what}: stdout not empty: {stdout[:200]!r}")
            check(stderr.strip() != "", f"{what}: no message")
            check(not os.path.exists(out), f"{what}: --out was created")

        # 5 predictions: the 3 runnable items run, exactly; 2 excluded and counted
        items = os.path.join(tmp, "items.jsonl")
        rc, stdout, stderr, ran = r.verify(common + ["--out", out, "--json", "--items", items], 3)
        check(rc == 0, f"json run: exit {rc}")
        check(ran == 3, f"json run: {ran} job(s) ran, expected 3")
        try:
            doc = json.loads(stdout)
        except ValueError as e:
            doc = {}
            check(False, f"--json stdout is not one JSON document ({e}): {stdout[:300]!r}")
        check(doc.get("excluded") == {"missing_toolchain:julia": 1, "missing_toolchain:lean4": 1},
              f"excluded: {doc.get('excluded')}")
        check(doc.get("scored_items") == 3, f"scored_items: {doc.get('scored_items')}")
        model = (doc.get("models") or [{}])[0]
        check(model.get("counts", {}).get("CL") == 3 and model.get("counts", {}).get("ML_Julia") == 0
              and model.get("counts", {}).get("FL") == 0, f"counts: {model.get('counts')}")
        scored = {(x["subset"], x["index"]): x["score"] for x in map(json.loads, open(items))} if rc == 0 else {}
        check(scored == {("cl", py[0]): 1.0, ("cl", py[1]): 0.0, ("cl", py[2]): 1.0}, f"per-item scores {scored}")
        regen = json.load(open(os.path.join(out, "cl.json"))) if os.path.exists(os.path.join(out, "cl.json")) else []
        done = [i for i, it in enumerate(regen) if it.get("exec", {}).get("complete")]
        check(done == py, f"--out holds {done}, expected {py}")

        # again, same --out: nothing runs, same scores; text mode says what was excluded
        rc, stdout2, stderr, ran = r.verify(common + ["--out", out, "--json"], 0)
        check(rc == 0 and ran == 0, f"resume: exit {rc}, {ran} job(s) ran, expected none")
        doc2 = json.loads(stdout2) if rc == 0 else {}
        check(doc2.get("models") == doc.get("models") and doc2.get("references", {}).get("reused") == 5,
              f"resume: {doc2.get('models')} {doc2.get('references')}")
        rc, text, stderr, ran = r.verify(common + ["--out", out], 0)
        check(rc == 0 and ran == 0, f"text: exit {rc}, {ran} job(s)")
        check("excluded (no reference regenerated here, not scored): 2" in text and "missing_toolchain:lean4 1" in text,
              f"text report: {text[-600:]!r}")
    shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
