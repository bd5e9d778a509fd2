"""ctest fixture toolchain_seed: one private surgeboxd detects the installed
toolchains into SEED_DIR/toolchains.json, once per test run. Every other test
gets SURGEBOX_TOOLCHAINS_SEED pointing there (tests/CMakeLists.txt), so the
private daemons the tests start read detection from it instead of each
running every version command and option probe again (14 s here per start).
A test that must detect from nothing unsets the variable.
Usage: seed_toolchains.py BIN_DIR SEED_DIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cli"))
from private_daemon import PrivateDaemon  # noqa: E402


def main():
    bin_dir, seed_dir = sys.argv[1], sys.argv[2]
    os.makedirs(seed_dir, exist_ok=True)
    env = dict(os.environ)
    env.pop("SURGEBOX_TOOLCHAINS_SEED", None)
    d = PrivateDaemon(bin_dir, seed_dir, env=env)
    d.stop()
    path = os.path.join(seed_dir, "toolchains.json")
    if not os.path.isfile(path):
        print("FAIL: the daemon wrote no %s; its log:\n%s" % (path, d.logtext()))
        return 1
    print(d.logtext().strip().splitlines()[0] if d.logtext().strip() else "no log")
    print("seed: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
