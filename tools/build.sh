#!/usr/bin/env bash
# Configures and builds kbench into build/ (Release). Extra arguments go to
# CMake, e.g. -DCMAKE_CUDA_ARCHITECTURES=90.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="/usr/local/cuda/bin:$PATH"
build="${KBENCH_BUILD_DIR:-$root/build}"
gen=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
