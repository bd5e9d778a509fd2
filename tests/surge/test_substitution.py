#!/usr/bin/env python3
"""Substitutions are said (issue 21): run as an ordinary user, as Slurm tasks
run, BG's Python 3.8 (pyenv's, under /root) is out of reach and python3 is
used instead. regen must name that once on stderr, show it in the report's
environment column and the summary's "substituted", class the misses
toolchain_drift (not other), and under --strict run nothing and say why.

The daemon and the client run as nobody (setpriv), inside the unshare
wrapper (ctest does that), against five BG python3 items of the shipped data.

  test_substitution.py BIN_DIR DATA_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

SKIP = 77
NOBODY = 65534
BG_PYTHON = [8, 10, 12, 15, 19]  # the first five BG python3 items
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def as_nobody(argv, home):
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "env", f"HOME={home}",
            "SURGEBOX_PROFILES=" + os.path.join(home, "profiles")] + argv


def jobs_total(cli, sock, home):
    p = subprocess.run(as_nobody([cli, "--socket", sock, "--no-autostart", "metrics"], home), capture_output=True,
                       text=True, timeout=120)
    return sum(int(m.group(1)) for m in re.finditer(r"^surgebox_jobs_total\{[^}]*\} (\d+)$", p.stdout, re.M))


def main():
    bin_dir, data = sys.argv[1:3]
    data = os.environ.get("SURGE_DATA", data)
    if not os.path.exists(os.path.join(data, "bg.json")):
        print(f"SKIPPED: the SURGE data is not at {data} (set SURGE_DATA)")
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("SKIPPED: needs root to start the daemon as another user (setpriv)")
        sys.exit(SKIP)
    bg = json.load(open(os.path.join(data, "bg.json")))
    check([bg[i]["custom_features"]["language"] for i in BG_PYTHON] == ["python3"] * 5, "items 8,10,12,15,19 are BG python3")
    home = tempfile.mkdtemp(prefix="sbsubst-")
    os.chmod(home, 0o777)
    data_copy = os.path.join(home, "data")  # readable by nobody whatever the data's modes
    os.mkdir(data_copy)
    json.dump(bg, open(os.path.join(data_copy, "bg.json"), "w"))
    sock = os.path.join(home, "d.sock")
    cli = os.path.join(bin_dir, "surgebox")
    d = subprocess.Popen(as_nobody([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--cache-dir",
                                    os.path.join(home, "cache"), "--jobs", "2"], home))
    try:
        for _ in range(1200):
            if os.path.exists(sock) or d.poll() is not None:
                break
            time.sleep(0.5)
        if not os.path.exists(sock):
            print("SKIPPED: a daemon started as nobody does not run here (user namespaces?)")
            sys.exit(SKIP)
        p = subprocess.run(as_nobody([cli, "--socket", sock, "--no-autostart", "toolchains", "--json"], home),
                           capture_output=True, text=True, timeout=600)
        tcs = {t["name"]: t for t in json.loads(p.stdout)["toolchains"] if t.get("available")}
        py = tcs.get("python3", {}).get("version", "")
        if "python3.8" in tcs or py.startswith("3.8"):
            print(f"SKIPPED: Python 3.8 is reachable for nobody here (python3 {py}): no substitution to say")
            sys.exit(SKIP)
        regen = [cli, "regen", "--socket", sock, "--no-autostart", "--data", data_copy, "--subset", "bg",
                 "--only", ",".join(map(str, BG_PYTHON))]

        # --strict: one line naming the substitution, a non-zero exit, nothing run
        before = jobs_total(cli, sock, home)
        strict_out = os.path.join(home, "strict")
        p = subprocess.run(as_nobody(regen + ["--out", strict_out, "--strict"], home), capture_output=True, text=True,
                           timeout=600)
        print(p.stdout, p.stderr)
        check(p.returncode != 0, f"--strict exit {p.returncode}")
        named = [l for l in p.stderr.splitlines() if "--strict" in l and "BG python3" in l]
        check(len(named) == 1 and f"python3 {py}" in named[0] and "SURGE's Python 3.8" in named[0],
              f"--strict names the substitution once: {named}")
        check("surgebox profile create surge-2025" in p.stderr, "--strict says how to get SURGE's environment")
        check(not os.path.exists(os.path.join(strict_out, "bg.json")), "--strict wrote no dataset")
        check(p.stdout.strip() == "", "--strict printed no report")
        check(jobs_total(cli, sock, home) == before, "--strict ran no job")

        # without it: warned once, shown, misses classed toolchain_drift
        out = os.path.join(home, "out")
        summary = os.path.join(home, "summary.json")
        p = subprocess.run(as_nobody(regen + ["--out", out, "--summary", summary], home), capture_output=True,
                           text=True, timeout=600)
        print(p.stdout, p.stderr)
        check(p.returncode == 0, f"regen exit {p.returncode}")
        warned = [l for l in p.stderr.splitlines() if "warning" in l and "BG python3" in l]
        check(len(warned) == 1, f"one warning for the toolchain, not one per item: {warned}")
        check(warned and f"run on python3 {py}, not SURGE's Python 3.8" in warned[0], f"the warning names both: {warned}")
        check(jobs_total(cli, sock, home) - before == 5, "the five items ran")
        want = f"python3 {py} (SURGE: Python 3.8)"
        row = [l for l in p.stdout.splitlines() if l.startswith("bg ")]
        check(len(row) == 1 and row[0].endswith("host; " + want), f"the environment column: {row}")
        s = json.load(open(summary))["bg"]
        check(s["substituted"] == want, f"summary bg substituted {s.get('substituted')!r}")
        check(s["by"]["python3"]["substituted"] == want, f"summary bg/python3 substituted {s['by']['python3']}")
        check(s["ran"] == 5, f"ran {s['ran']}")
        items = json.load(open(os.path.join(out, "bg.json")))
        misses = [i for i in BG_PYTHON if items[i]["exec"]["matched"] != "exact"]
        check(misses, "3.11 does not reproduce every 3.8 traceback (else this case shows nothing)")
        for i in BG_PYTHON:
            e = items[i]["exec"]
            check(e.get("substituted") == {"used": f"python3 {py}", "surge": "Python 3.8"}, f"item {i}: {e.get('substituted')}")
            check(e["class"] == ("toolchain_drift" if i in misses else None), f"item {i} class {e['class']}")
        check(s["mismatches"]["toolchain_drift"] == misses and s["mismatches"]["other"] == [],
              f"summary mismatches {s['mismatches']}")
    finally:
        d.terminate()
        d.wait(timeout=300)
    if failures:
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
