#!/usr/bin/env bash
# The regen and dr-matrix benchmarks (issue 8), run by bench/run inside the
# throw-away unshare wrapper:
#
#   bench/regen.sh regen     --bin B --data D --jobs N --work W --out F.json [--subsets dr,bg,tc] [--only I,J]
#   bench/regen.sh dr-matrix --bin B --data D --jobs N --work W --out F.json [--only I,J] [--baseline-every K]
#
# For each subset (regen) or for the matrix: the exec requests are dumped once
# (`--dump-requests`), then, interleaved so that drift in the machine's load
# hits both sides:
#   baseline  bench_baseline replays those requests with fork/exec, no sandbox,
#             N at a time (the same parallelism as the daemon's --jobs N);
#             --baseline-every K: only every K-th request (the matrix), and
#             report.py scales its wall time by K
#   cold      the real command (`surgebox regen` / `surgebox dr-matrix`) through
#             a fresh daemon with an empty compile cache
#   warm      the same command again on that daemon (its cache now full;
#             not for TC, which compiles nothing)
# DR and BG: three baseline/cold pairs (medians in the report), TC one.
# Wall times are taken here (monotonic, around each command); everything is
# written to F.json for bench/report.py.
set -euo pipefail

KIND=$1; shift
BIN= DATA= JOBS=2 WORK= OUT= SUBSETS=dr,bg,tc ONLY= EVERY=1
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift ;;
    --data) DATA=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --work) WORK=$2; shift ;;
    --out) OUT=$2; shift ;;
    --subsets) SUBSETS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --baseline-every) EVERY=$2; shift ;;
    *) echo "regen.sh: unknown argument $1" >&2; exit 1 ;;
  esac
  shift
done
[ -n "$BIN" ] && [ -n "$DATA" ] && [ -n "$WORK" ] && [ -n "$OUT" ] || { echo "regen.sh: --bin --data --work --out needed" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
SOCK=$WORK/daemon.sock
DAEMON_PID=
ONLY_ARGS=()
[ -n "$ONLY" ] && ONLY_ARGS=(--only "$ONLY")

now() { date +%s.%N; }

start_daemon() { # a fresh daemon with an empty compile cache
  stop_daemon
  # an empty compile cache; the toolchain detection cache (toolchains.json)
  # stays, so that start-up is not part of the figures
  rm -rf "$WORK/cache/compile"
  "$BIN/surgeboxd" --socket "$SOCK" --jobs "$JOBS" --cache-dir "$WORK/cache" --quiet &
  DAEMON_PID=$!
  for _ in $(seq 1200); do "$BIN/surgebox" --socket "$SOCK" --no-autostart ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "regen.sh: the daemon did not come up" >&2
  exit 2
}
stop_daemon() {
  if [ -n "$DAEMON_PID" ]; then kill "$DAEMON_PID" 2>/dev/null || true; wait "$DAEMON_PID" 2>/dev/null || true; fi
  DAEMON_PID=
}
trap stop_daemon EXIT

RECORDS=$WORK/records.jsonl
: >"$RECORDS"
record() { # name pass wall_s n extra-json
  printf '{"name":"%s","pass":"%s","wall_s":%s,"n":%s,"extra":%s}\n' "$1" "$2" "$3" "$4" "${5:-null}" >>"$RECORDS"
}

# one pass of the real command; $1 name, $2 pass, rest: the command's arguments
sandboxed_pass() {
  local name=$1 pass=$2; shift 2
  local t0 t1
  echo "== $name $pass: surgebox $* (daemon: --jobs $JOBS, fresh cache at cold)" >&2
  t0=$(now)
  local cmd=$1; shift
  "$BIN/surgebox" "$cmd" --socket "$SOCK" --no-autostart "$@" >"$WORK/$name-$pass.stdout" 2>"$WORK/$name-$pass.stderr" || true
  t1=$(now)
  record "$name" "$pass" "$(awk "BEGIN{print $t1 - $t0}")" "$(wc -l <"$WORK/$name.jsonl")" \
    "{\"status\":$("$BIN/surgebox" --socket "$SOCK" --no-autostart status 2>/dev/null | tr -d '\n' || echo null)}"
}

baseline_pass() {
  local name=$1
  echo "== $name baseline: bench_baseline --requests $name.jsonl --jobs $JOBS --every $EVERY" >&2
  local t0 t1
  t0=$(now)
  # its jobs' directories go to /tmp, a private tmpfs in the driver (as /app and /tmp are in the sandbox)
  "$BIN/bench_baseline" --requests "$WORK/$name.jsonl" --jobs "$JOBS" --every "$EVERY" --out "$WORK/$name-baseline.json"
  t1=$(now)
  record "$name" baseline "$(awk "BEGIN{print $t1 - $t0}")" "$(wc -l <"$WORK/$name.jsonl")" "$(cat "$WORK/$name-baseline.json")"
}

case $KIND in
  regen)
    i=0
    for s in ${SUBSETS//,/ }; do
      start_daemon
      "$BIN/surgebox" regen --socket "$SOCK" --no-autostart --data "$DATA" --subset "$s" --jobs "$JOBS" "${ONLY_ARGS[@]}" \
        --dump-requests "$WORK/$s.jsonl" 2>/dev/null
      args=(regen --data "$DATA" --subset "$s" --jobs "$JOBS" "${ONLY_ARGS[@]}")
      # DR and BG take well under a minute per pass, where one pass drifts by
      # ±15 % on this kind of machine: three baseline/cold pairs, each cold on
      # an empty cache, and report.py takes medians. TC's 15-minute passes
      # average the drift out by themselves.
      rounds=3
      [ "$s" = tc ] && rounds=1
      for r in $(seq $rounds); do
        [ $r -gt 1 ] && start_daemon # an empty compile cache again
        # alternate which side goes first, so a drift in load does not favour one
        if [ $(((i + r) % 2)) = 1 ]; then baseline_pass "$s"; fi
        sandboxed_pass "$s" cold "${args[@]}" --out "$WORK/$s-cold$r"
        if [ $(((i + r) % 2)) = 0 ]; then baseline_pass "$s"; fi
      done
      # TC has no compile step: its warm pass would be its cold pass again
      [ "$s" != tc ] && sandboxed_pass "$s" warm "${args[@]}" --out "$WORK/$s-warm"
      i=$((i + 1))
    done ;;
  dr-matrix)
    start_daemon
    args=(dr-matrix --data "$DATA" --jobs "$JOBS" "${ONLY_ARGS[@]}")
    "$BIN/surgebox" dr-matrix --socket "$SOCK" --no-autostart "${args[@]:1}" --dump-requests "$WORK/matrix.jsonl" 2>/dev/null
    baseline_pass matrix
    sandboxed_pass matrix cold "${args[@]}" --out "$WORK/matrix-cold.jsonl"
    sandboxed_pass matrix warm "${args[@]}" --out "$WORK/matrix-warm.jsonl" ;;
  *) echo "regen.sh: regen or dr-matrix" >&2; exit 1 ;;
esac
stop_daemon

# machine-readable summary for report.py
/usr/bin/python3 - "$RECORDS" "$OUT" "$KIND" "$JOBS" "$SUBSETS" "$ONLY" <<'EOF'
import json, sys
records, out, kind, jobs, subsets, only = sys.argv[1:7]
rows = [json.loads(l) for l in open(records) if l.strip()]
for r in rows:
    if r["pass"] == "baseline" and r["extra"]:
        r["extra"].pop("per_job", None)
json.dump({"kind": kind, "jobs": int(jobs), "subsets": subsets, "only": only or None, "rows": rows}, open(out, "w"), indent=1)
EOF
echo "== wrote $OUT" >&2
