#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# README command 1 on stores small enough to fill within the run
# (docs/capacity.md): scripts/demo.sh with 256 MiB stores and the binaries
# of this build must exit 0, its write phase must stop at the byte cap
# (the stores would fill otherwise: 10 s of writes are more than they hold),
# and neither summary may count an error.
#
#   test_demo_capacity.sh BUILD_DIR PORT
set -u
BUILD=$1 PORT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp /tmp/weft-demo-capacity.XXXXXX)
trap 'rm -f "$OUT"' EXIT
fail() {
	echo "FAIL: $*"
	tail -n 60 "$OUT"
	exit 1
}
WEFT_BUILD=$BUILD WEFT_DEMO_SKIP_DEPS=1 WEFT_DEMO_SKIP_BUILD=1 WEFT_DEMO_DATA_SIZE=256M \
	WEFT_DEMO_SECONDS=10 WEFT_DEMO_PORT=$PORT "$HERE/../scripts/demo.sh" > "$OUT" 2>&1
RC=$?
[ $RC = 0 ] || fail "demo.sh exited $RC"
grep -q "OSDs of 256 MiB" "$OUT" || fail "the stores were not sized as asked"
grep -q "^Stopped early: --max-bytes reached" "$OUT" ||
	fail "the write phase did not stop at its byte cap (it would fill the stores)"
[ "$(grep -c '^Errors: *0$' "$OUT")" = 4 ] ||
	fail "a summary counted errors: $(grep '^Errors' "$OUT" | tr '\n' ' ')"
! grep -qiE "weft bench: (error|the pool is full)|No space left" "$OUT" ||
	fail "errors in the output: $(grep -iE 'error|No space' "$OUT" | head -3)"
echo "ok: demo.sh on 256 MiB stores: write capped at $(grep -o 'at most [0-9]* MiB' "$OUT" | head -1), no errors"
