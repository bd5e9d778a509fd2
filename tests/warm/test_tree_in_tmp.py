"""A warm zygote whose files lie under /tmp (a build tree there, as a CI
clone is): the zygote starts with an empty /tmp of its own and keeps only
surgebox's own files bound read-only; it compiles the tracer's _strip_hook
from toolchains/tracers/python beside its warm/python, so both must be
there. Before the fix only warm/python was kept: every warm job ran cold
("the slot's zygote ended before it started the program").

  test_tree_in_tmp.py BIN_DIR   (in the unshare wrapper)"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import daemonrun  # noqa: E402


def main():
    bin_dir = sys.argv[1]
    skip, top = daemonrun.root_top("sbwarm-tree-")
    if skip:
        return skip
    tree = os.path.join(top, "toolchains")
    for sub in ("warm", "tracers"):
        shutil.copytree(os.path.join(SRC, "toolchains", sub), os.path.join(tree, sub),
                        ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, SURGEBOX_WARM=os.path.join(tree, "warm"))
    d = daemonrun.PrivateDaemon(bin_dir, None, "--jobs", "1", env=env)
    fails = []
    try:
        c = daemonrun.Client(d.sock)
        files = [{"path": "main.py", "content": "import sys\nprint(40 + 2)\nraise SystemExit(3)\n"}]
        warm = c.python(files, warm=True)
        cold = c.python(files)
        c.close()
        print("warm: %s %s; cold: %s" % (daemonrun.start(warm), daemonrun.outcome(warm)[:4], daemonrun.outcome(cold)[:4]))
        if not daemonrun.start(warm).startswith("warm"):
            fails.append("the warm job ran %r with the zygote's files under %s" % (daemonrun.start(warm), tree))
        if daemonrun.outcome(warm) != daemonrun.outcome(cold):
            fails.append("warm %r differs from cold %r" % (daemonrun.outcome(warm), daemonrun.outcome(cold)))
    finally:
        d.stop()
        shutil.rmtree(top, ignore_errors=True)
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
