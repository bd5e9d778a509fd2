#!/bin/bash
# Submit a sharded SURGE regeneration and its merge to Slurm:
#
#   deploy/slurm/submit.sh --shards 8 --data /path/to/surge --out /shared/run1 [-- REGEN ARGS...]
#       [--bin DIR] [--sbatch-args "--partition=cpu --time=2:00:00"] [--predictions FILE]
#
# Prints the array job's id and the merge job's id. Everything after -- goes
# to surgebox regen (default: --subset all). The run is in OUT/merged when
# the merge job ends (OUT/merged/exit-code: 0). With --predictions the shards
# verify FILE (verify --benchmark surge) and OUT/merged/scores.json is the report.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
shards=8 data='' out='' bin='' extra=()
sbatch_args=
while [ $# -gt 0 ]; do
  case $1 in
    --shards) shards=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --sbatch-args) sbatch_args=$2; shift 2 ;;
    --predictions) SURGEBOX_PREDICTIONS=$(readlink -f "$2"); export SURGEBOX_PREDICTIONS; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 --shards N --data DIR --out DIR [--bin DIR] [--sbatch-args ARGS] [--predictions FILE] [-- REGEN ARGS]" >&2; exit 2 ;;
  esac
done
if [ -z "$data" ] || [ -z "$out" ]; then echo "$0: --data and --out are required" >&2; exit 2; fi
[ "$shards" -ge 1 ] 2>/dev/null || { echo "$0: --shards N: N >= 1" >&2; exit 2; }
mkdir -p "$out"
SURGEBOX_DATA=$(readlink -f "$data")
SURGEBOX_OUT=$(readlink -f "$out")
export SURGEBOX_DATA SURGEBOX_OUT SURGEBOX_MERGE=none
if [ -n "$bin" ]; then
  SURGEBOX_BIN=$(readlink -f "$bin")
  export SURGEBOX_BIN
fi
[ ${#extra[@]} -gt 0 ] && export SURGEBOX_REGEN_ARGS="${extra[*]}"
# shellcheck disable=SC2086 # sbatch_args is a list of words
array=$(sbatch --parsable $sbatch_args --array="0-$((shards - 1))" \
  --output="$SURGEBOX_OUT/regen-%A_%a.out" "$here/regen.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable $sbatch_args --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$SURGEBOX_OUT/merge-%j.out" "$here/merge.sbatch")
echo "array job $array ($shards shards), merge job ${merge%%;*}: results in $SURGEBOX_OUT/merged"
