#!/usr/bin/env python3
"""Issue 38's first target, one quick run: one C program x N stdin cases in
one job (built once, each case in a sandbox of its own) against N separate
jobs of the same program (compile step through the compile cache, then the
run), through a private daemon. Prints the two wall times and their ratio.

Run as root inside the unshare wrapper:
  unshare --mount --propagation private --pid --fork --mount-proc \\
      python3 bench/cases_vs_jobs.py build/bin [N]"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "daemon"))
import test_daemon as td  # noqa: E402

SRC = "#include <stdio.h>\nint main(void) { long a, b; if (scanf(\"%ld %ld\", &a, &b) != 2) return 1; " \
      "printf(\"%ld\\n\", a + b); return 0; }\n"
COMPILE = {"name": "compile", "argv": ["gcc", "-O1", "-o", "prog", "prog.c"], "cache": True}


def main():
    td.BIN = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    d = td.Daemon("--jobs", "1")
    c = td.Client(d.sock)
    files = [{"path": "prog.c", "content": SRC}]
    try:
        warm = c.call({"id": "w", "type": "exec", "files": files, "steps": [COMPILE]}, timeout=120)
        assert warm["status"] == "ok", warm
        cases = [{"stdin": "%d %d\n" % (k, k), "expected": "%d" % (2 * k)} for k in range(n)]
        t0 = time.monotonic()
        r = c.call({"id": "cases", "type": "exec", "files": files,
                    "steps": [COMPILE, {"name": "run", "argv": ["./prog"], "cases": cases}]}, timeout=3600)
        t_cases = time.monotonic() - t0
        assert r["status"] == "ok", r.get("status")
        t0 = time.monotonic()
        for k in range(n):
            r = c.call({"id": "j%d" % k, "type": "exec", "files": files,
                        "steps": [COMPILE, {"name": "run", "argv": ["./prog"], "stdin": "%d %d\n" % (k, k)}]},
                       timeout=120)
            assert r["status"] == "ok" and r["steps"][1]["stdout"] == "%d\n" % (2 * k), r
        t_jobs = time.monotonic() - t0
        print("%d cases in one job: %.2f s (%.1f ms/case); %d separate jobs: %.2f s (%.1f ms/job); ratio %.2f"
              % (n, t_cases, 1e3 * t_cases / n, n, t_jobs, 1e3 * t_jobs / n, t_cases / t_jobs))
    finally:
        c.close()
        d.stop()


if __name__ == "__main__":
    main()
