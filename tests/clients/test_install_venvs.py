#!/usr/bin/env python3
"""The client as a user installs it: a fresh venv of one Python (no `wheel`
in it), `pip install --no-index clients/python` (build isolation on, no
network, no pip configuration), then the client README's examples run by
that venv's Python against a private daemon, and the source tree left as
it was (no build/, *.egg-info or __pycache__ from the install).

Usage: test_install_venvs.py WHICH, WHICH = system (/usr/bin/python3) or a
version such as 3.8 (the newest /root/.pyenv/versions/3.8.*). An absent
interpreter, or one without venv/ensurepip, is SKIPPED (exit 77), never passed.
ctest runs it inside the unshare wrapper (the daemon's sandboxes)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from pyclient_env import SRC, Daemon
import trace_fixtures

PKG = os.path.join(SRC, "clients", "python")
HERE = os.path.dirname(os.path.abspath(__file__))


def skip(why):
    print("SKIPPED: " + why)
    sys.exit(77)


def interpreter(which):
    if which == "system":
        return "/usr/bin/python3"
    found = sorted(glob.glob("/root/.pyenv/versions/%s.*/bin/python" % which),
                   key=lambda p: [int(x) for x in p.split("/")[-3].split(".")])
    return found[-1] if found else None


def snapshot(root):
    """Every path under root. Other tests may import the client from the tree
    at the same time (their surgebox/__pycache__ is not the install's: pip
    compiles into the venv, and the build backend never imports surgebox)."""
    out = set()
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel == os.path.join("surgebox", "__pycache__"):
            continue
        out.update(os.path.join(rel, x) for x in dirs + files)
    return out


def run(argv, env, cwd):
    p = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=600)
    print("$ " + " ".join(argv) + "\n" + p.stdout.rstrip())
    return p


def main():
    which = sys.argv[1]
    py = interpreter(which)
    if py is None or not os.access(py, os.X_OK):
        skip("no Python %s on this machine (%s)" % (which, py or "/root/.pyenv/versions/%s.*" % which))
    if subprocess.run([py, "-c", "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 8))"]).returncode:
        skip("%s has no venv/ensurepip (Debian: apt-get install python3-venv) or is older than 3.8" % py)
    # the user's environment without pip's configuration or an index; bytecode writing on, as by default
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    before = snapshot(PKG)
    tmp = tempfile.mkdtemp(prefix="sbpy-venv-")
    failed = []
    try:
        venv = os.path.join(tmp, "venv")
        vpy = os.path.join(venv, "bin", "python")
        if run([py, "-m", "venv", venv], env, tmp).returncode:
            return fail("venv creation failed")
        if subprocess.run([vpy, "-c", "import wheel"], stderr=subprocess.DEVNULL).returncode == 0:
            run([vpy, "-m", "pip", "uninstall", "-y", "-q", "wheel"], env, tmp)
        if subprocess.run([vpy, "-c", "import wheel"], stderr=subprocess.DEVNULL).returncode == 0:
            return fail("wheel is still importable in the venv")
        p = run([vpy, "-m", "pip", "install", "--no-index", PKG], env, tmp)
        if p.returncode:
            return fail("pip install --no-index failed")
        p = run([vpy, "-c", "import surgebox; print(surgebox.__version__, surgebox.__file__)"], env, tmp)
        version = open(os.path.join(PKG, "pyproject.toml")).read().split('version = "')[1].split('"')[0]
        if p.returncode or not p.stdout.startswith(version + " " + venv):
            failed.append("the venv's surgebox is not version %s from %s" % (version, venv))
        typed = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "surgebox", "py.typed"))
        if not typed:
            failed.append("py.typed is not installed")
        with open(os.path.join(tmp, "f.trace.jsonl"), "w") as f:
            f.write(trace_fixtures.TRACE_A)
        d = Daemon("--jobs", "2")
        try:
            renv = dict(env, SURGEBOX_SOCKET=d.sock)
            p = run([vpy, os.path.join(HERE, "readme_examples.py"), os.path.join(PKG, "README.md"), venv], renv, tmp)
            if p.returncode:
                failed.append("the client README's examples failed")
        finally:
            d.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    left = sorted(snapshot(PKG) - before)
    if left:
        failed.append("the install left in clients/python: %s" % ", ".join(left))
    for f in failed:
        print("FAIL: " + f)
    if not failed:
        print("PASS: %s: installed offline without wheel, README examples ran, tree clean" % py)
    return 1 if failed else 0


def fail(why):
    print("FAIL: " + why)
    return 1


if __name__ == "__main__":
    sys.exit(main())
