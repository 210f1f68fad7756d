#!/usr/bin/env bash
# One call on a GPU machine: build for sm_90 (or use carried binaries), then
# run each STEP in order, every log and result under $OUT (default ./out).
#
#   tools/gpu-call.sh STEP... [-- kbench run options]
#
# Steps:
#   tests[=FILTER]    GPU tests (gtest filter); no usable GPU fails them
#   cpu-tests         the CPU tests
#   sanitize[=FILTER] GPU tests under compute-sanitizer's memcheck
#   probe             kbench probe: probe.json (written only by a probe that
#                     succeeded), probe.log
#   suite             kbench run: results.csv, results.json, kbench.log
#   check             tests cpu-tests sanitize probe suite
#   tune              kbench tune; the tuning tables copied to $OUT
#   run[=N]           the suite (or $KBENCH_RUN_FILTER) N times into runs.csv;
#                     none starts $KBENCH_SESSION_LIMIT s (default 540) after
#                     $KBENCH_SESSION_T0 (epoch seconds, default now)
#   kbench:ARGS       any kbench command (ARGS split on spaces)
#   accept            tools/bringup.sh into $OUT/bringup (docs/bringup.md)
#   multi             2 or more GPUs: the suite on GPU 0 and on all GPUs,
#                     kgate siblings, PyTorch's collectives where torch is
#                     installed; summary.txt (docs/scale.md)
#   pack              everything under $OUT into $OUT/all.tgz
#
# KBENCH_PREBUILT=DIR: carried binaries, used when they start here, else
# built into $KBENCH_BUILD_DIR (default build-gpu). NVLink multicast stays
# off. Exit status: 0 every step succeeded, 1 one failed, 2 usage error.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

steps=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    tests | tests=* | cpu-tests | sanitize | sanitize=* | probe | suite | check | tune | run | run=* | \
      kbench:* | accept | multi | pack) steps+=("$1") ;;
    *) echo "gpu-call.sh: unknown step '$1' (tools/gpu-call.sh --help lists them)" >&2; exit 2 ;;
  esac
  shift
done
kbench_opts=("$@")
[ ${#steps[@]} -gt 0 ] || { echo "gpu-call.sh: no step given (tools/gpu-call.sh --help lists them)" >&2; exit 2; }

out="${OUT:-$root/out}"
mkdir -p "$out"
cd "$root" || exit 1
export PATH="/usr/local/cuda/bin:$PATH"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
build="${KBENCH_BUILD_DIR:-$root/build-gpu}"
session0="${KBENCH_SESSION_T0:-$(date +%s)}"
limit="${KBENCH_SESSION_LIMIT:-540}"

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader 2>&1 | head -1)"
t0=$SECONDS
if [ -n "${KBENCH_PREBUILT:-}" ] && "$KBENCH_PREBUILT/suite/kbench" list > "$out/prebuilt.log" 2>&1; then
  build="$KBENCH_PREBUILT"
  echo "== prebuilt binaries from $build"
else
  [ -n "${KBENCH_PREBUILT:-}" ] && { echo "== prebuilt binaries do not start here:"; tail -3 "$out/prebuilt.log"; }
  if ! KBENCH_BUILD_DIR="$build" tools/build.sh -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    echo "== build failed (build.log)"
    exit 1
  fi
  echo "== build $((SECONDS - t0)) s"
fi
kb="$build/suite/kbench"
kg="$build/tools/kgate/kgate"

# logged LOG N|gtest CMD...: CMD's output into $out/LOG; its last N lines
# shown, or a gtest binary's (or a tool running one) verdict lines.
logged() {
  local log="$out/$1" show="$2" rc
  shift 2
  "$@" > "$log" 2>&1
  rc=$?
  case "$show" in
    gtest) grep -E '^\[  (PASSED|FAILED|SKIPPED)|ERROR SUMMARY' "$log" ;;
    *) tail -n "$show" "$log" ;;
  esac
  return $rc
}

step_sanitize() {
  local filter="${1:-LayerNorm*:GatherGemv.IdOutsideRange*:GemvBulk.IdOutsideRange*:GemvOneLoad.IdOutsideRange*:GemvRowBlock.GatherAndIdsOutsideRange}"
  command -v compute-sanitizer > /dev/null || { echo "compute-sanitizer not found (the CUDA Toolkit's bin/)"; return 127; }
  logged sanitizer.log gtest compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$build/tests/kbench_gpu_tests" --gtest_brief=1 --gtest_filter="$filter"
  local rc=$?
  # Under gVisor compute-sanitizer refuses the device: nothing was checked.
  grep -q "Device not supported" "$out/sanitizer.log" &&
    echo "compute-sanitizer: device not supported on this machine, nothing checked"
  return $rc
}

# probe.json through a temporary file beside it, renamed over it only when
# the probe succeeded: a failed or cut-short probe leaves the earlier
# probe.json (or none), never a partial or empty one.
# The temporary file goes however the script ends: exit, Ctrl-C, a kill.
probe_tmp=""
trap '[ -z "$probe_tmp" ] || rm -f "$probe_tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
step_probe() {
  probe_tmp="$out/.probe.json.$$"
  if "$kb" probe > "$probe_tmp" 2> "$out/probe.log" && [ -s "$probe_tmp" ]; then
    mv -f "$probe_tmp" "$out/probe.json"
    probe_tmp=""
    return
  fi
  rm -f "$probe_tmp"
  probe_tmp=""
  echo "kbench probe failed (probe.log); probe.json not written"
  return 1
}

step_tune() {
  logged tune.log 60 "$kb" tune
  local rc=$?
  cp targets/tuning/*.json "$out/" 2> /dev/null
  return $rc
}

step_run() {
  local n="${1:-1}" i s rc=0 filter=()
  [ -n "${KBENCH_RUN_FILTER:-}" ] && filter=(--filter "$KBENCH_RUN_FILTER")
  for i in $(seq 1 "$n"); do
    [ $(($(date +%s) - session0)) -lt "$limit" ] || { echo "run $i not started: ${limit} s limit"; break; }
    s=$SECONDS
    "$kb" run "${filter[@]}" "${kbench_opts[@]}" --csv "$out/runs.csv" > "$out/run$i.log" 2>&1 || rc=1
    echo "run $i: $((SECONDS - s)) s"
    grep -E "^kbench |^cuBLASLt|failed/incorrect|warning" "$out/run$i.log" | head -8
  done
  return $rc
}

# The summary of `multi`: each GPU's rows of --device all against --device 0.
multi_summary() {
  local d
  for d in $(tail -n +2 "$out/all.csv" | cut -d, -f6 | grep '^cuda:' | sort -u); do
    awk -F, -v d="$d" 'NR == 1 || $6 == d' "$out/all.csv" > "$out/all-$d.csv"
    echo "$d: $("$kg" compare "$out/one.csv" "$out/all-$d.csv" | tail -n 1)"
  done
}

step_multi() {
  local gpus t one_rc one_s all_rc all_s sib_rc torch_rc=skipped
  {
    date -u +%FT%TZ
    nvidia-smi -L
    nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,persistence_mode --format=csv
    nvidia-smi topo -m
    echo "cores: $(nproc)"
  } > "$out/host.txt" 2>&1
  gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
  [ "${gpus:-0}" -ge 2 ] || { echo "multi: this host has ${gpus:-0} GPU(s); it needs 2 or more"; return 2; }
  t=$SECONDS
  "$kb" run --device 0 --csv "$out/one.csv" "${kbench_opts[@]}" > "$out/one.log" 2>&1
  one_rc=$? one_s=$((SECONDS - t)) t=$SECONDS
  "$kb" run --device all --csv "$out/all.csv" "${kbench_opts[@]}" > "$out/all.log" 2>&1
  all_rc=$? all_s=$((SECONDS - t))
  "$kg" siblings --results "$out/all.csv" --markdown "$out/siblings.md" > "$out/siblings.txt" 2>&1
  sib_rc=$?
  if python3 -c 'import torch' 2> /dev/null; then
    timeout 300 python3 lab/tools/torch_allreduce.py --csv "$out/torch.csv" > "$out/torch.log" 2>&1
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
    echo "-- each GPU's rows of --device all against --device 0 (kgate compare)"
    multi_summary
  } > "$out/summary.txt" 2>&1
  cat "$out/summary.txt"
  [ $one_rc -eq 0 ] && [ $all_rc -eq 0 ]
}

run_step() {
  local step="$1" arg="" s rc=0
  case "$step" in *=*) arg="${step#*=}" ;; kbench:*) arg="${step#kbench:}" ;; esac
  case "$step" in
    tests*) KBENCH_REQUIRE_GPU=1 logged gpu-tests.log gtest "$build/tests/kbench_gpu_tests" --gtest_brief=1 --gtest_filter="${arg:-*}" ;;
    cpu-tests) logged cpu-tests.log gtest "$build/tests/kbench_cpu_tests" --gtest_brief=1 ;;
    sanitize*) step_sanitize "$arg" ;;
    probe) step_probe ;;
    suite) logged kbench.log 30 "$kb" run --csv "$out/results.csv" --json "$out/results.json" "${kbench_opts[@]}" ;;
    check)
      for s in tests cpu-tests sanitize probe suite; do run_step "$s" || rc=1; done
      return $rc
      ;;
    tune) step_tune ;;
    run*) step_run "$arg" ;;
    kbench:*) logged kbench-step.log 30 "$kb" $arg ;;  # ARGS split on spaces, as documented
    accept) KBENCH_BUILD_DIR="$build" logged bringup.log 0 timeout 480 tools/bringup.sh --no-build --out "$out/bringup" ;;
    multi) step_multi ;;
    pack) tgz="$(mktemp /tmp/gpu-call.XXXXXX)" && (cd "$out" && tar czf "$tgz" . && rm -rf ./* && mv "$tgz" all.tgz) ;;
  esac
}

rc_all=0
for step in "${steps[@]}"; do
  t=$SECONDS
  echo "== $step"
  run_step "$step"
  rc=$?
  [ $rc -eq 0 ] || rc_all=1
  echo "== $step rc=$rc ($((SECONDS - t)) s)"
done
exit $rc_all
