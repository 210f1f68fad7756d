#!/usr/bin/env bash
# Set up, build and run the suite on GPU 0: `tools/run.sh [kbench run options]`
# (e.g. --quick, --filter layer_norm). Rows go to reports/results.csv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "$root"
exec "${KBENCH_BUILD_DIR:-$root/build}/suite/kbench" run "$@"
