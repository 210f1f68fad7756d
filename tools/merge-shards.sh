#!/usr/bin/env bash
# Appends shard results files to a history file (docs/scale.md), a shard's
# header only where it differs from the history's last one.
#   tools/merge-shards.sh HISTORY.csv SHARD.csv...
# Fails closed: every refusal (exit 2) before anything is written, the
# append under kbench's lock (flock), a failed append cut back (exit 1).
set -euo pipefail

# core/record.cpp's csv_header_v1() and csv_header() (tests/cpu/test_merge_shards.cpp
# checks that they are the same).
v1_header="name,metric,target,actual,dtype,device,arch,is_model,shape,variant,status,samples,median_us,min_us,max_us,noise_rel,roofline,roofline_fraction,sm_clock_mhz,mem_clock_mhz,driver,cuda,suite_version,git_sha,run_id,timestamp,message"
v2_header="$v1_header,gpu_index,gpu_uuid,gpu_bus_id,host"

refuse() {
  echo "merge-shards: $1; nothing merged" >&2
  exit 2
}
[ "$#" -ge 2 ] || { echo "usage: tools/merge-shards.sh HISTORY.csv SHARD.csv..." >&2; exit 2; }
history="$1"
shift

is_header() { [ "$1" = "$v1_header" ] || [ "$1" = "$v2_header" ]; }
ends_in_newline() { [ ! -s "$1" ] || [ "$(tail -c 1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ]; }

# The shards on their own, before the history is opened.
for ((i = 1; i <= $#; i++)); do
  shard="${!i}"
  [ -f "$shard" ] || refuse "$shard: no such file"
  [ ! -e "$history" ] || [ ! "$shard" -ef "$history" ] ||
    refuse "$shard is the history $history itself (the same file)"
  for ((j = 1; j < i; j++)); do
    [ ! "$shard" -ef "${!j}" ] || refuse "$shard is named twice (as ${!j})"
  done
  is_header "$(head -n 1 "$shard")" ||
    refuse "$shard: its first line is not kbench's header (CSV schema v1 or v2)"
  ends_in_newline "$shard" || refuse "$shard: its last row is cut off (no newline at its end)"
done

work="$(mktemp -d)"
size0=""
finish() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ -n "$size0" ]; then
    if truncate -s "$size0" "$history"; then
      echo "merge-shards: failed while appending (exit $rc): $history cut back to its $size0 bytes; nothing merged" >&2
    else
      echo "merge-shards: failed while appending (exit $rc) and could not cut $history back to $size0 bytes: restore it" >&2
    fi
    rc=1
  fi
  rm -rf "$work"
  exit "$rc"
}
trap finish EXIT
trap 'exit 143' TERM INT HUP
# Over a file size limit a write fails (EFBIG) instead of killing the
# script, so that the history is cut back.
trap '' XFSZ

touch "$history"
exec 9>>"$history"
flock 9

# Under the lock: what the history is now.
first="$(head -n 1 "$history")"
[ ! -s "$history" ] || is_header "$first" ||
  refuse "$history: its first line is not kbench's header (CSV schema v1 or v2)"
last="$(grep -xF -e "$v1_header" -e "$v2_header" "$history" | tail -n 1 || true)"
: > "$work/seen"
# grep's exit 1 is "no line": anything above it is an error, never a pass.
for shard in "$@"; do
  rc=0
  grep -vxF -e "$v1_header" -e "$v2_header" -e '' "$shard" > "$work/rows" || rc=$?
  [ "$rc" -le 1 ] || refuse "$shard: cannot read it"
  rc=0
  dup="$(grep -h -m 1 -xFf "$work/rows" "$history" "$work/seen")" || rc=$?
  [ "$rc" -le 1 ] || refuse "cannot compare $shard's rows with $history"
  if [ "$rc" -eq 0 ]; then
    dup="${dup%%$'\n'*}"
    refuse "$shard: a row of it is already in $history or in an earlier shard (merged before?): ${dup:0:200}"
  fi
  cat "$work/rows" >> "$work/seen"
done

# -L: the file's size, not a symbolic link's own (a history reached through
# a link, cut back to the link's size, would be lost).
size0="$(stat -L -c %s "$history")"
# A history cut off mid-row must not glue the first shard's first line onto it.
ends_in_newline "$history" || printf '\n' >&9
for shard in "$@"; do
  header="$(head -n 1 "$shard")"
  if [ "$header" = "$last" ]; then
    tail -n +2 "$shard" >&9
  else
    cat "$shard" >&9
  fi
  last="$(grep -xF -e "$v1_header" -e "$v2_header" "$shard" | tail -n 1)"
done
sync "$history"
size0=""
for shard in "$@"; do echo "merge-shards: $shard -> $history"; done
