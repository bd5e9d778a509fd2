#!/bin/sh
# `pip install` of clients/python into a fresh venv, offline (no index, no
# build isolation: the build backend is the system's setuptools and wheel,
# seen through --system-site-packages). A copy of
# the package is installed so the source tree gets no build/ or egg-info.
# Usage: test_install.sh SRC_DIR [PYTHON]
set -eu
src=$1
py=${2:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "SKIPPED: $py has no venv/ensurepip (Debian: python3-venv)"
  exit 77
fi
"$py" -m venv --system-site-packages "$tmp/venv"
if ! "$tmp/venv/bin/python" -c 'import setuptools, wheel' 2>/dev/null; then
  echo "SKIPPED: $py lacks setuptools or wheel to build offline (Debian: python3-setuptools, python3-wheel)"
  exit 77
fi
cp -r "$src/clients/python" "$tmp/pkg"
"$tmp/venv/bin/pip" install --no-build-isolation --no-index --disable-pip-version-check -q "$tmp/pkg"
rm -rf "$tmp/pkg"
cd "$tmp"
"$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import sys
import surgebox
assert surgebox.__file__.startswith(sys.argv[1]), surgebox.__file__
for name in ("Client", "AsyncClient", "progress", "Result", "exact_bytes"):
    assert hasattr(surgebox, name), name
print("installed", surgebox.__version__, "at", surgebox.__file__)
PY
