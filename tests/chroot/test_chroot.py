#!/usr/bin/env python3
"""surgeboxd and the surgebox CLI where schroot, sbuild and pbuilder run
programs (a plain chroot of bind mounts of the host's directories) and where
container runtimes do (that root pivoted into, the old root unmounted): the
prepared-sandbox pool must really work there (every job's `enforced.pool`
is "used"), not fail every job with `internal_error: move_mount /app` as it
did in a chroot (issue 21), nor quietly fall back.

  test_chroot.py BIN_DIR SRC_DIR chroot|chroot-dir|pivot

(chroot-dir: the chroot's directory is not a mount point, as pbuilder's
unpacked tarball is; then even a fresh root could not pivot_root from it.)

Needs root and unshare (else SKIPPED, 77). Runs itself inside
`unshare --mount --propagation private --pid --fork --mount-proc`, builds the
root there (fsroot.py), and runs its checks inside that root: a daemon slice
(exec: shell, files, gcc compile + run, python3 cold and --warm, which
must start from a zygote there and equal the cold run), `surgebox regen
--only 0,1,2` on SURGE's dr and bg (skipped when the data is absent) and
`surgebox verify --benchmark cruxeval` on a handful of generations, cold and
--warm; then a daemon with --pool 0 (fresh roots) runs a job there too."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import fsroot

SKIP = 77
STAGE = "SB_CHROOT_TEST_STAGE"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def outside(bin_dir, src_dir, mode, script=__file__):
    """script (this file, or test_chroot_http.py) rerun in the throw-away
    namespace, its stage "ns"."""
    if os.geteuid() != 0:
        print("SKIPPED: needs root (chroot, mounts)")
        return SKIP
    for tool in ("unshare", "chroot", "pivot_root"):
        if not shutil.which(tool):
            print(f"SKIPPED: {tool} is missing")
            return SKIP
    env = dict(os.environ, **{STAGE: "ns"})
    wrapper = ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc"]
    return subprocess.run(wrapper + [sys.executable, os.path.abspath(script), bin_dir, src_dir, mode],
                          env=env).returncode


def surge_data(src_dir):
    """SURGE's data: $SURGE_DATA, else ../shared/surge beside the tree."""
    return os.path.realpath(os.environ.get("SURGE_DATA") or os.path.join(src_dir, "..", "shared", "surge"))


def build_source(build):
    """The source tree a build was configured from (its toolchain files are
    found there)."""
    try:
        for line in open(os.path.join(build, "CMakeCache.txt")):
            if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return build


def in_namespace(bin_dir, src_dir, mode):
    """Build the root, run the checks inside it."""
    build = os.path.realpath(os.path.join(bin_dir, ".."))
    return fsroot.rerun_inside(__file__, bin_dir, src_dir, mode, STAGE,
                               [build_source(build), surge_data(src_dir)])


# ---- inside the root ----

def cli(bin_dir, sock, *args, timeout=600):
    cmd = [os.path.join(bin_dir, "surgebox"), "--socket", sock] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print("$ surgebox", " ".join(args), "->", p.returncode, flush=True)
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-3000:])
    return p


def start_daemon(bin_dir, work, name="d", extra=()):
    sock = os.path.join(work, name + ".sock")
    d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", sock, "--jobs", "2", "--quiet",
                          "--cache-dir", os.path.join(work, "cache")] + list(extra))
    deadline = time.monotonic() + 600  # toolchain detection, cold, on a loaded machine
    while time.monotonic() < deadline and d.poll() is None:
        if os.path.exists(sock) and subprocess.run([os.path.join(bin_dir, "surgebox"), "--socket", sock,
                                                    "--no-autostart", "ping"], capture_output=True).returncode == 0:
            return d, sock
        time.sleep(0.3)
    print("FAIL: the daemon did not start in the root; exit", d.poll())
    sys.exit(1)


def exec_json(bin_dir, sock, work, *args):
    p = cli(bin_dir, sock, "exec", "--json", *args)
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, f"exec {args}: not JSON: {p.stdout[-500:]} {p.stderr[-500:]}")
        return {}


def pooled(resp, what):
    for s in resp.get("steps", []):
        pool = (s.get("enforced") or {}).get("pool")
        check(pool == "used", f"{what}: step {s.get('name')} pool {pool!r}, error {s.get('error')!r}")


def daemon_slice(bin_dir, sock, work):
    os.chdir(work)
    r = exec_json(bin_dir, sock, work, "--", "sh", "-c", "echo hello; echo oops >&2; exit 7")
    check(r.get("status") == "runtime_error", f"sh: status {r.get('status')} error {r.get('error')}")
    st = (r.get("steps") or [{}])[-1]
    check(st.get("exit_code") == 7 and st.get("stdout") == "hello\n" and st.get("stderr") == "oops\n",
          f"sh: step {st.get('exit_code')} {st.get('stdout')!r} {st.get('stderr')!r} {st.get('error')!r}")
    pooled(r, "sh")

    with open("data.txt", "w") as f:
        f.write("one\ntwo\n")
    r = exec_json(bin_dir, sock, work, "data.txt", "--", "sh", "-c", "wc -l < /app/data.txt; id -u")
    st = (r.get("steps") or [{}])[-1]
    lines = (st.get("stdout") or "").split("\n")
    check(r.get("status") == "ok" and lines[0] == "2" and lines[1] == str(st.get("uid")) and lines[1] != "0",
          f"files: {r.get('status')} {st.get('stdout')!r} uid {st.get('uid')}")
    pooled(r, "files")

    with open("hello.c", "w") as f:
        f.write('#include <stdio.h>\nint main(void) { printf("sum=%d\\n", 2 + 3); return 3; }\n')
    r = exec_json(bin_dir, sock, work, "--toolchain", "gcc", "hello.c")
    steps = r.get("steps") or []
    check([s.get("name") for s in steps] == ["compile", "run"], f"gcc: steps {[s.get('name') for s in steps]}")
    check(r.get("status") == "runtime_error" and steps and steps[-1].get("exit_code") == 3
          and steps[-1].get("stdout") == "sum=5\n", f"gcc: {r.get('status')} {steps[-1:] and steps[-1].get('stdout')!r}")
    pooled(r, "gcc")

    with open("prog.py", "w") as f:
        f.write("import sys\nprint(sum(range(10)))\nsys.exit(4)\n")
    r = exec_json(bin_dir, sock, work, "--toolchain", "python3", "prog.py")
    st = (r.get("steps") or [{}])[-1]
    check(r.get("status") == "runtime_error" and st.get("exit_code") == 4 and st.get("stdout") == "45\n",
          f"python3: {r.get('status')} {st.get('exit_code')} {st.get('stdout')!r} {st.get('error')!r}")
    pooled(r, "python3")
    # the same program warm (issue 25): the zygote's files, its interpreter
    # check and its own /tmp must work from this root too, not fall back cold
    w = exec_json(bin_dir, sock, work, "--warm", "--toolchain", "python3", "prog.py")
    wst = (w.get("steps") or [{}])[-1]
    start = (wst.get("enforced") or {}).get("start") or ""
    check(start.startswith("warm (zygote"), f"python3 --warm: enforced.start {start!r}")
    check((w.get("status"), wst.get("exit_code"), wst.get("stdout"), wst.get("stderr")) ==
          (r.get("status"), st.get("exit_code"), st.get("stdout"), st.get("stderr")),
          f"python3 --warm differs from cold: {w.get('status')} {wst.get('exit_code')} {wst.get('stdout')!r} "
          f"{wst.get('stderr')!r} {wst.get('error')!r}")
    pooled(w, "python3 --warm")

    # the plain output of a job, as a person sees it
    p = cli(bin_dir, sock, "exec", "--", "sh", "-c", "echo plain")
    check(p.returncode == 0 and p.stdout == "plain\n", f"plain exec: {p.returncode} {p.stdout!r} {p.stderr!r}")


def fresh_roots(bin_dir, work):
    """--pool 0: every job builds its own root, from here too."""
    d, sock = start_daemon(bin_dir, work, "pool0", ["--pool", "0"])
    try:
        r = exec_json(bin_dir, sock, work, "data.txt", "--", "sh", "-c", "cat /app/data.txt")
        st = (r.get("steps") or [{}])[-1]
        check(r.get("status") == "ok" and st.get("stdout") == "one\ntwo\n", f"pool 0: {r.get('status')} {st}")
        pool = (st.get("enforced") or {}).get("pool")
        check(pool == "off: --pool 0 (or SURGEBOX_POOL=0)", f"pool 0: enforced.pool {pool!r}")
    finally:
        d.terminate()
        d.wait(timeout=120)


def regen_slice(bin_dir, sock, src_dir, work):
    data = surge_data(src_dir)
    if not (os.path.exists(os.path.join(data, "dr.json")) and os.path.exists(os.path.join(data, "bg.json"))):
        print(f"SKIPPED (regen part): no SURGE data in {data}")
        return
    out = os.path.join(work, "regen")
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "regen", "--socket", sock, "--no-autostart", "--data", data,
                        "--subset", "dr,bg", "--only", "0,1,2", "--out", out, "--jobs", "2"],
                       capture_output=True, text=True, timeout=1800)
    print(p.stdout[-3000:], p.stderr[-3000:])
    check(p.returncode == 0, f"regen exit {p.returncode}")
    for subset in ("dr", "bg"):
        path = os.path.join(out, subset + ".json")
        if not os.path.exists(path):
            check(False, f"regen wrote no {path}")
            continue
        items = [it for it in json.load(open(path)) if it.get("exec") is not None]
        check(len(items) == 3, f"regen {subset}: {len(items)} items ran, want 3")
        for it in items:
            e = it["exec"]
            check(e.get("regenerated") is True and e.get("status") != "internal_error",
                  f"regen {subset}: regenerated {e.get('regenerated')} status {e.get('status')} error {e.get('error')}")


CRUX = [
    {"code": "def f(x):\n    return x * 2", "input": "3", "output": "6", "id": "sample_0"},
    {"code": "def f(s):\n    print('noise')\n    return s[::-1]", "input": "'abc'", "output": "'cba'", "id": "sample_1"},
]
# per sample: right, wrong; pass@1 = 0.5 each -> 50
CRUX_GENS = {"sample_0": ["6", "7"], "sample_1": ["'cba'", "'abc'"]}


def verify_slice(bin_dir, sock, work, warm=False):
    data, gens, out = (os.path.join(work, n) for n in ("crux.jsonl", "gens.json", "scored-warm.json" if warm else "scored.json"))
    with open(data, "w") as f:
        f.write("\n".join(json.dumps(s) for s in CRUX) + "\n")
    with open(gens, "w") as f:
        json.dump(CRUX_GENS, f)
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "verify", "--socket", sock, "--no-autostart",
                        "--benchmark", "cruxeval", "--mode", "output", "--generations", gens, "--data", data,
                        "--out", out, "--jobs", "2"] + (["--warm"] if warm else []), capture_output=True, text=True,
                       timeout=900)
    print(p.stdout[-2000:], p.stderr[-2000:])
    check(p.returncode == 0, f"verify exit {p.returncode}")
    if os.path.exists(out):
        r = json.load(open(out))
        got = {k: v for k, v in r.get("raw_scored_generations", {}).items()}
        check(got == {"sample_0": [True, False], "sample_1": [True, False]}, f"verify verdicts {got}")
        check(r.get("pass_at_1") == 50.0, f"verify pass@1 {r.get('pass_at_1')}")
    else:
        check(False, "verify wrote nothing")


def inside(bin_dir, src_dir, mode):
    work = tempfile.mkdtemp(prefix="sb-chroot-", dir="/tmp")
    os.chmod(work, 0o755)
    d, sock = start_daemon(bin_dir, work)
    try:
        daemon_slice(bin_dir, sock, work)
        fresh_roots(bin_dir, work)
        regen_slice(bin_dir, sock, src_dir, work)
        verify_slice(bin_dir, sock, work)
        verify_slice(bin_dir, sock, work, warm=True)
        p = cli(bin_dir, sock, "status", "--json")
        try:
            st = json.loads(p.stdout)
        except ValueError:
            st = {}
        check(st.get("totals", {}).get("internal_error") == 0, f"status: internal errors {st.get('totals')}")
        check(st.get("pool") == "on" and st.get("self_proof", {}).get("pool") == "on", f"status: pool {st.get('pool')!r} {st.get('self_proof')}")
        check((st.get("warm") or {}).get("off") is None, f"status: warm {st.get('warm')}")
    finally:
        d.terminate()
        d.wait(timeout=120)
    if failures:
        print(f"FAILED ({mode}): {len(failures)} check(s)")
        return 1
    print(f"ok ({mode})")
    return 0


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("chroot", "chroot-dir", "pivot"):
        print("usage: test_chroot.py BIN_DIR SRC_DIR chroot|chroot-dir|pivot")
        return 2
    bin_dir, src_dir, mode = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3]
    stage = os.environ.get(STAGE)
    if stage is None:
        return outside(bin_dir, src_dir, mode)
    if stage == "ns":
        return in_namespace(bin_dir, src_dir, mode)
    return inside(bin_dir, src_dir, mode)


if __name__ == "__main__":
    sys.exit(main())
