#!/usr/bin/env bash
# Guest side (inside the rdma-vm VM): the OSD functional test (tests/
# test_osd_cluster.sh io) on the verbs backend over rxe0. One VM boot runs
# weft-mon, three weft-osd and the client, all on 198.18.0.1 with distinct
# ports: the VM has one rxe IP, so public and cluster differ by port only
# (the script then checks the separation by port; the TCP variant checks it
# by IP). Few objects (WEFT_VM_OSD_OBJECTS, default 40) so it fits in a few
# minutes of TCG. WEFT_BUILD is the host build directory.
#
# The stores live in the guest's RAM: /tmp is a tmpfs of half the VM's
# memory, and mkfs fallocates each data file, which on tmpfs takes the pages
# at once. With 1 GiB stores in a 3 GiB VM the first store took 1 of the
# 1.5 GiB, the others fell back to sparse files, and RocksDB ran out of room
# (an OSD aborted in RocksDB, docs/verbs.md). So: 256 MiB stores
# (WEFT_VM_OSD_DATA_SIZE), a check that they fit before anything starts, and
# the low-water mark of free memory and the peak of /tmp printed at the end.
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
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_VM_OSD_DATA_SIZE:-256M}
# TCG + ASan: an rdma_cm connect (resolve, route, QP, handshake) takes
# seconds, and the daemons' loops are slow; the loopback timeouts (2-3 s)
# would make replica connects time out over and over and writes time out.
export WEFT_TEST_CONNECT_TIMEOUT=20s WEFT_TEST_PEER_TIMEOUT=20s WEFT_TEST_HEARTBEAT_GRACE=20s
export WEFT_TEST_OSD_OP_TIMEOUT=120s WEFT_TEST_OP_TIMEOUT=180s WEFT_TEST_LOG_TAIL=60
# the security suite's stale-key attack, over verbs (tests/test_osd_cluster.sh io)
export WEFT_TEST_STALEKEY=1
# the VM itself is killed after WEFT_VM_TIMEOUT (900 s): stop the case first, with logs
export WEFT_TEST_WATCHDOG=${WEFT_TEST_WATCHDOG:-840}
case=${WEFT_VM_OSD_CASE:-io}
port=17500
if [ "$case" = memory ]; then
	# registered memory is pinned here: it counts in RSS for real. One
	# smaller round: TCG, and the stores live in the VM's RAM (tmpfs). A
	# round takes about 100 s here (ASan, CI of 2026-12-07); the second one
	# it used to run peaked 1-12 MiB above the first, 30 MiB under the
	# target. Many rounds are the TCP case's job (osd_func_memory_tcp, 4).
	port=17900
	export WEFT_TEST_MEM_ROUNDS=${WEFT_TEST_MEM_ROUNDS:-1} WEFT_TEST_MEM_LARGE=${WEFT_TEST_MEM_LARGE:-12}
	export WEFT_TEST_MEM_MEDIUM=${WEFT_TEST_MEM_MEDIUM:-128} WEFT_TEST_MEM_SMALL=${WEFT_TEST_MEM_SMALL:-500}
fi

# 3 stores + 64 MiB each for RocksDB, logs and the mon must fit in /tmp
need=$(($(numfmt --from=iec "$WEFT_TEST_OSD_DATA_SIZE") * 3 / 1048576 + 3 * 64))
have=$(df -m --output=size /tmp | tail -n 1 | tr -d ' ')
if [ "$need" -gt "$have" ]; then
	echo "FAIL: 3 stores of $WEFT_TEST_OSD_DATA_SIZE need about $need MiB of /tmp; the VM's tmpfs has $have MiB (raise WEFT_VM_MEM or lower WEFT_VM_OSD_DATA_SIZE)"
	exit 1
fi
# sampled every 2 s: lowest MemAvailable, highest /tmp use (MiB)
(
	lo=999999 hi=0
	while :; do
		a=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
		u=$(df -m --output=used /tmp | tail -n 1 | tr -d ' ')
		[ "$a" -lt "$lo" ] && lo=$a
		[ "$u" -gt "$hi" ] && hi=$u
		echo "$lo $hi" > /run/weft-vm-res
		sleep 2
	done
) &
sampler=$!
bash "$here/../tests/test_osd_cluster.sh" "$case" verbs "$port" \
	"$WEFT_BUILD/mon/weft-mon" "$WEFT_BUILD/osd/weft-osd" "$WEFT_BUILD/tools/weft" \
	"$WEFT_BUILD/tests/test_osd_io"
rc=$?
kill "$sampler" 2> /dev/null
wait "$sampler" 2> /dev/null
read -r lo hi < /run/weft-vm-res
echo "== VM resources: MemAvailable low-water $lo MiB of $(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo) MiB; /tmp peak $hi MiB of $have MiB (stores of $WEFT_TEST_OSD_DATA_SIZE)"
exit $rc
