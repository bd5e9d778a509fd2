"""The zygote and its children inside a surgebox sandbox (the cold path's
uid, read-only root, fresh /app and /tmp, seccomp filter, limits): this
directory's tests (the programs and fingerprint, the hostile job, and
CRUXEval's 800 programs when the data is present) uploaded with what they
need and run there by `surgebox exec` through a private daemon; each must
end with status 0 and say that nothing differs. What this does not show:
per-job isolation of a warm child (all of one test's jobs share the one
sandbox); toolchains/warm/README.md says what is not built yet. The
zygotes there load the build's libsbwarm.so (uploaded with the tests), as
the daemon's do.

  test_in_sandbox.py BIN_DIR CACHE_DIR [--cruxeval-stride K]

--cruxeval-stride K runs every K-th CRUXEval program (CI's slice; the long
twin runs all 800)."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402

DATA = os.environ.get("CRUXEVAL_DATA", os.path.join(ROOT, "..", "shared", "cruxeval", "cruxeval.jsonl"))


def tree(dest):
    for sub in ("tests/warm", "tests/trace", "toolchains/warm"):
        os.makedirs(os.path.join(dest, sub), exist_ok=True)
    for f in os.listdir(HERE):
        if f.endswith(".py"):
            shutil.copy(os.path.join(HERE, f), os.path.join(dest, "tests", "warm"))
    shutil.copy(os.path.join(ROOT, "tests", "trace", "tracerun.py"), os.path.join(dest, "tests", "trace"))
    shutil.copytree(os.path.join(ROOT, "tests", "trace", "programs"), os.path.join(dest, "tests", "trace", "programs"))
    shutil.copytree(os.path.join(HERE, "exit_programs"), os.path.join(dest, "tests", "warm", "exit_programs"))
    shutil.copytree(os.path.join(ROOT, "toolchains", "warm", "python"), os.path.join(dest, "toolchains", "warm", "python"))
    # the zygote compiles the tracer's _strip_hook from ../../tracers/python (issue 40: one copy)
    os.makedirs(os.path.join(dest, "toolchains", "tracers", "python"))
    shutil.copy(os.path.join(ROOT, "toolchains", "tracers", "python", "sbexcepthook.py"),
                os.path.join(dest, "toolchains", "tracers", "python"))
    shutil.copy(os.environ["SURGEBOX_WARM_LIB"], os.path.join(dest, "libsbwarm.so"))
    if os.path.exists(DATA):
        shutil.copy(DATA, os.path.join(dest, "cruxeval.jsonl"))


def main():
    bin_dir, cache_dir = sys.argv[1], sys.argv[2]
    stride = sys.argv[sys.argv.index("--cruxeval-stride") + 1] if "--cruxeval-stride" in sys.argv else "1"
    if not os.path.exists("/usr/bin/python3"):
        print("SKIPPED: no /usr/bin/python3")
        return 77
    tmp = tempfile.mkdtemp(prefix="warm-sbx-")
    d = PrivateDaemon(bin_dir, cache_dir, "--jobs", "1")
    fails = []
    try:
        app = os.path.join(tmp, "w")
        tree(app)
        # the trace programs, the fingerprint, the exit programs and the seeded one
        programs = len(os.listdir(os.path.join(app, "tests", "trace", "programs"))) + len(
            os.listdir(os.path.join(app, "tests", "warm", "exit_programs"))) + 2
        tests = [("test_programs.py", "%d programs, 0 differ" % programs), ("test_hostile.py", "hostile warm job: 0 failures")]
        if os.path.exists(DATA):
            tests.append(("test_cruxeval.py", "1 Pythons, 0 with differences"))
        else:
            print("NOTE: no CRUXEval data at %s: its 800 programs not run in the sandbox" % DATA)
        for test, want in tests:
            p = subprocess.run([os.path.join(bin_dir, "surgebox"), "exec", "--socket", d.sock, "--no-autostart",
                                "--time-limit", "400", "--exit-code", "program", "--env", "CRUXEVAL_DATA=/app/w/cruxeval.jsonl", "--env", "CRUXEVAL_STRIDE=" + stride, "--env", "SURGEBOX_WARM_LIB=/app/w/libsbwarm.so",
                                "w", "--", "/usr/bin/python3", "w/tests/warm/" + test],
                               cwd=tmp, capture_output=True, timeout=900)
            out = p.stdout.decode(errors="replace")
            ok = p.returncode == 0 and want in out
            print("%s %s in the sandbox: exit %d" % ("ok  " if ok else "FAIL", test, p.returncode))
            if not ok:
                fails.append(test)
                print(out[-3000:], p.stderr.decode(errors="replace")[-2000:])
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
