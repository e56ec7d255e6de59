#!/usr/bin/env bash
# Guest side: weft doctor must list rxe0 and pass (exit 0), pass against a
# conf naming rxe0 and its RoCE v2 GID, fail (exit 1) against a conf naming a
# device that does not exist, and say ms_type=auto picks verbs.
set -uo pipefail
: "${WEFT_BUILD:?WEFT_BUILD must name the build directory}"
weft=$WEFT_BUILD/tools/weft
fail() { echo "FAIL: $*"; exit 1; }

out=$("$weft" doctor); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "weft doctor exited $rc, want 0"
grep -q 'device rxe0' <<< "$out" || fail "rxe0 not listed"
grep -q "picks 'verbs'" <<< "$out" || fail "ms_type=auto does not pick verbs"
gid=$(awk '$1 == "gid" && $3 == "RoCE" && $4 == "v2" && $NF == "198.18.0.1" { print $2; exit }' <<< "$out")
[ -n "$gid" ] || fail "no RoCE v2 GID for 198.18.0.1"

mkdir -p /run/weft-doctor
printf '[global]\nms_type = verbs\nrdma_device = rxe0\nrdma_port = 1\nrdma_gid_index = %s\n' "$gid" \
	> /run/weft-doctor/good.conf
printf '[global]\nms_type = verbs\nrdma_device = mlx5_9\n' > /run/weft-doctor/bad.conf
"$weft" doctor -c /run/weft-doctor/good.conf; rc=$?
[ $rc -eq 0 ] || fail "doctor -c good.conf exited $rc, want 0"
out=$("$weft" doctor -c /run/weft-doctor/bad.conf); rc=$?
echo "$out" | grep -E 'conf|ms_type'
[ $rc -eq 1 ] || fail "doctor -c bad.conf exited $rc, want 1"
grep -q "mlx5_9' does not exist" <<< "$out" || fail "bad device not reported"
json=$("$weft" doctor --format json); rc=$?
[ $rc -eq 0 ] || fail "doctor --format json exited $rc"
grep -q '"auto_backend": "verbs"' <<< "$json" || fail "json: auto_backend is not verbs"
grep -q '"name": "rxe0"' <<< "$json" || fail "json: rxe0 missing"
"$weft" doctor --bogus > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad usage exited $rc, want 2"
echo "doctor in VM: all checks passed"
