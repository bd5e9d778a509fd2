#!/usr/bin/env python3
"""surgebox-run started by an ordinary user: a user namespace maps that user
to 65534 inside, every capability is gone, there is no cgroup to use (the
result says rlimits only), and the run still works and is measured.
Runs inside the unshare wrapper (ctest does); drops to uid 4242 itself."""
import json
import os
import subprocess
import sys

SKIP = 77


def main():
    run = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIPPED: needs root to become another user for the test")
        sys.exit(SKIP)
    os.chmod(os.path.dirname(run), 0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    cmd = ["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", run, "--json", "--", "/bin/sh", "-c",
           "id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; cat /proc/self/uid_map; "
           "echo hi > /app/x && cat /app/x; ls /root 2>&1 | head -1; echo name=$(id -un)"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    if p.returncode != 0:
        print("FAIL: surgebox-run as uid 4242 exited", p.returncode, p.stderr[-1000:])
        sys.exit(1)
    doc = json.loads(p.stdout)
    out = doc["stdout"].split("\n")
    fails = []
    if doc["status"] != "ok":
        fails.append(f"status {doc['status']} {doc.get('error')}")
    if out[0] != "65534":
        fails.append(f"uid inside {out[0]!r}")
    # one id can be mapped: the document says which, and that jobs share it
    if doc.get("uid") != 65534:
        fails.append(f"document uid {doc.get('uid')!r}")
    if "name=surgebox\n" not in doc["stdout"]:
        fails.append("id -un does not name the private /etc/passwd's surgebox")
    enf_uid = (doc.get("enforced") or {}).get("uid") or ""
    if "user namespace" not in enf_uid or "share" not in enf_uid:
        fails.append(f"enforced.uid does not say jobs share the mapped uid: {enf_uid!r}")
    if "CapEff:\t0000000000000000" not in doc["stdout"] or "CapBnd:\t0000000000000000" not in doc["stdout"]:
        fails.append("capabilities left")
    if "NoNewPrivs:\t1" not in doc["stdout"]:
        fails.append("no_new_privs not set")
    if "65534       4242          1" not in doc["stdout"]:
        fails.append("uid_map does not map 65534 to 4242 alone")
    if "hi" not in out:
        fails.append("/app not writable")
    if doc["cgroup"] != "none" or not doc["warnings"]:
        fails.append(f"cgroup {doc['cgroup']} warnings {doc['warnings']}")
    if not doc["cpu_time_s"] > 0 or doc["wall_time_s"] <= 0:
        fails.append("not measured")
    if fails:
        print("FAIL:", fails, json.dumps(doc)[:2000])
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
