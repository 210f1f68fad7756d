#!/usr/bin/env bash
# The nightly job, the same on every CI system (docs/ci.md):
#
#   tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N] [--dry-run]
#                    [-- kbench run options...]
#
# 1. kbench run --csv FILE ...          tonight's rows appended; its exit code kept
# 2. kgate check ... --suspects DIR/suspects.txt
#                                       the keys worth measuring again
# 3. kbench run --rerun DIR/suspects.txt --repeat N --csv FILE
#                                       only when there are suspects
# 4. kgate check ... --markdown DIR/summary.md --junit DIR/junit.xml --html DIR/report.html
#                                       always; then kgate gpt-fast (DIR/gpt_fast_benchmark.*)
# 5. exit: the gate's code (0 pass, 1 regression, 2 bad input). A kbench that
#    failed rows is failed by the gate through those rows; a kbench that
#    measured nothing (exit 2: bad usage, 3: no GPU) fails the night with 2,
#    since the gate would otherwise judge last night's run again.
#
# --dry-run (or KBENCH_NIGHTLY_DRY_RUN=1) skips the kbench steps and gates
# the history as it is: the CI files' test runs the workflow's own command
# so on a CPU-only machine.
#
# Steps 2-3 need kgate's --suspects and kbench's --rerun; with a kgate that
# has no --suspects they are skipped with a note.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
history="" out="" build="${KBENCH_BUILD_DIR:-$root/build}" confirm=3
dry="${KBENCH_NIGHTLY_DRY_RUN:-0}"
usage="usage: tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N] [--dry-run] [-- kbench run options...]"

die_usage() {
  echo "nightly: $1" >&2
  echo "$usage" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --history) [ $# -ge 2 ] || die_usage "--history needs a file"; history="$2"; shift 2 ;;
    --history=*) history="${1#*=}"; shift ;;
    --out) [ $# -ge 2 ] || die_usage "--out needs a folder"; out="$2"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --build) [ $# -ge 2 ] || die_usage "--build needs a folder"; build="$2"; shift 2 ;;
    --build=*) build="${1#*=}"; shift ;;
    --confirm) [ $# -ge 2 ] || die_usage "--confirm needs a count"; confirm="$2"; shift 2 ;;
    --confirm=*) confirm="${1#*=}"; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die_usage "unknown option '$1' (kbench run options go after --)" ;;
  esac
done
[ -n "$history" ] || die_usage "--history FILE is required (the results CSV kept from night to night)"
[ -n "$out" ] || die_usage "--out DIR is required (where the reports go)"
case "$confirm" in '' | *[!0-9]*) die_usage "--confirm needs a whole number, got '$confirm'" ;; esac

kbench="$build/suite/kbench"
kgate="$build/tools/kgate/kgate"
targets="$root/targets"
[ -x "$kgate" ] || { echo "nightly: $kgate not found: build first (tools/build.sh)" >&2; exit 2; }
mkdir -p "$out" "$(dirname "$history")" || exit 2
suspects="$out/suspects.txt"
rm -f "$suspects"

run_rc=0
if [ "$dry" = 1 ]; then
  echo "nightly: dry run: kbench skipped, gating $history as it is"
  [ -f "$history" ] || { echo "nightly: $history: no such file (a dry run gates an existing history)" >&2; exit 2; }
else
  [ -x "$kbench" ] || { echo "nightly: $kbench not found: build first (tools/build.sh)" >&2; exit 2; }
  echo "nightly: 1. kbench run --csv $history $*"
  "$kbench" run --csv "$history" "$@"
  run_rc=$?
  echo "nightly: kbench exited $run_rc"
fi

# 2-3. Measure the suspects again before they fail the night.
if [ "$dry" != 1 ] && [ "$confirm" -gt 0 ] && "$kgate" --help | grep -q -- "--suspects"; then
  echo "nightly: 2. kgate check --suspects $suspects"
  "$kgate" check --results "$history" --targets "$targets" --suspects "$suspects" >/dev/null
  if [ -s "$suspects" ]; then
    echo "nightly: 3. $(wc -l <"$suspects") suspect(s): kbench run --rerun $suspects --repeat $confirm"
    "$kbench" run --rerun "$suspects" --repeat "$confirm" --csv "$history" "$@"
    echo "nightly: the re-measure exited $?"
  fi
elif [ "$dry" != 1 ]; then
  echo "nightly: 2-3. skipped: this kgate has no --suspects (no re-measure of suspects)"
fi

# 4. The verdict, always, with every report.
echo "nightly: 4. kgate check --results $history --targets $targets"
"$kgate" check --results "$history" --targets "$targets" \
  --markdown "$out/summary.md" --junit "$out/junit.xml" --html "$out/report.html"
gate_rc=$?
"$kgate" gpt-fast --results "$history" --targets "$targets" \
  --csv "$out/gpt_fast_benchmark.csv" --json "$out/gpt_fast_benchmark.json" ||
  echo "nightly: no gpt_fast export tonight (above); the gate's verdict stands"

# 5.
case "$run_rc" in
  0 | 1) ;;
  *)
    echo "nightly: FAIL: kbench measured nothing tonight (exit $run_rc; its message is above): the gate judged an earlier run" >&2
    [ "$gate_rc" -gt 2 ] || gate_rc=2
    ;;
esac
echo "nightly: exit $gate_rc (kbench $run_rc, gate $gate_rc)"
exit "$gate_rc"
