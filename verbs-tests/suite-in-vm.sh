#!/usr/bin/env bash
# Guest side (inside the rdma-vm VM): the fabric suite on the verbs backend,
# over rxe0 at 198.18.0.1. WEFT_BUILD is the host build directory.
set -uo pipefail
: "${WEFT_BUILD:?WEFT_BUILD must name the build directory}"
echo "== verbs suite in VM: $(uname -r), $(nproc) vCPU, devices: $(ls /sys/class/infiniband 2> /dev/null | tr '\n' ' ')"
ulimit -l unlimited
# rxe has type 2 memory windows: the scoped-key test must use them, not skip
export WEFT_TEST_EXPECT_SCOPED=1
rc=0
"$WEFT_BUILD/tests/test_fabric_tcp" verbs || rc=$?
# scoped keys against a peer that skips the initiator's check: the device refuses
# (a skip here, with rxe0 present, is a failure)
"$WEFT_BUILD/tests/test_verbs_mw" || { r=$?; [ "$r" = 77 ] && r=1; rc=$r; }
# a QP that stops completing work fails its connection, never hangs it
"$WEFT_BUILD/tests/test_verbs_stall" || { r=$?; [ "$r" = 77 ] && r=1; rc=$r; }
exit $rc
