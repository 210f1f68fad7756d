#!/usr/bin/env bash
# Bring-up of a host with several GPUs in one call (docs/scale.md "As
# measured"): build for sm_90, then under $OUT (default ./out):
#   host.txt        nvidia-smi -L, topology (topo -m), persistence mode, cores
#   one.csv/.log    `kbench run --device 0` (the whole suite on one GPU)
#   all.csv/.log    `kbench run --device all` (every GPU at once, then NCCL)
#   siblings.md     `kgate siblings` on all.csv (exit 1 there names a GPU)
#   torch.csv/.log  PyTorch's all_reduce / all_gather, eager and graph
#   summary.txt     the two wall times and their ratio, the NCCL rows beside
#                   PyTorch's, and each GPU's rows of all.csv against one.csv
# Usage: tools/multi-gpu-check.sh [any kbench run option, e.g. --filter R]
# NVLink multicast stays off in every process it starts.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
cd "$root" || exit 1
export PATH="/usr/local/cuda/bin:$PATH"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
b="${KBENCH_BUILD_DIR:-$root/build-gpu}"
{
  date -u +%FT%TZ
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,persistence_mode --format=csv
  nvidia-smi topo -m
  echo "cores: $(nproc)"
} > "$out/host.txt" 2>&1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "${gpus:-0}" -lt 2 ]; then
  echo "multi-gpu-check: this host has ${gpus:-0} GPU(s); it needs 2 or more" >&2
  exit 2
fi
t=$SECONDS
KBENCH_BUILD_DIR="$b" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
echo "== build $((SECONDS - t)) s"
t=$SECONDS
"$b/suite/kbench" run --device 0 --csv "$out/one.csv" "$@" > "$out/one.log" 2>&1
one_rc=$? one_s=$((SECONDS - t))
t=$SECONDS
"$b/suite/kbench" run --device all --csv "$out/all.csv" "$@" > "$out/all.log" 2>&1
all_rc=$? all_s=$((SECONDS - t))
"$b/tools/kgate/kgate" siblings --results "$out/all.csv" --markdown "$out/siblings.md" \
  > "$out/siblings.txt" 2>&1
sib_rc=$?
torch_rc=skipped
if python3 -c 'import torch' 2> /dev/null; then
  timeout 300 python3 tools/torch_allreduce.py --csv "$out/torch.csv" > "$out/torch.log" 2>&1
  torch_rc=$?
fi
{
  echo "GPUs: $gpus; kbench run --device 0: ${one_s} s (rc $one_rc); --device all: ${all_s} s (rc $all_rc)"
  awk -v a="$all_s" -v o="$one_s" 'BEGIN { if (o > 0) printf "wall ratio all / one: %.2f\n", a / o }'
  echo "kgate siblings rc=$sib_rc (1: a GPU is named); torch_allreduce rc=$torch_rc"
  grep -v warning "$out/siblings.txt"
  echo "-- NCCL rows (kbench: graph-launched)"
  grep -h '^nccl_' "$out/all.csv" | cut -d, -f1,2,4,9
  [ -f "$out/torch.csv" ] && { echo "-- PyTorch"; tr -d '\r' < "$out/torch.csv"; }
  echo "-- each GPU's rows of --device all against --device 0 (ratio - 1; probe and setup left out)"
  python3 - "$out/one.csv" "$out/all.csv" << 'EOF'
import csv, statistics, sys
def key(r):
    return (r["name"], r["metric"], r["dtype"], r["shape"], r["variant"])
def usable(r):
    return (r["status"] == "ok" and r["actual"] and r["name"] != "roofline_probe"
            and not r["metric"].startswith("compilation_time"))
one = {key(r): float(r["actual"]) for r in csv.DictReader(open(sys.argv[1])) if usable(r)}
by = {}
for r in csv.DictReader(open(sys.argv[2])):
    if usable(r) and key(r) in one and r["device"].startswith("cuda:"):
        by.setdefault(r["device"], []).append(float(r["actual"]) / one[key(r)] - 1)
for g, d in sorted(by.items()):
    d.sort()
    print(f"{g}: {len(d)} rows, median {statistics.median(d):+.4f}, "
          f"5%-95% {d[len(d) // 20]:+.3f} .. {d[-1 - len(d) // 20]:+.3f}")
EOF
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
[ $one_rc -eq 0 ] && [ $all_rc -eq 0 ]
