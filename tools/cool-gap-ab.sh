#!/usr/bin/env bash
# A/B of the idle gap after long samples (docs/measuring.md, "Power"): runs
# the filtered suite back to back, alternating the engine's default
# threshold (kCoolSampleSeconds, suite/sampling.h) with
# KBENCH_COOL_FROM_US=$B_US, every row naming each
# buffer set's median and the NVML slowdown reasons seen after its samples
# (KBENCH_SET_DETAIL=1), while nvidia-smi logs power and clocks every 100 ms.
#
#   tools/cool-gap-ab.sh OUT_DIR SECONDS B_US [kbench run options...]
#
# Writes OUT_DIR/a.csv, b.csv, smi.csv and each side's `kgate noise`.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1" budget="$2" b_us="$3"; shift 3
build="${KBENCH_BUILD_DIR:-$root/build}"
kb="$build/suite/kbench" kg="$build/tools/kgate/kgate"
mkdir -p "$out"
nvidia-smi --query-gpu=timestamp,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > "$out/smi.csv" 2>&1 &
smi=$!
t0=$SECONDS i=0
while [ $((SECONDS - t0)) -lt "$budget" ]; do
  i=$((i + 1))
  KBENCH_SET_DETAIL=1 "$kb" run --csv "$out/a.csv" "$@" > "$out/a$i.log" 2>&1
  KBENCH_SET_DETAIL=1 KBENCH_COOL_FROM_US="$b_us" "$kb" run --csv "$out/b.csv" "$@" > "$out/b$i.log" 2>&1
  echo "cool-gap-ab: round $i done at $((SECONDS - t0)) s"
done
kill "$smi" 2>/dev/null
for s in a b; do
  echo "== $s"; "$kg" noise --results "$out/$s.csv" --csv "$out/noise-$s.csv" 2>&1 | head -40
done
