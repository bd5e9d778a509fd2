#!/usr/bin/env python3
"""The README's two commands in order (issue 36): `.ci/main` leaves
surge-2025 (with Julia) in the default profiles directory, then `.ci/test`
runs `verify --benchmark surge`. With a profile present, an ML Julia item
runs in it and is scored, never excluded as missing, and nothing assumes
Julia cannot run.

  test_verify_profile.py BIN_DIR DATA_DIR

The profile is a stand-in, cheap enough for CI: surge-2025 in a profiles
directory of the test's own ($SURGEBOX_PROFILES, which the daemon and the
commands read as their default), its rootfs a few of the host's files
copied (dash, cat and their libraries: a profile holds no mount), and
/usr/local/bin/julia a script answering `--version` as Julia 1.5.3 and printing the item's
published output. The daemon finds, verifies (no quick_hash: the manifest
only) and runs it through the same path as a real surge-2025: the profile's
toolchains/julia.json, regen's best-profile choice, the profile's root.
Run inside the unshare wrapper (ctest does).
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def libraries(binary):
    """The shared objects binary loads (ldd's absolute paths, the loader included)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return [w for line in out.splitlines() for w in line.split() if w.startswith("/")]


def copy_in(root, path):
    """path's content (symlinks resolved) at the same place in root."""
    dest = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copy(os.path.realpath(path), dest)


def content_hash(root):
    """The manifest's content_hash, by toolchains/profile.h's rule (written
    here from that comment): a line per entry below root, sorted by path,
    "<sha256 hex> <st_mode octal, 6 digits> <size> <path>\\n", hashed."""
    lines = []
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(top, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full).encode()
                digest, size = hashlib.sha256(target).hexdigest(), len(target)
            elif stat.S_ISREG(st.st_mode):
                digest, size = hashlib.sha256(open(full, "rb").read()).hexdigest(), st.st_size
            else:
                digest, size = hashlib.sha256(b"").hexdigest(), 0
            lines.append((rel.encode(), "%s %06o %d %s\n" % (digest, st.st_mode, size, rel)))
    return "sha256:" + hashlib.sha256("".join(x for _, x in sorted(lines)).encode()).hexdigest()


def fake_profile(profiles, output):
    """A real directory tree (a profile may hold no mount): dash, cat and
    their libraries, /etc's passwd and group, and julia, a script."""
    top = os.path.join(profiles, "surge-2025")
    root = os.path.join(top, "rootfs")
    usr_bin = os.path.join(root, "usr", "bin")
    os.makedirs(usr_bin)
    os.makedirs(os.path.join(root, "usr", "sbin"))
    for d in ("tmp", "proc", "dev"):  # as debootstrap leaves them: detection mounts a tmpfs and /proc there
        os.makedirs(os.path.join(root, d))
    for prog in ("dash", "cat"):
        copy_in(root, shutil.which(prog))
        for lib in libraries(shutil.which(prog)):
            copy_in(root, lib)
    # the host's layout of /bin, /lib* (merged /usr on Debian 12: links into usr/)
    for link in ("bin", "sbin", "lib", "lib64"):
        where = os.path.join(root, link)
        if os.path.islink("/" + link):
            if not os.path.lexists(where):
                os.symlink(os.readlink("/" + link), where)
        elif os.path.isdir("/" + link) and not os.path.exists(where):
            os.makedirs(where)
    if not os.path.exists(os.path.join(usr_bin, "sh")):
        os.symlink("dash", os.path.join(usr_bin, "sh"))
    for f in ("/etc/passwd", "/etc/group"):
        copy_in(root, f)
    local = os.path.join(root, "usr", "local")
    os.makedirs(os.path.join(local, "bin"))
    os.makedirs(os.path.join(local, "share"))
    with open(os.path.join(local, "share", "fake-julia-output"), "w") as f:
        f.write(output)
    julia = os.path.join(local, "bin", "julia")
    with open(julia, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = --version ]; then echo "julia version 1.5.3"; exit 0; fi\n'
                'exec cat /usr/local/share/fake-julia-output\n')
    os.chmod(julia, 0o755)
    os.makedirs(os.path.join(top, "toolchains"))
    tc = json.load(open(os.path.join(SRC, "toolchains", "profiles", "surge-2025", "julia.json")))
    tc["binaries"] = [{"path": "/usr/local/bin/julia", "name": "julia"}]
    with open(os.path.join(top, "toolchains", "julia.json"), "w") as f:
        json.dump(tc, f)
    manifest = {"name": "surge-2025", "format": 1, "created": "2026-11-28T00:00:00Z",
                "origin": {"suite": "bullseye", "mirror": "stand-in", "variant": "minbase", "packages": ["julia"]},
                "package_versions": {"julia": "1.5.3+dfsg-3"}, "content_hash": content_hash(root),
                "notes": "a test's stand-in (tests/surge/test_verify_profile.py)"}
    with open(os.path.join(top, "manifest.json"), "w") as f:
        json.dump(manifest, f)


def main():
    bin_dir, data = sys.argv[1], os.environ.get("SURGE_DATA") or sys.argv[2]
    if not os.path.exists(os.path.join(data, "ml.json")):
        print(f"SKIPPED: no SURGE data in {data}")
        return SKIP
    if os.geteuid() != 0:
        print("SKIPPED: runs sandboxes and mounts as root")
        return SKIP
    ml = json.load(open(os.path.join(data, "ml.json")))
    julia = next(i for i, it in enumerate(ml) if it["custom_features"]["language"] == "Julia")
    tmp = tempfile.mkdtemp(prefix="sb-vprof-")
    os.chmod(tmp, 0o755)
    profiles = os.path.join(tmp, "profiles")
    os.environ["SURGEBOX_PROFILES"] = profiles
    fake_profile(profiles, ml[julia]["gt"])
    preds = os.path.join(tmp, "preds.jsonl")
    with open(preds, "w") as f:
        f.write(json.dumps({"subset": "ml", "index": julia, "model": "m", "prediction": ml[julia]["gt"]}) + "\n")
    sock = os.path.join(tmp, "s.sock")
    cli = os.path.join(bin_dir, "surgebox")
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--jobs", "2", "--cache-dir",
                          os.path.join(tmp, "cache")], stderr=open(os.path.join(tmp, "daemon.log"), "w"))
    try:
        for _ in range(2400):
            if subprocess.run([cli, "ping", "--socket", sock, "--no-autostart"], capture_output=True).returncode == 0 \
                    or d.poll() is not None:
                break
            time.sleep(0.25)
        p = subprocess.run([cli, "profile", "list"], capture_output=True, text=True, timeout=120)
        print(f"$ profile list\n{p.stdout}{p.stderr}", flush=True)
        check("surge-2025" in p.stdout, f"profile list shows the profile present: {p.stdout!r} {p.stderr!r}")
        p = subprocess.run([cli, "verify", "--benchmark", "surge", "--data", data, "--subset", "ml", "--predictions",
                            preds, "--json", "--socket", sock, "--no-autostart", "--out", os.path.join(tmp, "out")],
                           capture_output=True, text=True, timeout=1200)
        print(f"$ verify\n  exit {p.returncode}\n  stderr: {p.stderr[-2500:]}", flush=True)
        doc = json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else {}
        check(p.returncode == 0, f"verify with a profile present: exit {p.returncode}")
        check(not doc.get("excluded"), f"the Julia item is not excluded when a profile gives Julia: {doc.get('excluded')}")
        check("surge-2025" in p.stderr and "ML Julia" in p.stderr,
              f"regen says ML Julia runs in surge-2025: {p.stderr[-1500:]!r}")
        model = (doc.get("models") or [{}])[0]
        check(model.get("counts", {}).get("ML_Julia") == 1 and model.get("scores", {}).get("ML_Julia") == 100,
              f"the Julia item ran in the profile and is scored (100: its output is the answer): {model}")
    finally:
        d.terminate()
        d.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
