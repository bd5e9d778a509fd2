#!/usr/bin/env python3
"""The README's first command on a fresh Debian 12 machine, twice: in a
plain chroot and in a root pivoted into; both must regenerate what the host
regenerates (ctest label freshroot).

  test_freshroot.py BIN_DIR SRC_DIR [REGEN ARGUMENTS...]

REGEN ARGUMENTS go to `bash .ci/main` (hence to `surgebox regen`); default
the slice `--subset dr,bg,tc --only 0,8,15,60,75,90,105,120,135`.

1. A Debian 12 minbase tree by debootstrap from this machine's apt mirror,
   cached as a tarball in $SURGEBOX_FRESHROOT_CACHE (else BIN_DIR/../
   freshroot-cache) with apt's downloaded packages; the root itself is
   unpacked fresh each run (debroot.py says what a real machine has that
   the tarball lacks and how it is given).
2. SRC_DIR's HEAD commit `git clone`d to /work/surgebox in the root, SURGE's
   data ($SURGE_DATA, else SRC_DIR/../shared/surge) copied to
   /work/shared/surge, as the README expects.
3. `bash .ci/main REGEN ARGUMENTS` run as root in a login environment,
   first chrooted, then pivoted into (the second run reuses the first's
   installed packages and build; its build/regen and surgebox's compile
   cache are emptied, /run fresh).
4. The host's regeneration of the slice by BIN_DIR (the build under test):
   a private daemon on its own socket, otherwise a user's defaults; the
   profiles .ci/main made in the root, if it made any (it would make them
   on the host too), else the default profiles directory.
5. Each run's build/regen (summary.json and <subset>.json) against the
   host's (compare.py). A run that exits non-zero or differs fails.

Logs, both runs' outputs and timings.json go to BIN_DIR/../freshroot-results.
Root, unshare, chroot, pivot_root, debootstrap, git, SURGE's data and a
reachable mirror are needed, else SKIPPED and exit 77. The whole test runs
inside `unshare --mount --propagation private --pid --fork --mount-proc`.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import compare
import debroot

SKIP = 77
STAGE = "SB_FRESHROOT_STAGE"
# Compile errors and runs of every DR and BG toolchain (g++, clang++, javac and
# java, python3: BG 8, 15 and 105 end in a Python error) and TC programs of
# under a second each (TC 30 and 45 take 7 and 70 s): 27 items.
DEFAULT_SLICE = ["--subset", "dr,bg,tc", "--only", "0,8,15,60,75,90,105,120,135"]
CLONE = "/work/surgebox"  # in the root; the data at ../shared/surge from it
DATA = "/work/shared/surge"


def skip(why):
    print("SKIPPED: " + why, flush=True)
    sys.exit(SKIP)


def surge_data(src_dir):
    return os.path.realpath(os.environ.get("SURGE_DATA") or os.path.join(src_dir, "..", "shared", "surge"))


def paths(bin_dir):
    build = os.path.realpath(os.path.join(bin_dir, ".."))
    cache = os.environ.get("SURGEBOX_FRESHROOT_CACHE") or os.path.join(build, "freshroot-cache")
    return os.path.abspath(cache), os.path.join(build, "freshroot-results"), os.path.join(build, "freshroot-work")


def outside(bin_dir, src_dir, regen_args):
    if os.geteuid() != 0:
        skip("needs root (debootstrap, chroot, mounts)")
    for tool in ("unshare", "chroot", "pivot_root", "debootstrap", "git", "tar"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed")
    data = surge_data(src_dir)
    if not os.path.exists(os.path.join(data, "dr.json")):
        skip(f"no SURGE data in {data} (set SURGE_DATA)")
    if subprocess.run(["git", "-C", src_dir, "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        skip(f"{src_dir} is not a git checkout (the test clones its HEAD commit)")
    main, _ = debroot.mirrors()
    if not main:
        skip("no Debian mirror in /etc/apt's sources (debootstrap and apt need one)")
    cache, _, _ = paths(bin_dir)
    tar = os.path.join(cache, f"{debroot.SUITE}-{debroot.VARIANT}.tar")
    if not debroot.reachable(main):
        skip("the Debian mirror configured for apt does not answer (apt in the fresh root needs it)"
             + ("" if not os.path.exists(tar) else "; the root's tarball is cached, its packages are not"))
    env = dict(os.environ, **{STAGE: "ns"})
    wrapper = ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc"]
    return subprocess.run(wrapper + [sys.executable, os.path.abspath(__file__), bin_dir, src_dir] + regen_args,
                          env=env).returncode


class Phases:
    """Wall time of each phase, said as it ends and kept for timings.json."""

    def __init__(self):
        self.took = {}
        self.split = {}
        self.load = {"start": os.getloadavg()}

    def run(self, name, fn, *args):
        print(f"== {name} ({time.strftime('%H:%M:%S')})", flush=True)
        t0 = time.monotonic()
        try:
            return fn(*args)
        finally:
            self.took[name] = round(time.monotonic() - t0, 1)
            print(f"== {name}: {self.took[name]:.0f} s, load {os.getloadavg()[0]:.2f}", flush=True)


def host_regen(bin_dir, data, out, regen_args, profiles_dir):
    """The slice on the host by the build under test: a daemon of its own
    (no other daemon answers), profiles from profiles_dir (None: the
    default directory, as a user has it)."""
    os.makedirs(out)
    sock = os.path.join(out, "d.sock")
    extra = ["--profiles-dir", profiles_dir] if profiles_dir else []
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--quiet",
                          "--cache-dir", os.path.join(out, "cache")] + extra)
    try:
        for _ in range(1200):
            if os.path.exists(sock) or d.poll() is not None:
                break
            time.sleep(0.5)
        cmd = [os.path.join(bin_dir, "surgebox"), "regen", "--socket", sock, "--no-autostart", "--data", data,
               "--out", out, "--summary", os.path.join(out, "summary.json")] + regen_args
        p = subprocess.run(cmd, capture_output=True, text=True)
        print(p.stdout[-4000:], p.stderr[-3000:], flush=True)
        return p.returncode
    finally:
        d.terminate()
        d.wait(timeout=120)


def clone_into(src_dir, root, data):
    sha = subprocess.run(["git", "-C", src_dir, "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", src_dir, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        print(f"note: {src_dir} has uncommitted changes; the root gets commit {sha} without them", flush=True)
    dest = root + CLONE
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    debroot.sh("git", "clone", "--quiet", "--no-hardlinks", src_dir, dest)
    debroot.sh("git", "-C", dest, "checkout", "--quiet", "--detach", sha)
    shutil.copytree(data, root + DATA)
    return sha


def main_cmd(regen_args):
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in regen_args)
    return ["bash", "-c", f"cd {CLONE} && exec bash .ci/main {quoted}"]


def report_tail(log, lines=40):
    """The end of a run's log: the fidelity report (or why it stopped)."""
    with open(log, errors="replace") as f:
        tail = f.read().splitlines()[-lines:]
    print("\n".join("  | " + line for line in tail), flush=True)


BUILD_LINE = re.compile(r"^\s*[\d.]+ \[\s*\d+%\]")
REGEN_LINE = re.compile(r"^\s*[\d.]+ (surgebox|regen): ")


def stages(log):
    """Where a run's time went, from its timestamped log: .ci/deps (and
    cmake's configure) until the first build line, the build until
    surgebox's first line, then regen to the end."""
    marks = {"build": None, "regen": None}
    end = 0.0
    with open(log, errors="replace") as f:
        for line in f:
            try:
                end = float(line.split(None, 1)[0])
            except (ValueError, IndexError):
                continue
            if marks["build"] is None and BUILD_LINE.match(line):
                marks["build"] = end
            if marks["regen"] is None and REGEN_LINE.match(line):
                marks["regen"] = end
    b = marks["build"] if marks["build"] is not None else marks["regen"] or end
    r = marks["regen"] if marks["regen"] is not None else end
    return {"deps": round(b, 1), "build": round(r - b, 1), "regen": round(end - r, 1)}


def root_run(kind, root, regen_args, results, ph):
    log = os.path.join(results, kind + ".log")
    run = debroot.run_chrooted if kind == "chroot" else debroot.run_pivoted
    rc = run(root, main_cmd(regen_args), log)
    split = stages(log)
    ph.split[kind] = split
    print(f"{kind}: bash .ci/main exited {rc} (log {log}); " + ", ".join(f"{k} {v:.0f} s" for k, v in split.items()),
          flush=True)
    report_tail(log)
    regen = root + CLONE + "/build/regen"
    if os.path.isdir(regen):
        shutil.copytree(regen, os.path.join(results, kind))
        shutil.rmtree(regen)  # the next run regenerates, not resumes
    return rc


def judge(kind, rc, host_out, out, subsets, failures):
    if rc != 0:
        failures.append(f"{kind}: bash .ci/main exited {rc}")
    if not os.path.exists(os.path.join(out, "summary.json")):
        failures.append(f"{kind}: no build/regen/summary.json")
        return
    diffs, notes = compare.compare_runs(host_out, out, subsets)
    for n in notes:
        print(f"note: {kind}: {n}", flush=True)
    for d in diffs:
        print(f"DIFF: {kind}: {d}", flush=True)
    if diffs:
        failures.append(f"{kind}: {len(diffs)} difference(s) from the host's regeneration")
    else:
        print(f"ok: {kind}: the same as the host's regeneration", flush=True)


def subsets_of(regen_args):
    if "--subset" in regen_args:
        return regen_args[regen_args.index("--subset") + 1].split(",")
    return ["dr", "bg", "tc"]


def root_profiles(root):
    """The profiles .ci/main made in the root (it makes surge-2025 where the
    machine lacks SURGE's toolchains): the host's run is given the same, as
    the README's command would make them on the host too. None: it made
    none, and the host's run has the host's default directory."""
    d = root + "/var/lib/surgebox/profiles"
    made = sorted(n for n in os.listdir(d) if os.path.exists(os.path.join(d, n, "manifest.json"))) \
        if os.path.isdir(d) else []
    print("profiles .ci/main made in the root: " + (", ".join(made) or "none"), flush=True)
    return d if made else None


def in_namespace(bin_dir, src_dir, regen_args):
    cache, results, work = paths(bin_dir)
    data = surge_data(src_dir)
    main, sec = debroot.mirrors()
    for d in (results, work):
        debroot.remove_tree(d)
        os.makedirs(d)
    ph, failures, exits, where = Phases(), [], {}, None
    tar, made = ph.run("debootstrap tarball", debroot.tarball, cache, main, os.path.join(results, "debootstrap.log"))
    print(f"tarball {tar}: " + (f"made in {made:.0f} s" if made else "cached"), flush=True)
    root = os.path.join(work, "root")
    archives = os.path.join(cache, "apt-archives")
    host_out = os.path.join(results, "host")
    try:
        where = "tmpfs" if debroot.on_tmpfs() else "disk"
        print(f"root on {where} ({debroot.mem_available_gib():.0f} GiB of memory available)", flush=True)
        ph.run("unpack", debroot.unpack, tar, root, main, sec, archives)
        debroot.mount_machine(root)
        sha = ph.run("clone", clone_into, src_dir, root, data)
        print(f"commit {sha} in {root}{CLONE}", flush=True)
        for kind in ("chroot", "pivot"):
            if kind == "pivot":
                debroot.remount_run(root)
                # surgebox's compile and detection cache: the pivoted run
                # compiles and detects again, not serves the chroot's results
                debroot.remove_tree(root + "/var/cache/surgebox")
            exits[kind] = ph.run(kind + " .ci/main", root_run, kind, root, regen_args, results, ph)
        rc = ph.run("host regen", host_regen, bin_dir, data, host_out, regen_args, root_profiles(root))
        if rc != 0:
            failures.append(f"host: surgebox regen exited {rc}")
        for kind, rc in exits.items():
            judge(kind, rc, host_out, os.path.join(results, kind), subsets_of(regen_args), failures)
    finally:
        if os.environ.get("SURGEBOX_FRESHROOT_KEEP"):
            print(f"kept {root} (SURGEBOX_FRESHROOT_KEEP)", flush=True)
        else:
            ph.run("cleanup", debroot.remove_tree, work)
    ph.load["end"] = os.getloadavg()
    with open(os.path.join(results, "timings.json"), "w") as f:
        json.dump({"seconds": ph.took, "in_ci_main": ph.split, "loadavg": ph.load, "tarball_cached": not made, "root_on": where,
                   "cpus": os.cpu_count(), "regen_args": regen_args}, f, indent=1)
    print("timings: " + ", ".join(f"{k} {v:.0f} s" for k, v in ph.took.items()), flush=True)
    for f_ in failures:
        print("FAIL: " + f_, flush=True)
    return 1 if failures else 0


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    bin_dir, src_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    regen_args = sys.argv[3:] or DEFAULT_SLICE
    if os.environ.get(STAGE) == "ns":
        return in_namespace(bin_dir, src_dir, regen_args)
    return outside(bin_dir, src_dir, regen_args)


if __name__ == "__main__":
    sys.exit(main())
