#!/usr/bin/env bash
# The repo's .clang-format, enforced: every tracked C++/CUDA source must be
# formatted (fix with `clang-format -i FILE`). tools/setup.sh installs
# clang-format; without it (or outside a git checkout) the test skips (77).
set -uo pipefail
root="$1"
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format not installed"; exit 77; }
cd "$root" || exit 2
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' 2>/dev/null)
[ "${#files[@]}" -gt 0 ] || { echo "SKIP: not a git checkout"; exit 77; }
if ! out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  echo "$out" | grep -E "error:" | cut -d: -f1 | sort -u | sed 's/^/not formatted: /'
  echo "run: clang-format -i <file> (the style is .clang-format)"
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
