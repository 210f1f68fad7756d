#!/usr/bin/env bash
# Two commits built in worktrees under $work and measured interleaved, judged
# by kgate compare: sourced by tools/bisect.sh and tools/nightly.sh --ab
# (docs/gate.md). The caller sets work, build_cmd, kbench_rel, kgate,
# rounds, seed, targets, opts, filter and the key (parse_key).

# parse_key KEY: name, shape, dtype and metric of a key as kgate prints it
# (an "@ ARCH" or "(cuda:N)" after it ignored); 1 if it is not one.
parse_key() {
  local re='^([^ ]+)( \[([^]]*)\])? ([^ ]+) ([^ ]+)( @ .+)?$'
  [[ ${1% (cuda*)} =~ $re ]] || return 1
  name="${BASH_REMATCH[1]}" shape="${BASH_REMATCH[3]}" dtype="${BASH_REMATCH[4]}" metric="${BASH_REMATCH[5]}"
}

# name_filter NAME...: --filter for exactly these experiments.
name_filter() {
  printf '^(%s)$' "$(printf '%s\n' "$@" | sort -u | sed 's/[][\\.*^$+?(){}|]/\\&/g' | paste -sd '|')"
}

# worktrees TOP GOOD CAND: the two commits checked out under $work.
worktrees() {
  git -C "$1" worktree add -q --detach "$work/good" "$2" > "$work/build.log" 2>&1 &&
    git -C "$1" worktree add -q --detach "$work/cand" "$3" >> "$work/build.log" 2>&1
}

# remove_worktrees TOP: the worktrees and $work gone.
remove_worktrees() {
  for w in cand good; do git -C "$1" worktree remove --force "$work/$w" > /dev/null 2>&1 || true; done
  rm -rf "$work"
}

default_build() {
  local gen=() args=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=${KBENCH_CUDA_ARCH:-native}")
  command -v ninja > /dev/null && [ ! -f "$BUILD/Makefile" ] && gen=(-G Ninja)
  command -v ccache > /dev/null &&
    args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  read -r -a extra <<< "${KBENCH_CMAKE_ARGS:-}"
  export PATH="/usr/local/cuda/bin:$PATH"
  cmake -S "$SRC" -B "$BUILD" ${gen[@]+"${gen[@]}"} "${args[@]}" ${extra[@]+"${extra[@]}"} &&
    cmake --build "$BUILD" --target kbench --parallel "$(nproc)"
}

# build SRC BUILD: 0 when it built and BUILD's kbench is there (the old one is
# removed first: a build that fails quietly must not measure a stale binary).
build() {
  rm -f "$2/$kbench_rel"
  (
    cd "$1" || exit 1
    export SRC="$1" BUILD="$2"
    if [ -n "$build_cmd" ]; then bash -c "$build_cmd"; else default_build; fi
  ) > "$work/build.log" 2>&1 && [ -x "$2/$kbench_rel" ]
}

# run_kbench WHICH CSV: one run of the key's experiment by the good or the
# candidate build; exit 1 (some row failed) is still a measurement.
run_kbench() {
  local rc=0
  "$work/$1-build/$kbench_rel" run --filter "$filter" --seed "$seed" --targets "${targets:-$work/$1/targets}" \
    --csv "$2" ${opts[@]+"${opts[@]}"} > "$work/run.log" 2>&1 || rc=$?
  [ "$rc" -le 1 ] || { echo "exit $rc: $(grep -m 1 . "$work/run.log" || echo 'no output')" > "$work/run.why" && return 1; }
}

has_key() { awk -F, -v n="$name" -v m="$metric" -v d="$dtype" -v s="$shape" \
  '$1 == n && $2 == m && $5 == d && $9 == s { f = 1 } END { exit !f }' "$1"; }

# measure TAG: --rounds rounds A/B into TAG-good.csv and TAG-cand.csv.
# Returns 1 when the good build failed, 2 the candidate, 3 no row of the key.
measure() {
  local r
  for ((r = 1; r <= rounds; r++)); do
    run_kbench good "$work/$1-good.csv" || return 1
    [ "$r" -gt 1 ] || has_key "$work/$1-good.csv" || return 3
    run_kbench cand "$work/$1-cand.csv" || return 2
  done
}

# judge TAG MIN_CHANGE: sets verdict, good_med, cand_med, change and spread from
# kgate compare's line of the key.
judge() {
  local line
  line="$("$kgate" compare "$work/$1-good.csv" "$work/$1-cand.csv" --min-change "$2" |
    awk -v n="$name" -v s="${shape:--}" -v d="$dtype" -v m="$metric" \
      '$2 == n && $3 == s && $4 == d && $5 == m && !f { print $1, $6, $7, $8, $9; f = 1 }')" || return 1
  [ -n "$line" ] && read -r verdict good_med cand_med change spread <<< "$line"
}

# measure_and_judge TAG MIN_CHANGE: measure, judge, and once more on UNSURE.
measure_and_judge() {
  measure "$1" || return
  judge "$1" "$2" || return 4
  [ "$verdict" = UNSURE ] || return 0
  measure "$1" || return
  judge "$1" "$2" || return 4
}

