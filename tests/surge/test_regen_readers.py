#!/usr/bin/env python3
"""Every reader of a regen output (eval, bins, the regen table) applies one
rule (issue 36): an item without an "exec" record (outside --only, or left by
an interrupted regen), and an item whose run did not finish (memory_limit,
timeout, host_killed, a failure), still carries SURGE's published "gt": it is
excluded and counted, never scored against it, never given a time of ours.

  test_regen_readers.py BIN_DIR DATA_DIR

1. a hand-made output (no sandbox): records of every kind, and an older
   output's cut-off run stored as regenerated;
2. `regen --subset cl --only A,B` then eval with a prediction for every item:
   2 scored, 148 excluded as not_run (the issue's 149-of-150 case);
3. a regen interrupted mid-way (SIGINT while its last item, made to sleep,
   runs: no machine's speed changes where it stops): eval scores exactly the
   items it wrote, the rest not_run.
Predictions are the published answers, so an item scored against the
published "gt" would score 1: what is excluded must not count.
Run inside the unshare wrapper (ctest does): regen starts its own daemon.
"""
import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900, **kw)
    print(f"$ {' '.join(argv[1:])}\n  exit {p.returncode}\n  stderr: {p.stderr[-1200:]}", flush=True)
    return p


def predictions(path, items):
    with open(path, "w") as f:
        for i, it in enumerate(items):
            f.write(json.dumps({"subset": "cl", "index": i, "model": "m", "prediction": f"Output: `{it['gt']}`"}) + "\n")
    return path


def evaluate(cli, out_dir, preds):
    p = run([cli, "eval", "--data", out_dir, "--predictions", preds, "--json"])
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    models = doc.get("models") or [{}]
    return p, models[0].get("scored"), doc.get("excluded") or {}


def record(status, regenerated, cls, complete=True, **extra):
    e = {"status": status, "regenerated": regenerated, "group": "Python", "class": cls, "complete": complete}
    e.update(extra)
    return e


def hand_made(cli, cl, tmp):
    out = os.path.join(tmp, "hand")
    os.mkdir(out)
    items = copy.deepcopy(cl)
    for i in range(4):  # regenerated here, equal to the published answer
        items[i]["exec"] = record("ok", True, None, cpu_time_s=0.02, matched="exact", repeats=1, deterministic=True)
        items[i]["gt_published"] = items[i]["gt"]
    items[4]["exec"] = record("memory_limit", False, "memory_limit")
    items[5]["exec"] = record("timeout", False, "timeout")
    items[6]["exec"] = record("host_killed", False, "host_killed", complete=False)
    # an older output: a killed run stored as a regenerated reference
    items[7]["exec"] = record("memory_limit", True, "other", cpu_time_s=2.0, matched="no", repeats=1)
    items[7]["gt"] = ""
    with open(os.path.join(out, "cl.json"), "w") as f:
        json.dump(items, f)
    preds = predictions(os.path.join(tmp, "hand.jsonl"), cl)
    p, scored, excluded = evaluate(cli, out, preds)
    check(scored == 4, f"hand-made: eval scored {scored}, want the 4 regenerated items")
    want = {"not_run": 150 - 8, "memory_limit": 2, "timeout": 1, "host_killed": 1}
    check(excluded == want, f"hand-made: excluded {excluded}, want {want}")
    q = run([cli, "eval", "--data", out, "--predictions", preds])
    check("excluded" in q.stderr and "not_run 142" in q.stderr, f"eval says it on screen: {q.stderr[-600:]!r}")
    b = run([cli, "bins", "--data", os.path.join(out, "cl.json"), "--json"])
    doc = json.loads(b.stdout) if b.returncode == 0 else {}
    check(doc.get("not_regenerated") == 146, f"bins: not_regenerated {doc.get('not_regenerated')}, want 146")
    check((doc.get("cpu_time_s") or {}).get("items") == 4,
          f"bins: our times only for the 4 regenerated items (not item 7's killed run): {doc.get('cpu_time_s')}")
    b = run([cli, "bins", "--data", os.path.join(out, "cl.json")])
    check("146 item(s) not regenerated here" in b.stdout, f"bins says it: {b.stdout[:600]!r}")


def only_slice(cli, data, cl, py, tmp):
    out = os.path.join(tmp, "only")
    p = run([cli, "regen", "--data", data, "--subset", "cl", "--only", f"{py[0]},{py[1]}", "--out", out])
    check(p.returncode == 0, f"regen --only: exit {p.returncode}")
    written = json.load(open(os.path.join(out, "cl.json")))
    check(sum("exec" in it for it in written) == 2, "regen --only wrote 2 exec records")
    check("148 items not run here" in p.stdout, f"the regen table says what did not run: {p.stdout[-1500:]!r}")
    p, scored, excluded = evaluate(cli, out, predictions(os.path.join(tmp, "only.jsonl"), cl))
    check(scored == 2 and excluded == {"not_run": 148},
          f"--only slice: eval scored {scored} (want 2), excluded {excluded} (want not_run 148)")


def jobs_done(cli):
    p = subprocess.run([cli, "status", "--json", "--no-autostart"], capture_output=True, text=True, timeout=120)
    try:
        return json.loads(p.stdout)["jobs_done"]
    except (ValueError, KeyError):
        return None


def interrupted(cli, data, cl, py, tmp):
    """SIGINT at a point no machine's speed moves: the last item asked is made
    to sleep (a copy of the data), one job at a time, so once the daemon has
    done every other item's job the run is mid-way whatever the speed."""
    cut_data = os.path.join(tmp, "cut-data")
    os.mkdir(cut_data)
    shutil.copy(os.path.join(data, "cl.json"), cut_data)
    sleeper = copy.deepcopy(cl)
    sleeper[py[-1]]["question"] = "import time\ntime.sleep(3600)\n"
    with open(os.path.join(cut_data, "cl.json"), "w") as f:
        json.dump(sleeper, f)
    out = os.path.join(tmp, "cut")
    path = os.path.join(out, "cl.json")
    before = jobs_done(cli)
    proc = subprocess.Popen([cli, "regen", "--data", cut_data, "--subset", "cl", "--only", ",".join(map(str, py)),
                             "--jobs", "1", "--out", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        done = jobs_done(cli)
        if before is not None and done is not None and done - before >= len(py) - 1:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    print(f"$ regen (interrupted)\n  exit {proc.returncode}\n  stderr: {stderr[-800:]}", flush=True)
    written = json.load(open(path))
    ran = sum("exec" in it for it in written)
    check(proc.returncode == 130 and ran == len(py) - 1,
          f"interrupted mid-way: exit {proc.returncode}, {ran} of {len(py)} asked written (want 130, all but the sleeper)")
    p, scored, excluded = evaluate(cli, out, predictions(os.path.join(tmp, "cut.jsonl"), cl))
    check(scored == ran and excluded == {"not_run": 150 - ran},
          f"interrupted: eval scored {scored} (want {ran}), excluded {excluded} (want not_run {150 - ran})")


def main():
    bin_dir, data = sys.argv[1], os.environ.get("SURGE_DATA") or sys.argv[2]
    if not os.path.exists(os.path.join(data, "cl.json")):
        print(f"SKIPPED: no SURGE data in {data}")
        return SKIP
    if os.geteuid() != 0:
        print("SKIPPED: runs sandboxes as root")
        return SKIP
    cli = os.path.join(bin_dir, "surgebox")
    cl = json.load(open(os.path.join(data, "cl.json")))
    py = [i for i, it in enumerate(cl) if it["custom_features"]["language"] == "Python"]
    tmp = tempfile.mkdtemp(prefix="sb-readers-")
    os.chmod(tmp, 0o755)
    os.environ["SURGEBOX_PROFILES"] = os.path.join(tmp, "profiles")  # no profile: the host's python3
    sock = os.path.join(tmp, "s.sock")
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--jobs", "2", "--cache-dir",
                          os.path.join(tmp, "cache")], stderr=open(os.path.join(tmp, "daemon.log"), "w"))
    try:
        for _ in range(2400):  # ready when it answers (toolchain detection first)
            if run([cli, "ping", "--socket", sock, "--no-autostart"]).returncode == 0 or d.poll() is not None:
                break
            time.sleep(0.25)
        os.environ["SURGEBOX_SOCKET"] = sock
        hand_made(cli, cl, tmp)
        only_slice(cli, data, cl, py, tmp)
        interrupted(cli, data, cl, py, tmp)
    finally:
        d.terminate()
        d.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
