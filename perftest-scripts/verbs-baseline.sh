#!/usr/bin/env bash
# verbs-baseline.sh: Weft's verbs fabric backend against perftest, in ONE boot
# of the Soft-RoCE VM (../shared/rdma-vm; rxe0 on 198.18.0.1, TCG-emulated).
#
#   ib_write_bw  -s 65536 -n BWITERS (rdma_cm)    -> MB/s
#   weft fabric-bench --op write -s 64K -q Q -n BWITERS -> MB/s
#   ib_send_lat  -s 8 -n N (rdma_cm)              -> typical (median) usec, one way
#   weft fabric-bench --op send -s 8 --lat -n N   -> p50 round trip / 2, usec
#
# Acceptance bar (issue 3): fabric write BW >= 70% of ib_write_bw's, and the
# 8-byte send latency <= 1.5x ib_send_lat's. Both sides of each pair run in
# the same VM, so each run is a loopback through rxe; TCG emulates the CPU and
# rxe's ICRC, so absolute numbers say nothing about hardware.
#
# usage: verbs-baseline.sh [BUILD_DIR]     (default ./build-verbs-rel; a Release build)
# env:   ITERS (latency iterations, default 5000), BWITERS (64 KiB writes, default 3000),
#        QDEPTH (fabric-bench outstanding writes, default 64), WEFT_RDMA_VM
# exit:  0 bar met, 1 a tool or the VM failed, 2 bad usage, 3 bar not met.
set -uo pipefail

if [ "${1:-}" = "--in-vm" ]; then
	# ---------------------------------------------------------- guest side
	WEFT=$2
	IP=198.18.0.1
	ITERS=${ITERS:-5000}
	BWITERS=${BWITERS:-3000}
	QDEPTH=${QDEPTH:-64}
	T=$(mktemp -d)
	ulimit -l unlimited
	fail() { echo "verbs-baseline: $*" >&2; exit 1; }
	# run SERVER-CMD in the background, then CLIENT-CMD; client output to $T/$name
	pair() {
		local name=$1 srv=$2 cli=$3 spid crc
		bash -c "$srv" > "$T/$name.srv" 2>&1 &
		spid=$!
		# fabric-bench says when it listens; perftest gets a fixed head start
		for _ in $(seq 1 100); do
			grep -q -i -E 'listening|waiting for client' "$T/$name.srv" && break
			sleep 0.2
		done
		sleep 0.5
		timeout 300 bash -c "$cli" > "$T/$name.cli" 2> "$T/$name.err"
		crc=$?
		timeout 30 tail --pid=$spid -f /dev/null
		kill $spid 2> /dev/null
		wait $spid 2> /dev/null
		if [ $crc -ne 0 ]; then
			cat "$T/$name.cli" "$T/$name.err" "$T/$name.srv" >&2
			fail "$name failed (client rc $crc)"
		fi
	}
	perfline() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {l=$0} END {print l}' "$T/$1.cli"; }
	jget() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())[sys.argv[2]])' "$1" "$2"; }

	echo "== $(uname -r), $(nproc) vCPU, rxe0 @ $IP, lat iters $ITERS, bw iters $BWITERS"
	P="-d rxe0 -R -F"
	pair ib_write_bw "ib_write_bw $P -s 65536 -n $BWITERS" "ib_write_bw $P -s 65536 -n $BWITERS $IP"
	ib_bw=$(perfline ib_write_bw | awk '{print $4}')
	echo "ib_write_bw 64K:            $(perfline ib_write_bw)"
	pair fb_write "$WEFT fabric-bench --server --addr $IP:7471 --backend verbs" \
		"$WEFT fabric-bench --connect $IP:7471 --backend verbs --op write -s 64K -q $QDEPTH -n $BWITERS --format json"
	fb_bw=$(jget "$T/fb_write.cli" bw_mb_s) || fail "fabric-bench write: bad JSON"
	echo "fabric-bench write 64K:     $(cat "$T/fb_write.cli")"
	pair ib_send_lat "ib_send_lat $P -s 8 -n $ITERS" "ib_send_lat $P -s 8 -n $ITERS $IP"
	ib_lat=$(perfline ib_send_lat | awk '{print $5}')
	ib_lat_avg=$(perfline ib_send_lat | awk '{print $6}')
	echo "ib_send_lat 8B:             $(perfline ib_send_lat)"
	pair fb_lat "$WEFT fabric-bench --server --addr $IP:7472 --backend verbs" \
		"$WEFT fabric-bench --connect $IP:7472 --backend verbs --op send -s 8 --lat -n $ITERS --format json"
	fb_p50=$(jget "$T/fb_lat.cli" lat_p50_us) || fail "fabric-bench send: bad JSON"
	echo "fabric-bench send 8B --lat: $(cat "$T/fb_lat.cli")"
	python3 - "$ib_bw" "$fb_bw" "$ib_lat" "$ib_lat_avg" "$fb_p50" <<'PY'
import sys
ib_bw, fb_bw, ib_lat, ib_avg, fb_rtt = map(float, sys.argv[1:])
fb_lat = fb_rtt / 2
bw_ratio = fb_bw / ib_bw if ib_bw else 0
lat_ratio = fb_lat / ib_lat if ib_lat else float("inf")
print("%-46s %10.1f MB/s" % ("ib_write_bw 64 KiB (BW average)", ib_bw))
print("%-46s %10.1f MB/s" % ("weft fabric-bench verbs write 64 KiB", fb_bw))
print("%-46s %10.2f   (bar >= 0.70) %s" % ("ratio: fabric / ib_write_bw", bw_ratio,
      "PASS" if bw_ratio >= 0.70 else "FAIL"))
print("%-46s %10.2f us (avg %.2f)" % ("ib_send_lat 8 B typical, one way", ib_lat, ib_avg))
print("%-46s %10.2f us (p50 RTT %.2f / 2)" % ("weft fabric-bench verbs send 8 B, one way", fb_lat, fb_rtt))
print("%-46s %10.2f   (bar <= 1.50) %s" % ("ratio: fabric / ib_send_lat", lat_ratio,
      "PASS" if lat_ratio <= 1.5 else "FAIL"))
sys.exit(0 if bw_ratio >= 0.70 and lat_ratio <= 1.5 else 3)
PY
	exit $?
fi

# ---------------------------------------------------------------- host side
case "${1:-}" in
-h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
-*) echo "verbs-baseline: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=$(cd "${1:-$top/build-verbs-rel}" 2> /dev/null && pwd) || { echo "verbs-baseline: no build dir" >&2; exit 2; }
[ -x "$BUILD/tools/weft" ] || { echo "verbs-baseline: $BUILD/tools/weft not built" >&2; exit 2; }
vm=""
for c in "${WEFT_RDMA_VM:-}" "$top/../shared/rdma-vm" /work/shared/rdma-vm; do
	[ -n "$c" ] && [ -x "$c/run-in-vm.sh" ] && { vm=$c; break; }
done
[ -n "$vm" ] || { echo "verbs-baseline: rdma-vm harness not found (set WEFT_RDMA_VM)" >&2; exit 2; }
cd "$top" || exit 1
RDMAVM_TIMING=1 "$vm/run-in-vm.sh" --mem 2G --timeout 1200 -e ITERS="${ITERS:-5000}" \
	-e BWITERS="${BWITERS:-3000}" -e QDEPTH="${QDEPTH:-64}" \
	-- bash "$here/verbs-baseline.sh" --in-vm "$BUILD/tools/weft"
