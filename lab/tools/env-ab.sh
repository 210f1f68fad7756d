#!/usr/bin/env bash
# A/B of an environment setting (the driver's, CUDA's, NCCL's): runs the
# filtered suite back to back, alternating A (the defaults) with B (the
# given VAR=VALUE settings), every row naming each buffer set's median and
# the NVML slowdown reasons seen after its samples (kbench run --detail),
# while nvidia-smi logs power and clocks every 100 ms.
#
#   lab/tools/env-ab.sh OUT_DIR SECONDS 'VAR=VALUE [VAR=VALUE ...]' [kbench run options...]
#   e.g. lab/tools/env-ab.sh out 480 CUDA_DEVICE_MAX_CONNECTIONS=1 --filter '^gemv$'
#
# No new round starts after SECONDS. Writes OUT_DIR/a.csv, b.csv, smi.csv
# and each side's `kgate noise` (noise-a.csv, noise-b.csv).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ $# -ge 3 ] || { echo "usage: $0 OUT_DIR SECONDS 'VAR=VALUE ...' [kbench run options...]" >&2; exit 2; }
out="$1" budget="$2" b_env="$3"; shift 3
for kv in $b_env; do
  case "$kv" in
    [A-Za-z_]*=*) ;;
    *) echo "env-ab: '$kv' is not VAR=VALUE" >&2; exit 2 ;;
  esac
done
build="${KBENCH_PREBUILT:-${KBENCH_BUILD_DIR:-$root/build}}"
kb="$build/suite/kbench" kg="$build/tools/kgate/kgate"
mkdir -p "$out"
nvidia-smi --query-gpu=timestamp,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > "$out/smi.csv" 2>&1 &
smi=$!
t0=$SECONDS i=0
while [ $((SECONDS - t0)) -lt "$budget" ]; do
  i=$((i + 1))
  "$kb" run --detail --csv "$out/a.csv" "$@" > "$out/a$i.log" 2>&1
  # shellcheck disable=SC2086  # b_env is a list of VAR=VALUE words
  env $b_env "$kb" run --detail --csv "$out/b.csv" "$@" > "$out/b$i.log" 2>&1
  echo "env-ab: round $i done at $((SECONDS - t0)) s"
done
kill "$smi" 2>/dev/null
for s in a b; do
  echo "== $s"; "$kg" noise --results "$out/$s.csv" --csv "$out/noise-$s.csv" 2>&1 | head -40
done
