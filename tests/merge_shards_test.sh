#!/usr/bin/env bash
# tools/merge-shards.sh fails closed: a shard that is the history (by name,
# symbolic or hard link), a second merge of the same shard, a foreign
# header or a shard cut mid-row is refused with the history untouched; an
# append that fails part-way (a file size limit: the write fails with
# EFBIG, as on a full disk) leaves the history as it was, through a
# symbolic link to it too; it waits for the lock kbench takes on the
# history.
#   tests/merge_shards_test.sh SOURCE_DIR
set -u
src="$1"
merge="$src/tools/merge-shards.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail() {
  echo "FAIL: $*"
  exit 1
}

v1="name,metric,target,actual,dtype,device,arch,is_model,shape,variant,status,samples,median_us,min_us,max_us,noise_rel,roofline,roofline_fraction,sm_clock_mhz,mem_clock_mhz,driver,cuda,suite_version,git_sha,run_id,timestamp,message"
v2="$v1,gpu_index,gpu_uuid,gpu_bus_id,host"
# A v2 row of key NAME in run RUN on GPU G.
row() {
  echo "$1,memory_bandwidth(GB/s),,$2,bfloat16,cuda:$4,NVIDIA H100 80GB HBM3,False,D=4096,,ok,50,1,1,1,0.01,3000,0.5,1980,2619,580.1,13.0,0.4.0,abc,$3,2026-01-01T00:00:00Z,,$4,GPU-$4,0000:0$4:00.0,node"
}
{
  echo "$v2"
  for n in 1 2 3; do row gemv 100$n "night$n" 0; done
} > h.csv
{ echo "$v2"; row gemv 1010 night4 0; row layer_norm 900 night4 0; } > s1.csv
{ echo "$v2"; row gemv 1011 night4 1; row layer_norm 901 night4 1; } > s2.csv

# 1. Two shards of one run (the same run id): both merged, headers left out.
"$merge" h.csv s1.csv s2.csv > log 2>&1 || { cat log; fail "merge: exit $?"; }
[ "$(grep -c "^$v2\$" h.csv)" = 1 ] || fail "a header was appended"
[ "$(wc -l < h.csv)" = 8 ] || fail "expected 8 lines: $(cat h.csv)"
cp h.csv before.csv

# Every refusal: exit 2, one line naming why, the history byte-identical.
refused() {
  local why="$1"
  shift
  # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
  timeout 20 bash -c 'ulimit -f 1000; exec "$0" "$@"' "$merge" "$@" > log 2>&1
  local rc=$?
  [ "$rc" = 2 ] || { cat log; fail "$*: exit $rc, expected 2"; }
  grep -q -- "$why" log || { cat log; fail "$*: no '$why' in the message"; }
  grep -q "nothing merged" log || { cat log; fail "$*: no 'nothing merged'"; }
  cmp -s h.csv before.csv || fail "$*: the history changed"
}

# 2. The history as its own shard: by name, by a symbolic link, by a hard link.
ln -s h.csv sym.csv
ln h.csv hard.csv
refused "is the history" h.csv h.csv
refused "is the history" h.csv sym.csv
refused "is the history" h.csv hard.csv
refused "is the history" sym.csv s1.csv hard.csv

# 3. The same shard again (alone, after a new one, or named twice): its rows are in.
{ echo "$v2"; row gemv 1020 night5 0; } > s3.csv
refused "already in h.csv" h.csv s1.csv
refused "already in h.csv" h.csv s3.csv s2.csv
refused "named twice" h.csv s3.csv s3.csv
cp s3.csv s3copy.csv
refused "in an earlier shard" h.csv s3.csv s3copy.csv

# 4. Headers: a foreign one in a shard or in the history; a v1 header with a column more.
{ echo "a,b,c"; echo "1,2,3"; } > foreign.csv
refused "not kbench's header" h.csv s3.csv foreign.csv
{ echo "$v1,extra"; row gemv 1 night9 0; } > near.csv
refused "not kbench's header" h.csv near.csv
cp foreign.csv other.csv
cp other.csv other-before.csv
timeout 20 "$merge" other.csv s3.csv > log 2>&1
[ $? = 2 ] || fail "a foreign history: expected exit 2"
cmp -s other.csv other-before.csv || fail "a foreign history was changed"

# 5. A shard cut mid-row (no final newline).
{ echo "$v2"; printf '%s' "$(row gemv 1030 night6 0 | cut -c 1-80)"; } > cut.csv
refused "cut off" h.csv cut.csv

# 6. An append that fails part-way: the history is cut back to its size.
# The file size limit leaves room for the script's own copies of the
# shard's rows (as large as the shard), not for the history grown by it.
shard_of() {
  echo "$v2"
  for i in $(seq 1 "$2"); do row "k$i" 1000 "$1" 0; done
}
shard_of night6 500 > grow.csv
"$merge" h.csv grow.csv > log 2>&1 || { cat log; fail "merge of 500 rows"; }
cp h.csv before.csv
shard_of night7 400 > big.csv
size=$(stat -c %s h.csv)
limit_kb=$(((size + $(stat -c %s big.csv) / 2) / 1024))
timeout 20 bash -c "ulimit -f $limit_kb; exec \"\$0\" \"\$@\"" "$merge" h.csv s3.csv big.csv > log 2>&1
rc=$?
[ "$rc" = 1 ] || { cat log; fail "failed append: exit $rc, expected 1"; }
grep -q "cut back to its $size bytes" log || { cat log; fail "failed append: no 'cut back' line"; }
cmp -s h.csv before.csv || fail "failed append: the history was not restored"
# The same merge with room for it goes in whole.
"$merge" h.csv s3.csv big.csv > log 2>&1 || { cat log; fail "merge after the failed one"; }
[ "$(wc -l < h.csv)" = $((8 + 500 + 1 + 400)) ] || fail "after the failed one: $(wc -l < h.csv) lines"
cp h.csv before.csv
# The same through a symbolic link to the history (a CI cache): cut back to
# the file's size, not to the link's own (its target's name).
ln -s h.csv linked.csv
shard_of night9 400 > big2.csv
timeout 20 bash -c "ulimit -f $limit_kb; exec \"\$0\" \"\$@\"" "$merge" linked.csv big2.csv > log 2>&1
rc=$?
[ "$rc" = 1 ] || { cat log; fail "failed append through a link: exit $rc, expected 1"; }
cmp -s h.csv before.csv || fail "failed append through a link: the history was not restored ($(stat -c %s h.csv) bytes)"

# 7. It waits for the lock kbench takes (flock(2) on the history).
flock h.csv sleep 3 &
holder=$!
sleep 0.5
{ echo "$v2"; row gemv 1040 night8 0; } > s4.csv
timeout 1 "$merge" h.csv s4.csv > log 2>&1
rc=$?
[ "$rc" = 124 ] || { cat log; fail "merged while the history was locked (exit $rc)"; }
cmp -s h.csv before.csv || fail "the history changed while locked"
wait "$holder"
"$merge" h.csv s4.csv > log 2>&1 || { cat log; fail "merge after the lock"; }

# 8. A v2 shard into a v1 history goes in with its header.
{ echo "$v1"; echo "gemv,memory_bandwidth(GB/s),,1000,bfloat16,cuda,NVIDIA H100 80GB HBM3,False,D=4096,,ok,50,1,1,1,0.01,3000,0.5,1980,2619,580.1,13.0,0.4.0,abc,old1,2026-01-01T00:00:00Z,"; } > v1.csv
"$merge" v1.csv s1.csv > log 2>&1 || { cat log; fail "v2 into v1"; }
[ "$(grep -c "^$v2\$" v1.csv)" = 1 ] || fail "v2 into v1: the v2 header is not there once"
echo "merge-shards: ok"
