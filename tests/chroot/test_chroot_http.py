#!/usr/bin/env python3
"""The HTTP front (issue 37) where schroot, sbuild and pbuilder run programs
(a plain chroot of bind mounts of the host's directories) and where
container runtimes do (that root pivoted into): surgeboxd --http
127.0.0.1:0 started inside the root answers /run_code there as anywhere,
from the prepared-sandbox pool (never `internal_error`, never a quiet
fallback), and /v1/health and /v1/ping answer.

  test_chroot_http.py BIN_DIR SRC_DIR chroot|chroot-dir|pivot

Loopback only: the root shares the host's network namespace, the daemon
binds 127.0.0.1 on a port the kernel picks. Needs root and unshare (else
SKIPPED, 77); builds the root as test_chroot.py does (fsroot.py)."""
import json
import os
import sys

import fsroot
from test_chroot import STAGE, check, failures, outside


def in_namespace(bin_dir, src_dir, mode):
    return fsroot.rerun_inside(__file__, bin_dir, src_dir, mode, STAGE)


def pooled(a, what):
    rec = a.get("surgebox") or {}
    text = json.dumps(rec)
    check("internal_error" not in text, f"{what}: internal_error in the surgebox record: {text[:600]}")
    pools = [v for k, v in _walk(rec) if k == "pool"]
    check(pools and all(p == "used" for p in pools), f"{what}: enforced.pool {pools!r}")


def _walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from _walk(v)


def inside(bin_dir, src_dir, mode):
    sys.path.insert(0, os.path.join(src_dir, "tests", "http"))
    from httpd import Daemon  # noqa: E402  (the source tree is bound in the root)

    d = Daemon(bin_dir, "--jobs", "2")
    try:
        check(d.host == "127.0.0.1", f"bound {d.host}")
        st, _, data = d.request("GET", "/v1/health")
        check(st == 200 and data == b'"ok"', f"health: {st} {data[:200]!r}")
        st, _, data = d.request("GET", "/v1/ping")
        check(st == 200 and data == b'"pong"', f"ping: {st} {data[:200]!r}")

        a = d.run_code({"code": "import sys\nprint(sys.stdin.read().upper(), end='')", "language": "python",
                        "stdin": "from the root\n"})
        check(a.get("status") == "Success" and (a.get("run_result") or {}).get("stdout") == "FROM THE ROOT\n",
              f"python: {json.dumps(a)[:800]}")
        pooled(a, "python")

        a = d.run_code({"code": "import sys\nsys.exit(3)", "language": "python"})
        check(a.get("status") == "Failed" and (a.get("run_result") or {}).get("return_code") == 3,
              f"python exit 3: {json.dumps(a)[:800]}")

        a = d.run_code({"code": "#include <cstdio>\nint main(){int n;if(scanf(\"%d\",&n)!=1)return 1;"
                                "printf(\"%d\\n\",n*n);}", "language": "cpp", "stdin": "12"})
        check(a.get("status") == "Success" and (a.get("compile_result") or {}).get("status") == "Finished"
              and (a.get("run_result") or {}).get("stdout") == "144\n", f"cpp: {json.dumps(a)[:800]}")
        pooled(a, "cpp")

        a = d.run_code({"code": "int main( { }", "language": "cpp"})
        check(a.get("status") == "Failed" and a.get("run_result") is None
              and (a.get("compile_result") or {}).get("return_code") not in (0, None),
              f"cpp compile error: {json.dumps(a)[:800]}")

        a = d.run_code({"code": "while True: pass", "language": "python", "run_timeout": 1})
        check(a.get("status") == "Failed" and (a.get("run_result") or {}).get("status") == "TimeLimitExceeded",
              f"python timeout: {json.dumps(a)[:800]}")
        st, _, data = d.request("GET", "/metrics")
        for line in data.decode().splitlines():
            if line.startswith("surgebox_jobs_total{") and 'status="internal_error"' in line:
                check(float(line.rsplit(" ", 1)[1]) == 0, f"metrics: {line}")
    except Exception:
        print(d.logtext()[-4000:], file=sys.stderr)
        raise
    finally:
        d.stop()
    if failures:
        print(f"FAILED ({mode}): {len(failures)} check(s)")
        return 1
    print(f"ok ({mode})")
    return 0


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("chroot", "chroot-dir", "pivot"):
        print("usage: test_chroot_http.py BIN_DIR SRC_DIR chroot|chroot-dir|pivot")
        return 2
    bin_dir, src_dir, mode = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3]
    stage = os.environ.get(STAGE)
    if stage is None:
        return outside(bin_dir, src_dir, mode, script=__file__)
    if stage == "ns":
        return in_namespace(bin_dir, src_dir, mode)
    return inside(bin_dir, src_dir, mode)


if __name__ == "__main__":
    sys.exit(main())
