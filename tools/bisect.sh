#!/usr/bin/env bash
# Names the commit that made one gate key slower: git bisect run over kbench
# builds, each candidate measured interleaved with the good build. The rules
# and what it prints: docs/gate.md "Bisecting a failing key".
#
#   tools/bisect.sh --good SHA --bad SHA --key KEY [--rounds N] [--threshold PCT]
#                   [--seed N] [--targets DIR] [--build-cmd CMD] [--kbench PATH]
#                   [--kgate PATH] [--work DIR] [-- kbench run options...]
#
# Run it in the repository. KEY as kgate prints it: NAME [SHAPE] DTYPE METRIC
# (an "@ ARCH" or "(cuda:N)" after it is ignored). Builds happen in worktrees
# under --work (default $TMPDIR), never in the checkout: --build-cmd is run by
# bash in the source tree with SRC and BUILD set (default: CMake, target
# kbench, KBENCH_CUDA_ARCH or native, KBENCH_CMAKE_ARGS); BUILD/PATH is the
# kbench (--kbench, default KBENCH_BISECT_KBENCH or suite/kbench).
# Exit: 0 the first bad commit named; 1 bad is not slower than good; 2 bad
# input (an unknown SHA or key, good not an ancestor of bad, a missing tool),
# or good or bad fails to build or measure; 3 skipped commits hide which of
# several is the first bad one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage="usage: tools/bisect.sh --good SHA --bad SHA --key KEY [--rounds N] [--threshold PCT] [--seed N] [--targets DIR] [--build-cmd CMD] [--kbench PATH] [--kgate PATH] [--work DIR] [-- kbench run options...]"
die() { echo "bisect.sh: $1" >&2; exit 2; }
say() { printf '%-6s %-12s %12s %12s %8s  %s\n' "$@" >&3; }
# shellcheck source=tools/ab-lib.sh
source "$root/tools/ab-lib.sh"

# keys_of CSV: its first keys, as kgate prints them, on one line.
keys_of() {
  awk -F, 'NR > 1 { print $1 ($9 == "" ? "" : " [" $9 "]") " " $5 " " $2 }' "$1" | sort -u |
    awk 'NR <= 4 { s = s (NR > 1 ? ", " : "") $0 } END { print s (NR > 4 ? ", ..." : "") }'
}

if [ "${1:-}" = --step ]; then # one step of git bisect run, in the candidates' worktree
  # shellcheck disable=SC1090
  source "$BISECT_STATE"
  exec 2>&4
  sha="$(git rev-parse --short=12 HEAD)"
  n=$(($(cat "$work/steps") + 1))
  echo "$n" > "$work/steps"
  build "$work/cand" "$work/cand-build" || { say "$n" "$sha" - - - "does not build: skip" && exit 125; }
  rc=0
  measure_and_judge "$n" "$half" || rc=$?
  case "$rc" in
    0) ;;
    1) echo "bisect.sh: the good build failed to measure: $(cat "$work/run.why")" >&2 && exit 255 ;;
    2) say "$n" "$sha" - - - "does not measure ($(cat "$work/run.why")): skip" && exit 125 ;;
    *) say "$n" "$sha" - - - "kgate compare has no line of the key: skip" && exit 125 ;;
  esac
  case "$verdict" in
    SLOWER) say "$n" "$sha" "$good_med" "$cand_med" "$change" "bad" && exit 1 ;;
    SAME | FASTER) say "$n" "$sha" "$good_med" "$cand_med" "$change" "good ($verdict)" && exit 0 ;;
    UNSURE) say "$n" "$sha" "$good_med" "$cand_med" "$change" "UNSURE: skip" && exit 125 ;;
    *) say "$n" "$sha" - - - "not measured (failed, skipped or throttled): skip" && exit 125 ;;
  esac
fi

good_in="" bad_in="" key="" rounds=5 threshold=2 seed=1 targets="" build_cmd="" work_in=""
kbench_rel="${KBENCH_BISECT_KBENCH:-suite/kbench}"
kgate="${KGATE_BIN:-${KBENCH_BUILD_DIR:-$root/build}/tools/kgate/kgate}"
opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' && exit 0 ;;
    --) shift && opts=("$@") && break ;;
    --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
    --good | --bad | --key | --rounds | --threshold | --seed | --targets | --build-cmd | --kbench | --kgate | --work)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --good) good_in="$2" ;; --bad) bad_in="$2" ;; --key) key="$2" ;; --rounds) rounds="$2" ;;
        --threshold) threshold="$2" ;; --seed) seed="$2" ;; --targets) targets="$2" ;;
        --build-cmd) build_cmd="$2" ;; --kbench) kbench_rel="$2" ;; --kgate) kgate="$2" ;; --work) work_in="$2" ;;
      esac
      shift 2
      ;;
    *) echo "$usage" >&2 && die "unknown option '$1'" ;;
  esac
done
[ -n "$good_in" ] && [ -n "$bad_in" ] && [ -n "$key" ] || { echo "$usage" >&2 && die "--good, --bad and --key are needed"; }
[[ $rounds =~ ^[0-9]+$ ]] && [ "$rounds" -ge 3 ] || die "--rounds '$rounds': a whole number, 3 or more"
[[ $threshold =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v t="$threshold" 'BEGIN { exit !(t > 0 && t < 100) }' ||
  die "--threshold '$threshold': a percentage above 0 and below 100"
[[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed': a whole number"
[[ $kbench_rel != /* ]] || die "--kbench '$kbench_rel': a path inside the build folder"
[ -z "$targets" ] || targets="$(cd "$targets" 2> /dev/null && pwd)" || die "--targets: no folder '$targets'"
command -v git > /dev/null || die "git not found"
[ -x "$kgate" ] || die "kgate not found at '$kgate': build it, or give --kgate PATH or KGATE_BIN"
top="$(git rev-parse --show-toplevel 2> /dev/null)" || die "not in a git repository: run it in the one to bisect"
good="$(git rev-parse -q --verify "$good_in^{commit}")" || die "--good '$good_in': no such commit"
bad="$(git rev-parse -q --verify "$bad_in^{commit}")" || die "--bad '$bad_in': no such commit"
[ "$good" != "$bad" ] && git merge-base --is-ancestor "$good" "$bad" ||
  die "--good $good_in is not an ancestor of --bad $bad_in: nothing to bisect between them"
parse_key "$key" ||
  die "--key '$key': not a key as kgate prints it (NAME [SHAPE] DTYPE METRIC, as 'gemv [D=4096] int8 memory_bandwidth(GB/s)')"
filter="$(name_filter "$name")"

work="$(mktemp -d "${work_in:-${TMPDIR:-/tmp}}/kbench-bisect.XXXXXX")" || die "cannot make a folder under '${work_in:-${TMPDIR:-/tmp}}'"
trap 'remove_worktrees "$top"' EXIT
trap 'exit 130' INT TERM
case "$(cd "$work" && pwd -P)/" in "$(cd "$top" && pwd -P)/"*) die "--work: '$work' is inside the repository" ;; esac
exec 3>&1
worktrees "$top" "$good" "$bad" || { cat "$work/build.log" >&2 && die "git worktree add failed"; }

echo "bisect.sh: $key: good ${good:0:12}, bad ${bad:0:12}; building both in $work"
build "$work/good" "$work/good-build" || { tail -n 20 "$work/build.log" >&2 && die "the good commit does not build"; }
build "$work/cand" "$work/cand-build" || { tail -n 20 "$work/build.log" >&2 && die "the bad commit does not build"; }
say step commit good candidate change verdict
rc=0
measure_and_judge bad "$(awk -v t="$threshold" 'BEGIN { print t / 100 }')" || rc=$?
case "$rc" in
  0) ;;
  1 | 2) die "kbench of the $([ "$rc" = 1 ] && echo good || echo bad) build failed: $(cat "$work/run.why")" ;;
  3) die "unknown key '$key': the good build's rows are $(keys_of "$work/bad-good.csv")" ;;
  *) die "kgate compare has no line of the key" ;;
esac
[ "$verdict" != - ] || die "the key is not measured by both builds (a row failed, skipped or throttled)"
say bad "${bad:0:12}" "$good_med" "$cand_med" "$change" "$verdict"
if [ "$verdict" != SLOWER ]; then
  echo "bisect.sh: bad is not slower than good beyond --threshold $threshold% and the noise ($verdict): nothing to bisect"
  exit 1
fi

if [ "$(git rev-list --count "$good..$bad")" = 1 ]; then
  echo "first bad commit: $(git log -1 --format='%H %s' "$bad") (bad's parent is good)"
  exit 0
fi
half="$(awk -v c="${change%\%}" 'BEGIN { if (c < 0) c = -c; print c / 200 }')"
echo 0 > "$work/steps"
declare -p work kbench_rel build_cmd kgate rounds seed targets filter name shape dtype metric half opts \
  > "$work/state.tmp" && mv "$work/state.tmp" "$work/state"
export BISECT_STATE="$work/state"
git -C "$work/cand" bisect start "$bad" "$good" > /dev/null 2>&1 || die "git bisect start failed"
git -C "$work/cand" bisect run "$root/tools/bisect.sh" --step 4>&2 > "$work/bisect.log" 2>&1 || true
first="$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$work/bisect.log")"
if [ -n "$first" ]; then
  echo "first bad commit: $(git log -1 --format='%H %s' "$first")"
  echo "bisect.sh: $(cat "$work/steps") step(s) after bad's, $((SECONDS / 60)) min $((SECONDS % 60)) s in all"
  exit 0
fi
if grep -q 'first bad commit could be any of' "$work/bisect.log"; then
  echo "bisect.sh: skipped commits hide the first bad one; it is one of:"
  grep -E '^[0-9a-f]{40}$' "$work/bisect.log" | xargs -r git log --no-walk --format='  %H %s'
  exit 3
fi
tail -n 5 "$work/bisect.log" >&2
die "git bisect run stopped"
