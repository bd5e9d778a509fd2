#!/usr/bin/env bash
# bench/exec_percall.sh: per-call wall time of `surgebox exec` of a trivial
# program (/bin/true), N calls back to back from a shell, with a running
# daemon, with the CLI's lingering private daemon (its default: the first
# call starts it, the others reuse it) and with a private daemon per call
# (SURGEBOX_IDLE_TIMEOUT=0: each call starts and stops its own). Prints the
# medians, the totals and their ratios; asserts nothing. Private daemons are
# measured twice: detecting no toolchain (the floor) and detecting every
# installed one from a warm detection cache (what a user's call costs; one
# untimed call fills the cache first).
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
CALLS=10
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
mkdir -m 700 "$T/sd" # the default socket's directory (SURGEBOX_SOCKET_DIR): only it may start a private daemon
printf '#!/bin/sh\nexec %s "$@" --cache-dir %s --toolchains %s\n' "$BIN/surgeboxd" "$T/cache" "$T/tc" >"$T/surgeboxd"
printf '#!/bin/sh\nexec %s "$@" --cache-dir %s\n' "$BIN/surgeboxd" "$T/cache" >"$T/surgeboxd-all"
chmod 755 "$T/surgeboxd" "$T/surgeboxd-all"

# N calls back to back: "median min max total" in seconds (python for a
# monotonic clock with sub-ms resolution). IDLE: SURGEBOX_IDLE_TIMEOUT of the calls;
# SOCKET "default": the default socket (in $T/sd), where nothing listens.
percall() { # SOCKET DAEMON IDLE
  python3 - "$BIN/surgebox" "$1" "$CALLS" "$2" "$3" <<'EOF'
import os, statistics, subprocess, sys, time
cli, sock, n, daemon, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
env = dict(os.environ, SURGEBOXD=daemon, SURGEBOX_IDLE_TIMEOUT=idle)
env.pop("SURGEBOX_SOCKET", None)
where = [] if sock == "default" else ["--socket", sock]
times = []
for _ in range(n):
    t = time.monotonic()
    subprocess.run([cli] + where + ["exec", "--", "/bin/true"], env=env, check=True)
    times.append(time.monotonic() - t)
print(f"{statistics.median(times):.4f} {min(times):.4f} {max(times):.4f} {sum(times):.4f}")
EOF
}
# stop the lingering private daemon of the default socket (its pid from its status)
stop_lingering() { # DAEMON
  local pid
  pid=$(SURGEBOXD="$1" "$BIN/surgebox" status --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null || true)
  if [ -n "$pid" ]; then kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done; fi
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$T/surgeboxd" --socket "$T/s.sock" --quiet &
DPID=$!
for _ in $(seq 300); do "$BIN/surgebox" --socket "$T/s.sock" --no-autostart ping >/dev/null 2>&1 && break; sleep 0.1; done
read -r with wmin wmax wtot < <(percall "$T/s.sock" "$T/surgeboxd" 0)
kill "$DPID"; wait "$DPID" || true
# the CLI's default: a private daemon that lingers (the first call starts it)
export SURGEBOX_SOCKET_DIR=$T/sd
unset SURGEBOX_SOCKET
read -r linger lmin lmax ltot < <(percall default "$T/surgeboxd" 300)
stop_lingering "$T/surgeboxd"
SURGEBOXD="$T/surgeboxd-all" SURGEBOX_IDLE_TIMEOUT=0 "$BIN/surgebox" exec -- /bin/true # fills the detection cache
read -r lingerall lamin lamax latot < <(percall default "$T/surgeboxd-all" 300)
stop_lingering "$T/surgeboxd-all"
# SURGEBOX_IDLE_TIMEOUT=0: every call starts and stops its own daemon (before issue 13)
read -r without omin omax otot < <(percall default "$T/surgeboxd" 0)
read -r withoutall amin amax atot < <(percall default "$T/surgeboxd-all" 0)
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "surgebox exec /bin/true, $CALLS calls back to back (median, min-max, total):"
echo "  with a running daemon:                                  ${with}s  (${wmin}-${wmax})  ${wtot}s"
echo "  lingering private daemon, no toolchains:                ${linger}s  (${lmin}-${lmax})  ${ltot}s"
echo "  lingering private daemon, installed toolchains:         ${lingerall}s  (${lamin}-${lamax})  ${latot}s"
echo "  private daemon per call (idle 0), no toolchains:        ${without}s  (${omin}-${omax})  ${otot}s"
echo "  private daemon per call (idle 0), installed toolchains: ${withoutall}s  (${amin}-${amax})  ${atot}s"
python3 -c "print(f'  totals against a running daemon: lingering {$ltot / $wtot:.1f}x and {$latot / $wtot:.1f}x; a daemon per call {$otot / $wtot:.1f}x and {$atot / $wtot:.1f}x')"
