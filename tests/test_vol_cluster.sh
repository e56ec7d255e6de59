#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Volume tests (docs/volumes.md) on a real cluster: 1 weft-mon + 3 weft-osd
# on loopback, pool rbd of size 3, started by the functions of
# tests/test_osd_cluster.sh (sourced with WEFT_CLUSTER_LIB=1: only
# cluster_up, fail, log and $CONF are used here, so moving them to a shared
# library later changes one line).
#
#   test_vol_cluster.sh CASE PORT WEFT_MON WEFT_OSD WEFT TEST_VOL_IO
#   CASE: io  | the C test program (libweft volume API)
#         cli | weft vol create/ls/info/resize/rm/lock/bench and usage errors
set -u
VCASE=$1 VPORT=$2 VMON=$3 VOSD=$4 VWEFT=$5 VIO=$6
here=$(cd "$(dirname "$0")" && pwd)
set -- "vol-$VCASE" tcp "$VPORT" "$VMON" "$VOSD" "$VWEFT" "$VIO"
WEFT_CLUSTER_LIB=1
# small stores: several clusters share this disk; the tests write little
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
# shellcheck source=tests/test_osd_cluster.sh
. "$here/test_osd_cluster.sh"

cluster_up
log "cluster up"
case $VCASE in
io)
	"$VIO" -c "$CONF" -p rbd "${WEFT_TEST_SEED:-42}" > "$DIR/vol_io.out" 2>&1 || {
		cat "$DIR/vol_io.out"; fail "test_vol_io"; }
	grep '^ok:' "$DIR/vol_io.out"
	;;
cli)
	. "$here/test_vol_cli.sh"
	;;
*) fail "unknown case $VCASE" ;;
esac
log "PASS vol $VCASE"
