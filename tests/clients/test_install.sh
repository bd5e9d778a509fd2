#!/bin/sh
# `pip install --no-build-isolation --no-index` of a copy of clients/python
# into a fresh venv that sees the system's site-packages (Debian's setuptools
# and wheel, when installed): the route for a pip that cannot isolate builds,
# and the backend's indifference to a wheel package being there. The build
# backend is the package's own (standard library only). (pyclient.install_venv.*
# cover the default route, with build isolation and no wheel, per Python.)
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
if "$tmp/venv/bin/python" -c 'import wheel' 2>/dev/null; then
  echo "wheel is importable in this venv"
else
  echo "note: no wheel package visible (Debian: python3-wheel): this run has neither"
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
