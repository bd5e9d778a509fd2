#!/usr/bin/env python3
"""surgebox verify --benchmark cruxeval on a small data file in CRUXEval's
format, with generations written by hand and verdicts and pass@k worked out
by hand from SCORING.md. Cases: e2e (both modes), errors (bad generations
files: exit 2, nothing run), smoke (--samples, --limit), resume (an interrupted run, continued, gives the
file of an uninterrupted one). Run inside unshare (ctest does)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
import surgebox  # noqa: E402  the Python client, from the source tree

SKIP = 77

DATA = [
    # upstream's sample_3
    {"code": "def f(text, value):\n    text_list = list(text)\n    text_list.append(value)\n    return ''.join(text_list)",
     "input": "'bcksrut', 'q'", "output": "'bcksrutq'", "id": "sample_0"},
    {"code": "def f(x):\n    print('noise')\n    return x > 0", "input": "5", "output": "True", "id": "sample_1"},
    {"code": "def f(x):\n    return [x]", "input": "1", "output": "[1]", "id": "sample_2"},
    {"code": "def f(x):\n    return x", "input": "1", "output": "1", "id": "sample_3"},
    {"code": "def f(a):\n    return a * 2", "input": "3", "output": "6", "id": "sample_4"},
]

OUTPUT_GENS = {
    # right, wrong, malformed (syntax error), f(<input>) dropped, 'a' == "a"
    "sample_0": ["'bcksrutq'", "'bcksrut'", "'bcksrutq", "f('bcksrut', 'q')", "\"bcksrutq\""],
    "sample_1": ["1", "0"],                       # True == 1 passes
    "sample_2": ["(1,)", "f(1)"],                 # [1] == (1,) fails; f(1) dropped; nothing passed
    "sample_3": ["any(iter(int, 1))", "1"],       # an endless loop fails at 3 s
    "sample_4": ["f(3)", "f(3) + 0"],             # all dropped
}
OUTPUT_WANT = {
    "sample_0": [True, False, False, True],
    "sample_1": [True, False],
    "sample_2": [False, False],
    "sample_3": [False, True],
    "sample_4": [False, False],
}
# pass@1: 0.5, 0.5, 0, 0.5, 0 -> 30; pass@5: n - c < 5 everywhere -> 100
OUTPUT_PASS = (30.0, 100.0)

INPUT_GENS = {
    "sample_0": ["f('bcksrut', 'q')", "f('bcksru', 'q')", "'bcksrutq'", "f('x'"],
    "sample_1": ["f(3)", "f(-1)", "f(3)"],        # the repeated program runs once
    "sample_2": ["f((1,))", "f(1)"],
    "sample_3": ["f(1)"],
    "sample_4": ["6"],                             # no f( : dropped
}
INPUT_WANT = {
    "sample_0": [True, False, False],
    "sample_1": [True, False, True],
    "sample_2": [False, True],
    "sample_3": [True],
    "sample_4": [False],
}
# pass@1: 1/3, 2/3, 1/2, 1, 0 -> 2.5 / 5 * 100 = 50
INPUT_PASS = (50.0, 100.0)


def write(path, obj, lines=False):
    with open(path, "w") as f:
        if lines:
            f.write("\n".join(json.dumps(o) for o in obj))
        else:
            json.dump(obj, f)
    return path


def verify(bin_dir, d, mode, gens, out, data, extra=(), wait=True):
    cmd = [os.path.join(bin_dir, "surgebox"), "verify", "--benchmark", "cruxeval", "--mode", mode,
           "--generations", gens, "--data", data, "--cache-dir", os.path.join(d, "cache"), "--jobs", "2"]
    if out:
        cmd += ["--out", out]
    cmd += list(extra)
    env = dict(os.environ, SURGEBOX_SOCKET_DIR=d)  # the default socket, here: a private daemon of its own
    env.pop("SURGEBOX_SOCKET", None)
    if not wait:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    print("$", " ".join(cmd[1:]), "->", p.returncode, "\n", p.stdout[-2000:], p.stderr[-3000:])
    return p


def start_daemon(bin_dir, d):
    """A daemon of the test's own, started first: its toolchain detection
    (cold, slow on a loaded machine) fills the cache dir that the embedded
    daemons of later runs then find warm (they must be ready within 30 s)."""
    sock = os.path.join(d, "own.sock")
    proc = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--jobs", "2", "--quiet",
                             "--cache-dir", os.path.join(d, "cache")])
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with surgebox.Client(sock, autostart=False) as c:
                c.ping()
            return proc, sock
        except (OSError, surgebox.SurgeboxError):
            time.sleep(0.2)
    fail("the test's daemon did not start")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_scored(out, gens, want, passes):
    r = json.load(open(out))
    # every sample here has fewer than 5 generations: pass@5 is upstream's
    # 100, and the file says beside it that it means nothing (issue 36)
    if list(r) != ["raw_generations", "raw_scored_generations", "pass_at_1", "pass_at_5", "pass_at_k_note"]:
        fail(f"keys {list(r)}")
    note = f"pass@5 is not meaningful: {len(DATA)} of {len(DATA)} samples have fewer than 5 generations"
    if not r["pass_at_k_note"].startswith(note):
        fail(f"pass_at_k_note {r['pass_at_k_note']!r}, expected it to start {note!r}")
    if r["raw_generations"] != gens:
        fail("raw_generations changed")
    if list(r["raw_scored_generations"]) != [s["id"] for s in DATA]:
        fail(f"sample order {list(r['raw_scored_generations'])}")
    if r["raw_scored_generations"] != want:
        fail(f"verdicts {r['raw_scored_generations']}, expected {want}")
    if abs(r["pass_at_1"] - passes[0]) > 1e-9 or abs(r["pass_at_5"] - passes[1]) > 1e-9:
        fail(f"pass@1/5 {r['pass_at_1']} {r['pass_at_5']}, expected {passes}")


def e2e(bin_dir, d, data):
    own, sock = start_daemon(bin_dir, d)
    out = os.path.join(d, "out.json")
    gens = write(os.path.join(d, "gens-out.json"), OUTPUT_GENS)
    p = verify(bin_dir, d, "output", gens, out, data)
    if p.returncode != 0:
        fail(f"output mode exit {p.returncode}")
    check_scored(out, OUTPUT_GENS, OUTPUT_WANT, OUTPUT_PASS)
    if "pass@1: 30.0 pass@5: 100.0 (pass@5 is not meaningful: 5 of 5 samples have fewer than 5 generations" \
            not in p.stdout:
        fail("output mode: printed pass@k")
    out = os.path.join(d, "in.json")
    gens = write(os.path.join(d, "gens-in.json"), INPUT_GENS)
    p = verify(bin_dir, d, "input", gens, out, data, extra=["--socket", sock, "--no-autostart"])
    # The Python client's example (clients/python/examples/cruxeval.py) must
    # give the same scored files: same verdicts, same floats.
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    for mode, g, want_file in (("output", os.path.join(d, "gens-out.json"), os.path.join(d, "out.json")),
                               ("input", gens, out)):
        ex = os.path.join(d, f"example-{mode}.json")
        q = subprocess.run(["/usr/bin/python3", os.path.join(src, "clients", "python", "examples", "cruxeval.py"),
                            "--mode", mode, "--generations", g, "--data", data, "--out", ex, "--socket", sock,
                            "--no-progress"], capture_output=True, text=True, timeout=240,
                           env=dict(os.environ, PYTHONPATH=os.path.join(src, "clients", "python")))
        if q.returncode != 0:
            fail(f"the Python example, {mode} mode: exit {q.returncode}: {q.stderr[-1500:]}")
        if json.load(open(ex)) != json.load(open(want_file)):
            fail(f"{mode} mode: the Python example's scored file differs from surgebox verify's")
    own.terminate()
    if p.returncode != 0:
        fail(f"input mode exit {p.returncode}")
    check_scored(out, INPUT_GENS, INPUT_WANT, INPUT_PASS)
    if "pass@1: 50.0 pass@5: 100.0" not in p.stdout:
        fail("input mode: printed pass@k")
    # 11 generations, 2 dropped, 9 kept of which 8 distinct programs
    if "11 generations, 2 dropped by the rules, 8 distinct programs" not in p.stderr:
        fail("input mode: the dedupe count")
    if os.path.exists(out + ".progress"):
        fail("the progress file outlived a complete run")


def errors(bin_dir, d, data):
    good = dict(OUTPUT_GENS)
    cases = {
        "not-object": ([["1"]], "must be a JSON object"),
        "unknown-id": (dict(good, sample_9=["1"]), "unknown sample id \"sample_9\""),
        "not-list": (dict(good, sample_1="1"), "sample_1: the generations must be a list"),
        "not-string": (dict(good, sample_2=["1", 2]), "sample_2[1]: not a string"),
        "missing": ({k: v for k, v in good.items() if k != "sample_3"}, "sample_3 has no generations"),
        "empty": (dict(good, sample_4=[]), "sample_4: empty list"),
    }
    for name, (gens, msg) in cases.items():
        out = os.path.join(d, name + ".json")
        # --no-autostart and no daemon: anything that tried to run would fail differently
        p = verify(bin_dir, d, "output", write(os.path.join(d, "g-" + name + ".json"), gens), out, data,
                   extra=["--no-autostart"])
        if p.returncode != 2 or msg not in p.stderr or "nothing ran" not in p.stderr:
            fail(f"{name}: exit {p.returncode}, expected 2 and '{msg}'")
        if os.path.exists(out) or os.path.exists(out + ".progress"):
            fail(f"{name}: wrote a file")
    p = verify(bin_dir, d, "output", os.path.join(d, "absent.json"), None, data, extra=["--no-autostart"])
    if p.returncode != 2:
        fail("an absent generations file")
    # a data line without "output", and two samples with one id
    bad = write(os.path.join(d, "bad.jsonl"), DATA[:2] + [{k: v for k, v in DATA[2].items() if k != "output"}], lines=True)
    gens = write(os.path.join(d, "g-bad.json"), {k: OUTPUT_GENS[k] for k in ("sample_0", "sample_1", "sample_2")})
    p = verify(bin_dir, d, "output", gens, None, bad, extra=["--no-autostart"])
    if p.returncode != 2 or "line 3" not in p.stderr:
        fail("a data line without output")
    dup = write(os.path.join(d, "dup.jsonl"), DATA[:2] + [dict(DATA[2], id="sample_1")], lines=True)
    p = verify(bin_dir, d, "output", gens, None, dup, extra=["--no-autostart"])
    if p.returncode != 2 or "sample_1 appears twice" not in p.stderr:
        fail("a repeated sample id")


def resume(bin_dir, d, data):
    # one sample whose programs take a while each, so that the run can be stopped midway
    slow = [{"code": "import time\ndef f(x):\n    time.sleep(0.4)\n    return x", "input": "1", "output": "1",
             "id": "sample_0"}]
    data = write(os.path.join(d, "slow.jsonl"), slow, lines=True)
    g = {"sample_0": ["f(1)", "f(1) + 0", "f(1) * 1", "f(0) + 1", "f(2) - 1", "f(1) - 0", "0 + f(1)", "f(3)",
                      "f(1) // 1", "abs(f(1))", "f(-1)", "f(1) ** 1"]}
    want = {"sample_0": [True] * 7 + [False, True, True, False, True]}
    gens = write(os.path.join(d, "g-slow.json"), g)
    own, sock = start_daemon(bin_dir, d)
    sock_args = ["--socket", sock, "--no-autostart"]
    whole = os.path.join(d, "whole.json")
    p = verify(bin_dir, d, "input", gens, whole, data, extra=sock_args)
    if p.returncode != 0:
        fail(f"uninterrupted run: exit {p.returncode}")
    part = os.path.join(d, "part.json")
    proc = verify(bin_dir, d, "input", gens, part, data, extra=sock_args, wait=False)
    deadline = time.monotonic() + 120
    while not os.path.exists(part + ".progress") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    so, se = proc.communicate(timeout=120)
    print("interrupted run ->", proc.returncode, so, se[-2000:])
    if proc.returncode != 130 or os.path.exists(part) or not os.path.exists(part + ".progress"):
        fail(f"the interrupted run: exit {proc.returncode}, expected 130, a progress file and no scored file")
    p = verify(bin_dir, d, "input", gens, part, data)  # the embedded daemon, warm cache
    own.terminate()
    if p.returncode != 0 or "verdicts from an earlier run" not in p.stderr:
        fail("the resumed run")
    ran = int(p.stderr.split(" programs ran in")[0].rsplit("verify: ", 1)[1])
    if not 0 < ran < 12:
        fail(f"the resumed run ran {ran} programs, expected only those left")
    if open(part).read() != open(whole).read():
        fail("the resumed file differs from the uninterrupted one")
    r = json.load(open(part))
    if r["raw_scored_generations"] != want:
        fail(f"verdicts {r['raw_scored_generations']}, expected {want}")


def smoke(bin_dir, d, data):
    """--samples / --limit: only those samples run and are scored (pass@k over
    them); the generations file may hold the others, or only those."""
    own, sock = start_daemon(bin_dir, d)
    try:
        out = os.path.join(d, "samples.json")
        gens = write(os.path.join(d, "gens-all.json"), OUTPUT_GENS)
        p = verify(bin_dir, d, "output", gens, out, data, extra=["--samples", "0,sample_2,4"])
        if p.returncode != 0 or "a smoke test on 3 of the 5 samples (--samples)" not in p.stderr:
            fail(f"--samples: exit {p.returncode}")
        r = json.load(open(out))
        want = {k: OUTPUT_WANT[k] for k in ("sample_0", "sample_2", "sample_4")}
        if r["raw_scored_generations"] != want or list(r["raw_generations"]) != list(want):
            fail(f"--samples: scored {r['raw_scored_generations']}, expected {want}")
        # pass@1: 0.5, 0, 0 over 3 samples
        if abs(r["pass_at_1"] - 50 / 3) > 1e-9 or r["pass_at_5"] != 100.0:
            fail(f"--samples: pass@k {r['pass_at_1']} {r['pass_at_5']}")
        # 5 + 2 + 2 generations of those samples, 1 + 1 + 2 dropped: 4 + 1 programs
        if "9 generations, 4 dropped by the rules, 5 distinct programs" not in p.stderr:
            fail("--samples: ran programs of other samples")
        out = os.path.join(d, "limit.json")
        few = write(os.path.join(d, "gens-two.json"), {k: OUTPUT_GENS[k] for k in ("sample_0", "sample_1")})
        p = verify(bin_dir, d, "output", few, out, data, extra=["--limit", "2", "--socket", sock, "--no-autostart"])
        if p.returncode != 0 or "pass@1: 50.0 pass@5: 100.0" not in p.stdout:
            fail(f"--limit 2: exit {p.returncode}")
        if json.load(open(out))["raw_scored_generations"] != {k: OUTPUT_WANT[k] for k in ("sample_0", "sample_1")}:
            fail("--limit 2: verdicts")
    finally:
        own.terminate()
    # mistakes: exit 1, one line naming the thing, nothing run or written
    for extra, msg in ((["--samples", "0,7"], "--samples: 7 is not a sample of the data (an index 0-4"),
                       (["--samples", "0", "--limit", "2"], "--samples and --limit: give one of them"),
                       (["--limit", "0"], "--limit"),
                       (["--limit", "2", "--shard", "1/2"], "not with --shard")):
        out = os.path.join(d, "bad.json")
        p = verify(bin_dir, d, "output", gens, out, data, extra=extra + ["--no-autostart"])
        if p.returncode != 1 or msg not in p.stderr or os.path.exists(out):
            fail(f"{extra}: exit {p.returncode}, expected 1 and '{msg}'")


def main():
    bin_dir, case = sys.argv[1], sys.argv[2]
    if not os.access("/usr/bin/python3", os.X_OK):
        print("SKIPPED: no /usr/bin/python3")
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("SKIPPED: runs as root (the embedded daemon)")
        sys.exit(SKIP)
    d = tempfile.mkdtemp(prefix="sbcrux-")
    os.makedirs(os.path.join(d, "cache"))
    data = write(os.path.join(d, "data.jsonl"), DATA, lines=True)
    {"e2e": e2e, "errors": errors, "resume": resume, "smoke": smoke}[case](bin_dir, d, data)
    shutil.rmtree(d, ignore_errors=True)  # kept on failure, for a look
    print("PASS")


if __name__ == "__main__":
    main()
