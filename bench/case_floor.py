#!/usr/bin/env python3
"""Issue 38's C++ targets against what isolation alone costs (stop 48).

In one run, rounds interleaved (the order reversed every other round):
  - cases_vs_jobs.py's cpp measure: one C++ stdin program x N cases in one
    job, N separate jobs through the compile cache, and N unsandboxed runs
    of the same binary from Python (the issue's baseline);
  - bench_sandbox_floor on the same program: a bare fork + exec against
    the floor, fresh pid, ipc and mount namespaces with a fresh /tmp,
    /dev/shm and /proc and an init that starts and reaps the program, and
    the full floor, which adds a uts namespace, a network namespace, the
    cgroups joined, rlimits, the bounding set, another uid and a seccomp
    filter, each at its cheapest. No daemon, /app or result: what any
    case's sandbox must pay before surgebox does anything of its own.

Then the arithmetic of the two targets, each from figures of this run:
  per case <= 1.3 x bare + 1 ms   the full floor's estimate for a case is
                                  bare + (full - bare fork+exec); what is
                                  left of the bound after it is all the
                                  room the daemon's own work has (its
                                  protocol, /app, outputs, accounting)
  cases <= 0.8 x jobs            a job runs the same sandbox as a case
                                  (its compile step is a cache hit), so a
                                  case can save only the job's own request
                                  work: jobs - cases, against 0.2 x jobs

Prints figures; asserts nothing. As root, inside the unshare wrapper:
  unshare --mount --propagation private --pid --fork --mount-proc \\
      python3 bench/case_floor.py build/bin [N] [ROUNDS]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases_vs_jobs as cj  # noqa: E402


def main():
    bindir = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    cj.td.BIN = bindir
    # the floor's child covers /tmp with a tmpfs: its program lives elsewhere
    tmp = tempfile.mkdtemp(prefix="sb-floor-", dir="/var/tmp")
    os.chmod(tmp, 0o755)  # the full floor runs the program as another uid
    prog = os.path.join(tmp, "prog")
    with open(prog + ".cpp", "w") as f:
        f.write(cj.SRC_CPP)
    subprocess.run(["g++", "-O1", "-o", prog, prog + ".cpp"], check=True)
    bare_py = prog  # the one binary for every unsandboxed run, Python's baseline and the C driver's
    d = cj.td.Daemon("--jobs", "1")
    c = cj.td.Client(d.sock)
    got = {"case": [], "job": [], "bare_py": [], "bare_c": [], "floor": [], "full": []}
    cgroups = set()
    try:
        for r in range(rounds):
            for part in (("surgebox", "floor") if r % 2 == 0 else ("floor", "surgebox")):
                if part == "surgebox":
                    t = cj.stdin_cases_vs_jobs(c, n, "cpp", "prog.cpp", cj.SRC_CPP, cj.COMPILE_CPP, rounds=2, bare=bare_py)
                    got["case"].append(t["cases"])
                    got["job"].append(t["jobs"])
                    got["bare_py"].append(t["bare"])
                else:
                    fl = subprocess.run([os.path.join(bindir, "bench_sandbox_floor"), prog, str(n), "2"],
                                        capture_output=True, text=True)
                    if fl.returncode != 0:
                        sys.exit("case_floor.py: bench_sandbox_floor failed: %s" % fl.stderr.strip())
                    if fl.stderr.strip():
                        print(fl.stderr.strip())
                    f = json.loads(fl.stdout)
                    got["bare_c"].append(f["bare_ms"] / 1e3)
                    got["floor"].append(f["floor_ms"] / 1e3)
                    got["full"].append(f["full_ms"] / 1e3)
                    cgroups.add(f["cgroups"])
    finally:
        c.close()
        d.stop()
        shutil.rmtree(tmp)
    ms = {k: 1e3 * sum(v) / len(v) for k, v in got.items()}
    bound = 1.3 * ms["bare_py"] + 1.0
    ns_only = ms["floor"] - ms["bare_c"]
    floor_case = ms["bare_py"] + (ms["full"] - ms["bare_c"])
    saved, needed = ms["job"] - ms["case"], 0.2 * ms["job"]
    print(json.dumps({"bench": "case_floor", "cases": n, "rounds": rounds, "full_floor_cgroups": sorted(cgroups),
                      "ms": {k: round(v, 3) for k, v in ms.items()}}, indent=1))
    print("per case: bound 1.3 x %.2f + 1 = %.2f ms; full floor %.2f ms (bare + %.2f ms: fresh namespaces, mounts "
          "and an init %.2f, the rest %.2f) leaves %.2f ms for the daemon's own work, which takes %.2f ms (case %.2f "
          "ms); per case / bound %.2f (target <= 1)"
          % (ms["bare_py"], bound, floor_case, floor_case - ms["bare_py"], ns_only, ms["full"] - ms["floor"],
             bound - floor_case, ms["case"] - floor_case, ms["case"], ms["case"] / bound))
    print("cases / jobs %.2f (target <= 0.8): a case saves %.2f ms of a job's %.2f ms, the target needs %.2f ms "
          "(0.2 x job); both run the same sandbox, so a case can save at most a job's own request work"
          % (ms["case"] / ms["job"], saved, ms["job"], needed))
    print("  load: %s" % cj.load())


if __name__ == "__main__":
    main()
