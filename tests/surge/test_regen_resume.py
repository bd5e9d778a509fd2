#!/usr/bin/env python3
"""surgebox regen says what it resumes before it starts: a run over an --out
that already holds finished items prints "resuming: K of M already in OUT"
(M the items asked for, K those an earlier run finished) and runs only the
rest; a fresh --out says nothing of the kind. Three RL items of the shipped
data, through a private daemon, inside the unshare wrapper (ctest).

Usage: test_regen_resume.py BIN_DIR DATA_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    bin_dir, data = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(data, "rl.json")):
        print("SKIPPED: no SURGE data at %s (rl.json)" % data)
        sys.exit(77)
    d = tempfile.mkdtemp(prefix="sbregen-")
    sock = os.path.join(d, "d.sock")
    daemon = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--jobs", "2", "--quiet",
                               "--cache-dir", os.path.join(d, "cache")])
    try:
        deadline = time.monotonic() + 300
        while not os.path.exists(sock):
            if daemon.poll() is not None or time.monotonic() > deadline:
                fail("the daemon did not start")
            time.sleep(0.1)
        out = os.path.join(d, "out")

        def regen(only):
            cmd = [os.path.join(bin_dir, "surgebox"), "regen", "--socket", sock, "--no-autostart", "--data", data,
                   "--subset", "rl", "--only", only, "--out", out]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            print("$ " + " ".join(cmd[1:]) + " -> %d\n%s" % (p.returncode, p.stderr[-2000:]))
            if p.returncode != 0:
                fail("regen --only %s: exit %d" % (only, p.returncode))
            return p.stderr

        err = regen("0,1")
        if "resuming" in err:
            fail("a fresh --out said it was resuming")
        done = [i for i, x in enumerate(json.load(open(os.path.join(out, "rl.json"))))
                if (x.get("exec") or {}).get("complete")]
        if done != [0, 1]:
            fail("the first run finished items %s, not [0, 1]" % done)
        err = regen("0,1,2")
        want = "regen: resuming: 2 of 3 already in %s (1 to run" % out
        if want not in err:
            fail("expected %r before the run" % want)
        if err.index(want) > err.find("items in") >= 0:
            fail("the resuming line came after the run")
        err = regen("0,1,2")
        if "regen: resuming: 3 of 3 already in %s (0 to run" % out not in err:
            fail("a finished --out: expected 3 of 3")
    finally:
        daemon.terminate()
        daemon.wait(30)
    shutil.rmtree(d, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
