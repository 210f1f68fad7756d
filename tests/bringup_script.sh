#!/usr/bin/env bash
# tools/bringup.sh with stub kbench and kgate binaries (no GPU, no build):
# each stub logs its arguments and writes what the real one would, and
# checks on the way that the steps before it ran. Proves the order of the
# steps, that every step works on the copy in --out (the --targets folder is
# never written) and that the files ready to commit land in --out. With
# BUILD_DIR, once more with the real kgate on a recorded tuned H200 run.
#   tests/bringup_script.sh SOURCE_DIR [BUILD_DIR]
set -u
src="$1" build="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# --- the stubs: $tmp/build/suite/kbench and $tmp/build/tools/kgate/kgate ---
mkdir -p "$tmp/build/suite" "$tmp/build/tools/kgate"
cat > "$tmp/build/suite/kbench" <<'EOF'
#!/usr/bin/env bash
echo "kbench $*" >> "$STUB_LOG"
cmd="$1"; [ "$cmd $2" = "tune gemv" ] && cmd="tune-gemv"
targets="" write="" csv=""
while [ $# -gt 0 ]; do
  case "$1" in
    --targets) targets="$2"; shift 2 ;;
    --write) write="$2"; shift 2 ;;
    --csv) csv="$2"; shift 2 ;;
    *) shift ;;
  esac
done
# The GPU's file: the one that matches, else the probe's draft installed.
name="${STUB_NAME:-stub-gpu.json}"
case "$cmd" in
  probe)
    if [ -n "${STUB_MATCH:-}" ]; then
      echo "target file: $targets/$STUB_MATCH" >&2
    else
      echo "target file: none (new: $name)" >&2
    fi
    if [ -n "${STUB_PROBE:-}" ]; then
      cp "$STUB_PROBE" "$write"
    else
      echo '{"gpu": "Stub GPU", "measured": {"ladder": "probed"}}' > "$write"
    fi
    ;;
  tune-gemv | tune)
    [ -f "$targets/${STUB_MATCH:-$name}" ] || { echo "stub: no target file before tuning" >&2; exit 3; }
    mkdir -p "$targets/tuning"
    if [ -n "${STUB_TUNING:-}" ]; then cp "$STUB_TUNING" "$targets/tuning/${STUB_MATCH:-$name}"; else
      echo "$cmd" >> "$targets/tuning/${STUB_MATCH:-$name}"
    fi
    ;;
  run)
    [ -z "${STUB_TUNED:-}" ] || grep -q tune "$targets/tuning/${STUB_MATCH:-$name}" ||
      { echo "stub: run before tuning" >&2; exit 3; }
    # STUB_RUN_RC=N: exit N, after writing rows unless N is 2 or 3 (kbench's
    # input and machine failures, found before a row).
    case "${STUB_RUN_RC:-0}" in 2 | 3) echo "stub: kbench run fails" >&2; exit "$STUB_RUN_RC" ;; esac
    if [ -n "${STUB_RUN:-}" ]; then cp "$STUB_RUN" "$csv"; else
      [ -s "$csv" ] || printf 'name,metric\n' > "$csv"
      printf 'gemv,memory_bandwidth(GB/s)\n' >> "$csv"
    fi
    exit "${STUB_RUN_RC:-0}"
    ;;
esac
EOF
cat > "$tmp/build/tools/kgate/kgate" <<'EOF'
#!/usr/bin/env bash
echo "kgate $*" >> "$STUB_LOG"
out="" targets="" probe=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --probe) probe="$2"; shift 2 ;;
    *) shift ;;
  esac
done
[ -s "$probe" ] || { echo "stub: no --probe file" >&2; exit 3; }
echo "# report" > "$out/bringup.md"
echo "<html>" > "$out/bringup.html"
# STUB_NO_DRAFT=1: a problem of the input that leaves no draft (exit 2).
[ -z "${STUB_NO_DRAFT:-}" ] || exit 2
echo '{"gpu": "Stub GPU", "drafted": true}' > "$out/${STUB_MATCH:-${STUB_NAME:-stub-gpu.json}}"
EOF
chmod +x "$tmp/build/suite/kbench" "$tmp/build/tools/kgate/kgate"
export KBENCH_BUILD_DIR="$tmp/build" STUB_LOG="$tmp/calls.log"

# --- a targets folder of the repository's shape -----------------------------
repo="$tmp/repo-targets"
mkdir -p "$repo/datasheets" "$repo/tuning"
echo '{"gpu": "Other GPU"}' > "$repo/other.json"
echo '{"gpu": "Match GPU"}' > "$repo/stub-match.json"
echo '{"gpus": []}' > "$repo/datasheets/nvidia.json"
echo '{"gpu": "Other GPU"}' > "$repo/tuning/other.json"
snapshot() { (cd "$repo" && find . -type f -exec md5sum {} + | sort); }
before="$(snapshot)"

bringup() { bash "$src/tools/bringup.sh" --no-build --targets "$repo" "$@"; }

# A GPU without a target file: probe, install, tune gemv, tune, run, report.
out="$tmp/a"
STUB_TUNED=1 bringup --out "$out" --reference "$tmp/ref.csv" > "$tmp/a.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/a.log"; fail "new GPU: exit $rc"; }
work="$out/targets"
expected="kbench probe --device 0 --targets $work --write $out/probe.json
kbench tune gemv --device 0 --targets $work
kbench tune --device 0 --targets $work
kbench run --device 0 --targets $work --csv $out/results.csv
kgate bringup --results $out/results.csv --reference $tmp/ref.csv --targets $work --probe $out/probe.json --out $out"
[ "$(cat "$tmp/calls.log")" = "$expected" ] || fail "new GPU: the steps were:
$(cat "$tmp/calls.log")"
cmp -s "$out/probe.json" "$work/stub-gpu.json" || fail "the probe's draft was not installed"
[ -f "$work/other.json" ] && [ -f "$work/datasheets/nvidia.json" ] || fail "the copy is incomplete"
grep -q drafted "$out/stub-gpu.json" || fail "no drafted target file in --out"
[ "$(cat "$out/tuning/stub-gpu.json")" = "$(printf 'tune-gemv\ntune')" ] ||
  fail "no tuning table in --out: $(ls -R "$out")"
grep -q "ready to commit (review first): $out/stub-gpu.json -> targets/stub-gpu.json" "$tmp/a.log" ||
  fail "no ready-to-commit line: $(cat "$tmp/a.log")"
grep -q "ready to commit (review first): $out/tuning/stub-gpu.json -> targets/tuning/stub-gpu.json" \
  "$tmp/a.log" || fail "no ready-to-commit line for the tuning table"
[ "$(snapshot)" = "$before" ] || fail "--targets was written"

# Again into the same --out: the copy starts over from --targets.
: > "$tmp/calls.log"
bringup --out "$out" > "$tmp/a2.log" 2>&1 || { cat "$tmp/a2.log"; fail "second bring-up failed"; }
[ "$(cat "$out/tuning/stub-gpu.json")" = "$(printf 'tune-gemv\ntune')" ] || fail "stale copy"

# A run that fails before a row, into an --out with an earlier bring-up's
# results: no report of the earlier run, nothing named ready to commit.
: > "$tmp/calls.log"
STUB_RUN_RC=2 bringup --out "$out" > "$tmp/a3.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/a3.log"; fail "failed run: exit $rc, expected 2"; }
grep -q "^kgate" "$tmp/calls.log" && fail "failed run: a report of the earlier run's rows"
grep -q "ready to commit (review" "$tmp/a3.log" && fail "failed run: $(cat "$tmp/a3.log")"
grep -q "kbench run wrote no rows (exit 2): no report" "$tmp/a3.log" || fail "$(cat "$tmp/a3.log")"
# A run with a failed row: reported on (its rows alone), not ready to commit.
STUB_RUN_RC=1 bringup --out "$out" > "$tmp/a4.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/a4.log"; fail "failed row: exit $rc, expected 1"; }
[ "$(cat "$out/results.csv")" = "$(printf 'name,metric\ngemv,memory_bandwidth(GB/s)')" ] ||
  fail "failed row: results.csv holds an earlier run: $(cat "$out/results.csv")"
grep -q "ready to commit (review" "$tmp/a4.log" && fail "failed row: $(cat "$tmp/a4.log")"
grep -q "not ready to commit: kbench run exited 1" "$tmp/a4.log" || fail "$(cat "$tmp/a4.log")"

# A report that drafts no target file, into an --out with an earlier
# bring-up's draft: that draft is not named, nor left to be taken for this one.
STUB_NO_DRAFT=1 bringup --out "$out" > "$tmp/a5.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/a5.log"; fail "no draft: exit $rc, expected 2"; }
grep -qF "$out/stub-gpu.json -> " "$tmp/a5.log" && fail "no draft: an earlier draft named: $(cat "$tmp/a5.log")"
[ ! -e "$out/stub-gpu.json" ] || fail "no draft: an earlier bring-up's draft left in --out"

# A GPU with a target file: the probe's draft takes its place in the copy
# (no second file of the GPU), its file's name throughout.
out="$tmp/b"
: > "$tmp/calls.log"
STUB_MATCH=stub-match.json bringup --out "$out" > "$tmp/b.log" 2>&1 ||
  { cat "$tmp/b.log"; fail "known GPU: failed"; }
[ ! -e "$out/targets/stub-gpu.json" ] || fail "known GPU: a second file was installed"
cmp -s "$out/probe.json" "$out/targets/stub-match.json" || fail "known GPU: not the probe's draft"
[ -f "$out/stub-match.json" ] && [ -f "$out/tuning/stub-match.json" ] ||
  fail "known GPU: ready-to-commit files: $(ls -R "$out")"
[ "$(snapshot)" = "$before" ] || fail "--targets was written"

# --no-tune: probe, run, report; no tuning table to commit.
out="$tmp/c"
: > "$tmp/calls.log"
bringup --out "$out" --no-tune > "$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; fail "--no-tune failed"; }
grep -q "tune" "$tmp/calls.log" && fail "--no-tune tuned: $(cat "$tmp/calls.log")"
[ "$(wc -l < "$tmp/calls.log")" -eq 3 ] || fail "--no-tune: $(cat "$tmp/calls.log")"
[ ! -e "$out/tuning" ] || fail "--no-tune wrote a tuning table"
grep -q "== 3/3 the report" "$tmp/c.log" || fail "--no-tune: steps: $(cat "$tmp/c.log")"

# The new file's name taken by a file that does not match: refused, exit 2.
out="$tmp/d"
STUB_NAME=other.json bringup --out "$out" > "$tmp/d.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/d.log"; fail "name collision: exit $rc, expected 2"; }
grep -q "$repo/other.json exists but does not match this GPU" "$tmp/d.log" || fail "$(cat "$tmp/d.log")"

# --out inside --targets: refused before anything runs.
: > "$tmp/calls.log"
bringup --out "$repo/out" > "$tmp/e.log" 2>&1
[ $? -eq 2 ] || fail "--out inside --targets: expected exit 2"
[ ! -s "$tmp/calls.log" ] || fail "--out inside --targets ran: $(cat "$tmp/calls.log")"
[ "$(snapshot)" = "$before" ] || fail "--targets was written"

# The real kgate on a recorded tuned run, with the probe's draft of its GPU,
# for a GPU without a target file (the repository's targets without the
# H200's) and with one (the H200's): the drafted file has the ladder and a
# check of the same run against it passes.
kgate_exe="$build/tools/kgate/kgate"
if [ -n "$build" ] && [ -x "$kgate_exe" ]; then
  cp "$kgate_exe" "$tmp/build/tools/kgate/kgate"
  cp -R "$src/targets" "$tmp/no-h200"
  rm "$tmp/no-h200/h200-sxm-141gb.json"
  repo_before="$(cd "$src/targets" && find . -type f -exec md5sum {} + | sort)"
  for case in "no-h200 nvidia-h200.json" "repo h200-sxm-141gb.json"; do
    set -- $case
    dir="$tmp/$1" name="$2" out="$tmp/real-$1"
    [ "$1" = repo ] && dir="$src/targets" match="$name" || match=""
    echo '{"gpu": "NVIDIA H200"}' > "$tmp/tuning-h200.json"
    STUB_NAME="$name" STUB_MATCH="$match" STUB_PROBE="$src/tests/data/h200-probe-target.json" \
      STUB_TUNING="$tmp/tuning-h200.json" \
      STUB_RUN="$src/tests/data/h200-tuned-trimmed.csv" \
      bash "$src/tools/bringup.sh" --no-build --targets "$dir" --out "$out" \
      --reference "$src/tests/data/h100-2026-11-24.csv" > "$out.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$out.log"; fail "real kgate, $1: exit $rc"; }
    grep -q '"ladder": {' "$out/$name" || fail "real kgate, $1: no ladder in the draft"
    grep -q "is the probe's draft, which the run used" "$out.log" ||
      fail "real kgate, $1: $(cat "$out.log")"
    mkdir -p "$out-check"
    cp "$out/$name" "$out-check/"
    "$kgate_exe" check --results "$out/results.csv" --targets "$out-check" > "$out-check.log" 2>&1 ||
      { cat "$out-check.log"; fail "real kgate, $1: the check of the same run failed"; }
  done
  [ "$(cd "$src/targets" && find . -type f -exec md5sum {} + | sort)" = "$repo_before" ] ||
    fail "the repository's targets/ was written"
fi
echo "bringup script: ok"
