#!/usr/bin/env bash
# A development session's acceptance call on whichever GPU the device tool
# lends (not the nightly): build for sm_90, then
#   H200: the speed-of-light ladder into its target file (three probes, the fastest kept), kbench tune gemv,
#         the bring-up command (probe, whole suite, report against the
#         recorded H100 run), and bring-up with its target file hidden;
#   other: the ladder into its target file, the whole suite, the roofline
#         report (tools/roofline_report.py).
# Everything under $OUT, packed into $OUT/all.tgz.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
b="$root/build-gpu"
kb="$b/suite/kbench"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
echo "== $gpu"
t0=$SECONDS
# KBENCH_PREBUILT=DIR: carried binaries, used when they start here (gpu-session.sh).
if [ -n "${KBENCH_PREBUILT:-}" ] && "$KBENCH_PREBUILT/suite/kbench" list > "$out/prebuilt.log" 2>&1; then
  b="$KBENCH_PREBUILT"; kb="$b/suite/kbench"; echo "== prebuilt binaries from $b"
else
  KBENCH_BUILD_DIR="$b" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
  echo "== build $((SECONDS - t0)) s"
fi
exec 3>&1
step() { local s=$SECONDS rc; "$@"; rc=$?; echo "== ${*:1:4} rc=$rc $((SECONDS - s)) s" >&3; }
case "$gpu" in
  *H200*) tf=targets/h200-sxm-141gb.json ;;
  *) tf=targets/h100-sxm5-80gb.json ;;
esac
# Three probes in three processes: the file keeps the fastest per rung
# (launch-bound rungs move 2-4% from process to process).
for i in 1 2 3; do step timeout 60 "$kb" probe --write "$tf" > "$out/probe$i.log" 2>&1; done
cp "$tf" "$out/"
case "$gpu" in
  *H200*)
    step timeout 150 "$kb" tune gemv > "$out/tune-gemv.log" 2>&1
    cp targets/tuning/h200*.json "$out/" 2>/dev/null
    KBENCH_BUILD_DIR="$b" step timeout 200 tools/bringup.sh --no-build --no-tune --out "$out/bringup" > "$out/bringup.log" 2>&1
    mkdir -p /tmp/t-hidden && cp -r targets/a100-sxm4-40gb.json targets/h100-sxm5-80gb.json targets/datasheets targets/tuning /tmp/t-hidden/
    KBENCH_BUILD_DIR="$b" step timeout 60 tools/bringup.sh --no-build --no-tune --quick --filter '^(gemv|layer_norm)$' --targets /tmp/t-hidden --out "$out/hidden" > "$out/hidden.log" 2>&1
    ;;
  *)
    step timeout 240 "$kb" run --csv "$out/full.csv" > "$out/full.log" 2>&1
    python3 tools/roofline_report.py "$out/full.csv" > "$out/roofline.txt" 2>&1; tail -45 "$out/roofline.txt"
    ;;
esac
(cd "$out" && tar czf /tmp/accept.tgz . && rm -rf ./* && mv /tmp/accept.tgz all.tgz)
