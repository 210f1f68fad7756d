#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/fuzz_*.cpp: clang, ASan, UBSan)
# in a folder of their own and runs each for a fixed time on its seed corpus
# (tests/fuzz/corpus/<name>/, read only: what the fuzzer finds goes to the
# build folder). Exit 0: no crash, leak, UB report or hang; 1: a finding
# (the input is saved as <build>/artifacts/<name>-crash-..., rerun it with
# `<build>/tests/fuzz/fuzz_<name> FILE`); 77: no clang or no libFuzzer (the
# ctest `fuzz_corpus` then skips); 2: usage or a build that failed.
#
#   tests/fuzz/run.sh [--seconds N] [--build-dir DIR] [NAME...]
#
# NAME: results_csv suspects target_file tuning_file datasheets (default: all).
# --seconds: per harness (default $KBENCH_FUZZ_SECONDS, else 15: the CI's
# short run). For a long run, one harness at a time:
#   tests/fuzz/run.sh --seconds 3600 results_csv
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${KBENCH_FUZZ_SECONDS:-15}"
build="$root/build-fuzz"
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    --build-dir) build="${2:?--build-dir needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=(results_csv suspects target_file tuning_file datasheets)
case "$seconds" in ''|*[!0-9]*) echo "fuzz: --seconds: expected a whole number, got '$seconds'" >&2; exit 2 ;; esac

cxx="${KBENCH_FUZZ_CXX:-clang++}"
command -v "$cxx" >/dev/null 2>&1 || {
  echo "SKIP: $cxx not found: the fuzz harnesses did not run (apt-get install clang, or KBENCH_FUZZ_TESTS=1 tools/setup.sh)"
  exit 77
}
mkdir -p "$build" || exit 2
probe="$build/libfuzzer-probe"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe.cpp" -o "$probe" >"$probe.log" 2>&1; then
  echo "SKIP: $cxx cannot link libFuzzer (-fsanitize=fuzzer): the fuzz harnesses did not run"
  sed 's/^/  /' "$probe.log" | tail -5
  exit 77
fi

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if ! { cmake -S "$root" -B "$build" "${generator[@]}" -DKBENCH_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" >"$build/configure.log" 2>&1 &&
       cmake --build "$build" --parallel "$(nproc)" >"$build/build.log" 2>&1; }; then
  echo "fuzz: the build failed ($build/configure.log, $build/build.log):" >&2
  tail -20 "$build/build.log" "$build/configure.log" >&2 2>/dev/null
  exit 2
fi

failed=0
for name in "${names[@]}"; do
  exe="$build/tests/fuzz/fuzz_$name"
  seeds="$root/tests/fuzz/corpus/$name"
  [ -x "$exe" ] && [ -d "$seeds" ] || { echo "fuzz: no harness or seeds named '$name'" >&2; exit 2; }
  work="$build/corpus/$name"
  mkdir -p "$work" "$build/artifacts"
  log="$build/fuzz-$name.log"
  # -timeout: an input that takes 5 s is a hang; the first folder receives
  # what the run finds, the seeds are only read.
  "$exe" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name-" "$work" "$seeds" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "fuzz: $name: ${execs:-?} inputs in ${seconds}s, no finding"
  else
    failed=1
    echo "fuzz: $name: FAILED (exit $rc) after ${execs:-?} inputs; log $log:"
    grep -E "ERROR|SUMMARY|runtime error|what\(\)|Test unit written" "$log" | head -20 | sed 's/^/  /'
  fi
done
exit $failed
