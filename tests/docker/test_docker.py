#!/usr/bin/env python3
"""The Docker images, built and used for real (ctest label `docker`).

  test_docker.py SRC_DIR SURGE_DATA_DIR CACHE_DIR

Runs inside the unshare wrapper (private mount and pid namespaces), as root.
It starts a private dockerd (its own data root, socket and exec root, no
bridge and no iptables rules), makes debian:12 and debian:11 with
docker/make-base-images.sh (tarballs cached in $SURGEBOX_DOCKER_CACHE, else
CACHE_DIR, with the engine's data root: a warm run reuses unchanged
layers), builds both images with no registry,
and in a container of each, started with docker/README.md's flags:
  * regenerates a SURGE ML slice (C, C++, Python, Java, Julia items) and
    compares with SURGE's references as tests/surge/test_regen.py does;
  * checks that jobs are really limited (memory, pids) through a cgroup;
  * checks that Docker's default seccomp profile breaks jobs (the reason the
    README asks for seccomp=unconfined).
Missing prerequisites print SKIPPED and exit 77.
"""
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
# ML items: 0 C, 1 C++, 2 Python, 3 Julia, 7 Java, 9 Java, 15 C++, 19 Python, 12 Julia
ML_ONLY = "0,1,2,3,7,9,12,15,19"
RUN_FLAGS = ["--cap-add", "SYS_ADMIN", "--security-opt", "apparmor=unconfined", "--cgroupns=private",
             "--tmpfs", "/run", "--network", "none"]


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(why):
    print("SKIPPED: " + why, flush=True)
    sys.exit(SKIP)


class Docker:
    def __init__(self, top, data_root):
        self.top = top
        self.data_root = data_root
        self.sock = os.path.join(top, "docker.sock")
        # Debian's docker.io client (the engine's own version) before any other
        self.client = "/usr/bin/docker" if os.access("/usr/bin/docker", os.X_OK) else shutil.which("docker")
        self.env = dict(os.environ, DOCKER_HOST="unix://" + self.sock, DOCKER_BUILDKIT="0")
        self.proc = None

    def start(self):
        dockerd = shutil.which("dockerd")
        if not dockerd or not self.client:
            skip("no Docker engine (install Debian's docker.io)")
        self.log = open(os.path.join(self.top, "dockerd.log"), "w")
        self.proc = subprocess.Popen(
            [dockerd, "--data-root", self.data_root, "--exec-root", os.path.join(self.top, "x"),
             "--pidfile", os.path.join(self.top, "dockerd.pid"), "--host", "unix://" + self.sock,
             "--bridge", "none", "--iptables=false", "--ip-masq=false", "--ip-forward=false"],
            stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(240):
            if self.proc.poll() is not None:
                break
            if self.run(["version"], quiet=True).returncode == 0:
                return
            time.sleep(0.5)
        tail = open(os.path.join(self.top, "dockerd.log")).read()[-3000:]
        self.stop()
        print(tail)
        skip("dockerd failed to start (log above)")

    def run(self, args, quiet=False, timeout=600, **kw):
        p = subprocess.run([self.client] + args, env=self.env, capture_output=True, text=True, timeout=timeout, **kw)
        if not quiet and p.returncode != 0:
            print(f"docker {' '.join(args[:3])}... exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}", flush=True)
        return p

    def stop(self):
        if self.proc and self.proc.poll() is None:
            for c in self.run(["ps", "-aq"], quiet=True).stdout.split():
                self.run(["rm", "-f", c], quiet=True)
            # no image prune: the build stages' layers are untagged, and the
            # next run's cache needs them
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def unmount_under(d):
    mounts = [line.split()[1] for line in open("/proc/self/mounts")]
    for m in sorted((m for m in mounts if m.startswith(d + "/")), reverse=True):
        subprocess.run(["umount", "-l", m], capture_output=True)


def build(dk, src, dockerfile, tag):
    """The context is the source tree without .git and build directories (as
    docker/Dockerfile*.dockerignore say; the legacy builder reads only a
    top-level .dockerignore), streamed as a tar."""
    tar = subprocess.Popen(["tar", "-C", src, "-c", "--exclude=./.git", "--exclude=./build", "--exclude=./build-*",
                            "--exclude=__pycache__", "."], stdout=subprocess.PIPE)
    t0 = time.monotonic()
    p = subprocess.run([dk.client, "build", "--network", "host", "-f", dockerfile, "-t", tag, "-"],
                       stdin=tar.stdout, env=dk.env, capture_output=True, text=True, timeout=7200)
    tar.wait()
    took = time.monotonic() - t0
    out = p.stdout + p.stderr
    print(f"build {tag}: exit {p.returncode} in {took:.0f} s", flush=True)
    if p.returncode != 0:
        print(out[-6000:])
    check(p.returncode == 0, f"docker build -f {dockerfile} -t {tag}")
    check("Sending build context" in out or "Step 1/" in out, f"{tag}: the legacy builder built it (offline frontend)")
    return p.returncode == 0


def start_container(dk, image, name, data, extra=()):
    args = ["run", "-d", "--name", name] + RUN_FLAGS + list(extra) + ["-v", f"{data}:/data/surge:ro", image]
    if dk.run(args).returncode != 0:
        return False
    # the daemon probes every toolchain before it listens: minutes on a loaded machine
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if dk.run(["exec", name, "surgebox", "--no-autostart", "ping"], quiet=True).returncode == 0:
            return True
        if dk.run(["inspect", "-f", "{{.State.Running}}", name], quiet=True).stdout.strip() != "true":
            break
        time.sleep(1)
    print(dk.run(["logs", name], quiet=True).stderr[-3000:])
    return False


def job(dk, name, argv, *opts):
    p = dk.run(["exec", name, "surgebox", "--no-autostart", "exec", "--json"] + list(opts) + ["--"] + argv, quiet=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        print(f"no JSON from the job: {p.stdout[-2000:]} {p.stderr[-2000:]}")
        return {"status": "no_response", "steps": []}


def step(resp):
    return resp["steps"][-1] if resp.get("steps") else {}


def entrypoint_log(dk, name):
    return dk.run(["logs", name], quiet=True).stderr


def check_limits(dk, name, tag):
    print(entrypoint_log(dk, name)[-1500:])
    mem = step(job(dk, name, ["python3", "-c", "b = bytearray(400 * 1024 * 1024); print(len(b))"],
                   "--memory-limit", "64"))
    print(f"{tag} memory job: status {mem.get('status')} cgroup {mem.get('cgroup')} "
          f"enforced {mem.get('enforced', {}).get('memory')} warnings {mem.get('warnings')}")
    check(mem.get("cgroup") in ("v1", "v2"), f"{tag}: jobs get a cgroup (got {mem.get('cgroup')})")
    check(mem.get("status") == "memory_limit" and mem.get("limit_hit") == "memory",
          f"{tag}: 400 MiB under --memory-limit 64 ends as memory_limit (got {mem.get('status')})")
    pids = step(job(dk, name, ["sh", "-c", "i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done; wait"],
                    "--pids-limit", "8", "--time-limit", "30"))
    print(f"{tag} pids job: status {pids.get('status')} pids_limit_hit {pids.get('pids_limit_hit')} "
          f"enforced {pids.get('enforced', {}).get('pids')}")
    check(pids.get("pids_limit_hit") is True and "cgroup" in str(pids.get("enforced", {}).get("pids")),
          f"{tag}: 40 processes under --pids-limit 8 hit the cgroup's pids limit")


def check_regen(dk, name, tag, has_julia):
    t0 = time.monotonic()
    p = dk.run(["exec", name, "surgebox", "--no-autostart", "regen", "--data", "/data/surge", "--subset", "ml",
                "--only", ML_ONLY, "--out", "/tmp/regen", "--summary", "/tmp/regen/summary.json"], timeout=3600)
    print(f"{tag} regen: exit {p.returncode} in {time.monotonic() - t0:.0f} s\n{p.stdout[-3000:]}")
    check(p.returncode == 0, f"{tag}: regen exit code {p.returncode}")
    got = dk.run(["exec", name, "cat", "/tmp/regen/ml.json"])
    items = json.loads(got.stdout) if got.returncode == 0 else []
    published = json.load(open(os.path.join(DATA, "ml.json")))
    seen = {}
    for i in map(int, ML_ONLY.split(",")):
        it, lang = items[i] if i < len(items) else {}, published[i]["custom_features"]["language"]
        e = it.get("exec", {})
        # the published reference is kept beside the regenerated one, unchanged
        check(it.get("gt_published") == published[i]["gt"], f"{tag}: ml[{i}] gt_published is SURGE's reference")
        check(e.get("complete") is True and e.get("status") != "internal_error", f"{tag}: ml[{i}] ({lang}) ran: {e.get('status')}")
        if lang == "Julia" and not has_julia:
            check(e.get("status") == "missing_toolchain" and not e.get("regenerated"),
                  f"{tag}: ml[{i}] Julia reported missing, never guessed ({e.get('status')})")
            continue
        ok = e.get("regenerated") is True and e.get("matched") in ("exact", "normalized")
        tc = e.get("toolchain", {})
        print(f"{tag}: ml[{i}] {lang}: {e.get('matched')} with {tc.get('name')} {tc.get('version')}")
        check(ok, f"{tag}: ml[{i}] ({lang}) reproduces SURGE's reference (matched {e.get('matched')})")
        if lang == "Julia":
            check(e.get("matched") == "exact", f"{tag}: ml[{i}] Julia exact")
        seen[lang] = seen.get(lang, 0) + ok
    for lang in ("CPP", "Python", "Java") + (("Julia",) if has_julia else ()):
        check(seen.get(lang, 0) >= 1, f"{tag}: at least one {lang} item reproduced")


def check_default_seccomp(dk, image, data):
    """Docker's default seccomp profile (no seccomp=unconfined): no job runs."""
    name = "sbtest-seccomp-default"
    up = start_container(dk, image, name, data)
    resp = job(dk, name, ["/bin/echo", "hi"]) if up else {"status": "no daemon"}
    print(f"default seccomp: daemon up {up}, job {resp.get('status')}: {step(resp).get('error') or resp.get('error')}")
    check(not (resp.get("status") == "ok" and step(resp).get("stdout") == "hi\n"),
          "Docker's default seccomp profile stops jobs (so docker/README.md's seccomp=unconfined is needed)")
    dk.run(["rm", "-f", name], quiet=True)


DATA = ""


def main():
    global DATA
    src, data, cache = sys.argv[1:4]
    DATA = data = os.path.abspath(os.environ.get("SURGE_DATA", data))
    cache = os.environ.get("SURGEBOX_DOCKER_CACHE", cache)
    if os.geteuid() != 0:
        skip("not root (dockerd and debootstrap need root)")
    if os.getpid() != 1:
        skip("not pid 1 of a private pid namespace: run through the unshare wrapper")
    if not shutil.which("debootstrap"):
        skip("debootstrap is not installed")
    if not os.path.exists(os.path.join(data, "ml.json")):
        skip(f"the SURGE data is not at {data} (set SURGE_DATA)")
    # The engine's data root lives in the cache too: a warm run reuses the
    # layers of unchanged build steps (the apt installs), a cold one (empty
    # cache) builds everything. Socket, exec root and logs are per run.
    top = tempfile.mkdtemp(prefix="sbdock-", dir="/var/tmp")
    os.makedirs(cache, exist_ok=True)
    dk = Docker(top, os.path.join(os.path.abspath(cache), "engine"))
    t_all = time.monotonic()
    try:
        dk.start()
        t0 = time.monotonic()
        p = subprocess.run(["sh", os.path.join(src, "docker/make-base-images.sh"), "--cache", cache,
                            "bookworm", "bullseye"], env=dict(dk.env, DOCKER=dk.client), capture_output=True, text=True, timeout=7200)
        print(p.stderr[-3000:], f"base images: exit {p.returncode} in {time.monotonic() - t0:.0f} s", flush=True)
        check(p.returncode == 0, "docker/make-base-images.sh bookworm bullseye")
        if p.returncode != 0:
            return
        for image, tag, has_julia in (("docker/Dockerfile.surge-2025", "surgebox:surge-2025", True),
                                      ("docker/Dockerfile", "surgebox:bookworm", False)):
            if not build(dk, src, image, tag):
                continue
            name = "sbtest-" + tag.split(":")[1]
            if not start_container(dk, tag, name, data, ["--security-opt", "seccomp=unconfined"]):
                check(False, f"{tag}: the daemon answers in the container")
                continue
            check_limits(dk, name, tag)
            check_regen(dk, name, tag, has_julia)
            if tag == "surgebox:bookworm":
                check_default_seccomp(dk, tag, data)
            dk.run(["rm", "-f", name], quiet=True)
    finally:
        dk.stop()
        unmount_under(top)
        subprocess.run(["rm", "-rf", "--one-file-system", top])
        print(f"docker label: {time.monotonic() - t_all:.0f} s in all", flush=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
