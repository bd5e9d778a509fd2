"""What the tests of tests/trace share: the Pythons to test with, the
tracer run beside the plain run, the trace parsed and checked as records."""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SBTRACE = os.path.join(ROOT, "toolchains", "tracers", "python", "sbtrace.py")
SKIP = 77


def pythons():
    """[(label, path)]: Debian's python3, then each 3.8 ... 3.13 installed by
    pyenv on development machines; absent ones are printed, never counted."""
    found = [("debian-" + _version("/usr/bin/python3"), "/usr/bin/python3")] if os.path.exists("/usr/bin/python3") else []
    for minor in range(8, 14):
        paths = sorted(glob.glob("/root/.pyenv/versions/3.%d.*/bin/python3" % minor))
        if paths:
            found.append((_version(paths[-1]), paths[-1]))
        else:
            print("NOTE: no Python 3.%d installed: not tested here" % minor)
    return found


def _version(py):
    return subprocess.run([py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def run_plain(py, script, args=(), stdin=b"", cwd=None, env=None):
    return subprocess.run([py, script] + list(args), input=stdin, capture_output=True,
                          cwd=cwd, env=_env(env), timeout=120)


def run_traced(py, script, args=(), stdin=b"", cwd=None, env=None, limits=None, flags=()):
    """(CompletedProcess, trace text) of the program under sbtrace.py."""
    with tempfile.TemporaryFile() as tf:
        e = _env(env)
        e["SURGEBOX_TRACE_FD"] = str(tf.fileno())
        if limits:
            e["SURGEBOX_TRACE_LIMITS"] = json.dumps(limits)
        p = subprocess.run([py] + list(flags) + [SBTRACE, script] + list(args), input=stdin,
                           capture_output=True, cwd=cwd, env=e, pass_fds=(tf.fileno(),), timeout=300)
        tf.seek(0)
        return p, tf.read().decode("utf-8")


def _env(extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SURGEBOX_TRACE", "PYTHON"))}
    e["PYTHONHASHSEED"] = "0"
    if extra:
        e.update(extra)
    return e


def records(text):
    """The trace's records, checked: JSON objects, head first, end last, ev
    numbered 0, 1, 2 ... without gaps, file indexes announced before use."""
    assert text.endswith("\n"), "trace does not end with a newline"
    recs = [json.loads(line) for line in text.split("\n")[:-1]]
    assert recs and recs[0]["t"] == "head", recs[:1]
    assert recs[-1]["t"] == "end", recs[-1:]
    files = {0}
    i = 0
    for r in recs[1:-1]:
        if r["t"] == "file":
            files.add(r["f"])
            continue
        assert r["t"] == "ev", r
        assert r["i"] == i, (r, i)
        assert r["f"] in files, r
        i += 1
    assert recs[-1]["events"] == i, (recs[-1], i)
    return recs


def events(recs):
    return [r for r in recs if r["t"] == "ev"]
