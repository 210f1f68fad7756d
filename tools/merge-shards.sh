#!/usr/bin/env bash
# Appends shard results files to a history file (docs/scale.md): a shard
# whose header is the history's last header goes in without it, any other
# (a v2 shard into a v1 history) with its header, which kgate reads as the
# columns of the rows below it and kbench appends under from then on
# (docs/csv-schema.md). Under flock, as kbench appends, so a nightly may
# run it while another job writes. Nothing already in the history changes.
#   tools/merge-shards.sh HISTORY.csv SHARD.csv...
set -euo pipefail
if [ "$#" -lt 2 ]; then
  echo "usage: tools/merge-shards.sh HISTORY.csv SHARD.csv..." >&2
  exit 2
fi
history="$1"
shift
for shard in "$@"; do
  if [ ! -f "$shard" ]; then
    echo "merge-shards: $shard: no such file" >&2
    exit 2
  fi
  case "$(head -n 1 "$shard")" in
    name,metric,target,actual,*) ;;
    *)
      echo "merge-shards: $shard: its first line is not a kbench header; nothing merged" >&2
      exit 2
      ;;
  esac
done
touch "$history"
exec 9>>"$history"
flock 9
for shard in "$@"; do
  header="$(head -n 1 "$shard")"
  last="$(grep -E '^name,metric,target,actual,' "$history" | tail -n 1 || true)"
  # A history cut off mid-row must not glue the shard's first line onto it.
  if [ -s "$history" ] && [ "$(tail -c 1 "$history" | od -An -c | tr -d ' ')" != '\n' ]; then
    printf '\n' >&9
  fi
  if [ "$header" = "$last" ]; then
    tail -n +2 "$shard" >&9
  else
    cat "$shard" >&9
  fi
  echo "merge-shards: $shard -> $history"
done
