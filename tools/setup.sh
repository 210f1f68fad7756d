#!/usr/bin/env bash
# Installs what kbench needs to build on Debian 12 / Ubuntu (the CUDA Toolkit
# itself must already be there, e.g. in /usr/local/cuda). Safe to re-run:
# installs only what is missing.
set -euo pipefail

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo_cmd="sudo"
apt_install() {
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@" >/dev/null
}

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
  [ "$(id -u)" -eq 0 ] || [ -n "$sudo_cmd" ] || { echo "setup: need root (or sudo) to apt-get install ${need[*]}" >&2; exit 2; }
  apt_install "${need[@]}"
fi

# Optional, only where .ci/run asks (never forced on users); where they
# cannot be installed, their tests skip: headless Chromium and Python 3 for
# the dashboard's browser test (KBENCH_BROWSER_TESTS=1), clang and its
# libFuzzer for the fuzz harnesses (KBENCH_FUZZ_TESTS=1).
optional() {  # optional VARIABLE PACKAGE...
  local why="$1"
  shift
  [ $# -gt 0 ] || return 0
  echo "setup: installing $* ($why=1)"
  apt_install "$@" || echo "setup: could not install $*: its test will skip" >&2
}
browser=()
if [ "${KBENCH_BROWSER_TESTS:-0}" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || browser+=(chromium)
  command -v python3 >/dev/null 2>&1 || browser+=(python3)
fi
optional KBENCH_BROWSER_TESTS ${browser[@]+"${browser[@]}"}
if [ "${KBENCH_FUZZ_TESTS:-0}" = 1 ] && ! command -v clang++ >/dev/null 2>&1; then
  optional KBENCH_FUZZ_TESTS clang
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc not found: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads)" >&2
  exit 2
fi
