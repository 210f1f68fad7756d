#!/usr/bin/env bash
# Installs what kbench needs to build on Debian 12 / Ubuntu (the CUDA Toolkit
# itself must already be there, e.g. in /usr/local/cuda). Safe to re-run:
# installs only what is missing.
set -euo pipefail

need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v g++ >/dev/null 2>&1 || need+=(g++)
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)  # the format test
# The CI files' test reads YAML through python3 (it skips without it).
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import yaml' >/dev/null 2>&1; then
  need+=(python3-yaml)
fi

if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to apt-get install ${need[*]}" >&2; exit 2; }
    sudo_cmd="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The dashboard's browser test (tests/browser/) runs headless Chromium from
# Python 3: installed only where KBENCH_BROWSER_TESTS=1 (.ci/run sets it),
# never forced on users. Where it cannot be installed, the test skips.
if [ "${KBENCH_BROWSER_TESTS:-0}" = 1 ]; then
  browser=()
  command -v chromium >/dev/null 2>&1 || browser+=(chromium)
  command -v python3 >/dev/null 2>&1 || browser+=(python3)
  if [ ${#browser[@]} -gt 0 ]; then
    echo "setup: installing ${browser[*]} (KBENCH_BROWSER_TESTS=1)"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo_cmd="sudo"
    if ! { $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${browser[@]}" >/dev/null; }; then
      echo "setup: could not install ${browser[*]}: the dashboard's browser test will skip" >&2
    fi
  fi
fi

# The fuzz harnesses' short run (tests/fuzz/run.sh) needs clang and its
# libFuzzer: installed only where KBENCH_FUZZ_TESTS=1 (.ci/run sets it).
# Where it cannot be installed, the test skips.
if [ "${KBENCH_FUZZ_TESTS:-0}" = 1 ] && ! command -v clang++ >/dev/null 2>&1; then
  echo "setup: installing clang (KBENCH_FUZZ_TESTS=1)"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo_cmd="sudo"
  if ! { $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq clang >/dev/null; }; then
    echo "setup: could not install clang: the fuzz test will skip" >&2
  fi
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc not found: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads)" >&2
  exit 2
fi
