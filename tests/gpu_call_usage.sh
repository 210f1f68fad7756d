#!/usr/bin/env bash
# tools/gpu-call.sh reads its steps before it builds or touches a GPU: its
# --help lists every step, and a missing or unknown step is a usage error
# (exit 2) with one line, so a typo in a device call costs no device time.
set -uo pipefail
script="$1/tools/gpu-call.sh"
fail=0
bad() { echo "FAIL: $1"; fail=1; }

help="$(bash "$script" --help)" || bad "--help exits $?"
for s in tests cpu-tests sanitize probe suite check tune run kbench: accept multi pack; do
  [[ "$help" == *"  $s"* ]] || bad "--help does not name step $s"
done

out="$(mktemp -d)"
msg="$(OUT="$out/o" bash "$script" tests bogus 2>&1)"
rc=$?
[ $rc -eq 2 ] || bad "an unknown step exits $rc, not 2"
[[ "$msg" == *"unknown step 'bogus'"* ]] || bad "an unknown step is not named: $msg"
[ ! -e "$out/o" ] || bad "\$OUT was written before the steps were read"
msg="$(OUT="$out/o" bash "$script" 2>&1)"
rc=$?
[ $rc -eq 2 ] || bad "no step exits $rc, not 2"
[[ "$msg" == *"no step given"* ]] || bad "no step: $msg"
rm -rf "$out"

[ $fail -eq 0 ] && echo "gpu-call.sh: usage checks passed"
exit $fail
