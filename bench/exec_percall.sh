#!/usr/bin/env bash
# bench/exec_percall.sh: per-call wall time of `surgebox exec` of a trivial
# program (/bin/true), N calls back to back from a shell, with a running
# daemon and without one (each call then starts and stops its private
# daemon). Prints the medians and ratios; asserts nothing. Without a daemon
# it is measured twice: detecting no toolchain (the floor: start, one job,
# stop) and detecting every installed one from a warm detection cache (what
# a user's call costs; one untimed call fills the cache first).
#
#   bench/exec_percall.sh [--build-dir DIR] [--calls N]
#
# Run as root. Re-executes itself inside a throw-away
#   unshare --mount --propagation private --pid --fork --mount-proc
# wrapper. Every daemon gets a private cache directory (the machine's shared
# caches stay untouched).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
CALLS=30
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD=$2; shift ;;
    --calls) CALLS=$2; shift ;;
    *) echo "usage: bench/exec_percall.sh [--build-dir DIR] [--calls N]" >&2; exit 1 ;;
  esac
  shift
done
if [ -z "${SB_PERCALL_WRAPPED:-}" ]; then
  SB_PERCALL_WRAPPED=1 exec unshare --mount --propagation private --pid --fork --mount-proc \
    env SB_PERCALL_WRAPPED=1 bash "$0" --build-dir "$BUILD" --calls "$CALLS"
fi
BIN=$PWD/$BUILD/bin
T=$(mktemp -d /tmp/sb-percall-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/cache" "$T/tc"
printf '#!/bin/sh\nexec %s "$@" --cache-dir %s --toolchains %s\n' "$BIN/surgeboxd" "$T/cache" "$T/tc" >"$T/surgeboxd"
printf '#!/bin/sh\nexec %s "$@" --cache-dir %s\n' "$BIN/surgeboxd" "$T/cache" >"$T/surgeboxd-all"
chmod 755 "$T/surgeboxd" "$T/surgeboxd-all"

# one call per line: seconds (python for a monotonic clock with sub-ms resolution)
percall() { # SOCKET DAEMON
  python3 - "$BIN/surgebox" "$1" "$CALLS" "$2" <<'EOF'
import os, statistics, subprocess, sys, time
cli, sock, n, daemon = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
env = dict(os.environ, SURGEBOXD=daemon)
times = []
for _ in range(n):
    t = time.monotonic()
    subprocess.run([cli, "--socket", sock, "exec", "--", "/bin/true"], env=env, check=True)
    times.append(time.monotonic() - t)
print(f"{statistics.median(times):.4f} {min(times):.4f} {max(times):.4f}")
EOF
}

"$T/surgeboxd" --socket "$T/s.sock" --quiet &
DPID=$!
for _ in $(seq 300); do "$BIN/surgebox" --socket "$T/s.sock" --no-autostart ping >/dev/null 2>&1 && break; sleep 0.1; done
read -r with wmin wmax < <(percall "$T/s.sock" "$T/surgeboxd")
kill "$DPID"; wait "$DPID" || true
read -r without omin omax < <(percall "$T/nobody.sock" "$T/surgeboxd")
SURGEBOXD="$T/surgeboxd-all" "$BIN/surgebox" --socket "$T/nobody.sock" exec -- /bin/true # fills the detection cache
read -r withoutall amin amax < <(percall "$T/nobody.sock" "$T/surgeboxd-all")
echo "surgebox exec /bin/true, $CALLS calls back to back (median, min-max):"
echo "  with a running daemon:                         ${with}s  (${wmin}-${wmax})"
echo "  without, private daemon, no toolchains:        ${without}s  (${omin}-${omax})"
echo "  without, private daemon, installed toolchains: ${withoutall}s  (${amin}-${amax})"
python3 -c "print(f'  ratios to a running daemon: {$without / $with:.1f}x and {$withoutall / $with:.1f}x')"
