#!/usr/bin/env bash
# One call on a GPU machine: build for sm_90, run the GPU and CPU tests, a
# few GPU tests under compute-sanitizer, and the suite, and leave in $OUT
# (default ./out): check.log (build, tests, sanitizer, probe), kbench.log,
# results.csv, results.json, probe.json, and sanitizer.log where it ran.
#   tools/gpu-check.sh [--quick] [--filter REGEX] [any kbench run option]
# KB_GTEST_FILTER narrows the GPU tests (default: all).
# The tests run with KBENCH_REQUIRE_GPU=1: a test that finds no usable GPU
# fails instead of skipping (a broken driver must not make a green run).
# compute-sanitizer (memcheck) runs the GPU tests KB_SANITIZE_FILTER names
# (default: LayerNorm and the gathers' out-of-range ids); KB_SANITIZE=0
# skips it.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
build="${KBENCH_BUILD_DIR:-$root/build-gpu}"
log="$out/check.log"
cd "$root" || exit 1
# A subshell, so that its exit 1 (build failed) reaches the check below.
(
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1)"
  start=$SECONDS
  KBENCH_BUILD_DIR="$build" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 || { echo "BUILD FAILED"; exit 1; }
  echo "== build: $((SECONDS - start)) s"
) > "$log" 2>&1
if [ $? -ne 0 ]; then tail -50 "$log"; exit 1; fi
export KBENCH_REQUIRE_GPU=1
"$build/tests/kbench_gpu_tests" --gtest_brief=1 --gtest_filter="${KB_GTEST_FILTER:-*}" >> "$log" 2>&1
gpu_rc=$?
"$build/tests/kbench_cpu_tests" --gtest_brief=1 >> "$log" 2>&1
cpu_rc=$?
san_filter="${KB_SANITIZE_FILTER:-LayerNorm*:GatherGemv.IdOutsideRange*:GemvBulk.IdOutsideRange*:GemvOneLoad.IdOutsideRange*}"
if [ "${KB_SANITIZE:-1}" = "0" ]; then
  san_rc=skipped
elif ! command -v compute-sanitizer > /dev/null; then
  echo "== compute-sanitizer not found (CUDA Toolkit's bin/); KB_SANITIZE=0 skips it" >> "$log"
  san_rc=127
else
  echo "== compute-sanitizer --tool memcheck, tests $san_filter" >> "$log"
  compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$build/tests/kbench_gpu_tests" --gtest_brief=1 --gtest_filter="$san_filter" > "$out/sanitizer.log" 2>&1
  san_rc=$?
  cat "$out/sanitizer.log" >> "$log"
  # Under gVisor compute-sanitizer refuses the device: nothing was checked.
  if grep -q "Device not supported" "$out/sanitizer.log"; then
    echo "== compute-sanitizer: device not supported on this machine, nothing checked (KB_SANITIZE=0 skips it)" >> "$log"
  fi
fi
"$build/suite/kbench" probe > "$out/probe.json" 2>> "$log" || echo "== kbench probe failed (see check.log)"
"$build/suite/kbench" run --csv "$out/results.csv" --json "$out/results.json" "$@" > "$out/kbench.log" 2>&1
run_rc=$?
grep -E "^\[|FAILED|PASSED|tests from" "$log" | grep -v "^\[[0-9]*/[0-9]*\]" | tail -20
cat "$out/kbench.log"
grep -E "^== compute-sanitizer|ERROR SUMMARY" "$log"
echo "== gpu tests rc=$gpu_rc, cpu tests rc=$cpu_rc, sanitizer rc=$san_rc, kbench rc=$run_rc"
[ $gpu_rc -eq 0 ] && [ $cpu_rc -eq 0 ] && { [ "$san_rc" = skipped ] || [ "$san_rc" -eq 0 ]; } &&
  [ $run_rc -eq 0 ]
