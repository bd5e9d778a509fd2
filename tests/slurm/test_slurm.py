#!/usr/bin/env python3
"""deploy/slurm for real: a single-node Slurm cluster on this machine (Debian's
slurm-wlm and munge, configured in a temporary directory), a 4-shard
regeneration of a SURGE slice submitted with deploy/slurm/submit.sh, its
merge, compared with the unsharded run of the same slice (timing fields
removed); then a 3-shard verify --benchmark surge of four predictions
(submit.sh --predictions), its merged report compared with the unsharded one. Everything started here is stopped at the end, also on failure.

  test_slurm.py SOURCE_DIR BIN_DIR DATA_DIR

Runs inside `unshare --mount --propagation private --pid --fork --mount-proc
--uts` (ctest's command): the UTS namespace lets the node be called
localhost, the pid namespace ends whatever a job left behind.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SUBSETS, ONLY = "dr,bg,tc", "0,1,2,3,4,5"
procs = []

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "surge"))
from shardcheck import SKIP, check, failures, finish, load, same_files, start_daemon, verify_report  # noqa: E402
from shardcheck import run as run_ok  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mem_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024 * 9 // 10  # slurmd refuses a node bigger than it sees
    return 1024


def start(argv, log, env):
    p = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)
    procs.append(p)
    return p


def wait_for(what, cond, timeout, procs_alive=()):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        for p in procs_alive:
            if p.poll() is not None:
                print(f"{what}: {p.args[0]} exited with {p.returncode}")
                return False
        time.sleep(1)
    print(f"{what}: not after {timeout} s")
    return False


def cluster(t):
    """munged, slurmctld and slurmd on localhost; returns the environment for the clients."""
    os.makedirs(f"{t}/munge", mode=0o700)
    for d in ("state", "spool"):
        os.makedirs(f"{t}/{d}")
    subprocess.run(["mungekey", "--create", "--keyfile", f"{t}/munge/munge.key"], check=True)
    os.chmod(f"{t}/munge/munge.key", 0o600)
    munge_sock = f"{t}/munge/munge.socket"
    munged = start(["munged", "-F", "--force", "--key-file", f"{t}/munge/munge.key", "--socket", munge_sock,
                    "--pid-file", f"{t}/munge/munged.pid", "--seed-file", f"{t}/munge/seed",
                    "--log-file", f"{t}/munge/munged.log"], f"{t}/munged.out", os.environ.copy())
    if not wait_for("munged", lambda: os.path.exists(munge_sock), 30, [munged]):
        return None
    conf = f"""ClusterName=surgebox-test
SlurmctldHost=localhost
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_sock}
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation={t}/state
SlurmdSpoolDir={t}/spool
SlurmctldPidFile={t}/slurmctld.pid
SlurmdPidFile={t}/slurmd.pid
SlurmctldLogFile={t}/slurmctld.log
SlurmdLogFile={t}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory={mem_mib()} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
    with open(f"{t}/slurm.conf", "w") as f:
        f.write(conf)
    env = dict(os.environ, SLURM_CONF=f"{t}/slurm.conf")
    ctld = start(["slurmctld", "-D", "-i"], f"{t}/slurmctld.out", env)
    slurmd = start(["slurmd", "-D"], f"{t}/slurmd.out", env)

    def idle():
        p = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True, env=env)
        return p.returncode == 0 and p.stdout.strip() == "idle"

    if not wait_for("node idle", idle, 120, [ctld, slurmd]):
        return None
    return env


def predictions(data, t):
    """four CL Python items (one answered wrong): verify's part of the test"""
    cl = load(os.path.join(data, "cl.json"))
    py = [i for i, it in enumerate(cl) if it["custom_features"]["language"] == "Python"][:4]
    path = f"{t}/preds.jsonl"
    with open(path, "w") as f:
        for k, i in enumerate(py):
            answer = cl[i]["gt"] if k != 1 else "not " + cl[i]["gt"]
            f.write(json.dumps({"subset": "cl", "index": i, "model": "m", "prediction": f"Output: `{answer}`"}) + "\n")
    return path


def unsharded(bin_dir, data, t, preds):
    """the same slice, and the same verification, on one machine through its own private daemon"""
    d, sock = start_daemon(bin_dir, t, "one")
    procs.append(d)
    out = f"{t}/one"
    run_ok([f"{bin_dir}/surgebox", "regen", "--data", data, "--subset", SUBSETS, "--only", ONLY,
            "--socket", sock, "--no-autostart", "--out", out, "--summary", f"{out}/summary.json"], "unsharded regen")
    p = run_ok([f"{bin_dir}/surgebox", "verify", "--benchmark", "surge", "--data", data, "--subset", "cl",
                "--predictions", preds, "--json", "--socket", sock, "--no-autostart"], "unsharded verify")
    d.send_signal(signal.SIGTERM)
    d.wait(timeout=120)
    return out, json.loads(p.stdout) if p.returncode == 0 else {}


def submitted(src, env, bin_dir, data, run, shards, args):
    """deploy/slurm/submit.sh, then its merge job waited for: True when it ended with 0"""
    p = subprocess.run(["bash", f"{src}/deploy/slurm/submit.sh", "--shards", str(shards), "--data", data, "--out",
                        run, "--bin", bin_dir, "--sbatch-args", "--cpus-per-task=1"] + args,
                       capture_output=True, text=True, env=env, cwd=src)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"submit.sh exit {p.returncode}")
    if p.returncode:
        return False
    done = f"{run}/merged/exit-code"
    wait_for("the merge job", lambda: os.path.exists(done), 3000)
    ok = os.path.exists(done) and open(done).read().strip() == "0"
    check(ok, f"the merge job of {run} ended with exit code 0")
    if os.path.exists(f"{run}/merged/fidelity.txt"):
        print(open(f"{run}/merged/fidelity.txt").read())
    got = sorted(os.listdir(f"{run}/shards")) if os.path.isdir(f"{run}/shards") else []
    check(got == [str(i) for i in range(shards)], f"{shards} shard outputs: {got}")
    return ok


def main():
    src, bin_dir, data = sys.argv[1:4]
    if os.geteuid() != 0:
        print("SKIPPED: a Slurm cluster on localhost needs root")
        return SKIP
    missing = [b for b in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo", "scancel")
               if not shutil.which(b)]
    if missing:
        print(f"SKIPPED: not installed: {' '.join(missing)} (Debian's slurm-wlm and munge)")
        return SKIP
    if not os.path.exists(os.path.join(data, "dr.json")):
        print(f"SKIPPED: no SURGE data at {data}")
        return SKIP
    if socket.gethostname() != "localhost":
        subprocess.run(["hostname", "localhost"], check=True)  # our own UTS namespace (see the docstring)
    t = tempfile.mkdtemp(prefix="surgebox-slurm-")
    env = None
    t0 = time.monotonic()
    try:
        preds = predictions(data, t)
        one, verified = unsharded(bin_dir, data, t, preds)
        env = cluster(t)
        check(env is not None, "the single-node cluster came up")
        if env is None:
            return 1
        run = f"{t}/run"
        # the unsharded run's toolchain detection seeds each task's private cache
        env["SURGEBOX_CACHE_SEED"] = f"{t}/one-cache"
        if submitted(src, env, bin_dir, data, run, 4, ["--", "--subset", SUBSETS, "--only", ONLY]):
            same_files(one, f"{run}/merged", ("dr.json", "bg.json", "tc.json", "summary.json"))
        # verify --benchmark surge in 3 shards (--predictions): the unsharded report
        run = f"{t}/verify"
        if submitted(src, env, bin_dir, data, run, 3, ["--predictions", preds, "--", "--subset", "cl"]):
            got = load(f"{run}/merged/scores.json")
            check(verify_report(got) == verify_report(verified) and got.get("scored_items") == 4,
                  f"merged verify report {got} differs from the unsharded {verified}")
        print(f"slurm test: {time.monotonic() - t0:.0f} s wall (load {os.getloadavg()[0]:.1f})")
    finally:
        if env:
            subprocess.run(["scancel", "--full", "--partition", "test"], env=env, capture_output=True)
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if failures:
            for log in ("slurmctld.log", "slurmd.log", "munge/munged.log"):
                if os.path.exists(f"{t}/{log}"):
                    print(f"---- {log}\n" + open(f"{t}/{log}").read()[-3000:])
            for root, _, files in (x for r in ("run", "verify") for x in os.walk(f"{t}/{r}")):
                for f in files:
                    if f.endswith(".out"):
                        print(f"---- {f}\n" + open(os.path.join(root, f)).read()[-2000:])
    return finish(t)


if __name__ == "__main__":
    sys.exit(main())
