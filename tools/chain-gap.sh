#!/usr/bin/env bash
# Issue 17's open graph-chain gap in one device call (docs/metrics.md, the
# ladder): the same graph chains of roofline_ideal timed by `kbench probe`
# (through Engine::measure_point, no --write) and as `kbench run` rows,
# alternating, every sample kept (KBENCH_SAMPLES_FILE), then each chain
# point's median per process side by side. On the H100 (2026-11-25) the
# probe read 26.3 / 38.4 us at 16 / 64 MB and the rows 24.96 / 36.83 us.
#   KBENCH_PREBUILT=build tools/chain-gap.sh [ROUNDS]   (default 2)
# Everything under $OUT (default ./out), packed into $OUT/all.tgz.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
kb="${KBENCH_PREBUILT:-$root/build}/suite/kbench"
rounds="${1:-2}"
nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw --format=csv,noheader
for i in $(seq 1 "$rounds"); do
  KBENCH_SAMPLES_FILE="$out/probe$i-samples.csv" "$kb" probe > "$out/probe$i.log" 2>&1
  echo "== probe $i rc=$?"
  KBENCH_SAMPLES_FILE="$out/run$i-samples.csv" "$kb" run --filter '^roofline_ideal$' \
    --csv "$out/rows.csv" > "$out/run$i.log" 2>&1
  echo "== run $i rc=$?"
done
python3 - "$out" "$rounds" "$root/tools" <<'EOF'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from samples_stats import load  # the samples file's one reader
def medians(path):
    try:
        points = load(path)
    except (OSError, ValueError):
        return {}
    return {p: statistics.median(t for v in runs.values() for t in v)
            for p, runs in points.items() if "_x8_" in p}
sides = [(f"{kind}{i}", medians(f"{out}/{kind}{i}-samples.csv"))
         for i in range(1, rounds + 1) for kind in ("probe", "run")]
points = sorted({p for _, m in sides for p in m})
print("median us of each chain point, by process:")
print(f"{'point':52}" + "".join(f"{name:>10}" for name, _ in sides))
for p in points:
    print(f"{p:52}" + "".join(f"{m[p]:10.2f}" if p in m else f"{'-':>10}" for _, m in sides))
EOF
(cd "$out" && tar czf /tmp/chain-gap.tgz . && rm -rf ./* && mv /tmp/chain-gap.tgz all.tgz)
