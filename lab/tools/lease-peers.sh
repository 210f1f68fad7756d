#!/usr/bin/env bash
# torch.compile against kbench's seed micro rows in one device call, rounds
# interleaved (peers, ours, the lab's _ln_ab), then `kgate compare`: run on
# the lent machine from the repo root.
#
#   [ROUNDS=2] [LAB=1] lab/tools/lease-peers.sh
#
# Binaries: $KB_BUILD (suite/kbench, tools/kgate/kgate), else
# .dev/prebuilt/{kbench,kgate}.gz, else tools/build.sh; the lab's kbench_lab
# from .dev/prebuilt/kbench_lab.gz, else built (-DKBENCH_LAB=ON) when LAB=1.
# Writes $OUT/peers.csv, ours.csv, ln_ab.csv, compare.txt, gpu.txt.
set -uo pipefail
kb=${KB_STATE:-/tmp/kb}
OUT=${OUT:-$kb/out}
mkdir -p "$kb" "$OUT"
build=${KB_BUILD:-$kb/build}
unpack() {  # NAME DEST
  [ -f ".dev/prebuilt/$1.gz" ] || return 1
  mkdir -p "$(dirname "$2")" && gunzip -c ".dev/prebuilt/$1.gz" > "$2" && chmod +x "$2"
}
if [ ! -x "$build/suite/kbench" ]; then
  { unpack kbench "$build/suite/kbench" && unpack kgate "$build/tools/kgate/kgate"; } ||
    KBENCH_BUILD_DIR="$build" KBENCH_CUDA_ARCH=90 tools/build.sh > "$kb/build.log" 2>&1 ||
    { tail -20 "$kb/build.log"; exit 2; }
fi
lab=""
if [ "${LAB:-1}" = 1 ]; then
  lab=$kb/lab/kbench_lab
  if [ ! -x "$lab" ] && ! unpack kbench_lab "$lab"; then
    cmake -S . -B "$kb/lab-build" -DKBENCH_LAB=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_BUILD_TYPE=Release > "$kb/lab.log" 2>&1 &&
      cmake --build "$kb/lab-build" -j "$(nproc)" --target kbench_lab >> "$kb/lab.log" 2>&1 &&
      cp "$(find "$kb/lab-build" -name kbench_lab -type f -perm -u+x | head -1)" "$lab" ||
      { tail -5 "$kb/lab.log"; lab=""; }
  fi
fi
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$OUT/gpu.txt"
python3 -c 'import torch; assert torch.cuda.is_available(); print("torch", torch.__version__)' ||
  echo "no PyTorch with CUDA: peers skipped"
micro='^(layer_norm|gemv|gather_gemv|mlp_layer_norm_gelu)$'
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%T)"
  python3 tools/peers/torch_peers.py --csv "$OUT/peers.csv" > "$kb/peers-$r.log" 2>&1 ||
    tail -3 "$kb/peers-$r.log"
  "$build/suite/kbench" run --filter "$micro" --csv "$OUT/ours.csv" > "$kb/ours-$r.log" 2>&1 ||
    tail -3 "$kb/ours-$r.log"
  [ -z "$lab" ] || "$lab" run --filter _ln_ab --csv "$OUT/ln_ab.csv" > "$kb/lab-$r.log" 2>&1 ||
    tail -3 "$kb/lab-$r.log"
done
echo "end $(date -u +%T)"
if [ -f "$OUT/peers.csv" ]; then
  "$build/tools/kgate/kgate" compare "$OUT/peers.csv" "$OUT/ours.csv" > "$OUT/compare.txt" 2>&1
  head -60 "$OUT/compare.txt"
fi
