#!/bin/sh
# Throw-away wrapper for every security and integration test.
#
# The sandbox under test runs hostile programs as root's child. If the sandbox
# is broken, a stray mount or kill(-1, SIGKILL) must hit this wrapper's private
# mount and pid namespaces, not the machine. So every test driver runs as
#
#   unshare --mount --propagation private --pid --fork --mount-proc DRIVER...
#
# and the driver itself refuses to run unless it is pid 1 (see sbharness.py).
# Missing prerequisites are reported as a ctest skip (exit 77), never a pass.
if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: not root (the sandbox and the unshare wrapper need root)"
  exit 77
fi
UNSHARE=$(command -v unshare 2>/dev/null)
if [ -z "$UNSHARE" ]; then
  echo "SKIPPED: unshare (util-linux) not found: tests never run without the wrapper"
  exit 77
fi
exec "$UNSHARE" --mount --propagation private --pid --fork --mount-proc "$@"
