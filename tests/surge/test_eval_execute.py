#!/usr/bin/env python3
"""surgebox eval --execute on a tiny hand-written dataset in SURGE's format:
the references are produced right then by running the items, so a
prediction equal to what the program really prints scores 1 even where the
shipped "gt" is wrong. Run inside the unshare wrapper (ctest does)."""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def private_env(d):
    """The default socket in d (SURGEBOX_SOCKET_DIR): nothing answers there, so
    a private daemon of this run's own is started (a socket named explicitly
    never is)."""
    env = dict(os.environ, SURGEBOX_SOCKET_DIR=d)
    env.pop("SURGEBOX_SOCKET", None)
    return env


def main():
    bin_dir = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIPPED: runs as root")
        sys.exit(SKIP)
    d = tempfile.mkdtemp(prefix="sbevx-")
    dr = [{"custom_category": 7, "custom_features": {"key": "g++-C++17--O0", "dependencies": [True, False, False]},
           "question": "#include <iostream>\nint main() { std::cout << 6 * 7 << std::endl; }",
           "gt": "WRONG ON PURPOSE\n"}]
    cl = [{"custom_categoey": 1, "custom_features": {"language": "Python", "difficulty": 1},
           "question": "print(sum(range(10)))", "gt": "45"},
          {"custom_categoey": 1, "custom_features": {"language": "CPP", "difficulty": 2},
           "question": "#include <cstdio>\nint main(){ std::printf(\"%d\\n\", 1 << 10); }", "gt": "1024"}]
    json.dump(dr, open(os.path.join(d, "dr.json"), "w"))
    json.dump(cl, open(os.path.join(d, "cl.json"), "w"))
    preds = os.path.join(d, "preds.jsonl")
    with open(preds, "w") as f:
        f.write(json.dumps({"subset": "dr", "index": 0, "model": "m", "prediction": "Output:\n```\n42\n```"}) + "\n")
        f.write(json.dumps({"subset": "cl", "index": 0, "model": "m", "prediction": "Output: `45`"}) + "\n")
        f.write(json.dumps({"subset": "cl", "index": 1, "model": "m", "prediction": "Output: `1000`"}) + "\n")
    items = os.path.join(d, "items.jsonl")
    cli = os.path.join(bin_dir, "surgebox")
    p = subprocess.run([cli, "eval", "--execute", "--data", d, "--subset", "dr,cl", "--predictions", preds, "--items", items,
                        "--json"], capture_output=True, text=True, timeout=600, env=private_env(d))
    print(p.stdout[-3000:], p.stderr[-3000:])
    ok = p.returncode == 0
    scores = {}
    if ok:
        for line in open(items):
            r = json.loads(line)
            scores[(r["subset"], r["index"])] = r["score"]
    want = {("dr", 0): 1.0, ("cl", 0): 1.0, ("cl", 1): 0.0}
    if not ok or scores != want:
        print(f"FAIL: exit {p.returncode}, scores {scores}, expected {want}")
        sys.exit(1)
    # and against the shipped (wrong) reference the DR prediction scores 0
    p = subprocess.run([cli, "eval", "--data", d, "--predictions", preds, "--items", items], capture_output=True, text=True)
    shipped = {(json.loads(l)["subset"], json.loads(l)["index"]): json.loads(l)["score"] for l in open(items)}
    if shipped.get(("dr", 0)) != 0.0:
        print(f"FAIL: against the shipped gt the DR score should be 0, got {shipped}")
        sys.exit(1)
    # --strict: every prediction scored, so exit 0 (no false alarm); a line that names no item
    # is refused before anything runs (exit 1), as without --strict
    p = subprocess.run([cli, "eval", "--execute", "--strict", "--data", d, "--subset", "dr,cl", "--predictions", preds],
                       capture_output=True, text=True, timeout=600, env=private_env(d))
    if p.returncode != 0 or "eval --strict:" in p.stderr:
        print(f"FAIL: --strict with every prediction scored: exit {p.returncode}: {p.stderr[-1500:]}")
        sys.exit(1)
    with open(preds, "a") as f:
        f.write(json.dumps({"subset": "cl", "index": 9, "model": "m", "prediction": "Output: 1"}) + "\n")
    p = subprocess.run([cli, "eval", "--execute", "--strict", "--data", d, "--subset", "dr,cl", "--predictions", preds],
                       capture_output=True, text=True, timeout=600, env=private_env(d))
    if p.returncode != 1 or "nothing was run" not in p.stderr:
        print(f"FAIL: an unmatched line under --execute: exit {p.returncode}, expected 1: {p.stderr[-1500:]}")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
