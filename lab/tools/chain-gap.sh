#!/usr/bin/env bash
# The probe's graph-chain gap in one device call (docs/decisions/0009, the
# ladder): roofline_ideal's chains timed by `kbench probe --chains-in-process`
# (in the probe's own process, after its ladder: the old way), by `kbench
# probe` (in worker processes of their own, as rows are: the new way; both
# through Engine::measure_point, no --write) and as `kbench run` rows,
# alternating, every sample kept (KBENCH_SAMPLES_FILE), then each chain
# point's median per side and round, and per side over the rounds with its
# difference from the rows. On an H100 the in-process probe
# read 26.3 / 38.4 us at 16 / 64 MB and the rows 24.96 / 36.83 us.
#   KBENCH_PREBUILT=build lab/tools/chain-gap.sh [ROUNDS]   (default 2)
#   CHAIN_GAP_SIDES="worker run" ...   (default "inproc worker run": fewer
#   sides, less device time; a probe takes about as long as its ladder)
# Everything under $OUT (default ./out), packed into $OUT/all.tgz.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
kb="${KBENCH_PREBUILT:-$root/build}/suite/kbench"
rounds="${1:-2}"
sides="${CHAIN_GAP_SIDES:-inproc worker run}"
for s in $sides; do
  case "$s" in inproc | worker | run) ;; *)
    echo "chain-gap.sh: unknown side '$s' (inproc, worker, run)" >&2
    exit 2
    ;;
  esac
done
nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw --format=csv,noheader
for i in $(seq 1 "$rounds"); do
  for s in $sides; do
    case "$s" in
      inproc) KBENCH_SAMPLES_FILE="$out/inproc$i-samples.csv" "$kb" probe --chains-in-process \
        > "$out/inproc$i.log" 2>&1 ;;
      worker) KBENCH_SAMPLES_FILE="$out/worker$i-samples.csv" "$kb" probe \
        > "$out/worker$i.log" 2>&1 ;;
      run) KBENCH_SAMPLES_FILE="$out/run$i-samples.csv" "$kb" run --filter '^roofline_ideal$' \
        --csv "$out/rows.csv" > "$out/run$i.log" 2>&1 ;;
    esac
    echo "== $s $i rc=$?"
    grep -h '^chain' "$out/$s$i.log" 2>/dev/null | sed 's/^/   /'
  done
done
python3 - "$out" "$rounds" "$root/lab/tools" $sides <<'EOF'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
kinds = sys.argv[4:]
from samples_stats import load  # the samples file's one reader
def medians(path):
    try:
        points = load(path)
    except (OSError, ValueError):
        return {}
    return {p: statistics.median(t for v in runs.values() for t in v)
            for p, runs in points.items() if "_x8_" in p}
sides = [(f"{kind}{i}", kind, medians(f"{out}/{kind}{i}-samples.csv"))
         for i in range(1, rounds + 1) for kind in kinds]
points = sorted({p for _, _, m in sides for p in m})
print("median us of each chain point, by process and round:")
print(f"{'point':88}" + "".join(f"{name:>10}" for name, _, _ in sides))
for p in points:
    print(f"{p:88}" + "".join(f"{m[p]:10.2f}" if p in m else f"{'-':>10}" for _, _, m in sides))
# Per side, the median over its rounds; the probe sides against the rows
# (a row of a chain reads probe / row of its bound: > 1.02 is the issue).
print("\nmedian over the rounds, us (probe / run: the row's fraction of its bound):")
print(f"{'point':88}" + "".join(f"{k:>10}" for k in kinds) +
      "".join(f"{k + '/run':>13}" for k in kinds if k != "run" and "run" in kinds))
for p in points:
    per = {k: [m[p] for _, kind, m in sides if kind == k and p in m] for k in kinds}
    med = {k: statistics.median(v) if v else None for k, v in per.items()}
    line = f"{p:88}" + "".join(f"{med[k]:10.2f}" if med[k] else f"{'-':>10}" for k in kinds)
    if "run" in kinds:
        for k in kinds:
            if k == "run":
                continue
            line += (f"{med[k] / med['run']:13.3f}" if med[k] and med["run"] else f"{'-':>13}")
    print(line)
EOF
(cd "$out" && tar czf /tmp/chain-gap.tgz . && rm -rf ./* && mv /tmp/chain-gap.tgz all.tgz)
