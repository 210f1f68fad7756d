#!/usr/bin/env bash
# tools/nightly.sh fails closed, driven with stand-ins for kbench and kgate
# (tests/nightly_stubs/: the stub kbench appends a recorded night, then
# exits as told; the stub kgate is the real one but for a stage told to
# fail). Tonight is the newest night of tests/data/nightly_history.csv (a
# 4% transient on one key, fine in its four re-measurements), replayed
# with tonight's run id; the earlier nights are the history.
#   tests/nightly_stubs_test.sh SOURCE_DIR BUILD_DIR CASE
# One ctest test per CASE (tests/CMakeLists.txt).
set -u
src="$1" build="$2" case_name="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL ($case_name): $*"
  echo "--- nightly.sh's output:"
  cat "$tmp/log" 2> /dev/null
  exit 1
}

# The recorded nights, moved to 2020 so that tonight (now) is the newest
# whatever this machine's clock says.
sed 's/2026-11-/2020-11-/g; s/,20261\([0-9]\{3\}\)T/,20201\1T/g' "$src/tests/data/nightly_history.csv" \
  > "$tmp/template.csv"
export STUB_TEMPLATE="$tmp/template.csv" STUB_RUN="20201121T020000Z-abc00b"
export STUB_LOG="$tmp/kbench-calls.txt"
export KBENCH_BIN="$src/tests/nightly_stubs/kbench" KGATE_BIN="$src/tests/nightly_stubs/kgate"
export REAL_KGATE="$build/tools/kgate/kgate"
unset KBENCH_NIGHTLY_DRY_RUN
hist="$tmp/history/results.csv"
mkdir -p "$tmp/history"
grep -v -F ",$STUB_RUN" "$tmp/template.csv" > "$hist"
cp "$hist" "$tmp/before.csv"

# night EXPECTED_CODE [nightly.sh options...]: runs the night, checks its code.
night() {
  local want="$1"
  shift
  "$src/tools/nightly.sh" --history "$hist" --out "$tmp/out" --no-gpt-fast "$@" > "$tmp/log" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || fail "exit $rc, expected $want"
}
says() { grep -q -F -- "$1" "$tmp/log" || fail "no '$1' in the output"; }
rows_of() { grep -c -F -- ",$1," "$hist" || true; }
reports_written() {
  for f in summary.md junit.xml report.html gate.txt gate-first.txt timing.txt; do
    [ -s "$tmp/out/$f" ] || fail "no $f"
  done
}

case "$case_name" in
  ok)
    # Measured, one suspect re-measured 4 times, passed: the only green night.
    night 0
    id="$(grep -o -E '[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}' "$tmp/kbench-calls.txt" | head -n 1)"
    [ -n "$id" ] || fail "kbench was given no --run-id: $(cat "$tmp/kbench-calls.txt")"
    [ "$(rows_of "$id")" = 6 ] || fail "$(rows_of "$id") rows of $id, expected 6"
    [ "$(grep -c -F ",$id/" "$hist")" = 4 ] || fail "expected 4 attempts of $id"
    says "kbench measure: exit 0; 6 row(s) of run $id appended"
    says "kbench rerun: exit 0; 4 row(s) of run $id appended"
    says "PASS: 0 regressions"
    grep -q -- "--rerun" "$tmp/kbench-calls.txt" || fail "no re-measurement"
    ! grep -- "--rerun" "$tmp/kbench-calls.txt" | grep -q -- "--run-id" ||
      fail "the re-measurement was given --run-id"
    reports_written
    ;;
  run-id-given)
    # A --run-id of the options' (a job array's) is tonight's; the
    # re-measurement, which refuses --run-id and --shard, is not given them.
    night 0 -- --run-id nightly-42 --shard 1/1
    [ "$(rows_of nightly-42)" = 6 ] || fail "no rows of nightly-42"
    ! grep -- "--rerun" "$tmp/kbench-calls.txt" | grep -q -E -- "--run-id|--shard" ||
      fail "the re-measurement was given --run-id or --shard"
    ;;
  kbench-exit1)
    # Rows appended, some failed: gated and reported, and the night fails.
    STUB_KBENCH=exit1 night 1
    says "FAIL: kbench measure exited 1: rows failed"
    says "PASS: 0 regressions"  # the gate alone would have passed it
    reports_written
    ;;
  kbench-exit2)
    STUB_KBENCH=exit2 night 2
    says "FAIL: kbench measure (exit 2: bad usage or input) appended no row of run"
    ;;
  kbench-exit2-rows)
    STUB_KBENCH=rows-exit2 night 2
    says "FAIL: kbench measure: exit 2: bad usage or input, after 6 row(s)"
    ;;
  kbench-exit3)
    STUB_KBENCH=exit3 night 2
    says "FAIL: kbench measure (exit 3: no GPU or driver) appended no row of run"
    ;;
  kbench-crash)
    STUB_KBENCH=crash night 2
    says "FAIL: kbench measure: killed by signal 11 (SIGSEGV), after 6 row(s)"
    reports_written
    ;;
  kbench-crash-partial)
    STUB_KBENCH=half-crash night 2
    says "FAIL: kbench measure: killed by signal 11 (SIGSEGV), after 3 row(s)"
    ;;
  kbench-no-rows)
    STUB_KBENCH=norows night 2
    says "FAIL: kbench measure (exit 0) appended no row of run"
    cmp -s "$hist" "$tmp/before.csv" || fail "the history changed"
    ;;
  kbench-no-rows-exit1)
    STUB_KBENCH=norows-exit1 night 2
    says "FAIL: kbench measure (exit 1: rows failed) appended no row of run"
    ;;
  kbench-cut-row)
    STUB_KBENCH="cut" night 2
    says "ends mid-row: its append was cut short"
    ;;
  kbench-other-run)
    # Rows, but not of tonight's run: the gate would judge them as tonight's.
    STUB_KBENCH=wrongid night 2
    says "FAIL: kbench measure (exit 0) appended no row of run"
    ;;
  kbench-shrinks-history)
    STUB_KBENCH=shrink night 2
    says "shorter than it was"
    ;;
  kbench-shrinks-linked-history)
    # The history a symbolic link to the file (a CI cache): cut to half,
    # then tonight's rows appended, it is still shorter than it was.
    mkdir -p "$tmp/cache"
    mv "$hist" "$tmp/cache/results.csv" && ln -s "$tmp/cache/results.csv" "$hist"
    STUB_KBENCH=shrink-rows night 2
    says "shorter than it was"
    ;;
  rerun-exit3)
    STUB_KBENCH_RERUN=exit3 night 2
    says "FAIL: kbench rerun (exit 3: no GPU or driver) appended no row of run"
    ;;
  rerun-exit1)
    STUB_KBENCH_RERUN=exit1 night 1
    says "FAIL: kbench rerun exited 1: rows failed"
    ;;
  rerun-crash)
    STUB_KBENCH_RERUN=crash night 2
    says "FAIL: kbench rerun: killed by signal 11 (SIGSEGV)"
    ;;
  kgate-first-exit2)
    STUB_KGATE_STAGE=first STUB_KGATE_EXIT=2 night 2
    says "FAIL: kgate first stage (check --suspects): exit 2: bad input or usage"
    grep -q -- "--rerun" "$tmp/kbench-calls.txt" && fail "re-measured after a failed first stage"
    reports_written
    ;;
  kgate-final-crash)
    STUB_KGATE_STAGE=final STUB_KGATE_EXIT=segv night 2
    says "FAIL: kgate final stage (check): killed by signal 11 (SIGSEGV)"
    ;;
  kgate-gpt-fast-exit2)
    # gpt-fast is a stage when it is not turned off.
    STUB_KGATE_STAGE=gpt-fast STUB_KGATE_EXIT=2 \
      "$src/tools/nightly.sh" --history "$hist" --out "$tmp/out" > "$tmp/log" 2>&1
    rc=$?
    [ "$rc" = 2 ] || fail "exit $rc, expected 2"
    says "FAIL: kgate gpt-fast: exit 2: bad input or usage"
    ;;
  max-suspects-dry-run)
    # kgate's own exit 2 in the first stage (--max-suspects over 1), dry run.
    cp "$tmp/template.csv" "$hist"
    night 2 --max-suspects 5 --dry-run
    says "FAIL: kgate first stage (check --suspects): exit 2"
    ;;
  history-in-out)
    # The history inside --out, or one of its files under another name.
    mkdir -p "$tmp/out"
    cp "$hist" "$tmp/out/suspects.csv"
    cp "$hist" "$tmp/out-before.csv"
    for h in "$tmp/out/suspects.csv" "$tmp/out/sub/../suspects.csv" "$tmp/out/x/h.csv"; do
      "$src/tools/nightly.sh" --history "$h" --out "$tmp/out" > "$tmp/log" 2>&1
      rc=$?
      [ "$rc" = 2 ] || fail "--history $h: exit $rc, expected 2"
      says "is inside --out"
    done
    ln "$hist" "$tmp/out/timing.txt"
    "$src/tools/nightly.sh" --history "$hist" --out "$tmp/out" > "$tmp/log" 2>&1
    rc=$?
    [ "$rc" = 2 ] || fail "history linked as timing.txt: exit $rc, expected 2"
    says "is the same file as $tmp/out/timing.txt"
    cmp -s "$hist" "$tmp/before.csv" || fail "the history changed"
    cmp -s "$tmp/out/suspects.csv" "$tmp/out-before.csv" || fail "the history in --out changed"
    [ ! -s "$tmp/kbench-calls.txt" ] || fail "kbench ran"
    ;;
  out-unwritable)
    # An --out that cannot take the reports is bad input: exit 2 with one
    # message before kbench runs (set -e's exit 1 at the first write, or a
    # kgate stage that failed after the night was measured).
    unwritable=("$tmp/out/timing.txt" "$tmp/out/report.html")
    [ -d /proc/self ] && unwritable+=(/proc/self)  # not writable even by root
    [ "$(id -u)" = 0 ] || unwritable+=("$tmp/ro")  # mode 500: root writes it anyway
    : > "$tmp/file"
    for o in "$tmp/file" "$tmp/file/sub"; do
      "$src/tools/nightly.sh" --history "$hist" --out "$o" --no-gpt-fast > "$tmp/log" 2>&1
      rc=$?
      [ "$rc" = 2 ] || fail "--out $o: exit $rc, expected 2"
      says "nightly.sh: cannot create directory"
      [ "$(grep -c . "$tmp/log")" = 1 ] || fail "--out $o: more than one line"
    done
    mkdir -p "$tmp/ro" && chmod 500 "$tmp/ro"
    for o in "${unwritable[@]}"; do
      rm -rf "$tmp/out" "$tmp/kbench-calls.txt"
      case "$o" in "$tmp/out/"*) mkdir -p "$o" && o="$tmp/out" ;; esac
      "$src/tools/nightly.sh" --history "$hist" --out "$o" --no-gpt-fast > "$tmp/log" 2>&1
      rc=$?
      [ "$rc" = 2 ] || fail "--out $o: exit $rc, expected 2"
      says "nightly.sh: cannot write the night's reports in --out $o"
      [ "$(grep -c . "$tmp/log")" = 1 ] || fail "--out $o: more than one line"
      [ ! -s "$tmp/kbench-calls.txt" ] || fail "--out $o: kbench ran"
    done
    chmod 700 "$tmp/ro"
    cmp -s "$hist" "$tmp/before.csv" || fail "the history changed"
    ;;
  selftest-drop-crash)
    # tools/gate-selftest.sh: its injected night fails (kbench crashes):
    # exit 2, and no table that reads the drop as measured.
    mkdir -p "$tmp/st"
    cp "$hist" "$tmp/st/aa.csv"
    STUB_KBENCH_INJECTED=crash "$src/tools/gate-selftest.sh" --nights 1 --drops 5 --out "$tmp/st" \
      --build "$build" --no-gpt-fast --resume > "$tmp/log" 2>&1
    rc=$?
    [ "$rc" = 2 ] || fail "gate-selftest.sh: exit $rc, expected 2"
    says "gate-selftest.sh: drop 5%: exit 2"
    [ ! -e "$tmp/st/selftest.md" ] || fail "a table after the failed drop"
    ;;
  *)
    echo "unknown case '$case_name'"
    exit 2
    ;;
esac
echo "nightly ($case_name): ok"
