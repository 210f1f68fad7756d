#!/usr/bin/env bash
# Bring up a GPU in one command (docs/bringup.md): build, probe its ceilings,
# run the whole suite, and write the bring-up report.
#
#   tools/bringup.sh [--reference GPU|FILE.csv] [--out DIR] [--targets DIR]
#                    [--device N] [--quick] [--filter REGEX] [--no-build]
#
# --reference   the GPU to compare every row with: a results CSV, or a GPU
#               name found in the run's CSV (default: the project's recorded
#               H100 run of the landed build, tests/data/h100-2026-11-24.csv)
# --out DIR     where everything goes (default out/bringup): probe.json (the
#               probe's draft target file), results.csv (the run), bringup.md,
#               bringup.html, <gpu>.json (the target file drafted from the run)
# --targets DIR target files, datasheets/nvidia.json and tuning/ (default:
#               targets/); a folder without this GPU's file shows the report of
#               a GPU never brought up (roofline-relative targets)
# --no-build    use the kbench and kgate already in $KBENCH_BUILD_DIR (or build/)
# The build is tools/build.sh's (KBENCH_CUDA_ARCH=90 builds for sm_90 only).
# Exit status: the report's (2 when an input had a problem, said on stderr
# and in the report), else kbench run's (1 when rows failed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

reference="$root/tests/data/h100-2026-11-24.csv"
out="out/bringup"
targets="$root/targets"
device=0
build=1
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help)
      sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    --reference) reference="$2"; shift 2 ;;
    --reference=*) reference="${1#*=}"; shift ;;
    --out) out="$2"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --targets) targets="$2"; shift 2 ;;
    --targets=*) targets="${1#*=}"; shift ;;
    --device) device="$2"; shift 2 ;;
    --device=*) device="${1#*=}"; shift ;;
    --quick) run_args+=(--quick); shift ;;
    --filter) run_args+=(--filter "$2"); shift 2 ;;
    --filter=*) run_args+=(--filter "${1#*=}"); shift ;;
    --no-build) build=0; shift ;;
    *)
      echo "tools/bringup.sh: unknown option '$1' (tools/bringup.sh --help)" >&2
      exit 2
      ;;
  esac
done
if [ ! -d "$targets" ]; then
  echo "tools/bringup.sh: --targets $targets: not a folder" >&2
  exit 2
fi

bdir="${KBENCH_BUILD_DIR:-$root/build}"
if [ "$build" = 1 ]; then
  cmake_args=()
  if [ -n "${KBENCH_CUDA_ARCH:-}" ]; then cmake_args+=("-DCMAKE_CUDA_ARCHITECTURES=$KBENCH_CUDA_ARCH"); fi
  "$root/tools/setup.sh"
  "$root/tools/build.sh" ${cmake_args[@]+"${cmake_args[@]}"}
fi
kbench="$bdir/suite/kbench"
kgate="$bdir/tools/kgate/kgate"
mkdir -p "$out"

echo "== 1/3 probe: the ceilings, and a target file drafted with datasheet peaks ($out/probe.json)"
"$kbench" probe --device "$device" --targets "$targets" --write "$out/probe.json"

echo "== 2/3 the whole suite ($out/results.csv)"
run_rc=0
"$kbench" run --device "$device" --targets "$targets" --csv "$out/results.csv" \
  ${run_args[@]+"${run_args[@]}"} || run_rc=$?
if [ ! -s "$out/results.csv" ]; then
  echo "tools/bringup.sh: kbench run wrote no rows (exit $run_rc): no report" >&2
  exit "$run_rc"
fi

echo "== 3/3 the report ($out/bringup.md, $out/bringup.html)"
report_rc=0
"$kgate" bringup --results "$out/results.csv" --reference "$reference" --targets "$targets" \
  --out "$out" || report_rc=$?
if [ "$report_rc" != 0 ]; then exit "$report_rc"; fi
exit "$run_rc"
