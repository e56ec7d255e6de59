#!/usr/bin/env bash
# Guest side (inside the rdma-vm VM): the OSD functional test (tests/
# test_osd_cluster.sh io) on the verbs backend over rxe0. One VM boot runs
# weft-mon, three weft-osd and the client, all on 198.18.0.1 with distinct
# ports: the VM has one rxe IP, so public and cluster differ by port only
# (the script then checks the separation by port; the TCP variant checks it
# by IP). Few objects (WEFT_VM_OSD_OBJECTS, default 40) so it fits in a few
# minutes of TCG. WEFT_BUILD is the host build directory.
set -uo pipefail
: "${WEFT_BUILD:?WEFT_BUILD must name the build directory}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
echo "== OSD io over verbs in VM: $(uname -r), $(nproc) vCPU, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB," \
	"devices: $(ls /sys/class/infiniband 2> /dev/null | tr '\n' ' ')"
[ -d /sys/class/infiniband/rxe0 ] || { echo "SKIP: no rxe0 in the VM"; exit 77; }
ulimit -l unlimited
# /tmp is RAM here: small stores (sparse files) and small rings.
export WEFT_TEST_IP=198.18.0.1
export WEFT_TEST_OSD_OBJECTS=${WEFT_VM_OSD_OBJECTS:-40}
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_VM_OSD_DATA_SIZE:-1G}
# TCG + ASan: an rdma_cm connect (resolve, route, QP, handshake) takes
# seconds, and the daemons' loops are slow; the loopback timeouts (2-3 s)
# would make replica connects time out over and over and writes time out.
export WEFT_TEST_CONNECT_TIMEOUT=20s WEFT_TEST_PEER_TIMEOUT=20s WEFT_TEST_HEARTBEAT_GRACE=20s
export WEFT_TEST_OSD_OP_TIMEOUT=120s WEFT_TEST_OP_TIMEOUT=180s WEFT_TEST_LOG_TAIL=60
# the VM itself is killed after WEFT_VM_TIMEOUT (900 s): stop the case first, with logs
export WEFT_TEST_WATCHDOG=${WEFT_TEST_WATCHDOG:-840}
case=${WEFT_VM_OSD_CASE:-io}
port=17500
if [ "$case" = memory ]; then
	# registered memory is pinned here: it counts in RSS for real. Fewer
	# and smaller rounds: TCG, and the stores live in the VM's RAM (tmpfs).
	port=17900
	export WEFT_TEST_MEM_ROUNDS=${WEFT_TEST_MEM_ROUNDS:-2} WEFT_TEST_MEM_LARGE=${WEFT_TEST_MEM_LARGE:-12}
	export WEFT_TEST_MEM_MEDIUM=${WEFT_TEST_MEM_MEDIUM:-128} WEFT_TEST_MEM_SMALL=${WEFT_TEST_MEM_SMALL:-500}
fi
exec bash "$here/../tests/test_osd_cluster.sh" "$case" verbs "$port" \
	"$WEFT_BUILD/mon/weft-mon" "$WEFT_BUILD/osd/weft-osd" "$WEFT_BUILD/tools/weft" \
	"$WEFT_BUILD/tests/test_osd_io"
