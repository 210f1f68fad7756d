#!/usr/bin/env bash
# Run-to-run noise of every key: the suite N times into one CSV, then
# `kgate noise` (docs/gate.md "The noise report: `kgate noise`").
#   tools/noise-report.sh N [kbench run options...]
# Writes results.csv, noise.md (printed) and noise.csv under
# $KBENCH_NOISE_DIR (default noise/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-}"
case "$n" in ''|*[!0-9]*|0) echo "usage: tools/noise-report.sh N [kbench run options...]" >&2; exit 2 ;; esac
shift
build="${KBENCH_BUILD_DIR:-$root/build}"
dir="${KBENCH_NOISE_DIR:-$root/noise}"
mkdir -p "$dir"
csv="$dir/results.csv"
for i in $(seq 1 "$n"); do
  echo "noise-report: run $i of $n" >&2
  rc=0
  "$build/suite/kbench" run --csv "$csv" "$@" || rc=$?
  # 1: some rows failed, the others measured; any other (2, 3, a crash or
  # kill) leaves the run unmeasured or cut short: no report of it.
  case "$rc" in
    0 | 1) ;;
    *) echo "noise-report: kbench failed on run $i of $n (exit $rc)" >&2; exit 2 ;;
  esac
done
"$build/tools/kgate/kgate" noise --results "$csv" --markdown "$dir/noise.md" --csv "$dir/noise.csv" >&2
cat "$dir/noise.md"
