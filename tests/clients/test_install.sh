#!/bin/sh
# `pip install --no-build-isolation --no-index` of a copy of clients/python
# into a fresh venv: the route for a pip that cannot isolate builds. The
# build backend is the package's own (standard library only), so the venv
# needs neither setuptools nor wheel. (pyclient.install_venvs covers the
# default route, with build isolation, on every Python present.)
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
"$py" -m venv "$tmp/venv"
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
