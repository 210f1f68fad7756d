#!/usr/bin/env bash
# tools/gpu-call.sh's probe step with a stub kbench (KBENCH_PREBUILT, so
# nothing is built and no GPU is needed): probe.json comes only from a
# probe that succeeded; a failed one, or one stopped by a signal, leaves the
# earlier file, or none, and no temporary file.
#   tests/gpu_call_probe.sh SOURCE_DIR
set -u
script="$1/tools/gpu-call.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $1"; fail=1; }

mkdir -p "$tmp/prebuilt/suite"
cat > "$tmp/prebuilt/suite/kbench" <<'STUB'
#!/usr/bin/env bash
# `list` starts (the prebuilt binaries are used); `probe` writes half a
# document, then the rest and exit 0, or exits STUB_PROBE_RC.
case "$1" in
  list) exit 0 ;;
  probe)
    printf '{"gpu": "Stub GPU",'
    echo "probing" >&2
    [ "${STUB_PROBE_RC:-0}" = 0 ] || exit "$STUB_PROBE_RC"
    [ -z "${STUB_PROBE_HANG:-}" ] || sleep 30
    printf ' "peaks": {"hbm_gbps": 1}, "targets": []}\n'
    ;;
esac
STUB
chmod +x "$tmp/prebuilt/suite/kbench"
call() { OUT="$tmp/out" KBENCH_PREBUILT="$tmp/prebuilt" bash "$script" probe > "$tmp/call.log" 2>&1; }
leftovers() { find "$tmp/out" -name '.probe.json*' | head -1; }

# A failed probe, no earlier file: none after it.
STUB_PROBE_RC=3 call
rc=$?
[ $rc -eq 1 ] || bad "a failed probe: gpu-call.sh exits $rc, not 1"
[ ! -e "$tmp/out/probe.json" ] || bad "a failed probe left probe.json: $(cat "$tmp/out/probe.json")"
grep -q "kbench probe failed (probe.log); probe.json not written" "$tmp/call.log" ||
  bad "a failed probe is not said: $(cat "$tmp/call.log")"
grep -q probing "$tmp/out/probe.log" || bad "probe.log lacks the probe's stderr"
[ -z "$(leftovers)" ] || bad "a failed probe left $(leftovers)"

# A probe that succeeds: the whole document.
call || bad "a probe that succeeds: gpu-call.sh exits $?: $(cat "$tmp/call.log")"
want='{"gpu": "Stub GPU", "peaks": {"hbm_gbps": 1}, "targets": []}'
[ "$(cat "$tmp/out/probe.json" 2> /dev/null)" = "$want" ] || bad "probe.json is not the probe's output"
[ -z "$(leftovers)" ] || bad "a probe that succeeded left $(leftovers)"

# A failed probe after it: the earlier probe.json stays as it was.
STUB_PROBE_RC=1 call
[ "$(cat "$tmp/out/probe.json" 2> /dev/null)" = "$want" ] ||
  bad "a failed probe changed the earlier probe.json: $(cat "$tmp/out/probe.json")"
[ -z "$(leftovers)" ] || bad "a failed probe left $(leftovers)"

# A probe cut short by a signal (Ctrl-C, a job's timeout): its temporary
# file goes too. The script itself runs in the background (so that wait
# returns only after its own exit trap), in a process group of its own to
# signal.
set -m
OUT="$tmp/out" KBENCH_PREBUILT="$tmp/prebuilt" STUB_PROBE_HANG=1 bash "$script" probe \
  > "$tmp/call.log" 2>&1 &
pid=$!
set +m
for _ in $(seq 100); do [ -s "$(leftovers)" ] && break; sleep 0.1; done
[ -s "$(leftovers)" ] || bad "the hanging probe wrote no temporary file"
kill -TERM -- "-$pid"
wait "$pid"
[ -z "$(leftovers)" ] || bad "a probe stopped by SIGTERM left $(leftovers)"
[ "$(cat "$tmp/out/probe.json" 2> /dev/null)" = "$want" ] ||
  bad "a probe stopped by SIGTERM changed the earlier probe.json"

[ $fail -eq 0 ] && echo "gpu-call.sh probe: ok"
exit $fail
