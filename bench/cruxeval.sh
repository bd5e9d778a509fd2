#!/usr/bin/env bash
# CRUXEval output mode through `surgebox verify` against the same programs
# run unsandboxed (issue 12). Run inside the throw-away unshare wrapper:
#
#   unshare --mount --propagation private --pid --fork --mount-proc \
#     bash bench/cruxeval.sh --bin B --work W [--copies K] [--jobs N] [--data FILE] [--pool N]
#
# Generations: each sample's reference output K times (default 10: 8,000
# checks), the i-th copy followed by i spaces, so that the K programs are
# distinct texts (verify's dedupe would otherwise run one) and all pass.
# baseline  bench_baseline replays the very requests verify sends
#           (`--dump-requests`): fork/exec of /usr/bin/python3, no sandbox,
#           N at a time
# surgebox  `surgebox verify` through a daemon with --jobs N started
#           beforehand (its start-up is not counted; the client's is)
# --pool N is passed to surgeboxd (issue 16; 0: each job builds its root).
# --out FILE also writes the figures as JSON (bench/run, bench/report.py).
# Prints both wall times and the ratio; the programs are CRUXEval's own
# (non-hostile) functions with their reference outputs.
set -euo pipefail
BIN= WORK= COPIES=10 JOBS=2 POOL=() OUT= DATA=$(dirname "$0")/../../shared/cruxeval/cruxeval.jsonl
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift ;;
    --work) WORK=$2; shift ;;
    --copies) COPIES=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --data) DATA=$2; shift ;;
    --pool) POOL=(--pool "$2"); shift ;;
    --out) OUT=$2; shift ;;
    *) echo "cruxeval.sh: unknown argument $1" >&2; exit 1 ;;
  esac
  shift
done
[ -n "$BIN" ] && [ -n "$WORK" ] || { echo "cruxeval.sh: --bin and --work needed" >&2; exit 1; }
mkdir -p "$WORK/cache"
python3 - "$DATA" "$COPIES" "$WORK/gens.json" <<'PY'
import json, sys
data, k, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
samples = [json.loads(l) for l in open(data) if l.strip()]
json.dump({s["id"]: [s["output"] + " " * i for i in range(k)] for s in samples}, open(out, "w"))
PY
now() { date +%s.%N; }
"$BIN/surgebox" verify --benchmark cruxeval --mode output --generations "$WORK/gens.json" --data "$DATA" \
  --dump-requests "$WORK/requests.jsonl"
t0=$(now)
"$BIN/bench_baseline" --requests "$WORK/requests.jsonl" --jobs "$JOBS" --out "$WORK/baseline.json" --work "$WORK/bl"
t1=$(now)
"$BIN/surgeboxd" --socket "$WORK/d.sock" --jobs "$JOBS" --quiet --cache-dir "$WORK/cache" ${POOL[@]+"${POOL[@]}"} &
dpid=$!
for _ in $(seq 1 600); do [ -S "$WORK/d.sock" ] && break; sleep 0.5; done
rm -f "$WORK/scored.json" "$WORK/scored.json.progress"
t2=$(now)
"$BIN/surgebox" verify --benchmark cruxeval --mode output --generations "$WORK/gens.json" --data "$DATA" \
  --out "$WORK/scored.json" --socket "$WORK/d.sock" --no-autostart --jobs "$JOBS" 2>"$WORK/verify.log"
t3=$(now)
kill "$dpid"; wait "$dpid" || true
python3 - "$t0" "$t1" "$t2" "$t3" "$WORK" "$OUT" "${POOL[1]:-default}" "$JOBS" <<'PY'
import json, sys
t0, t1, t2, t3 = map(float, sys.argv[1:5])
w, out, pool, jobs = sys.argv[5], sys.argv[6], sys.argv[7], int(sys.argv[8])
b = json.load(open(w + "/baseline.json"))
s = json.load(open(w + "/scored.json"))
n = sum(len(v) for v in s["raw_scored_generations"].values())
passed = sum(sum(v) for v in s["raw_scored_generations"].values())
print(f"baseline (no sandbox): {b['n']} programs, {t1 - t0:.1f} s wall, exit 0 {b['ok']}, failed {b['failed']}, timeout {b['timeout']}")
print(f"surgebox verify:       {n} programs, {t3 - t2:.1f} s wall, passed {passed}, pass@1 {s['pass_at_1']:.1f}")
print(f"ratio: {(t3 - t2) / (t1 - t0):.2f}x")
if out:
    json.dump({"benchmark": "cruxeval", "pool": pool, "jobs": jobs, "programs": n, "passed": passed,
               "baseline_s": t1 - t0, "baseline_failed": b["failed"], "surgebox_s": t3 - t2,
               "ratio": (t3 - t2) / (t1 - t0)}, open(out, "w"), indent=1)
PY
