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

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc not found: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads)" >&2
  exit 2
fi
