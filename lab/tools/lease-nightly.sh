#!/usr/bin/env bash
# The whole nightly A/A, then GPU drops, over short device leases: run on the
# lent machine, from the repo root, once per call; the state stays in
# $KB_STATE (default /tmp/kb) while the machine stays warm, and goes back to
# the caller as $OUT/st.tgz to seed the next call on another board.
#
#   LIMIT=575 [SEED_RUNS=6] [DROPS="3 5 10"] [DROP_CONFIRM=2] lab/tools/lease-nightly.sh
#
# Binaries: $KB_BUILD (suite/kbench, tools/kgate/kgate), else .dev/prebuilt/
# {kbench,kgate}.gz, else built with tools/build.sh. History: the state's
# aa.csv, else the carried .dev/st.tgz (a previous call's $OUT/st.tgz), else
# the recorded whole-nightly A/A in tests/data (every timing's key then has
# 17 runs: nights are history-gated from the first). Each step starts only if
# it fits in what is left of LIMIT seconds: a night (~110 s, NIGHT_S 150),
# or, once the board has SEED_RUNS runs, the next drop (~320 s, DROP_S 400);
# each step is one resumed call of tools/gate-selftest.sh on the state's st/
# (docs/gate.md "The self-test on a GPU"). A step cut short by LIMIT is
# undone. Afterwards: tools/gate-selftest.sh --resume --out st --drops "" ...
# or kgate selftest-table --aa st/aa.csv --drop P st/drop-P.csv ...
set -uo pipefail
LIMIT=${LIMIT:-575}
kb=${KB_STATE:-/tmp/kb}
OUT=${OUT:-$kb/out}
mkdir -p "$kb" "$OUT"
log() { echo "$*" >> "$kb/events.txt"; }
build=${KB_BUILD:-$kb/build}
if [ ! -x "$build/suite/kbench" ]; then
  if [ -f .dev/prebuilt/kbench.gz ]; then
    mkdir -p "$build/suite" "$build/tools/kgate"
    gunzip -c .dev/prebuilt/kbench.gz > "$build/suite/kbench"
    gunzip -c .dev/prebuilt/kgate.gz > "$build/tools/kgate/kgate"
    chmod +x "$build/suite/kbench" "$build/tools/kgate/kgate"
  else
    KBENCH_BUILD_DIR="$build" KBENCH_CUDA_ARCH=90 tools/build.sh > "$kb/build.log" 2>&1 ||
      { tail -20 "$kb/build.log"; exit 2; }
  fi
fi
if [ ! -f "$kb/st/aa.csv" ]; then
  mkdir -p "$kb/st/aa"
  if [ -f .dev/st.tgz ]; then
    tar -C "$kb" -xzf .dev/st.tgz
  else
    # The recorded nights (one metric of each timing) under kbench's schema
    # v2 header (that of tests/data/h200-new-board-*.csv).
    python3 - "$kb/st/aa.csv" <<'PY' || exit 2
import csv, glob, sys
v2 = open(sorted(glob.glob("tests/data/h200-new-board-*.csv"))[0]).readline().strip().split(",")
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=v2, lineterminator="\n")
    w.writeheader()
    recorded = glob.glob("tests/data/h200-aa-full-*.csv")
    for p in sorted(recorded, key=lambda p: next(csv.DictReader(open(p)))["timestamp"]):
        for r in csv.DictReader(open(p)):
            w.writerow({k: r.get(k, "") for k in v2})
PY
  fi
  log "seeded: $(ls "$kb/st")"
fi
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$OUT/gpu.txt"
log "call start $(date -u +%T) board $uuid limit $LIMIT"
selftest=(tools/gate-selftest.sh --resume --out "$kb/st" --build "$build" --skip-table)
board_runs() {
  python3 -c 'import csv, sys; print(len({r["run_id"] for r in csv.DictReader(open(sys.argv[1]))
    if r["gpu_uuid"] == sys.argv[2] and "/" not in r["run_id"]}))' "$kb/st/aa.csv" "$uuid"
}
left() { echo $((LIMIT - SECONDS)); }
while :; do
  n=$(board_runs)
  k=1  # the next night, as gate-selftest.sh --resume counts them
  while [ -f "$kb/st/aa/night-$k/exit" ]; do k=$((k + 1)); done
  drop=""
  if [ "$n" -ge "${SEED_RUNS:-6}" ]; then
    for p in ${DROPS-3 5 10}; do [ -f "$kb/st/drop-$p/exit" ] || { drop=$p && break; }; done
  fi
  if [ -n "$drop" ] && [ "$(left)" -gt "${DROP_S:-400}" ]; then
    log "drop $drop start $(date -u +%T) board $uuid ($n runs), left $(left)"
    timeout $(($(left) - 5)) "${selftest[@]}" --nights $((k - 1)) --drops "$drop" \
      --confirm "${DROP_CONFIRM:-2}" 2>> "$kb/events.txt"
    rc=$?
    if [ $rc -eq 124 ]; then
      rm -rf "$kb/st/drop-$drop" "$kb/st/drop-$drop.csv" && log "drop $drop killed" && break
    fi
    # gate-selftest.sh writes no exit file for a drop night that did not run
    # whole (exit 2): measured again next call, not retried here.
    [ $rc -eq 2 ] && log "drop $drop: gate-selftest.sh exit 2" && break
    log "drop $drop rc $(cat "$kb/st/drop-$drop/exit") end $(date -u +%T)"
    continue
  fi
  [ "$(left)" -gt "${NIGHT_S:-150}" ] || break
  cp "$kb/st/aa.csv" "$kb/aa.bak"
  timeout $(($(left) - 5)) "${selftest[@]}" --nights "$k" --drops "" 2>> "$kb/events.txt"
  rc=$?
  if [ $rc -eq 124 ]; then  # a night cut short is not a night: the history as it was
    cp "$kb/aa.bak" "$kb/st/aa.csv" && rm -rf "$kb/st/aa/night-$k"* && log "night $k killed" && break
  fi
  [ $rc -eq 0 ] || { log "night $k: gate-selftest.sh exit $rc" && break; }
  log "night $k rc $(cat "$kb/st/aa/night-$k/exit") board $uuid run $((n + 1))" \
    "$(grep -m1 -E '^(PASS|FAIL)' "$kb/st/aa/night-$k/gate.txt")"
done
cp "$kb/events.txt" "$OUT/events.txt"
tar -C "$kb" -czf "$OUT/st.tgz" st
tail -20 "$kb/events.txt"
