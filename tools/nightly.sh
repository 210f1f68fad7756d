#!/usr/bin/env bash
# The nightly job: measure, gate, re-measure the suspects, gate again
# (docs/gate.md "The nightly job").
#
#   tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N]
#                    [--targets DIR] [--max-suspects REL] [-- kbench run options...]
#
# 1. kbench run --csv FILE [options]: tonight's rows appended to the history;
# 2. kgate check (first stage): names the suspects in DIR/suspects.csv (at
#    most --max-suspects of the keys, default 0.25: kgate's);
# 3. if there are any: kbench run --rerun DIR/suspects.csv --repeat N
#    (default 4) --csv FILE [options]: attempts 2..N+1 of tonight's run;
# 4. kgate check (final): DIR/summary.md, junit.xml, report.html, and the
#    console in DIR/gate.txt and on stdout;
# 5. exits with the gate's code (0 pass, 1 regression, 2 bad input), or 2
#    when kbench could not run at all (its exit code 2 or 3).
# KBENCH_NIGHTLY_DRY_RUN=1 skips the kbench steps: the history is gated as
# it is (a CPU test of this script).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

usage() {
  sed -n '4,5p' "$0" >&2
  exit 2
}

history="" out="" build="${KBENCH_BUILD_DIR:-$root/build}" confirm=4 targets="$root/targets"
kbench_opts=()
max_suspects=()
while [ $# -gt 0 ]; do
  case "$1" in
    --history) history="${2:-}"; shift 2 || usage ;;
    --out) out="${2:-}"; shift 2 || usage ;;
    --build) build="${2:-}"; shift 2 || usage ;;
    --confirm) confirm="${2:-}"; shift 2 || usage ;;
    --targets) targets="${2:-}"; shift 2 || usage ;;
    --max-suspects) max_suspects=(--max-suspects "${2:-}"); shift 2 || usage ;;
    --) shift; kbench_opts=("$@"); break ;;
    *) echo "nightly.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$history" ] && [ -n "$out" ] || { echo "nightly.sh: --history and --out are required" >&2; usage; }
case "$confirm" in ''|*[!0-9]*) echo "nightly.sh: --confirm $confirm: expected a whole number" >&2; exit 2 ;; esac
mkdir -p "$out" || { echo "nightly.sh: cannot create $out" >&2; exit 2; }

kbench="$build/suite/kbench"
kgate="$build/tools/kgate/kgate"
[ -x "$kgate" ] || { echo "nightly.sh: no kgate at $kgate (build it, or pass --build DIR)" >&2; exit 2; }
dry="${KBENCH_NIGHTLY_DRY_RUN:-0}"
kbench_broken=0
timing="$out/timing.txt"
: > "$timing"

now() { date +%s%N; }
# kbench's own exit codes 2 and 3 mean it could not run at all.
run_kbench() {
  local what="$1"; shift
  local t0 t1 rc
  t0=$(now)
  "$kbench" run "$@"
  rc=$?
  t1=$(now)
  echo "$what $(((t1 - t0) / 1000000)) ms (exit $rc)" >> "$timing"
  if [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ]; then
    echo "nightly.sh: kbench $what could not run (exit $rc)" >&2
    kbench_broken=1
  fi
}

targets_opt=()
[ -d "$targets" ] && targets_opt=(--targets "$targets")

# 1. Measure.
if [ "$dry" = 1 ]; then
  echo "nightly.sh: dry run: gating $history as it is"
else
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

# 4. The verdict, always.
"$kgate" check --results "$history" "${targets_opt[@]}" --markdown "$out/summary.md" \
  --junit "$out/junit.xml" --html "$out/report.html" 2>&1 | tee "$out/gate.txt"
gate=${PIPESTATUS[0]}

# 5.
if [ "$kbench_broken" = 1 ]; then
  echo "nightly.sh: kbench could not run: exit 2 (the gate said $gate)" >&2
  exit 2
fi
exit "$gate"
