#!/usr/bin/env bash
# One call on a GPU machine: build for sm_90, run the GPU and CPU tests and
# the suite, and leave in $OUT (default ./out) five files: check.log (build,
# tests, probe), kbench.log, results.csv, results.json, probe.json.
#   tools/gpu-check.sh [--quick] [--filter REGEX] [any kbench run option]
# KB_GTEST_FILTER narrows the GPU tests (default: all).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
build="${KBENCH_BUILD_DIR:-$root/build-gpu}"
log="$out/check.log"
cd "$root"
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1)"
  start=$SECONDS
  KBENCH_BUILD_DIR="$build" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 || { echo "BUILD FAILED"; exit 1; }
  echo "== build: $((SECONDS - start)) s"
} > "$log" 2>&1
if [ $? -ne 0 ]; then tail -50 "$log"; exit 1; fi
"$build/tests/kbench_gpu_tests" --gtest_brief=1 --gtest_filter="${KB_GTEST_FILTER:-*}" >> "$log" 2>&1
gpu_rc=$?
"$build/tests/kbench_cpu_tests" --gtest_brief=1 >> "$log" 2>&1
cpu_rc=$?
"$build/suite/kbench" probe > "$out/probe.json" 2>> "$log" || echo "== kbench probe failed (see check.log)"
"$build/suite/kbench" run --csv "$out/results.csv" --json "$out/results.json" "$@" > "$out/kbench.log" 2>&1
run_rc=$?
grep -E "^\[|FAILED|PASSED|tests from" "$log" | grep -v "^\[[0-9]*/[0-9]*\]" | tail -20
cat "$out/kbench.log"
echo "== gpu tests rc=$gpu_rc, cpu tests rc=$cpu_rc, kbench rc=$run_rc"
[ $gpu_rc -eq 0 ] && [ $cpu_rc -eq 0 ] && [ $run_rc -eq 0 ]
