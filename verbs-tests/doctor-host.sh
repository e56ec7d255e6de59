#!/usr/bin/env bash
# Host side: weft doctor on a node without RDMA must say so and exit 3
# (TCP fallback works); on a node with a usable device it exits 0.
set -uo pipefail
weft=${1:?usage: doctor-host.sh WEFT_BINARY}
fail() { echo "FAIL: $*"; exit 1; }
out=$("$weft" doctor); rc=$?
echo "$out"
if ls /sys/class/infiniband/* > /dev/null 2>&1; then
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "with RDMA devices: exit $rc, want 0 or 1"
else
	[ $rc -eq 3 ] || fail "no RDMA device: exit $rc, want 3 (TCP fallback)"
	grep -q "picks 'tcp'" <<< "$out" || fail "ms_type=auto should pick tcp"
fi
json=$("$weft" doctor --format json)
grep -q '"exit_code"' <<< "$json" || fail "json output lacks exit_code"
"$weft" doctor --format xml > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --format must exit 2"
echo "doctor on host: ok (exit $rc)"
