#!/usr/bin/env bash
# The one-token SwiGLU GEMV's variants in one device call: batches of 2
# loads a row (the product's kernels) or 1 (the lab's twins), uncapped or
# compiled for 7 or 8 blocks an SM, int8 and bf16 (lab/swiglu_ab/variants.h;
# the question: docs/notes/decode.md "Where the time goes now"). Run on the
# lent machine from the repo root:
#
#   [ROUNDS=3] [GRAPH_ROUNDS=7] [LIMIT=570] lab/tools/lease-swiglu-ab.sh
#   lab/tools/lease-swiglu-ab.sh --pack BUILD_DIR   (here, before the lease)
#
# Binaries: $KB_BUILD (lab/kbench_lab, lab/decode_profile/kbench_decode_profile,
# lab/kbench_lab_gpu_tests, tools/kgate/kgate), else .dev/prebuilt-swiglu/<name>.gz
# (all four, where they start on the lent machine), else built there
# (-DKBENCH_LAB=ON, sm_90) into $KB_STATE/lab-build. --pack gzips the four
# of a -DKBENCH_LAB=ON sm_90 build into .dev/prebuilt-swiglu (carry .dev/prebuilt-swiglu).
# Then, each step only while LIMIT seconds allow it:
#   tests.txt        the variants' GPU tests (each against the CPU reference,
#                    the registers and blocks an SM of every variant)
#   graph-int8.txt,  the Llama-2-7B step graph at position 105 (the GPU's
#   graph-bf16.txt   tuning table) with each variant in its 32 SwiGLU nodes,
#                    GRAPH_ROUNDS interleaved rounds against the decoder's
#                    own, each checked against its logits (the lab profiler)
#   standalone.csv   ROUNDS rounds of `kbench_lab run --filter _swiglu_ab`
#   standalone.md    (the variants alone at 22016x4096, every point checked
#                    against the CPU reference; one process a point a round),
#                    and `kgate noise` over the rounds
#   summary.txt      the graph lines; per standalone point the median over
#                    the rounds of their median_us, statuses and variant
# Writes $OUT (default $KB_STATE/out) and gpu.txt, build.log there.
set -uo pipefail
names=(lab/kbench_lab lab/decode_profile/kbench_decode_profile lab/kbench_lab_gpu_tests
  tools/kgate/kgate)
if [ "${1:-}" = --pack ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 --pack BUILD_DIR" >&2; exit 2; }
  mkdir -p .dev/prebuilt-swiglu
  for n in "${names[@]}"; do
    gzip -c "$2/$n" > ".dev/prebuilt-swiglu/$(basename "$n").gz" || exit 2
  done
  ls -l .dev/prebuilt-swiglu
  exit 0
fi
kb=${KB_STATE:-/tmp/kb}
OUT=${OUT:-$kb/out}
LIMIT=${LIMIT:-570}
mkdir -p "$kb" "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
left() { echo $((LIMIT - SECONDS)); }
build=${KB_BUILD:-$kb/lab-build}
unpack() {  # the four from .dev/prebuilt-swiglu into $build
  for n in "${names[@]}"; do
    [ -f ".dev/prebuilt-swiglu/$(basename "$n").gz" ] || return 1
  done
  for n in "${names[@]}"; do
    mkdir -p "$build/$(dirname "$n")" &&
      gunzip -c ".dev/prebuilt-swiglu/$(basename "$n").gz" > "$build/$n" && chmod +x "$build/$n"
  done
}
# All four there, and the lab's two that take no GPU to start do start.
built() {
  for n in "${names[@]}"; do [ -x "$build/$n" ] || return 1; done
  "$build/lab/kbench_lab" list > /dev/null 2>&1 &&
    "$build/lab/kbench_lab_gpu_tests" --gtest_list_tests > /dev/null 2>&1
}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt"
if ! built && ! { unpack && built; }; then
  gen=()
  command -v ninja > /dev/null 2>&1 && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
  { cmake -S . -B "$build" "${gen[@]}" -DKBENCH_LAB=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build" -j "$(nproc)" --target kbench_lab kbench_decode_profile \
      kbench_lab_gpu_tests kgate; } > "$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 2; }
  echo "build: $SECONDS s"
fi
case "$(head -2 "$OUT/gpu.txt" | tail -1)" in
  *H200*) tuning=targets/tuning/h200-sxm-141gb.json ;;
  *H100*) tuning=targets/tuning/h100-sxm5-80gb.json ;;
  *) tuning="" ;;
esac
status=0
echo "tests $(date -u +%T)"
KBENCH_REQUIRE_GPU=1 "$build/lab/kbench_lab_gpu_tests" > "$OUT/tests.txt" 2>&1 || status=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^  (int8|bf16) ' "$OUT/tests.txt"
for dtype in int8 bfloat16; do
  [ "$(left)" -gt 75 ] || { echo "graph $dtype: not started, $(left) s left"; continue; }
  echo "graph $dtype $(date -u +%T)"
  out="$OUT/graph-${dtype/bfloat16/bf16}.txt"
  timeout $(($(left) - 5)) "$build/lab/decode_profile/kbench_decode_profile" --dtype "$dtype" \
    ${tuning:+--tuning "$tuning"} --rounds "${GRAPH_ROUNDS:-7}" --swiglu-kernels variants \
    > "$out" 2>&1 || { status=1; tail -3 "$out"; }
done
for r in $(seq "${ROUNDS:-3}"); do
  [ "$(left)" -gt 40 ] || { echo "standalone round $r: not started, $(left) s left"; break; }
  echo "standalone round $r $(date -u +%T)"
  timeout $(($(left) - 5)) "$build/lab/kbench_lab" run --filter '^_swiglu_ab$' --processes 1 \
    --targets targets --csv "$OUT/standalone.csv" > "$OUT/standalone-$r.log" 2>&1 ||
    { status=1; tail -3 "$OUT/standalone-$r.log"; }
done
[ -f "$OUT/standalone.csv" ] &&
  "$build/tools/kgate/kgate" noise --results "$OUT/standalone.csv" \
    --markdown "$OUT/standalone.md" > /dev/null 2>&1
# Per point: the median over the rounds of each round's median_us, the rows' statuses, variant.
standalone() {
  python3 - "$OUT/standalone.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["name"] == "_swiglu_ab"]
keys = sorted({(r["dtype"], r["shape"]) for r in rows}, key=lambda k: (k[0], k[1]))
for k in keys:
    rs = [r for r in rows if (r["dtype"], r["shape"]) == k]
    us = [float(r["median_us"]) for r in rs if r["median_us"]]
    med = "%8.2f us" % statistics.median(us) if us else "      - us"
    st = ",".join(sorted({r["status"] for r in rs}))
    print("%-8s %-22s %s over %d rounds  %-12s %s" % (k[0], k[1], med, len(us), st, rs[-1]["variant"]))
PY
}
{
  for f in "$OUT"/graph-*.txt; do
    [ -f "$f" ] && echo "== $(basename "$f")" && grep -E '^(graph step|swiglu projection|  R2U|R2U)' "$f"
  done
  [ -f "$OUT/standalone.csv" ] && echo "== standalone (_swiglu_ab)" && standalone
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
echo "end $(date -u +%T), $SECONDS s, status $status"
exit $status
