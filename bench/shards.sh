#!/usr/bin/env bash
# The balance of --shard I/N over SURGE (issue 15): for N = 2, 4, 8 the
# largest shard's cost against the total (ideal 1/N).
#
#   bench/shards.sh --bin B --data D [--work W] [--measure] [--shards "2 4 8"] [--subsets all] [--jobs 2]
#
# expected  from `surgebox regen --plan` (the costs the partition balances:
#           subset typical costs plus SURGE's recorded times); no daemon
# measured  (--measure) every shard of each N run one after another
#           through one private daemon (private socket and cache in W, the
#           compile cache emptied before each shard, so no shard profits
#           from another's compiles); the largest shard's wall time over the
#           sum of all of them. Every N is its own full regeneration (~30 min of 2 busy cores each): only
#           on a quiet machine; `--shards 8` alone is one regeneration.
#           Then, from the items' recorded run-step CPU in those outputs
#           (bench/shard_costs.py), the largest shard's share for 2, 4 and 8
#           whatever N ran: one run measures every N's partition.
#           Run it inside the unshare wrapper:
#             unshare --mount --propagation private --pid --fork --mount-proc bash bench/shards.sh ... --measure
# Prints a table; nothing is asserted.
set -euo pipefail
BIN='' DATA='' WORK=${TMPDIR:-/tmp}/surgebox-bench-shards MEASURE=0 NS="2 4 8" SUBSETS=all JOBS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift ;;
    --data) DATA=$2; shift ;;
    --work) WORK=$2; shift ;;
    --measure) MEASURE=1 ;;
    --shards) NS=$2; shift ;;
    --subsets) SUBSETS=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    *) echo "shards.sh: unknown argument $1" >&2; exit 1 ;;
  esac
  shift
done
if [ -z "$BIN" ] || [ -z "$DATA" ]; then echo "shards.sh: --bin and --data are needed" >&2; exit 1; fi

echo "expected (regen --plan, subsets $SUBSETS):"
printf '%4s  %-22s  %s\n' N "largest / total" "ideal 1/N"
for n in $NS; do
  line=$("$BIN/surgebox" regen --data "$DATA" --subset "$SUBSETS" --shard "0/$n" --plan | tail -1)
  share=$(sed -n 's/^largest shard: \([0-9.]*\) .*/\1/p' <<<"$line")
  printf '%4s  %-22s  %.4f\n' "$n" "$share" "$(awk -v n="$n" 'BEGIN { print 1 / n }')"
done
[ "$MEASURE" = 1 ] || exit 0

rm -rf "$WORK"
mkdir -p "$WORK"
"$BIN/surgeboxd" --socket "$WORK/d.sock" --cache-dir "$WORK/cache" --jobs "$JOBS" 2>"$WORK/daemon.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1200); do [ -S "$WORK/d.sock" ] && break; sleep 0.25; done
echo "measured (each shard alone through one daemon with --jobs $JOBS; load at start $(cut -d' ' -f1 /proc/loadavg)):"
printf '%4s  %-22s  %-12s  %s\n' N "largest / total" "total (s)" "per shard (s)"
for n in $NS; do
  walls=()
  for ((i = 0; i < n; i++)); do
    rm -rf "$WORK/cache/compile"
    t0=$(date +%s%N)
    "$BIN/surgebox" regen --data "$DATA" --subset "$SUBSETS" --shard "$i/$n" --out "$WORK/n$n/$i" \
      --socket "$WORK/d.sock" --no-autostart --jobs "$JOBS" >"$WORK/n$n-$i.log" 2>&1
    walls+=("$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')")
  done
  printf '%s\n' "${walls[@]}" | awk -v n="$n" '{ s += $1; if ($1 > m) m = $1; w = w sprintf(" %.0f", $1) }
    END { printf "%4s  %-22.4f  %-12.0f %s\n", n, m / s, s, w }'
done
echo "measured item costs (bench/shard_costs.py over the N=$n run's outputs):"
"${PYTHON:-python3}" "$(dirname "$0")/shard_costs.py" "$BIN" "$DATA" "$WORK/n$n"/*
