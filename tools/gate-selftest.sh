#!/usr/bin/env bash
# The gate measured on one GPU (docs/gate.md "The self-test on a GPU"):
#   tools/gate-selftest.sh [--nights K] [--drops "3 5 10"] [--out DIR]
#                          [--build DIR] [--confirm N] [--resume] [--skip-table]
#                          [--no-gpt-fast] [-- kbench run options...]
# --resume continues the A/A history in DIR over several calls; --drops ""
# skips the drops; --skip-table leaves the table for a later call;
# --no-gpt-fast for nights without the models (a --filter that leaves them out).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
nights=20 drops="3 5 10" out="$root/selftest" build="${KBENCH_BUILD_DIR:-$root/build}" confirm=4
resume=0 table=1 gpt_fast=()
opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --nights) nights="$2"; shift 2 ;;
    --drops) drops="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --confirm) confirm="$2"; shift 2 ;;
    --resume) resume=1; shift ;;
    --skip-table) table=0; shift ;;
    --no-gpt-fast) gpt_fast=(--no-gpt-fast); shift ;;
    --) shift; opts=("$@"); break ;;
    *) echo "gate-selftest.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out/aa"
aa="$out/aa.csv"
[ -e "$aa" ] && [ "$resume" = 0 ] && { echo "gate-selftest.sh: $aa exists: use a fresh --out, or --resume" >&2; exit 2; }
nightly=("$root/tools/nightly.sh" --build "$build" --confirm "$confirm" ${gpt_fast[@]+"${gpt_fast[@]}"})
done_nights=0
while [ -f "$out/aa/night-$((done_nights + 1))/exit" ]; do done_nights=$((done_nights + 1)); done

for k in $(seq $((done_nights + 1)) "$nights"); do
  echo "gate-selftest: A/A night $k of $nights" >&2
  "${nightly[@]}" --history "$aa" --out "$out/aa/night-$k" -- "${opts[@]}" > "$out/aa/night-$k.log" 2>&1
  rc=$?
  mkdir -p "$out/aa/night-$k"
  echo "$rc" > "$out/aa/night-$k/exit"
  [ "$rc" -eq 2 ] && { echo "gate-selftest.sh: night $k: exit 2 (see $out/aa/night-$k.log)" >&2; exit 2; }
done

drop_args=()
for p in $drops; do
  [ -f "$out/drop-$p/exit" ] && { drop_args+=(--drop "$p" "$out/drop-$p.csv"); continue; }
  echo "gate-selftest: injected $p% slowdown" >&2
  cp "$aa" "$out/drop-$p.csv"
  # Every key is slowed at once: lift the suspects' cap so that each key is
  # re-measured and judged as it would be alone.
  "${nightly[@]}" --history "$out/drop-$p.csv" --out "$out/drop-$p" --max-suspects 1 -- "${opts[@]}" \
    --inject-slowdown ".*=$p" --allow-injected-slowdown > "$out/drop-$p.log" 2>&1
  rc=$?
  # 2: the injected night did not run whole (a crash, a kgate error): no
  # table reads it as measured, and --resume measures it again.
  [ "$rc" -eq 2 ] && { echo "gate-selftest.sh: drop $p%: exit 2 (see $out/drop-$p.log)" >&2; exit 2; }
  echo "$rc" > "$out/drop-$p/exit"
  drop_args+=(--drop "$p" "$out/drop-$p.csv")
done
[ "$table" = 1 ] || exit 0

kgate="$build/tools/kgate/kgate"
{
  echo "## Gate self-test: $nights A/A nights, drops $drops% ($(date -u +%Y-%m-%d), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
  echo
  "$kgate" selftest-table --aa "$aa" "${drop_args[@]}" --targets "$root/targets"
  echo
  echo "### Time: first stage and re-measurement per A/A night"
  echo
  echo "| night | kbench run | re-measure |"
  echo "| --- | --- | --- |"
  for k in $(seq 1 "$nights"); do
    t="$out/aa/night-$k/timing.txt"
    m=$(awk '$1 == "measure" { print $2 }' "$t" 2>/dev/null)
    r=$(awk '$1 == "rerun" { print $2 }' "$t" 2>/dev/null)
    echo "| $k | ${m:--} ms | ${r:-0} ms |"
  done
  echo
  "$kgate" noise --results "$aa" | head -1
} | tee "$out/selftest.md"
