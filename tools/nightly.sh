#!/usr/bin/env bash
# The nightly job: measure, gate, re-measure the suspects, gate again; the
# same on every CI system. It fails closed: a night is green only when every
# stage ran and said so (docs/ci.md says what each stage proves and each
# exit code; docs/gate.md "Wiring it into a nightly job").
#
#   tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N] [--targets DIR]
#                    [--max-suspects REL] [--no-gpt-fast] [--ab] [--dashboard URL] [--dry-run]
#                    [-- kbench run options...]
#
# Exit 0: every stage succeeded and the gate passed; 1: a regression, or
# kbench's rows failed (reports written); 2: anything else, one
# "nightly.sh: FAIL:" line per reason. --dry-run (KBENCH_NIGHTLY_DRY_RUN=1)
# gates the history as it is, without kbench. --ab: a key failed on its
# history is measured again, its last good commit's build against HEAD's
# (KBENCH_AB_BUILD_CMD as bisect.sh's --build-cmd); if that does not
# reproduce the slowdown, the key is cleared. --dashboard URL: the reports
# link each failing key to its chart on that page (kgate check --dashboard).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage_line="usage: tools/nightly.sh --history FILE --out DIR [--build DIR] [--confirm N] [--targets DIR] [--max-suspects REL] [--no-gpt-fast] [--ab] [--dashboard URL] [--dry-run] [-- kbench run options...]"

die() {
  echo "nightly.sh: $1" >&2
  exit 2
}
die_usage() { die "$1"$'\n'"$usage_line"; }

history="" out="" build="${KBENCH_BUILD_DIR:-$root/build}" confirm=4 targets="$root/targets"
dry="${KBENCH_NIGHTLY_DRY_RUN:-0}"
gpt_fast=1 ab=0
kbench_opts=()
max_suspects=() dashboard=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --no-gpt-fast) gpt_fast=0 ;;
    --ab) ab=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; kbench_opts=("$@"); break ;;
    --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}"; continue ;;
    --history | --out | --build | --confirm | --targets | --max-suspects | --dashboard)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      case "$1" in
        --history) history="$2" ;; --out) out="$2" ;; --build) build="$2" ;; --confirm) confirm="$2" ;;
        --targets) targets="$2" ;; --max-suspects) max_suspects=(--max-suspects "$2") ;;
        --dashboard) dashboard=(--dashboard "$2") ;;
      esac
      shift ;;
    *) die_usage "unknown option '$1' (kbench run options go after --)" ;;
  esac
  shift
done
[ -n "$history" ] || die_usage "--history FILE is required (the results CSV kept from night to night)"
[ -n "$out" ] || die_usage "--out DIR is required (where the reports go)"
case "$confirm" in '' | *[!0-9]*) die_usage "--confirm needs a whole number, got '$confirm'" ;; esac

# The history must survive the night's own writes: not inside --out (whose
# files are replaced), not one of its files under another name (a link).
outputs=(timing.txt suspects.csv gate-first.txt gate.txt summary.md junit.xml report.html
  gpt_fast_benchmark.csv gpt_fast_benchmark.json ab.txt)
hist_abs="$(realpath -m -- "$history")"
out_abs="$(realpath -m -- "$out")"
case "$hist_abs/" in
  "$out_abs"/*) die_usage "--history $history is inside --out $out, whose files are replaced each night: keep it elsewhere" ;;
esac
[ ! -d "$history" ] || die_usage "--history $history is a folder (it is the results CSV)"
for f in "${outputs[@]}"; do
  [ ! -e "$history" ] || [ ! "$history" -ef "$out/$f" ] ||
    die_usage "--history $history is the same file as $out/$f, which the night rewrites"
done
err="$(mkdir -p -- "$out" "$(dirname -- "$history")" 2>&1)" || die "${err#mkdir: }"

kbench="${KBENCH_BIN:-$build/suite/kbench}"
kgate="${KGATE_BIN:-$build/tools/kgate/kgate}"
[ -x "$kgate" ] || die "no kgate at $kgate (build it, or pass --build DIR, or set KGATE_BIN)"
timing="$out/timing.txt"
# --out must take every report before anything runs (bad input: exit 2).
for f in "${outputs[@]}"; do
  [ ! -d "$out/$f" ] || die "cannot write the night's reports in --out $out: $f is a folder there"
done
err="$({ : > "$timing" && rm -f -- "$out/suspects.csv" "$out/ab.txt"; } 2>&1)" ||
  die "cannot write the night's reports in --out $out: ${err##*: }"

failures=()  # one line per reason the night failed
code=0       # the night's exit code: the worst of its stages'
fail() {     # fail CODE REASON
  failures+=("$2")
  echo "nightly.sh: $2" >&2
  [ "$1" -le "$code" ] || code="$1"
}
# An exit status in words: kbench's codes (docs/kbench-help.txt) or a signal.
exit_text() {
  case "$1" in
    0) echo "exit 0" ;;
    1) echo "exit 1: rows failed" ;;
    2) echo "exit 2: bad usage or input" ;;
    3) echo "exit 3: no GPU or driver" ;;
    126 | 127) echo "exit $1: could not be started" ;;
    129 | 1[3-9]? | 2??) echo "killed by signal $(($1 - 128)) (SIG$(kill -l $(($1 - 128)) 2> /dev/null || echo '?'))" ;;
    *) echo "exit $1" ;;
  esac
}
# kgate's: 2 is bad input or usage (its message is in its output).
kgate_exit_text() { if [ "$1" -eq 2 ]; then echo "exit 2: bad input or usage"; else exit_text "$1"; fi; }
# -L: a history reached through a symbolic link (a CI cache) is the file.
size_of() { if [ -e "$1" ]; then stat -L -c %s -- "$1"; else echo 0; fi; }
lines_of() { if [ -e "$1" ]; then wc -l < "$1"; else echo 0; fi; }
ends_in_newline() { [ ! -s "$1" ] || [ "$(tail -c 1 -- "$1" | od -An -tx1 | tr -d ' ')" = 0a ]; }

# Tonight's run id: the options' --run-id, else one made as kbench makes
# them (UTC time and 6 random hex digits). The re-measurement refuses
# --run-id and --shard (it appends attempts of the suspects' own run).
run_id="" rerun_opts=()
for ((i = 0; i < ${#kbench_opts[@]}; i++)); do
  case "${kbench_opts[$i]}" in
    --run-id) run_id="${kbench_opts[$((i + 1))]:-}" i=$((i + 1)) ;;
    --run-id=*) run_id="${kbench_opts[$i]#--run-id=}" ;;
    --shard) i=$((i + 1)) ;;
    --shard=*) ;;
    *) rerun_opts+=("${kbench_opts[$i]}") ;;
  esac
done
id_opt=()
if [ -z "$run_id" ]; then
  run_id="$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
  id_opt=(--run-id "$run_id")
fi

# run_kbench STEP PATTERN ARGS...: kbench run ARGS; then the proof that it
# appended rows whose run_id field starts with PATTERN (",ID," tonight,
# ",ID/" for the attempts); a failed proof or step is a reason of the night.
run_kbench() {
  local what="$1" pattern="$2"
  shift 2
  local size0 lines0 t0 rc=0 size1 lines1 appended
  size0="$(size_of "$history")"
  lines0="$(lines_of "$history")"
  t0=$(date +%s%N)
  "$kbench" run "$@" || rc=$?
  echo "$what $((($(date +%s%N) - t0) / 1000000)) ms (exit $rc)" >> "$timing"
  size1="$(size_of "$history")"
  lines1="$(lines_of "$history")"
  if [ "$size1" -lt "$size0" ]; then
    fail 2 "FAIL: kbench $what ($(exit_text "$rc")) left $history shorter than it was ($size0 -> $size1 bytes)"
    return
  fi
  appended="$(tail -c +$((size0 + 1)) -- "$history" | grep -c -F -- "$pattern" || true)"
  echo "nightly.sh: kbench $what: $(exit_text "$rc"); $appended row(s) of run $run_id appended ($lines0 -> $lines1 lines of $history)"
  if ! ends_in_newline "$history"; then
    fail 2 "FAIL: kbench $what ($(exit_text "$rc")): $history ends mid-row: its append was cut short"
  elif [ "$appended" -eq 0 ]; then
    fail 2 "FAIL: kbench $what ($(exit_text "$rc")) appended no row of run $run_id to $history: nothing of tonight's to gate"
  elif [ "$rc" -eq 1 ]; then
    fail 1 "FAIL: kbench $what exited 1: rows failed (they are gated and reported; the night fails)"
  elif [ "$rc" -ne 0 ]; then
    fail 2 "FAIL: kbench $what: $(exit_text "$rc"), after $appended row(s): the run is not whole"
  fi
}

targets_opt=()
[ -d "$targets" ] && targets_opt=(--targets "$targets")

# 1. Measure.
if [ "$dry" = 1 ]; then
  echo "nightly.sh: dry run: kbench skipped, gating $history as it is"
  [ -f "$history" ] || die "$history: no such file (a dry run gates an existing history)"
else
  [ -x "$kbench" ] || die "no kbench at $kbench (build it, or pass --build DIR, or set KBENCH_BIN)"
  run_kbench measure ",$run_id," --csv "$history" ${id_opt[@]+"${id_opt[@]}"} \
    ${kbench_opts[@]+"${kbench_opts[@]}"}
fi

# kgate's codes: 0 pass, 1 regression, 2 bad input or usage; anything else
# (a crash) is a failure of the stage.
stage_failed() {  # stage_failed NAME RC: 0 when RC is a verdict (0 or 1)
  [ "$2" -le 1 ] && return 1
  fail 2 "FAIL: kgate $1: $(kgate_exit_text "$2")"
}

# 2. First stage: who is suspect?
first=0
"$kgate" check --results "$history" ${targets_opt[@]+"${targets_opt[@]}"} \
  --suspects "$out/suspects.csv" ${max_suspects[@]+"${max_suspects[@]}"} \
  > "$out/gate-first.txt" 2>&1 || first=$?
if stage_failed "first stage (check --suspects)" "$first"; then
  cat "$out/gate-first.txt" >&2
else
  suspects=0
  [ -f "$out/suspects.csv" ] && suspects=$(($(wc -l < "$out/suspects.csv") - 1))
  echo "nightly.sh: first stage exit $first, $suspects suspect key(s)"
  # The suspects must be of tonight's run: else the gate judged another.
  if [ "$dry" != 1 ] && [ "$suspects" -gt 0 ]; then
    other="$(tail -n +2 "$out/suspects.csv" | cut -d, -f1 | grep -v -x -F -- "$run_id" | head -n 1 || true)"
    [ -z "$other" ] || fail 2 "FAIL: the first stage's suspects are of run $other, not of tonight's $run_id"
  fi
  # 3. Re-measure them.
  if [ "$suspects" -gt 0 ] && [ "$confirm" -gt 0 ]; then
    if [ "$dry" = 1 ]; then
      echo "nightly.sh: dry run: would re-measure $suspects key(s) $confirm times"
    elif [ "$code" -lt 2 ]; then
      run_kbench rerun ",$run_id/" --rerun "$out/suspects.csv" --repeat "$confirm" \
        --csv "$history" ${rerun_opts[@]+"${rerun_opts[@]}"}
    fi
  fi
fi

# ab_stage (--ab): 0 when no failure of the final stage stands (docs/gate.md
# "A/B against the last good build"). A line per key.
ab_stage() {
  local top tonight sha k half failed keys names rc=0
  # The failures are read from gate.txt: cut short (a full disk, which
  # kgate's exit does not show), it would name none and clear them all.
  # kgate's verdict line is its console's last: there, the console is whole.
  grep -q '^FAIL: ' "$out/gate.txt" ||
    { echo "A/B: $out/gate.txt has no verdict line (cut short?): the gate's failures stand" && return 1; }
  # shellcheck source=tools/ab-lib.sh
  source "$root/tools/ab-lib.sh"
  build_cmd="${KBENCH_AB_BUILD_CMD:-}" kbench_rel="${KBENCH_BISECT_KBENCH:-suite/kbench}"
  rounds=5 seed=1 targets="" opts=(${rerun_opts[@]+"${rerun_opts[@]}"})
  top="$(git rev-parse --show-toplevel 2> /dev/null)" || { echo "A/B: not in a git repository" && return 1; }
  tonight="$(git -C "$top" rev-parse HEAD)"
  # KEY<tab>LAST_GOOD_COMMIT<tab>CHANGE per failure on history alone; "-" for any other.
  failed="$(awk -v OFS='\t' '
    /^FAIL / { if (k != "") print k, "-", c
      k = "-"; if ($0 ~ / @ .*worse than the median/ && $0 !~ /(below|above) target/) {
        k = $0; sub(/^FAIL /, "", k); sub(/: .*/, "", k)
        c = $0; sub(/.*\(baseline [^,]*, /, "", c); sub(/\).*/, "", c) } }
    /^    last good: .*; commit / && k != "-" { s = $0; sub(/.*; commit /, "", s); sub(/[,)].*/, "", s)
      sub(/-dirty$/, "", s); print k, s, c; k = "" }
    END { if (k != "") print k, "-", c }' "$out/gate.txt")"
  if grep -q -E $'(^|\t)-\t' <<< "$failed"; then
    echo "A/B: a failure that is not a key's history, or has no last good commit, stands" && rc=1
  fi
  for sha in $(awk -F '\t' '$2 != "-" { print $2 }' <<< "$failed" | sort -u); do
    mapfile -t keys < <(awk -F '\t' -v s="$sha" '$2 == s { print $1 }' <<< "$failed")
    names=() && for k in "${keys[@]}"; do parse_key "$k" && names+=("$name"); done
    filter="$(name_filter "${names[@]}")"
    work="$(mktemp -d "${TMPDIR:-/tmp}/kbench-ab.XXXXXX")"
    if ! worktrees "$top" "$sha" "$tonight" || ! build "$work/good" "$work/good-build" ||
      ! build "$work/cand" "$work/cand-build" || ! measure ab; then
      echo "A/B against ${sha:0:12}: not built or measured ($(tail -n 1 "$work/build.log")): ${#keys[@]} key(s) stand"
      remove_worktrees "$top" && rc=1 && continue
    fi
    for k in "${keys[@]}"; do
      parse_key "$k"
      half="$(awk -F '\t' -v k="$k" '$1 == k { c = $3; sub(/^[-+]/, "", c); print c / 200 }' <<< "$failed")"
      judge ab "$half" || verdict=- good_med=- cand_med=- change=- spread=
      printf 'A/B %s: last good %s %s, tonight %s %s: %s %s %s: ' "$k" "${sha:0:12}" "$good_med" \
        "${tonight:0:12}" "$cand_med" "$change" "$spread" "$verdict"
      case "$verdict" in
        SAME | FASTER) echo "does not reproduce: cleared" ;;
        *) echo "stands" && rc=1 ;;
      esac
    done
    remove_worktrees "$top"
  done
  return "$rc"
}

# 4. The verdict, always, with every report; then gpt_fast's rows.
gate=0
"$kgate" check --results "$history" ${targets_opt[@]+"${targets_opt[@]}"} \
  --markdown "$out/summary.md" --junit "$out/junit.xml" --html "$out/report.html" \
  ${dashboard[@]+"${dashboard[@]}"} > "$out/gate.txt" 2>&1 || gate=$?
cat "$out/gate.txt"
if ! stage_failed "final stage (check)" "$gate" && [ "$gate" -eq 1 ]; then
  if [ "$ab" = 1 ] && [ "$dry" != 1 ] && ab_stage | tee "$out/ab.txt"; then
    echo "nightly.sh: A/B: no failure reproduced against the last good build: cleared ($out/ab.txt)"
  else
    fail 1 "FAIL: the gate found a regression (above, and in $out/summary.md)"
  fi
fi
if [ "$gpt_fast" = 1 ]; then
  export_rc=0
  "$kgate" gpt-fast --results "$history" ${targets_opt[@]+"${targets_opt[@]}"} \
    --csv "$out/gpt_fast_benchmark.csv" --json "$out/gpt_fast_benchmark.json" || export_rc=$?
  [ "$export_rc" -eq 0 ] ||
    fail 2 "FAIL: kgate gpt-fast: $(kgate_exit_text "$export_rc") (above; --no-gpt-fast for a run without gpt_fast's rows)"
fi

# 5.
if [ "$code" -ne 0 ]; then
  echo "nightly.sh: the night FAILS (exit $code):" >&2
  for f in "${failures[@]}"; do echo "  $f" >&2; done
fi
exit "$code"
