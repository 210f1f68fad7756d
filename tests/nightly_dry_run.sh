#!/usr/bin/env bash
# tools/nightly.sh without a GPU (KBENCH_NIGHTLY_DRY_RUN=1): the kgate steps
# on a recorded history (tests/data/nightly_history.csv: 12 nights of 6 keys
# from an H100 run, the newest night with a 4% transient on one key and its
# four re-measurements, which are fine). It has no gpt_fast rows: the
# nights run with --no-gpt-fast, and one without it fails.
#   tests/nightly_dry_run.sh SOURCE_DIR BUILD_DIR
set -u
src="$1" build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export KBENCH_NIGHTLY_DRY_RUN=1
nightly="$src/tools/nightly.sh"
hist="$src/tests/data/nightly_history.csv"
fail() { echo "FAIL: $*"; exit 1; }
header="run_id,name,dtype,shape,variant,metric,arch,reason"

# Confirmed night: the transient was measured away; nothing left to suspect.
"$nightly" --history "$hist" --out "$tmp/a" --build "$build" --no-gpt-fast > "$tmp/a.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/a.log"; fail "confirmed night: exit $rc, expected 0"; }
[ "$(cat "$tmp/a/suspects.csv")" = "$header" ] || fail "confirmed night: suspects: $(cat "$tmp/a/suspects.csv")"
for f in summary.md junit.xml report.html gate.txt gate-first.txt; do
  [ -s "$tmp/a/$f" ] || fail "confirmed night: no $f"
done
grep -q "re-measured: median of 4 re-measurement(s)" "$tmp/a/gate.txt" || fail "no re-measured note"

# The same night before its re-measurements: the first stage names the key.
grep -v 'abc00b/[0-9]' "$hist" > "$tmp/first.csv"
"$nightly" --history "$tmp/first.csv" --out "$tmp/b" --build "$build" --no-gpt-fast \
  --dashboard https://ci.example/kbench.html > "$tmp/b.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/b.log"; fail "first stage: exit $rc, expected 1"; }
grep -q "^20261121T020000Z-abc00b,gather_gemv,int8,D=4096,bound=memory,memory_bandwidth(GB/s),NVIDIA H100 80GB HBM3,fails" \
  "$tmp/b/suspects.csv" || fail "suspects: $(cat "$tmp/b/suspects.csv")"
grep -q "dry run: would re-measure 1 key(s) 4 times" "$tmp/b.log" || fail "no dry-run re-measure line"
grep -q "https://ci.example/kbench.html#" "$tmp/b/summary.md" || fail "no dashboard link in summary.md"

# The gpt_fast export is a stage too: without gpt_fast's rows it fails the night.
"$nightly" --history "$hist" --out "$tmp/e" --build "$build" > "$tmp/e.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/e.log"; fail "no gpt_fast rows: exit $rc, expected 2"; }
grep -q "FAIL: kgate gpt-fast: exit 2" "$tmp/e.log" || fail "no gpt-fast reason: $(cat "$tmp/e.log")"

# A first stage that exits 2 (--max-suspects over 1) fails the night.
"$nightly" --history "$hist" --out "$tmp/f" --build "$build" --no-gpt-fast --max-suspects 5 \
  > "$tmp/f.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/f.log"; fail "--max-suspects 5: exit $rc, expected 2"; }
grep -q "FAIL: kgate first stage (check --suspects): exit 2" "$tmp/f.log" ||
  fail "--max-suspects 5: no reason: $(cat "$tmp/f.log")"

# Bad input: exit 2.
"$nightly" --history "$tmp/missing.csv" --out "$tmp/c" --build "$build" > "$tmp/c.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/c.log"; fail "missing history: exit $rc, expected 2"; }
"$nightly" --out "$tmp/d" > /dev/null 2>&1
[ $? -eq 2 ] || fail "no --history: expected exit 2"
echo "nightly dry run: ok"
