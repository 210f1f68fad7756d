#!/usr/bin/env bash
# Set up, build and run the suite on GPU 0: `tools/run.sh [kbench run options]`
# (e.g. --quick, --filter layer_norm). Rows go to reports/results.csv.
#
# The build is for CUDA architectures 80 and 90 (and 100 where nvcc has it).
# To build for one: KBENCH_CUDA_ARCH=90 (or `native`, this machine's GPU);
# any other CMake option: KBENCH_CMAKE_ARGS="-DOPTION=VALUE ...".
# `tools/run.sh --help` prints kbench's options without building.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

for a in "$@"; do
  case "$a" in
    -h | --help)
      cat "$root/docs/kbench-help.txt"
      printf '\ntools/run.sh [kbench run options]: set up, build (KBENCH_CUDA_ARCH=90|native for one\n'
      printf 'architecture, KBENCH_CMAKE_ARGS for other CMake options), then kbench run.\n'
      exit 0
      ;;
  esac
done

"$root/tools/setup.sh"
"$root/tools/build.sh"  # KBENCH_CUDA_ARCH, KBENCH_CMAKE_ARGS
cd "$root"
exec "${KBENCH_BUILD_DIR:-$root/build}/suite/kbench" run "$@"
