#!/usr/bin/env bash
# Bring up a GPU in one command (docs/bringup.md): build, probe, tune, run
# the suite, and write the report with the target file and tuning table.
#
#   tools/bringup.sh [--reference GPU|FILE.csv] [--out DIR] [--targets DIR]
#                    [--device N] [--quick] [--filter REGEX] [--no-tune]
#                    [--no-build]
#
# Works on a copy of --targets (default targets/) in --out (default
# out/bringup). Exit status: the report's, else kbench run's; the files are
# named ready to commit only where both are 0.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
die() {
  echo "tools/bringup.sh: $*" >&2
  exit 2
}

reference="$root/tests/data/h100-2026-11-24.csv"
out="out/bringup"
targets="$root/targets"
device=0
build=1
tune=1
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help)
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
      exit 0
      ;;
    --reference | --out | --targets | --device | --filter) set -- "$1=${2-}" "${@:3}"; continue ;;
    --reference=*) reference="${1#*=}"; shift ;;
    --out=*) out="${1#*=}"; shift ;;
    --targets=*) targets="${1#*=}"; shift ;;
    --device=*) device="${1#*=}"; shift ;;
    --filter=*) run_args+=(--filter "${1#*=}"); shift ;;
    --quick) run_args+=(--quick); shift ;;
    --no-tune) tune=0; shift ;;
    --no-build) build=0; shift ;;
    *) die "unknown option '$1' (tools/bringup.sh --help)" ;;
  esac
done
[ -d "$targets" ] || die "--targets $targets: not a folder"
# The copy goes into --out: an --out inside --targets would copy the folder
# into itself.
case "$(realpath -m "$out")/" in
  "$(realpath "$targets")"/*) die "--out $out is inside --targets $targets: give an --out elsewhere" ;;
esac
mkdir -p "$out"

bdir="${KBENCH_BUILD_DIR:-$root/build}"
if [ "$build" = 1 ]; then
  "$root/tools/setup.sh"
  "$root/tools/build.sh"
fi
kbench="$bdir/suite/kbench"
kgate="$bdir/tools/kgate/kgate"

steps=$((tune == 1 ? 5 : 3))
step=0
say() { step=$((step + 1)); echo "== $step/$steps $*"; }

# Every step works on a copy: a bring-up never writes the repository's targets.
work="$out/targets"
rm -rf "$work"
cp -R "$targets" "$work"

say "probe: the ceilings and the ladder, a draft target file ($out/probe.json)"
"$kbench" probe --device "$device" --targets "$work" --write "$out/probe.json" 2>&1 |
  tee "$out/probe.log"
# kbench names the GPU's target file of the folder in one line (kbench
# --help): "target file: PATH" or "target file: none (new: NAME.json)".
line="$(grep -m1 '^target file: ' "$out/probe.log" || true)"
case "$line" in
  "target file: none (new: "*")")
    name="${line#target file: none (new: }"
    name="${name%)}"
    [ ! -e "$work/$name" ] ||
      die "$targets/$name exists but does not match this GPU: fix its \"match\" list, or move it away"
    cp "$out/probe.json" "$work/$name"
    echo "   no target file of this GPU in $targets: the probe's draft is the run's ($work/$name)"
    ;;
  "target file: "*)
    # The run's rooflines must be the drafted file's: the probe's ceilings
    # and ladder take the place of the file's in the copy.
    name="$(basename "${line#target file: }")"
    cp "$out/probe.json" "$work/$name"
    echo "   the GPU's target file is $targets/$name: in the copy, the probe's draft takes its place"
    ;;
  *) die "kbench probe did not name the GPU's target file (no 'target file:' line in $out/probe.log)" ;;
esac

if [ "$tune" = 1 ]; then
  say "tune the GEMV configurations ($work/tuning/$name, section gemv)"
  "$kbench" tune gemv --device "$device" --targets "$work"
  say "tune the cuBLASLt choices ($work/tuning/$name, section cublaslt)"
  "$kbench" tune --device "$device" --targets "$work"
fi

say "the whole suite ($out/results.csv)"
# This run's rows alone: kbench appends, and the report and the draft must
# not come from an earlier bring-up's run where this one wrote none.
rm -f "$out/results.csv"
run_rc=0
"$kbench" run --device "$device" --targets "$work" --csv "$out/results.csv" \
  ${run_args[@]+"${run_args[@]}"} || run_rc=$?
if [ ! -s "$out/results.csv" ]; then
  echo "tools/bringup.sh: kbench run wrote no rows (exit $run_rc): no report" >&2
  exit "$run_rc"
fi

say "the report and the drafted target file ($out/bringup.md, $out/$name)"
# This report's draft alone: where kgate drafts none (a problem of the
# input), an earlier bring-up's file must not be named below.
rm -f "$out/$name"
report_rc=0
"$kgate" bringup --results "$out/results.csv" --reference "$reference" --targets "$work" \
  --probe "$out/probe.json" --out "$out" || report_rc=$?

# The files to commit, named as in targets/: kgate wrote the draft to
# $out/$name; the tuning table is the copy's. Ready only when the run and
# the report succeeded: a failed row has no target, a problem of the
# input may have drafted from the wrong ceilings.
ready="ready to commit (review first):"
if [ "$run_rc" != 0 ] || [ "$report_rc" != 0 ]; then
  echo "tools/bringup.sh: not ready to commit: kbench run exited $run_rc, kgate bringup" \
    "$report_rc (the report says why); the files in $out are for review only" >&2
  ready="drafted (NOT ready to commit):"
fi
[ ! -f "$out/$name" ] || echo "$ready $out/$name -> targets/$name"
rm -rf "$out/tuning"
if [ "$tune" = 1 ] && [ -f "$work/tuning/$name" ]; then
  mkdir -p "$out/tuning"
  cp "$work/tuning/$name" "$out/tuning/$name"
  echo "$ready $out/tuning/$name -> targets/tuning/$name"
fi
[ "$report_rc" = 0 ] || exit "$report_rc"
exit "$run_rc"
