#!/usr/bin/env bash
# tools/bisect.sh on a scratch repository of 10 commits whose "kbench" is a
# stub committed in it (built by copying): like tests/nightly_stubs/kbench it
# appends a recorded night of tests/data/nightly_history.csv, each value
# jittered by up to 0.4% and made `slowdown`% lower, a number one commit
# plants. Another commit does not build. The ab-* cases run tools/nightly.sh
# --ab in the repository: tonight measured by c10's stub, the history's runs
# of a good commit before it (ab-console-lost: the gate's console lost).
#   tests/bisect_test.sh SOURCE_DIR BUILD_DIR CASE
# One ctest test per CASE (tests/CMakeLists.txt).
set -u
src="$1" build="$2" case_name="$3"
command -v git > /dev/null || { echo "SKIP: git not found: tools/bisect.sh not tested"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL (bisect $case_name): $*"
  echo "--- bisect.sh's output:"
  cat "$tmp/log" 2> /dev/null
  exit 1
}

repo="$tmp/repo"
export STUB_TEMPLATE="$src/tests/data/nightly_history.csv" STUB_RUN="20261110T020000Z-abc000"
export KGATE_BIN="$build/tools/kgate/kgate" KBENCH_BISECT_KBENCH=kbench TMPDIR="$tmp"
build_cmd='test ! -e "$SRC/BROKEN" && test "$(git -C "$SRC" rev-parse HEAD)" != "${BREAK:-}" && mkdir -p "$BUILD" && cp "$SRC/kbench.sh" "$BUILD/kbench"'
git init -q "$repo" && cd "$repo" || fail "git init"
git config user.email bisect@test && git config user.name bisect-test
cat > kbench.sh << 'EOF'
#!/usr/bin/env bash
# `kbench run --filter RE --csv FILE`: STUB_RUN's rows of experiments matching RE.
slowdown=0
[ "$1" = run ] || exit 2
csv="" filter="."
while [ $# -gt 0 ]; do
  case "$1" in
    --csv) csv="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    --run-id) id="$2"; shift 2 ;;
    *) shift ;;
  esac
done
rows="$(grep -F ",$STUB_RUN," "$STUB_TEMPLATE" | awk -F, -v OFS=, -v re="$filter" -v s="$slowdown" \
  -v seed="$RANDOM" -v id="${id:-stub-$$-$RANDOM}" \
  'BEGIN { srand(seed) } $1 ~ re { $4 = $4 * (1 - s / 100) * (1 + (rand() - 0.5) * 0.008); $25 = id; print }')"
[ -n "$rows" ] || { echo "kbench: error: --filter '$filter' matches no experiment" >&2; exit 2; }
[ -s "$csv" ] || head -n 1 "$STUB_TEMPLATE" > "$csv"
printf '%s\n' "$rows" >> "$csv"
EOF
chmod +x kbench.sh
commit() { git add -A && git commit -q -m "$1" && git rev-parse HEAD; }
c1="$(commit "c1: the stub kbench")"
echo a > a.txt && c2="$(commit "c2")"
echo b > b.txt && c3="$(commit "c3")"
echo c > c.txt && c4="$(commit "c4")"
touch BROKEN && c5="$(commit "c5: does not build")"
rm BROKEN && c6="$(commit "c6: builds again")"
sed -i 's/^slowdown=0$/slowdown=10/' kbench.sh && c7="$(commit "c7: the planted slowdown")"
echo d > d.txt && c8="$(commit "c8")"
echo e > e.txt && c9="$(commit "c9")"
echo f > f.txt && c10="$(commit "c10")"
key="gemv [D=4096] int8 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3"

# bisect EXPECTED_CODE [options...]: runs tools/bisect.sh in the repository.
bisect() {
  local want="$1"
  shift
  "$src/tools/bisect.sh" --build-cmd "$build_cmd" "$@" > "$tmp/log" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || fail "exit $rc, expected $want"
}
says() { grep -q -F -- "$1" "$tmp/log" || fail "no '$1' in the output"; }
one_line() {
  [ "$(wc -l < "$tmp/log")" = 1 ] || fail "not one line"
  says "$1"
}
# step STEP SHA REGEX: a line of the step, the commit, then REGEX at its end.
step() { grep -q -E "^$1 +${2:0:12} .*$3\$" "$tmp/log" || fail "no step $1 of ${2:0:12} ending '$3'"; }
untouched() {
  [ "$(git rev-parse HEAD)" = "$c10" ] && [ -z "$(git status --porcelain)" ] || fail "the checkout changed"
  [ "$(git worktree list | wc -l)" = 1 ] || fail "a worktree was left: $(git worktree list)"
  [ -z "$(ls "$tmp" | grep kbench-bisect)" ] || fail "the work folder was left"
}

case "$case_name" in
  finds)
    bisect 0 --good "$c1" --bad "$c10" --key "$key"
    step bad "$c10" " -[0-9.]+% +SLOWER"
    step "[0-9]+" "$c5" " - +- +- +does not build: skip"
    step "[0-9]+" "$c6" " \+?-?[0-9.]+% +good \(SAME\)"
    step "[0-9]+" "$c7" " -[0-9.]+% +bad"
    says "first bad commit: $c7 c7: the planted slowdown"
    untouched
    # No commit between them: bad is the first bad commit once it measures slower.
    bisect 0 --good "$c6" --bad "$c7" --key "$key"
    says "first bad commit: $c7 c7: the planted slowdown (bad's parent is good)"
    untouched
    ;;
  hidden)
    # c6 does not build either: c6 or c7 is the first bad commit.
    BREAK="$c6" bisect 3 --good "$c1" --bad "$c10" --key "$key"
    says "skipped commits hide the first bad one; it is one of:"
    says "  $c6 c6: builds again"
    says "  $c7 c7: the planted slowdown"
    untouched
    ;;
  no-regression)
    bisect 1 --good "$c1" --bad "$c6" --key "$key" --rounds 3
    says "nothing to bisect"
    untouched
    ;;
  bad-input)
    bisect 2 --good 0123456789abcdef --bad "$c10" --key "$key"
    one_line "--good '0123456789abcdef': no such commit"
    bisect 2 --good "$c10" --bad "$c1" --key "$key"
    one_line "is not an ancestor of --bad"
    bisect 2 --good "$c1" --bad "$c10" --key "gemv"
    one_line "not a key as kgate prints it"
    bisect 2 --good "$c1" --bad "$c10" --key "$key" --kgate "$tmp/no-kgate"
    one_line "kgate not found at '$tmp/no-kgate'"
    bisect 2 --good "$c1" --bad "$c10" --key "$key" --rounds 2
    one_line "--rounds '2'"
    bisect 2 --good "$c1" --bad "$c10" --key "gemv [D=9999] int8 memory_bandwidth(GB/s)"
    says "unknown key 'gemv [D=9999] int8 memory_bandwidth(GB/s)': the good build's rows are gemv [D=1024]"
    bisect 2 --good "$c1" --bad "$c10" --key "nosuch [D=1] int8 memory_bandwidth(GB/s)"
    says "kbench of the good build failed: exit 2: kbench: error: --filter '^(nosuch)\$' matches no experiment"
    bisect 2 --good "$c1" --bad "$c5" --key "$key"
    says "the bad commit does not build"
    bisect 2 --good "$c1" --bad "$c10" --key "$key" --work "$repo"
    one_line "is inside the repository"
    untouched
    ;;
  ab-stands | ab-clears)
    # The history: the recorded nights at commit GOOD (targets blanked: the
    # history rule alone), tonight 10% slower (c10's stub) with HEAD at HEAD.
    good="$c6" head="$c10" want=1 verdict="SLOWER: stands"
    [ "$case_name" = ab-stands ] || good="$c1" head="$c6" want=0 verdict="SAME: does not reproduce: cleared"
    git checkout -q "$head"
    awk -F, -v OFS=, -v g="${good:0:12}-dirty" 'NR > 1 { $3 = ""; $24 = g } 1' "$STUB_TEMPLATE" > "$tmp/template.csv"
    grep -v -F ",$STUB_RUN" "$tmp/template.csv" > "$tmp/history.csv"
    git show "$c10:kbench.sh" > "$tmp/kbench-c10" && chmod +x "$tmp/kbench-c10"
    STUB_TEMPLATE="$tmp/template.csv" KBENCH_BIN="$tmp/kbench-c10" KBENCH_AB_BUILD_CMD="$build_cmd" \
      "$src/tools/nightly.sh" --history "$tmp/history.csv" --out "$tmp/out" --targets "$tmp/none" \
      --confirm 0 --no-gpt-fast --ab > "$tmp/log" 2>&1
    rc=$?
    [ "$rc" = "$want" ] || fail "nightly.sh --ab: exit $rc, expected $want"
    grep -q -E "^A/B gemv \[D=4096\] int8 memory_bandwidth\(GB/s\) @ NVIDIA H100 80GB HBM3: last good ${good:0:12} [0-9.]+, tonight ${head:0:12} [0-9.]+: [-+]?[0-9.]+% ±[0-9.]+% $verdict\$" "$tmp/out/ab.txt" ||
      fail "no A/B line of gemv [D=4096] ending '$verdict' in ab.txt: $(cat "$tmp/out/ab.txt")"
    [ "$(grep -c '^A/B ' "$tmp/out/ab.txt")" = 6 ] || fail "expected an A/B line for each of the 6 keys"
    [ "$case_name" = ab-stands ] || says "nightly.sh: A/B: no failure reproduced against the last good build: cleared"
    [ "$(git worktree list | wc -l)" = 1 ] && [ -z "$(ls "$tmp" | grep kbench-ab)" ] || fail "a worktree was left"
    ;;
  ab-console-lost)
    # The final stage's console lost (a full disk: kgate's exit 1 does not
    # say so): no failure can be read from gate.txt, so none is cleared.
    git checkout -q "$c6"
    awk -F, -v OFS=, -v g="${c1:0:12}-dirty" 'NR > 1 { $3 = ""; $24 = g } 1' "$STUB_TEMPLATE" > "$tmp/template.csv"
    grep -v -F ",$STUB_RUN" "$tmp/template.csv" > "$tmp/history.csv"
    git show "$c10:kbench.sh" > "$tmp/kbench-c10" && chmod +x "$tmp/kbench-c10"
    STUB_TEMPLATE="$tmp/template.csv" KBENCH_BIN="$tmp/kbench-c10" KBENCH_AB_BUILD_CMD="$build_cmd" \
      REAL_KGATE="$KGATE_BIN" KGATE_BIN="$src/tests/nightly_stubs/kgate" STUB_KGATE_STAGE=final \
      STUB_KGATE_EXIT=lost "$src/tools/nightly.sh" --history "$tmp/history.csv" --out "$tmp/out" \
      --targets "$tmp/none" --confirm 0 --no-gpt-fast --ab > "$tmp/log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || fail "nightly.sh --ab: exit $rc, expected 1"
    says "FAIL: the gate found a regression"
    grep -q "^A/B: .*gate.txt has no verdict line" "$tmp/out/ab.txt" || fail "ab.txt: $(cat "$tmp/out/ab.txt")"
    ;;
  *)
    echo "unknown case '$case_name'"
    exit 2
    ;;
esac
[ -z "${SHOW_LOG:-}" ] || cat "$tmp/log"
echo "bisect ($case_name): ok"
