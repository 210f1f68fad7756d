#!/usr/bin/env bash
# Configures and builds kbench into build/ (Release). Extra arguments go to
# CMake, e.g. -DCMAKE_CUDA_ARCHITECTURES=90; so do KBENCH_CUDA_ARCH=90 (one
# architecture, or `native`) and KBENCH_CMAKE_ARGS="-DOPTION=VALUE ...".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="/usr/local/cuda/bin:$PATH"
build="${KBENCH_BUILD_DIR:-$root/build}"
# The architecture first: KBENCH_CMAKE_ARGS, the user's own, come after and win.
extra=()
[ -z "${KBENCH_CUDA_ARCH:-}" ] || extra+=("-DCMAKE_CUDA_ARCHITECTURES=$KBENCH_CUDA_ARCH")
read -r -a user <<<"${KBENCH_CMAKE_ARGS:-}"
extra+=(${user[@]+"${user[@]}"})
gen=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${extra[@]+"${extra[@]}"} "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
