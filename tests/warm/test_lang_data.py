"""Languages as data (issue 40): what may start warm is what a language's
folder under the warm files' directory says (warm/<lang>/warm.json: its
interpreter, the start-up variables it may take and their values, its hash
seed's variable), and what may be traced, by which tracer, is what a
toolchain file's "trace" says; nothing of either is written in C. Through a
private daemon with a private warm directory and a private toolchain
directory:

  warm:  no warm.json -> cold ("not an interpreter ... warm-capable");
         a new folder mylang/warm.json naming python3 -> warm; a variable
         its list lacks (PYTHONUTF8, which python/warm.json takes) -> cold;
         a value its rule refuses -> cold with the file's own words.
  trace: a toolchain file without "trace" -> refused (has no tracer); the
         same file plus "trace": {"tracer": "python"} -> traced.

  test_lang_data.py BIN_DIR   (in the unshare wrapper)"""
import json
import os
import shutil
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import daemonrun  # noqa: E402

FILES = [{"path": "main.py", "content": "print(40 + 2)\n"}]
MYLANG = {
    "label": "Mylang",
    "interpreter": "^python3$",
    "zygote": "python/sbzygote.py",
    "seed_var": "PYTHONHASHSEED",
    "own_prefix": "PYTHON",
    "start_vars": {
        "PYTHONHASHSEED": {"ranges": [[0, 99]], "must": "mylang takes 0..99"},
        "PYTHONDONTWRITEBYTECODE": {"words": ["1"], "must": "1"},
    },
}


def tree(top, warm_json):
    """top/toolchains/{warm,tracers} as the source tree's, python/warm.json
    left out; warm_json: {folder: its warm.json} added."""
    t = os.path.join(top, "toolchains")
    for sub in ("warm", "tracers"):
        shutil.copytree(os.path.join(SRC, "toolchains", sub), os.path.join(t, sub),
                        ignore=shutil.ignore_patterns("__pycache__", "warm.json"))
    for folder, doc in warm_json.items():
        os.makedirs(os.path.join(t, "warm", folder), exist_ok=True)
        with open(os.path.join(t, "warm", folder, "warm.json"), "w") as f:
            json.dump(doc, f)
    return os.path.join(t, "warm")


def warm_case(bin_dir, top, warm_json, runs):
    """runs: [(extra env, its PYTHONHASHSEED, what start must begin with, text it must hold)]"""
    fails = []
    tcs = os.path.join(top, "no-toolchains")
    os.mkdir(tcs)
    env = dict(os.environ, SURGEBOX_WARM=tree(top, warm_json))
    d = daemonrun.PrivateDaemon(bin_dir, None, "--jobs", "1", "--toolchains", tcs, env=env)
    try:
        c = daemonrun.Client(d.sock)
        for extra, seed, begins, holds in runs:
            step = c.python(FILES, warm=True, seed=seed, extra_env=extra)
            start = daemonrun.start(step)
            ok = start.startswith(begins) and holds in start and daemonrun.outcome(step)[3] == b"42\n"
            print("%s %s %r: %s" % ("ok  " if ok else "FAIL", sorted(warm_json), extra, start))
            if not ok:
                fails.append("%s, %r: start %r (want %r ... %r), outcome %r" %
                             (sorted(warm_json), extra, start, begins, holds, daemonrun.outcome(step)))
        c.close()
    finally:
        d.stop()
    return fails


def request(sock, req):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall((json.dumps(req) + "\n").encode())
    line = s.makefile("rb").readline()
    s.close()
    return json.loads(line)


def trace_case(bin_dir, top, trace):
    """A toolchain mypy (python3.json as the source tree has it, renamed,
    its "trace" replaced by trace): (error message or None, the step)."""
    tcs = os.path.join(top, "toolchains-mypy")
    os.mkdir(tcs)
    with open(os.path.join(SRC, "toolchains", "defs", "python3.json")) as f:
        doc = json.load(f)
    doc.pop("trace", None)
    doc["name"] = "mypy"
    doc["binaries"] = [{"path": "/usr/bin/python3", "name": "mypy"}]
    if trace:
        doc["trace"] = trace
    with open(os.path.join(tcs, "mypy.json"), "w") as f:
        json.dump(doc, f)
    d = daemonrun.PrivateDaemon(bin_dir, None, "--jobs", "1", "--toolchains", tcs)
    try:
        r = request(d.sock, {"id": 1, "type": "exec", "toolchain": "mypy", "trace": True, "files": FILES})
    finally:
        d.stop()
    if r.get("type") == "error":
        return r["error"]["message"], None
    return None, r["steps"][-1]


def main():
    bin_dir = sys.argv[1]
    skip, top = daemonrun.root_top("sblangdata-")
    if skip:
        return skip
    fails = []
    try:
        os.mkdir(os.path.join(top, "0"))
        fails += warm_case(bin_dir, os.path.join(top, "0"), {}, [
            ({}, "0", "cold (warm refused: not an interpreter", "warm-capable")])
        d1 = os.path.join(top, "1")
        os.mkdir(d1)
        fails += warm_case(bin_dir, d1, {"mylang": MYLANG}, [
            ({}, "0", "warm", ""),
            ({"PYTHONUTF8": "1"}, "0", "cold (warm refused: PYTHONUTF8 in the environment", ""),
            ({}, "100", "cold (warm refused: PYTHONHASHSEED's value", "(mylang takes 0..99)")])
        d2 = os.path.join(top, "2")
        os.mkdir(d2)
        msg, _ = trace_case(bin_dir, d2, None)
        print("mypy without \"trace\": %s" % msg)
        if not msg or "mypy" not in msg or "has no tracer" not in msg:
            fails.append("a toolchain file without \"trace\" was not refused: %r" % msg)
        d3 = os.path.join(top, "3")
        os.mkdir(d3)
        msg, step = trace_case(bin_dir, d3, {"tracer": "python"})
        end = json.loads(step["trace"].splitlines()[-1]) if step and step.get("trace") else None
        print("mypy with \"trace\": error %r, the trace's end %r" % (msg, end))
        if msg or not end or step.get("stdout") != "42\n":
            fails.append("a toolchain file with \"trace\": {\"tracer\": \"python\"} was not traced: %r %r" % (msg, step))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
