#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# recovery.sh: how fast a returning OSD is caught up (log-based recovery,
# docs/recovery.md), and what the clients' writes see meanwhile. A local
# cluster (3 mons, 3 OSDs, pool size 3 / min_size 2, tcp, loopback,
# Release): osd.2 stopped, OBJECTS objects of SIZE written with `weft bench
# write -t 16 --no-cleanup` (so they are missing on osd.2 only), osd.2
# started again; the time from its start until every PG is active+clean
# gives objects and bytes recovered per second. A QD1 4 KiB
# write phase runs once before the restart (idle) and once during the
# recovery, so the two latency figures show what recovery costs the
# clients. Raw limit in the same run: fio 4 KiB random O_DIRECT writes at
# QD16 on the cluster's filesystem (each recovered object is one write on
# the returning OSD).
#
# usage: recovery.sh [--objects N] [--size SIZE] [--dir DIR] [--port P]
#                    [--out FILE] [--keep-results DIR] [BUILD_DIR]
#   BUILD_DIR (default ./build-release): a Release build. --objects: how
#   many objects miss on osd.2 (default 10000); --size: their size (default
#   4K); --dir: scratch space (default /var/tmp/weft-recovery, about 13 GiB,
#   removed at the end); --port: the cluster's base port (default 39600);
#   --out: also write the table there; --keep-results: copy every tool's
#   raw output there. Progress: stderr.
# exit: 0 done, 1 a tool failed or recovery did not end within 10 minutes,
# 2 bad usage.
set -uo pipefail

OBJECTS=10000 SIZE=4K SCRATCH=/var/tmp/weft-recovery PORT=39600 OUT="" KEEP="" BUILD=./build-release
SECS=5 RAW_SECS=5
BL_NAME=recovery
# shellcheck source=perftest-scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	--objects) OBJECTS=${2:-}; shift ;;
	--size) SIZE=${2:-}; shift ;;
	*) bl_common_opt "$@"; [ "$BL_TOOK" = 1 ] || shift ;;
	esac
	shift
done
bl_positive "$OBJECTS"
[[ $SIZE =~ ^[0-9]+[KM]?$ ]] || bl_usage_error "--size: '$SIZE' is not a size (4K, 64K, 1M)"
bl_paths
bl_require_bins "$WEFT" "$BUILD/mon/weft-mon" "$BUILD/osd/weft-osd" "$BUILD/perftest-scripts/tcp-pingpong"
bl_require_tools jq python3 fio
bl_init

bytes=$(numfmt --from=iec "$SIZE")
bl_fio_prep
bl_fio_run randwrite-4k --rw=randwrite --bs=4k --ioengine=io_uring --iodepth=16
bl_cluster_up
bl_bench qd1-idle "$SECS" write -b 4K -t 1
"${CL[@]}" stop-osd 2 --dir "$CDIR" >&2 || bl_die "stop osd.2"
bl_say "writing $OBJECTS objects of $SIZE with osd.2 down"
timeout --foreground 900 "$WEFT" bench bench 600 write -b "$SIZE" -t 16 --no-cleanup \
	--max-bytes $((OBJECTS * bytes)) --run-name recovery --no-explain --format json -c "$CONF" \
	> "$RES/fill.json" 2> "$RES/fill.err" || bl_die "fill: $(tail -n 3 "$RES/fill.err")"
# from the start of osd.2: its recovery begins as soon as it has peered,
# before start-osd has seen every OSD up and every PG active
t0=$(date +%s.%N)
"${CL[@]}" start-osd 2 --dir "$CDIR" >&2 || bl_die "start osd.2"
bl_say "osd.2 is up: recovery runs; a QD1 write phase meanwhile"
bl_bench qd1-recovery "$SECS" write -b 4K -t 1
# clean: every PG active+clean and nothing degraded, in the mons' view
clean() {
	"$WEFT" status -c "$CONF" --timeout 5 --format json 2> /dev/null > "$RES/status.json" &&
		jq -e '(.pgmap.states | keys == ["active+clean"]) and (.pgmap.degraded_objects // 0) == 0' \
			"$RES/status.json" > /dev/null
}
until clean; do
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a > 600) }' &&
		bl_die "not clean 10 minutes after osd.2 came back: $(jq -c .pgmap "$RES/status.json")"
	sleep 0.2
done
t1=$(date +%s.%N)
for i in 0 1 2; do
	"$WEFT" perf dump "osd.$i" -c "$CONF" --timeout 5 > "$RES/perf-osd.$i.json" 2> /dev/null ||
		bl_say "perf dump of osd.$i failed"
done

python3 - "$RES" "$t0" "$t1" "$OBJECTS" "$bytes" "$(bl_rev)" "$(dirname "$0")" << 'EOF' | tee ${OUT:+"$OUT"}
import json, os, sys
res, t0, t1, objects, size, rev, here = sys.argv[1:8]
sys.path.insert(0, here)
from bench_lib import bench, f, load
secs = float(t1) - float(t0)
objects, size = int(objects), int(size)
fio = load(res, "fio-randwrite-4k.json")["jobs"][0]["write"]["iops"]
idle, rec = bench(res, "qd1-idle"), bench(res, "qd1-recovery")
pushed = 0
for i in range(3):
    p = os.path.join(res, "perf-osd.%d.json" % i)
    if os.path.exists(p):
        pushed += json.load(open(p)).get("recovery", {}).get("objects", 0)
rate = objects / secs
print("| measure | value | raw limit |")
print("|---|---|---|")
print("| objects missing on osd.2 | %d of %d bytes (OSDs' recovery counters: %d objects) | - |"
      % (objects, size, pushed))
print("| osd.2 started to every PG active+clean | %.1f s | - |" % secs)
print("| objects recovered per second | %s | fio 4 KiB random write QD16: %s IOPS (%.3f) |"
      % (f(rate), f(fio), rate / fio))
print("| MB/s recovered | %.1f | - |" % (rate * size / 1e6))
print("| client 4 KiB write QD1 p50 / p99, idle | %s / %s us | - |" % (f(idle["p50"]), f(idle["p99"])))
print("| the same during recovery | %s / %s us | - |" % (f(rec["p50"]), f(rec["p99"])))
print()
print("Tree %s. The clean time resolves to about a second (PG states reach the mons once a"
      " second) and includes osd.2's start and peering; the QD1 phase during recovery"
      " starts once every PG is active again and lasts 5 s." % rev)
EOF
