#!/usr/bin/env bash
# A/B of the idle gap after long samples (docs/decisions/0002-idle-gap-after-long-samples.md): the
# engine's default threshold (kCoolSampleSeconds, suite/sampling.h) against
# KBENCH_COOL_FROM_US=$B_US, through lab/tools/env-ab.sh.
#
#   lab/tools/cool-gap-ab.sh OUT_DIR SECONDS B_US [kbench run options...]
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT_DIR SECONDS B_US [kbench run options...]" >&2; exit 2; }
out="$1" budget="$2" b_us="$3"; shift 3
exec "$(dirname "$0")/env-ab.sh" "$out" "$budget" "KBENCH_COOL_FROM_US=$b_us" "$@"
