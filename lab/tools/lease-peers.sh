#!/usr/bin/env bash
# torch.compile against kbench's rows in one device call, rounds interleaved
# (peers, ours, a candidate build's), then `kgate compare`: run on the lent
# machine from the repo root.
#
#   [ROUNDS=2] [PEERS=1] [FILTER=REGEX] [PREBUILT=.dev/prebuilt] lab/tools/lease-peers.sh
#
# Binaries: $KB_BUILD (suite/kbench, tools/kgate/kgate), else
# $PREBUILT/{kbench,kgate}.gz, else tools/build.sh; the candidate, where
# carried, $PREBUILT/kbench-new.gz (its rows beside ours: a before/after
# of one change, measured interleaved on one board). FILTER: kbench's
# --filter (default the seed's micro rows); OURS_ARGS, NEW_ARGS: more
# `kbench run` options for each build (e.g. --targets DIR, the candidate's
# tuning table beside its binary). Writes $OUT/peers.csv, ours.csv,
# new.csv, compare.txt (peers against ours), new.txt (ours against the
# candidate), gpu.txt.
set -uo pipefail
kb=${KB_STATE:-/tmp/kb}
OUT=${OUT:-$kb/out}
mkdir -p "$kb" "$OUT"
build=${KB_BUILD:-$kb/build}
pre=${PREBUILT:-.dev/prebuilt}
unpack() {  # NAME DEST
  [ -f "$pre/$1.gz" ] || return 1
  mkdir -p "$(dirname "$2")" && gunzip -c "$pre/$1.gz" > "$2" && chmod +x "$2"
}
if [ ! -x "$build/suite/kbench" ]; then
  { unpack kbench "$build/suite/kbench" && unpack kgate "$build/tools/kgate/kgate"; } ||
    KBENCH_BUILD_DIR="$build" KBENCH_CUDA_ARCH=90 tools/build.sh > "$kb/build.log" 2>&1 ||
    { tail -20 "$kb/build.log"; exit 2; }
fi
new=$kb/new/kbench
[ -x "$new" ] || unpack kbench-new "$new" || new=""
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$OUT/gpu.txt"
peers=${PEERS:-1}
if [ "$peers" = 1 ] &&
  ! python3 -c 'import torch; assert torch.cuda.is_available(); print("torch", torch.__version__)'; then
  echo "no PyTorch with CUDA: peers skipped" && peers=0
fi
filter=${FILTER:-'^(layer_norm|gemv|gather_gemv|mlp_layer_norm_gelu)$'}
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%T)"
  [ "$peers" = 0 ] || python3 tools/peers/torch_peers.py --csv "$OUT/peers.csv" > "$kb/peers-$r.log" 2>&1 ||
    tail -3 "$kb/peers-$r.log"
  # shellcheck disable=SC2086 # the options split on blanks
  "$build/suite/kbench" run --filter "$filter" ${OURS_ARGS:-} --csv "$OUT/ours.csv" \
    > "$kb/ours-$r.log" 2>&1 ||
    tail -3 "$kb/ours-$r.log"
  # shellcheck disable=SC2086
  [ -z "$new" ] || "$new" run --filter "$filter" ${NEW_ARGS:-} --csv "$OUT/new.csv" \
    > "$kb/new-$r.log" 2>&1 ||
    tail -3 "$kb/new-$r.log"
done
echo "end $(date -u +%T)"
kgate=$build/tools/kgate/kgate
if [ -f "$OUT/peers.csv" ]; then
  "$kgate" compare "$OUT/peers.csv" "$OUT/ours.csv" > "$OUT/compare.txt" 2>&1
  head -60 "$OUT/compare.txt"
fi
if [ -f "$OUT/new.csv" ]; then
  "$kgate" compare "$OUT/ours.csv" "$OUT/new.csv" > "$OUT/new.txt" 2>&1
  head -80 "$OUT/new.txt"
fi
