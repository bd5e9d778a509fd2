#!/usr/bin/env python3
"""Issue 37's gap, split: the same C++ program x N stdin cases as one job,
on ONE private daemon (--jobs 2, an HTTP front), sent five ways in
interleaved rounds, so that each difference between the native cases
(bench/cases_vs_jobs.py cpp) and one /common_evaluate_batch
(bench/http_targets.py --only 2) gets a figure of its own:

  native      cases_vs_jobs.py's request over the Unix socket: argv steps
              (g++ -O1), the default compare, no limits
  front       over the Unix socket, the native request the front builds for
              the batch (toolchain g++ with languages.json's options and
              compile_args, /run_code's limits, the numbers compare, stop,
              budget_s, case_output_bytes); its answer bytes counted
  front-nolim the same without "limits" / "compile_limits"
  front-exact the same with the default compare
  http        the same cases as one /common_evaluate_batch

Per way: median ms per case over the rounds; the cases' own wall time per
case (above the ms per case: cases ran side by side, on lent slots); the
daemon loop's CPU per case (its main thread's schedstat: the Unix socket's
parser, the front, the judge, the answer); the answer's bytes. Prints the
load (`uptime`).

Run as root inside the unshare wrapper:
  unshare --mount --propagation private --pid --fork --mount-proc \\
      python3 bench/batch_gap.py --bin build/bin [--cases 100] [--rounds 3]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemon"))
sys.path.insert(0, HERE)
import test_daemon as td  # noqa: E402
from http_bench import CPP, start_daemon  # noqa: E402

LANG = json.load(open(os.path.join(HERE, "..", "http", "languages.json")))["cpp"]


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def native_argv(cases):
    return {"type": "exec", "files": [{"path": "prog.cpp", "content": CPP}],
            "steps": [{"name": "compile", "argv": ["g++", "-O1", "-o", "prog", "prog.cpp"], "cache": True},
                      {"name": "run", "argv": ["./prog"],
                       "cases": [{"stdin": i, "expected": o.strip()} for i, o in cases]}]}


def front(cases, limits=True, exact=False):
    cmp = {"mode": "numbers", "abs_tol": 0, "rel_tol": 1e-5, "ignore_case": True}
    r = {"type": "exec", "toolchain": LANG["toolchain"], "files": [{"path": LANG["source"], "content": CPP}],
         "options": LANG.get("options", {}), "compile_args": LANG.get("compile_args", []),
         "cases": [dict({"stdin": i, "expected": o}, **({} if exact else {"compare": cmp})) for i, o in cases],
         "stop": "never", "budget_s": 300, "case_output_bytes": 65536}
    if limits:
        r["limits"] = {"time_s": 10, "cpu_time_s": 10}
        r["compile_limits"] = {"time_s": 10, "cpu_time_s": 10}
    return r


def case_docs(ans):
    for st in ans.get("steps", []):
        if "cases" in st:
            return st["cases"]
    return []


def loop_cpu_ns(d):
    """The daemon's main thread (its libuv loop, where the front runs): CPU ns so far."""
    with open("/proc/%d/schedstat" % d.proc.pid) as f:
        return int(f.read().split()[0])


def over_socket(c, req):
    t0 = time.monotonic()
    ans = c.call(dict(req, id="g%d" % time.monotonic_ns()), timeout=3600)
    dt = time.monotonic() - t0
    docs = case_docs(ans)
    ok = len(docs) > 0 and all(k.get("verdict") == "accepted" for k in docs)
    size = len(json.dumps(ans, separators=(",", ":")))
    return dt, ok, docs, size


def over_http(d, cases):
    body = {"completion": "```cpp\n" + CPP + "```",
            "config": {"language": "cpp", "provided_data": {"test_cases": {
                "type": "stdin_stdout", "input": [i for i, _ in cases], "output": [o for _, o in cases]}},
                "extra": {"run_all_cases": True}}}
    c = d.conn(timeout=3600)
    t0 = time.monotonic()
    c.request("POST", "/common_evaluate_batch", body=json.dumps(body), headers={"Content-Type": "application/json"})
    raw = c.getresponse().read()
    dt = time.monotonic() - t0
    c.close()
    ans = json.loads(raw)
    docs = (ans.get("surgebox") or {}).get("cases") or []
    ok = ans.get("accepted") is True and len(ans.get("tests", [])) == len(cases)
    return dt, ok, docs, len(raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    td.BIN = a.bin
    cases = [("%d %d\n" % (k, 2 * k), "%d\n" % (3 * k)) for k in range(a.cases)]
    d = start_daemon(a.bin, a.jobs)
    c = td.Client(d.sock)
    def timed(fn):
        def run():
            cpu0 = loop_cpu_ns(d)
            dt, ok, docs, size = fn()
            return dt, ok, docs, size, loop_cpu_ns(d) - cpu0
        return run
    ways = {
        "native": timed(lambda: over_socket(c, native_argv(cases))),
        "front": timed(lambda: over_socket(c, front(cases))),
        "front-nolim": timed(lambda: over_socket(c, front(cases, limits=False))),
        "front-exact": timed(lambda: over_socket(c, front(cases, exact=True))),
        "http": timed(lambda: over_http(d, cases)),
    }
    got = {w: [] for w in ways}
    try:
        print("surgeboxd --jobs %d, %d cases, %d rounds; load at start: %s" % (a.jobs, a.cases, a.rounds, uptime()))
        for w in ways:  # warm-up: each build into the compile cache
            ways[w]()
        for r in range(a.rounds):
            order = list(ways) if r % 2 == 0 else list(ways)[::-1]
            for w in order:
                got[w].append(ways[w]())
        for w in ways:
            runs = got[w]
            per = statistics.median(x[0] for x in runs) / a.cases * 1e3
            docs = runs[-1][2]
            wall = sum(k.get("wall_time_s") or 0 for k in docs) / max(1, len(docs)) * 1e3
            loop = statistics.median(x[4] for x in runs) / a.cases / 1e6
            print("%-12s %6.2f ms/case  cases' own wall %5.2f ms  loop CPU %5.3f ms/case  answer %7d bytes  %s" % (
                w, per, wall, loop, runs[-1][3], "all accepted" if all(x[1] for x in runs) else "NOT ALL ACCEPTED"))
        print("load at the end: %s" % uptime())
    finally:
        c.close()
        d.stop()


if __name__ == "__main__":
    main()
