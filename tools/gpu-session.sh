#!/usr/bin/env bash
# A device-call helper for development sessions (not the nightly): build for
# sm_90, then each step given as an argument, each logged under $OUT:
#   tests[=FILTER]   GPU tests (gtest filter, default all)
#   tune             kbench tune; the table is copied to $OUT
#   run[=N]          the whole suite (or $KBENCH_RUN_FILTER) N times back to
#                    back into $OUT/runs.csv; no new run starts after
#                    $KBENCH_SESSION_LIMIT seconds (default 540) of the session,
#                    counted from $KBENCH_SESSION_T0 (epoch seconds) where set:
#                    export it once when one device call runs this script
#                    twice, or the second one's limit starts late and the call
#                    is killed before it packs its results (2026-11-25)
#   kbench:ARGS      any kbench command (ARGS split on spaces)
# At the end everything under $OUT is packed into $OUT/all.tgz (the device
# tool brings back only a few files).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
build="${KBENCH_BUILD_DIR:-$root/build-gpu}"
cd "$root"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
session0="${KBENCH_SESSION_T0:-$(date +%s)}"
limit="${KBENCH_SESSION_LIMIT:-540}"
filter=()
[ -n "${KBENCH_RUN_FILTER:-}" ] && filter=(--filter "$KBENCH_RUN_FILTER")
t0=$SECONDS
# KBENCH_PREBUILT=DIR: binaries built on the development machine and carried
# (suite/kbench, tools/kgate/kgate, tests/kbench_gpu_tests); used when they
# start on this machine's image, else built here.
if [ -n "${KBENCH_PREBUILT:-}" ] && "$KBENCH_PREBUILT/suite/kbench" list > "$out/prebuilt.log" 2>&1; then
  build="$KBENCH_PREBUILT"; echo "== prebuilt binaries from $build"
else
  [ -n "${KBENCH_PREBUILT:-}" ] && { echo "== prebuilt binaries do not start here:"; tail -3 "$out/prebuilt.log"; }
  KBENCH_BUILD_DIR="$build" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  echo "== build $((SECONDS - t0)) s"
fi
kb="$build/suite/kbench"
for step in "$@"; do
  t0=$SECONDS
  case "$step" in
    tests*) f="${step#tests}"; f="${f#=}"
            KBENCH_REQUIRE_GPU=1 "$build/tests/kbench_gpu_tests" --gtest_brief=1 --gtest_filter="${f:-*}" > "$out/gpu-tests.log" 2>&1
            echo "== gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/gpu-tests.log" | tr '\n' ' ')"
            grep -E "^\[  FAILED" "$out/gpu-tests.log" | head -20 ;;
    tune) "$kb" tune > "$out/tune.log" 2>&1; echo "== tune rc=$?"; tail -60 "$out/tune.log"
          cp targets/tuning/*.json "$out/" 2>/dev/null ;;
    run*) n="${step#run}"; n="${n#=}"; n="${n:-1}"
          for i in $(seq 1 "$n"); do
            [ $(($(date +%s) - session0)) -lt "$limit" ] || { echo "== run $i not started: ${limit} s limit"; break; }
            s=$SECONDS; "$kb" run "${filter[@]}" --csv "$out/runs.csv" > "$out/run$i.log" 2>&1; rc=$?
            echo "== run $i rc=$rc $((SECONDS - s)) s"; grep -E "^kbench |^cuBLASLt|failed/incorrect|warning" "$out/run$i.log" | head -8
          done ;;
    kbench:*) a="${step#kbench:}"; "$kb" $a > "$out/kbench-step.log" 2>&1; echo "== kbench $a rc=$?"; tail -30 "$out/kbench-step.log" ;;
  esac
  echo "   ($((SECONDS - t0)) s)"
done
(cd "$out" && tar czf /tmp/gpu-session.tgz . && rm -rf ./* && mv /tmp/gpu-session.tgz all.tgz)
