#!/usr/bin/env bash
# The nightly job: measure, gate, re-measure the suspects, gate again; the
# same on every CI system (docs/ci.md, docs/gate.md "Wiring it into a
# nightly job").
#
#   tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N] [--targets DIR]
#                    [--max-suspects REL] [--dry-run] [-- kbench run options...]
#
# 1. kbench run --csv FILE [options]: tonight's rows appended to the history;
# 2. kgate check (first stage): names the suspects in DIR/suspects.csv (at
#    most --max-suspects of the keys, default 0.25: kgate's);
# 3. if there are any: kbench run --rerun DIR/suspects.csv --repeat N
#    (default 4) --csv FILE [options]: attempts 2..N+1 of tonight's run;
# 4. kgate check (final), always: DIR/summary.md, junit.xml, report.html,
#    and the console in DIR/gate.txt and on stdout (the first stage's in
#    DIR/gate-first.txt, the kbench steps' times in DIR/timing.txt); then
#    kgate gpt-fast: DIR/gpt_fast_benchmark.csv and .json;
# 5. exits with the gate's code (0 pass, 1 regression, 2 bad input), or 2
#    when kbench measured nothing tonight (bad usage, no GPU or driver, not
#    built): the gate would otherwise judge an earlier run again. A kernel
#    that crashed fails the night through its `failed` rows.
#
# Options take `--opt VALUE` or `--opt=VALUE`. --dry-run (or
# KBENCH_NIGHTLY_DRY_RUN=1) skips the kbench steps: the history is gated as
# it is (a CPU-only machine can try the job's command and its reports).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage_line="usage: tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N] [--targets DIR] [--max-suspects REL] [--dry-run] [-- kbench run options...]"

die_usage() {
  echo "nightly.sh: $1" >&2
  echo "$usage_line" >&2
  exit 2
}

history="" out="" build="${KBENCH_BUILD_DIR:-$root/build}" confirm=4 targets="$root/targets"
dry="${KBENCH_NIGHTLY_DRY_RUN:-0}"
kbench_opts=()
max_suspects=()
# `--opt VALUE` (the value must be there) or `--opt=VALUE`.
value() {
  [ $# -ge 2 ] || die_usage "$1 needs a value"
  printf '%s' "$2"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --history | --out | --build | --confirm | --targets | --max-suspects)
      v="$(value "$@")" || exit 2
      opt="$1"
      shift 2
      ;;
    --history=* | --out=* | --build=* | --confirm=* | --targets=* | --max-suspects=*)
      v="${1#*=}"
      opt="${1%%=*}"
      shift
      ;;
    --dry-run) dry=1; shift; continue ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; kbench_opts=("$@"); break ;;
    *) die_usage "unknown option '$1' (kbench run options go after --)" ;;
  esac
  case "$opt" in
    --history) history="$v" ;;
    --out) out="$v" ;;
    --build) build="$v" ;;
    --confirm) confirm="$v" ;;
    --targets) targets="$v" ;;
    --max-suspects) max_suspects=(--max-suspects "$v") ;;
  esac
done
[ -n "$history" ] || die_usage "--history FILE is required (the results CSV kept from night to night)"
[ -n "$out" ] || die_usage "--out DIR is required (where the reports go)"
case "$confirm" in '' | *[!0-9]*) die_usage "--confirm needs a whole number, got '$confirm'" ;; esac
mkdir -p "$out" "$(dirname "$history")" || { echo "nightly.sh: cannot create $out" >&2; exit 2; }

kbench="$build/suite/kbench"
kgate="$build/tools/kgate/kgate"
[ -x "$kgate" ] || { echo "nightly.sh: no kgate at $kgate (build it, or pass --build DIR)" >&2; exit 2; }
kbench_broken=0
timing="$out/timing.txt"
: > "$timing"
rm -f "$out/suspects.csv"

now() { date +%s%N; }
# kbench's own exit codes: 0 measured, 1 measured with failed rows (the gate
# fails those), 2 bad usage, 3 no GPU or driver. Tonight's measurement
# counts as missing unless it exited 0 or 1 (a kbench that was never built
# or was killed included); a re-measurement only when kbench could not run.
run_kbench() {
  local what="$1"; shift
  local t0 t1 rc
  t0=$(now)
  "$kbench" run "$@"
  rc=$?
  t1=$(now)
  echo "$what $(((t1 - t0) / 1000000)) ms (exit $rc)" >> "$timing"
  if [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || { [ "$what" = measure ] && [ "$rc" -gt 1 ]; }; then
    echo "nightly.sh: kbench $what measured nothing (exit $rc; its message is above)" >&2
    kbench_broken=1
  fi
}

targets_opt=()
[ -d "$targets" ] && targets_opt=(--targets "$targets")

# 1. Measure.
if [ "$dry" = 1 ]; then
  echo "nightly.sh: dry run: kbench skipped, gating $history as it is"
  [ -f "$history" ] || { echo "nightly.sh: $history: no such file (a dry run gates an existing history)" >&2; exit 2; }
else
  [ -x "$kbench" ] || { echo "nightly.sh: no kbench at $kbench (build it, or pass --build DIR)" >&2; exit 2; }
  run_kbench measure --csv "$history" "${kbench_opts[@]}"
fi

# 2. First stage: who is suspect?
"$kgate" check --results "$history" "${targets_opt[@]}" --suspects "$out/suspects.csv" \
  "${max_suspects[@]}" > "$out/gate-first.txt" 2>&1
first=$?
if [ "$first" -eq 2 ]; then
  cat "$out/gate-first.txt" >&2
else
  suspects=0
  [ -f "$out/suspects.csv" ] && suspects=$(($(wc -l < "$out/suspects.csv") - 1))
  echo "nightly.sh: first stage exit $first, $suspects suspect key(s)"
  # 3. Re-measure them.
  if [ "$suspects" -gt 0 ] && [ "$confirm" -gt 0 ]; then
    if [ "$dry" = 1 ]; then
      echo "nightly.sh: dry run: would re-measure $suspects key(s) $confirm times"
    else
      run_kbench rerun --rerun "$out/suspects.csv" --repeat "$confirm" --csv "$history" \
        "${kbench_opts[@]}"
    fi
  fi
fi

# 4. The verdict, always, with every report; then gpt_fast's rows.
"$kgate" check --results "$history" "${targets_opt[@]}" --markdown "$out/summary.md" \
  --junit "$out/junit.xml" --html "$out/report.html" 2>&1 | tee "$out/gate.txt"
gate=${PIPESTATUS[0]}
"$kgate" gpt-fast --results "$history" "${targets_opt[@]}" \
  --csv "$out/gpt_fast_benchmark.csv" --json "$out/gpt_fast_benchmark.json" ||
  echo "nightly.sh: no gpt_fast export tonight (above); the gate's verdict stands"

# 5.
if [ "$kbench_broken" = 1 ]; then
  echo "nightly.sh: FAIL: kbench could not measure tonight: exit 2 (the gate said $gate, of an earlier run)" >&2
  exit 2
fi
exit "$gate"
