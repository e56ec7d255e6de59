#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# weft vol bench on a local cluster: 1 weft-mon + 3 weft-osd (tcp, public
# 127.1.0.x, cluster 127.2.0.x, pool rbd size 3, min_size 2, 32 PGs) started
# with the functions of tests/test_osd_cluster.sh, one volume, then
#   1. 4 MiB sequential write over the whole volume (fills it),
#   2. 4 KiB random write, 16 in flight,
#   3. 4 KiB random read, 16 in flight (of written data),
#   4. the object layer alone on the same cluster for comparison:
#      test_osd_io bench (write_full of fresh objects, 4 KiB and 4 MiB, 16 in flight),
# each printed as `weft vol bench` prints it. Not a ctest (numbers are not
# pass/fail); results go to docs/performance.md.
#
#   perftest-scripts/vol-bench.sh BUILD_DIR [PORT]
# Environment: VOL_SIZE (1G), RAND_TOTAL (64M), THREADS (16), SEQ_THREADS (16).
set -u
B=$(cd "${1:?usage: vol-bench.sh BUILD_DIR [PORT]}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
set -- bench tcp "${2:-22500}" "$B/mon/weft-mon" "$B/osd/weft-osd" "$B/tools/weft" "$B/tests/test_osd_io"
WEFT_CLUSTER_LIB=1
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-4G}
export WEFT_TEST_LOG_LEVEL=${WEFT_TEST_LOG_LEVEL:-warn}
# shellcheck source=tests/test_osd_cluster.sh
. "$here/tests/test_osd_cluster.sh"

VOL_SIZE=${VOL_SIZE:-1G} RAND_TOTAL=${RAND_TOTAL:-64M}
THREADS=${THREADS:-16} SEQ_THREADS=${SEQ_THREADS:-16}
cluster_up
vb() { "$WEFT" vol "$@" -c "$CONF" --timeout 60; }
vb create rbd/bench --size "$VOL_SIZE" || fail "vol create"
echo "== $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$here" rev-parse --short HEAD), $B"
echo "== 4 MiB sequential write, $SEQ_THREADS in flight, $VOL_SIZE"
vb bench rbd/bench --io-type write --io-size 4M --io-threads "$SEQ_THREADS" --io-total "$VOL_SIZE" \
	--io-pattern seq || fail "4M seq write"
echo "== 4 KiB random write, $THREADS in flight, $RAND_TOTAL"
vb bench rbd/bench --io-type write --io-size 4K --io-threads "$THREADS" --io-total "$RAND_TOTAL" \
	--io-pattern rand || fail "4K rand write"
echo "== 4 KiB random read, $THREADS in flight, $RAND_TOTAL"
vb bench rbd/bench --io-type read --io-size 4K --io-threads "$THREADS" --io-total "$RAND_TOTAL" \
	--io-pattern rand || fail "4K rand read"
echo "== object layer alone: test_osd_io bench, 4 KiB x 4000 and 4 MiB x 200, 16 in flight"
"$IO" -c "$CONF" -p rbd bench 4096 4000 16 || fail "object bench 4K"
"$IO" -c "$CONF" -p rbd bench 4194304 200 16 || fail "object bench 4M"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
