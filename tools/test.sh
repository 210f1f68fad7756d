#!/usr/bin/env bash
# Set up, build and run every test (CPU tests; GPU tests skip without a GPU).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh" "$@"
ctest --test-dir "${KBENCH_BUILD_DIR:-$root/build}" --output-on-failure --parallel "$(nproc)"
