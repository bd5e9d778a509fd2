#!/bin/sh
# The client's pure tests under Python 3.8 (its oldest supported version),
# when a 3.8 interpreter is installed (pyenv on development machines).
# Usage: run_py38.sh TEST.py
for py in /root/.pyenv/versions/3.8.*/bin/python; do
  if [ -x "$py" ]; then
    exec "$py" "$@"
  fi
done
echo "SKIPPED: no Python 3.8 at /root/.pyenv/versions/3.8.*/bin/python"
exit 77
