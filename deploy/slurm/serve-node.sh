#!/bin/bash
# One node's daemon of deploy/slurm/serve.sbatch (a task of its srun step):
# surgeboxd with --http ADDR:PORT and the fleet's token, its own socket and
# cache in a private directory; once it answers, its endpoint line goes to
# FLEET_DIR/nodes/NODE.endpoint. Ends when the daemon does; SIGTERM (the
# allocation ending) drains the daemon.
set -euo pipefail
dir=${SURGEBOX_FLEET_DIR:?}
bin=${SURGEBOX_BIN:+$SURGEBOX_BIN/}
node=${SLURMD_NODENAME:-$(hostname)}
port=${SURGEBOX_HTTP_PORT:-8080}
# the first configured address, not `hostname -i` (127.0.1.1 on Debian from /etc/hosts)
addr=${SURGEBOX_HTTP_ADDR:-$(hostname --all-ip-addresses | awk '{print $1}')}
jobs=${SURGEBOX_JOBS:-${SLURM_CPUS_ON_NODE:-2}}
[ -n "$addr" ] || { echo "$node: no configured address: set SURGEBOX_HTTP_ADDR" >&2; exit 2; }
case $addr in *:*) host="[$addr]" ;; *) host=$addr ;; esac

private=$(mktemp -d "${TMPDIR:-/tmp}/surgebox-serve-XXXXXX")
daemon=
cleanup() {
  rm -f "$dir/nodes/$node.endpoint"
  if [ -n "$daemon" ]; then kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
  rm -rf "$private"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

mkdir -p "$private/cache"
if [ -n "${SURGEBOX_CACHE_SEED:-}" ] && [ -f "$SURGEBOX_CACHE_SEED/toolchains.json" ]; then
  cp "$SURGEBOX_CACHE_SEED/toolchains.json" "$private/cache/"
fi
# shellcheck disable=SC2086 # SURGEBOX_DAEMON_ARGS is a list of words
"${bin}surgeboxd" --socket "$private/d.sock" --cache-dir "$private/cache" --jobs "$jobs" \
  --http "$host:$port" --http-token-file "$dir/token" ${SURGEBOX_DAEMON_ARGS:-} 2>"$dir/nodes/$node.log" &
daemon=$!
for _ in $(seq 2400); do
  "${bin}surgebox" --socket "$private/d.sock" --no-autostart ping >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { echo "$node: surgeboxd did not start: $(tail -5 "$dir/nodes/$node.log")" >&2; exit 2; }
  sleep 0.25
done
umask 077
echo "http://$host:$port token-file=$dir/token" >"$dir/nodes/$node.endpoint.new"
mv "$dir/nodes/$node.endpoint.new" "$dir/nodes/$node.endpoint"
echo "$node: surgeboxd (pid $daemon) on http://$host:$port"
wait "$daemon"
