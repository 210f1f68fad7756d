#!/usr/bin/env bash
# tools/noise-report.sh with a stub kbench: each run appends the newest
# recorded night of tests/data/nightly_history.csv under a run id of its
# own; the report is made of the runs and exits 0, and a kbench that
# crashes on a run (a SIGSEGV after its rows) fails it (exit 2).
#   tests/noise_report_test.sh SOURCE_DIR BUILD_DIR
set -u
src="$1" build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  echo "--- noise-report.sh's output:"
  cat "$tmp/log" 2> /dev/null
  exit 1
}

# A build folder of the stub kbench and the real kgate.
mkdir -p "$tmp/build/suite" "$tmp/build/tools/kgate"
ln -s "$build/tools/kgate/kgate" "$tmp/build/tools/kgate/kgate"
cat > "$tmp/build/suite/kbench" << 'STUB'
#!/usr/bin/env bash
# kbench run --csv FILE: a recorded night, run id stub-N for the Nth call;
# STUB_CRASH_AT=N: the Nth call crashes after its rows.
set -u
n=$(($(cat "$STUB_COUNT" 2> /dev/null || echo 0) + 1))
echo "$n" > "$STUB_COUNT"
csv=""
while [ $# -gt 0 ]; do
  case "$1" in
    --csv) csv="$2"; shift 2 ;;
    *) shift ;;
  esac
done
[ -s "$csv" ] || head -n 1 "$STUB_TEMPLATE" > "$csv"
grep -F ",20261121T020000Z-abc00b," "$STUB_TEMPLATE" | sed "s/,20261121T020000Z-abc00b,/,stub-$n,/" >> "$csv"
[ "$n" != "${STUB_CRASH_AT:-}" ] || { ulimit -c 0; kill -SEGV $$; }
exit 0
STUB
chmod +x "$tmp/build/suite/kbench"
export KBENCH_BUILD_DIR="$tmp/build" STUB_TEMPLATE="$src/tests/data/nightly_history.csv"

# report DIR EXPECTED_CODE N: tools/noise-report.sh N into DIR.
report() {
  STUB_COUNT="$1/count" KBENCH_NOISE_DIR="$1" "$src/tools/noise-report.sh" "$3" > "$tmp/log" 2>&1
  local rc=$?
  [ "$rc" = "$2" ] || fail "$1: exit $rc, expected $2"
}

# Three runs: the report of three runs.
report "$tmp/ok" 0 3
[ -s "$tmp/ok/noise.md" ] && [ -s "$tmp/ok/noise.csv" ] || fail "no noise.md or noise.csv"
grep -q "over 3 runs" "$tmp/log" || fail "not a report of 3 runs"

# kbench crashes on the second run: no report of the runs it did not finish.
STUB_CRASH_AT=2 report "$tmp/crash" 2 3
grep -q "noise-report: kbench failed on run 2 of 3 (exit 139)" "$tmp/log" || fail "no line of the crash"
[ ! -e "$tmp/crash/noise.md" ] || fail "a report after the crash"
echo "noise-report: ok"
