#!/usr/bin/env bash
# One call on a GPU machine: build for sm_90, run the GPU tests and the
# suite, and leave the CSV, JSON and logs in $OUT (default ./out).
#   tools/gpu-check.sh [--quick] [--filter REGEX] [any kbench run option]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
build="${KBENCH_BUILD_DIR:-$root/build-gpu}"
cd "$root"
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1)"
  start=$SECONDS
  KBENCH_BUILD_DIR="$build" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 || { echo "BUILD FAILED"; exit 1; }
  echo "== build: $((SECONDS - start)) s"
} 2>&1 | tee "$out/build.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
"$build/tests/kbench_gpu_tests" --gtest_brief=1 2>&1 | tee "$out/gpu-tests.log"
gpu_rc=${PIPESTATUS[0]}
"$build/tests/kbench_cpu_tests" --gtest_brief=1 > "$out/cpu-tests.log" 2>&1
cpu_rc=$?
"$build/suite/kbench" probe > "$out/probe.json" 2> "$out/probe.log" || echo "== kbench probe failed: $(cat "$out/probe.log")"
"$build/suite/kbench" run --csv "$out/results.csv" --json "$out/results.json" "$@" 2>&1 | tee "$out/kbench.log"
run_rc=${PIPESTATUS[0]}
echo "== gpu tests rc=$gpu_rc, cpu tests rc=$cpu_rc, kbench rc=$run_rc"
[ $gpu_rc -eq 0 ] && [ $cpu_rc -eq 0 ] && [ $run_rc -eq 0 ]
