"""Warm against cold through the daemon on SURGE's Python items (issue 25's
proof of sameness): the very requests `surgebox regen` sends for the given
subsets (--dump-requests), every one whose steps are all Python, run cold
twice and warm once on a private surgeboxd (--jobs 1: one job at a time, so
timing-sensitive programs see an idle machine each run). Per item: status,
exit code, signal and the sha256 of stdout and stderr.

  equal              warm equals both cold runs
  nondeterministic   the two cold runs differ from each other: not
                     compared, listed with the streams that moved
  refused            the warm request ran cold (enforced.start says why):
                     listed, not a difference
  differs            warm differs from cold runs that agree: a FAIL,
                     with the first differing lines

Exit 1 on any difference or any warm run that failed to give a result.
SKIP 77 without SURGE's data (../shared/surge or SURGE_DATA).

tc's timed items print an in-process timer line on stderr
(SURGEBOX_INPROC_CPU=...): stderr is compared without it.

  test_daemon_surge.py BIN_DIR CACHE_DIR [--subsets ml,cl,sc,bg] [--stride K]

--stride K compares every K-th Python item of each subset (CI's slice; the
long twin compares them all)."""
import base64
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402

DATA = os.environ.get("SURGE_DATA", os.path.join(daemonrun.ROOT, "..", "shared", "surge"))
KEYS = ("status", "exit_code", "signal", "stdout_sha256", "stderr_sha256")


def python_requests(bin_dir, subset, tmp, stride=1):
    out = os.path.join(tmp, subset + ".jsonl")
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "regen", "--data", DATA, "--subset", subset,
                        "--dump-requests", out], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("regen --dump-requests %s: exit %d: %s" % (subset, p.returncode, p.stderr.strip()))
    n = 0
    for i, line in enumerate(open(out)):
        r = json.loads(line)
        steps = r.get("steps") or []
        if (r.get("toolchain") or "").startswith("python") or (steps and all("python" in s["argv"][0] for s in steps)):
            if n % stride == 0:
                yield "%s/%d" % (subset, i), r
            n += 1


TIMER = b"SURGEBOX_INPROC_CPU="  # the in-process timer line of tc's timed items (a measurement, never equal)


def summary(r):
    """The comparable figures of a result, step by step (or the whole
    response where it has no steps: an error): KEYS, but stderr compared as
    its bytes less the in-process timer's line."""
    steps = r.get("steps")
    if not steps:
        return (r.get("status"), r.get("error"))
    out = []
    for s, (_o, e) in zip(steps, zip(*[iter(streams(r))] * 2)):
        timed = TIMER in e
        err = b"\n".join(x for x in e.split(b"\n") if not x.startswith(TIMER)) if timed else None
        out.append(tuple(s.get(k) for k in KEYS if not (timed and k == "stderr_sha256")) + (err,))
    return tuple(out)


def streams(r):
    out = []
    for s in r.get("steps") or []:
        for k in ("stdout", "stderr"):
            b = s.get(k + "_b64")
            out.append(base64.b64decode(b) if b is not None else (s.get(k) or "").encode())
    return out


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(streams(a), streams(b))):
        if x != y:
            lx, ly = x.split(b"\n"), y.split(b"\n")
            for j, (u, v) in enumerate(zip(lx + [b"<end>"], ly + [b"<end>"])):
                if u != v:
                    return "stream %d line %d: cold %r warm %r" % (i, j + 1, u[:200], v[:200])
    return "status %r against %r" % (summary(a), summary(b))


def main():
    args = sys.argv[1:]
    bin_dir, cache = args[0], args[1]
    subsets = (args[args.index("--subsets") + 1] if "--subsets" in args else "ml,cl,sc,bg").split(",")
    stride = int(args[args.index("--stride") + 1]) if "--stride" in args else 1
    if not os.path.isdir(DATA):
        print("SKIPPED: no SURGE data at %s (set SURGE_DATA)" % DATA)
        return daemonrun.SKIP
    counts = {"equal": 0, "nondeterministic": 0, "refused": 0, "differs": 0}
    fails, notes = [], []
    d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "1")
    try:
        c = daemonrun.Client(d.sock)
        with tempfile.TemporaryDirectory() as tmp:
            for subset in subsets:
                for name, req in python_requests(bin_dir, subset, tmp, stride):
                    cold1 = c.request(dict(req))
                    warm = c.request(dict(req, warm=True))
                    cold2 = c.request(dict(req))
                    starts = [daemonrun.start(s) for s in warm.get("steps") or []]
                    if summary(cold1) != summary(cold2):
                        counts["nondeterministic"] += 1
                        notes.append("%s: nondeterministic: %s" % (name, first_diff(cold1, cold2)))
                    elif not starts or not all(s.startswith("warm (") for s in starts):
                        counts["refused"] += 1
                        notes.append("%s: ran cold: %s" % (name, starts or warm.get("error")))
                        if summary(warm) != summary(cold1):
                            counts["differs"] += 1
                            fails.append("%s (run cold) differs: %s" % (name, first_diff(cold1, warm)))
                    elif summary(warm) != summary(cold1):
                        counts["differs"] += 1
                        fails.append("%s differs: %s" % (name, first_diff(cold1, warm)))
                    else:
                        counts["equal"] += 1
                    if warm.get("status") == "internal_error":
                        fails.append("%s: the warm run failed: %s" % (name, warm.get("error")))
        c.close()
    finally:
        d.stop()
    for n in notes:
        print("NOTE", n)
    if counts["equal"] == 0:
        fails.append("no item compared equal: nothing was shown the same")
    for f in fails:
        print("FAIL", f)
    print("SURGE Python items (%s%s): %s" % (",".join(subsets), ", every %d-th" % stride if stride > 1 else "", ", ".join("%d %s" % (v, k) for k, v in counts.items())))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
