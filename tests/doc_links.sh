#!/usr/bin/env bash
# Every relative link of the user docs (README.md, docs/**/*.md, lab/README.md)
# names a file or folder that exists, so that moving or deleting a file
# cannot leave a dead link behind. Links inside fenced code blocks and to
# other sites are not checked; an anchor (#...) is not checked, its file is.
set -uo pipefail
root="$1"
cd "$root" || exit 2
fail=0
links=0
files=0
while IFS= read -r f; do
  files=$((files + 1))
  dir="$(dirname "$f")"
  while IFS= read -r target; do
    target="${target%%#*}"
    [ -n "$target" ] || continue
    case "$target" in http://* | https://* | mailto:*) continue ;; esac
    links=$((links + 1))
    if [ ! -e "$dir/$target" ]; then
      echo "$f: dead link: $target"
      fail=1
    fi
  done < <(awk '/^ *```/ { code = !code; next } !code' "$f" |
    grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//')
done < <(find README.md docs lab -name '*.md' -type f | sort)
[ "$files" -gt 0 ] || { echo "no Markdown files found under $root"; exit 2; }
[ $fail -eq 0 ] && echo "$links links in $files Markdown files, none dead"
exit $fail
