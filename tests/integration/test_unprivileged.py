#!/usr/bin/env python3
"""surgebox-run started by an ordinary user: the runtime enters a user
namespace of its own where that user is 0 (and the only id mapped), each
sandbox nests one mapping 65534 to it, every capability is gone, there is no
cgroup to use (the result says rlimits only), and the run still works and is
measured. /app is a size-capped tmpfs as for root: writing 768 MiB under
--tmp-size 512 ends in ENOSPC, and nothing is left behind afterwards.
Runs inside the unshare wrapper (ctest does); drops to uid 4242 itself."""
import json
import os
import subprocess
import sys
import tempfile
import time

SKIP = 77
fails = []


def run_as_user(run, xdg, args, script, watch_pid_map=False):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "XDG_RUNTIME_DIR": xdg}
    cmd = ["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", run, "--json"] + args + \
          ["--", "/bin/sh", "-c", script]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    outer_map = None
    if watch_pid_map:  # the runtime's own user namespace, seen from here while the program runs
        deadline = time.time() + 30
        while time.time() < deadline and p.poll() is None and outer_map is None:
            try:
                with open(f"/proc/{p.pid}/uid_map") as f:
                    m = f.read()
                if m.split() != ["0", "0", "4294967295"]:
                    outer_map = m
            except OSError:
                pass
            time.sleep(0.01)
    out, err = p.communicate(timeout=120)
    if p.returncode != 0:
        print("FAIL: surgebox-run as uid 4242 exited", p.returncode, err[-1000:])
        sys.exit(1)
    return json.loads(out), outer_map


def mounts():
    with open("/proc/self/mountinfo") as f:
        return sorted(line.split(" ", 4)[4] for line in f)


def main():
    run = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIPPED: needs root to become another user for the test")
        sys.exit(SKIP)
    os.chmod(os.path.dirname(run), 0o755)
    xdg = tempfile.mkdtemp(prefix="sb-unpriv-")
    os.chmod(xdg, 0o700)
    os.chown(xdg, 4242, 4242)
    mounts_before = mounts()

    doc, outer_map = run_as_user(run, xdg, [],
        "id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; cat /proc/self/uid_map; "
        "echo hi > /app/x && cat /app/x; ls /root 2>&1 | head -1; echo name=$(id -un); sleep 1", watch_pid_map=True)
    out = doc["stdout"].split("\n")
    if doc["status"] != "ok":
        fails.append(f"status {doc['status']} {doc.get('error')}")
    if out[0] != "65534":
        fails.append(f"uid inside {out[0]!r}")
    if "CapEff:\t0000000000000000" not in doc["stdout"] or "CapBnd:\t0000000000000000" not in doc["stdout"]:
        fails.append("capabilities left")
    if "NoNewPrivs:\t1" not in doc["stdout"]:
        fails.append("no_new_privs not set")
    maps = [l.split() for l in out if l.strip() and l.split()[0].isdigit() and len(l.split()) == 3]
    if maps != [["65534", "0", "1"]]:
        fails.append(f"the sandbox's uid_map does not map 65534 to the runtime's 0 alone: {maps}")
    if outer_map is None or outer_map.split() != ["0", "4242", "1"]:
        fails.append(f"the runtime's uid_map does not map 0 to 4242 alone: {outer_map!r}")
    if "hi" not in out:
        fails.append("/app not writable")
    if doc["cgroup"] != "none" or not doc["warnings"]:
        fails.append(f"cgroup {doc['cgroup']} warnings {doc['warnings']}")
    if not doc["cpu_time_s"] > 0 or doc["wall_time_s"] <= 0:
        fails.append("not measured")
    # one id can be mapped: the document says which, and that jobs share it
    if doc.get("uid") != 65534:
        fails.append(f"document uid {doc.get('uid')!r}")
    if "name=surgebox\n" not in doc["stdout"]:
        fails.append("id -un does not name the private /etc/passwd's surgebox")
    enf_uid = (doc.get("enforced") or {}).get("uid") or ""
    if "user namespace" not in enf_uid or "share" not in enf_uid:
        fails.append(f"enforced.uid does not say jobs share the mapped uid: {enf_uid!r}")

    # /app is capped: 768 MiB under a 512 MiB setting (the file size limit is
    # raised so that only the tmpfs can stop it).
    doc, _ = run_as_user(run, xdg, ["--tmp-size", "512", "--file-size-limit", "1024"],
        "dd if=/dev/zero of=/app/big bs=1M count=768 2>&1; "
        "echo size=$(stat -c %s /app/big)")
    size = [l for l in doc["stdout"].split("\n") if l.startswith("size=")]
    written = int(size[0][5:]) if size and size[0][5:].isdigit() else -1
    if "No space left on device" not in doc["stdout"] or not 0 < written <= 512 << 20:
        fails.append(f"768 MiB into /app under --tmp-size 512: {doc['stdout'][-300:]!r} (written {written})")
    if not doc["enforced"]["app_size"].startswith("tmpfs size="):
        fails.append(f"enforced.app_size: {doc['enforced']['app_size']}")

    left = []
    for root, dirs, files in os.walk(xdg):
        left += [os.path.join(root, x) for x in dirs + files if x.startswith("surgebox-i")]
    if left:
        fails.append(f"left behind under $XDG_RUNTIME_DIR: {left}")
    if mounts() != mounts_before:
        fails.append("the wrapper's mount table changed")
    if fails:
        print("FAIL:", fails, json.dumps(doc)[:1500])
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
