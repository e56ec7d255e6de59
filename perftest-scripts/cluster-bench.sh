#!/usr/bin/env bash
# cluster-bench.sh: the standard `weft bench` set on a local cluster
# (scripts/cluster.sh: 3 mons, 3 OSDs, pool size 3, tcp backend, loopback),
# with the machine's raw limits measured in the same run, as a markdown table
# for docs/performance.md.
#
#   raw disk (fio, on the filesystem that holds the cluster):
#     4 MiB write / read / randread, 16 in flight, O_DIRECT, io_uring
#     4 KiB randwrite / randread, 32 in flight, O_DIRECT, io_uring
#     4 KiB randwrite, 1 in flight, O_DIRECT + O_DSYNC (a durable write)
#   loopback: perftest-scripts/tcp-baseline.sh --json (iperf3, 64 B RTT)
#             and tcp-pingpong -s 4096 (4 KiB RTT)
#   cluster:  weft bench bench S write -b 4M -t 16 --no-cleanup, then seq and
#             rand -t 16 on those objects; write -b 4K -t 32 --no-cleanup,
#             rand -t 32; write -b 4K -t 1 (latency)
#
# usage: cluster-bench.sh [--seconds S] [--raw-seconds S] [--dir DIR]
#                         [--port P] [--out FILE] [--keep-results DIR] [BUILD_DIR]
#   BUILD_DIR (default ./build-release) holds tools/weft, mon/weft-mon,
#   osd/weft-osd and perftest-scripts/tcp-pingpong: use a Release build.
#   --seconds: each weft bench phase (default 15); --raw-seconds: each fio
#   phase (default 6); --dir: scratch space for the cluster and the fio file
#   (default /var/tmp/weft-cluster-bench; about 17 GiB, removed at the end);
#   --port: the cluster's base port (default 22700, uses it..+99);
#   --out: also write the markdown there; --keep-results: copy every tool's
#   raw output (fio, tcp-baseline, weft bench JSON) there. Progress: stderr.
# exit: 0 done, 1 a tool failed, 2 bad usage.
set -uo pipefail

SECS=15 RAW_SECS=6 SCRATCH=/var/tmp/weft-cluster-bench PORT=22700 OUT="" KEEP="" BUILD=./build-release
BL_NAME=cluster-bench
# shellcheck source=perftest-scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECS=${2:-}; shift ;;
	--raw-seconds) RAW_SECS=${2:-}; shift ;;
	*) bl_common_opt "$@"; [ "$BL_TOOK" = 1 ] || shift ;;
	esac
	shift
done
bl_positive "$SECS" "$RAW_SECS" "$PORT"
bl_require_tools fio jq iperf3 python3
bl_paths
bl_require_bins "$WEFT" "$BUILD/mon/weft-mon" "$BUILD/osd/weft-osd" "$BUILD/perftest-scripts/tcp-pingpong"
"$WEFT" bench --help > /dev/null 2>&1 || { echo "cluster-bench: $WEFT has no 'bench' command" >&2; exit 2; }
bl_init
top=$BL_TOP

START=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- raw disk ----
bl_fio_prep
U=(--ioengine=io_uring)
bl_fio_run w4m "${U[@]}" --rw=write --bs=4M --iodepth=16 --end_fsync=1
bl_fio_run r4m "${U[@]}" --rw=read --bs=4M --iodepth=16
bl_fio_run rr4m "${U[@]}" --rw=randread --bs=4M --iodepth=16
bl_fio_run rw4k "${U[@]}" --rw=randwrite --bs=4k --iodepth=32
bl_fio_run rr4k "${U[@]}" --rw=randread --bs=4k --iodepth=32
bl_fio_run dsync4k --ioengine=psync --rw=randwrite --bs=4k --iodepth=1 --sync=dsync
rm -f "$SCRATCH/fio.dat"

# ---- loopback ----
bl_say "loopback: perftest-scripts/tcp-baseline.sh --json (iperf3, fabric-bench, 64 B ping-pong)"
"$top/perftest-scripts/tcp-baseline.sh" --json "$BUILD" > "$RES/tcp.json" 2> "$RES/tcp.err"
[ $? -le 3 ] && jq -e .iperf3_mb_s "$RES/tcp.json" > /dev/null 2>&1 ||
	bl_die "tcp-baseline.sh: $(tail -n 3 "$RES/tcp.err")"
bl_pingpong 4096 pp4k

# ---- cluster ----
bl_cluster_up
bench() { bl_bench "$1" "$SECS" "${@:2}"; }
bench w4m write -b 4M -t 16 --no-cleanup --run-name big
bench s4m seq -t 16 --run-name big
bench r4m rand -t 16 --run-name big
bench w4k write -b 4K -t 32 --no-cleanup --run-name small
bench r4k rand -t 32 --run-name small
bench l4k write -b 4K -t 1 --run-name lat
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
REV=$(bl_rev)
bl_cluster_down

# ---- the table ----
python3 - "$RES" "$SECS" "$RAW_SECS" "$START" "$REV" "$(nproc)" "$(uname -r)" "$LOAD0" "$LOAD1" \
	"$BUILD" "$top/perftest-scripts" << 'EOF' | tee ${OUT:+"$OUT"}
import os, sys
res, secs, raw_secs, start, rev, cores, kernel, load0, load1, build, lib = sys.argv[1:12]
sys.path.insert(0, lib)
import bench_lib
from bench_lib import f
fio = lambda n: bench_lib.fio(res, n)
bench = lambda n: bench_lib.bench(res, n)
tcp = bench_lib.load(res, "tcp.json")
pp4k = bench_lib.load(res, "pp4k.json")

raw = {n: fio(n) for n in ("w4m", "r4m", "rr4m", "rw4k", "rr4k", "dsync4k")}
b = {n: bench(n) for n in ("w4m", "s4m", "r4m", "w4k", "r4k", "l4k")}
net_mbs = tcp["iperf3_mb_s"]
rtt4k = pp4k["lat_p50_us"]

def ratio(v, lim):
    return "n/a" if v is None or not lim else "**%.2f**" % (v / lim)

rows = []
# (workload, weft figure, value, disk limit text, disk limit, loopback limit text, loopback limit)
lim = min(raw["w4m"]["mbs"] / 3, net_mbs / 3)
rows.append(("4 MiB write, 16 in flight", "%s MB/s" % f(b["w4m"]["mbs"]),
             "%s / 3 = %s MB/s" % (f(raw["w4m"]["mbs"]), f(raw["w4m"]["mbs"] / 3)),
             "%s / 3 = %s MB/s" % (f(net_mbs), f(net_mbs / 3)), ratio(b["w4m"]["mbs"], lim)))
lim = min(raw["r4m"]["mbs"], net_mbs)
rows.append(("4 MiB seq read, 16 in flight", "%s MB/s" % f(b["s4m"]["mbs"]),
             "%s MB/s" % f(raw["r4m"]["mbs"]), "%s MB/s" % f(net_mbs), ratio(b["s4m"]["mbs"], lim)))
lim = min(raw["rr4m"]["mbs"], net_mbs)
rows.append(("4 MiB rand read, 16 in flight", "%s MB/s" % f(b["r4m"]["mbs"]),
             "%s MB/s" % f(raw["rr4m"]["mbs"]), "%s MB/s" % f(net_mbs), ratio(b["r4m"]["mbs"], lim)))
rows.append(("4 KiB write, 32 in flight", "%s IOPS" % f(b["w4k"]["iops"]),
             "%s / 3 = %s IOPS (not durable)" % (f(raw["rw4k"]["iops"]), f(raw["rw4k"]["iops"] / 3)),
             "-", ratio(b["w4k"]["iops"], raw["rw4k"]["iops"] / 3)))
rows.append(("4 KiB rand read, 32 in flight", "%s IOPS" % f(b["r4k"]["iops"]),
             "%s IOPS" % f(raw["rr4k"]["iops"]), "-", ratio(b["r4k"]["iops"], raw["rr4k"]["iops"])))
d = raw["dsync4k"]
floor = d["p50"] + 2 * rtt4k
rows.append(("4 KiB write, 1 in flight: p50 / p99 / p99.9",
             "%s / %s / %s us" % (f(b["l4k"]["p50"]), f(b["l4k"]["p99"]), f(b["l4k"]["p999"])),
             "O_DSYNC write %s / %s / %s us" % (f(d["p50"]), f(d["p99"]), f(d["p999"])),
             "4 KiB RTT p50 %s us" % f(rtt4k, "%.1f"),
             "p50 **%sx** the floor (O_DSYNC p50 + 2 RTT = %s us)"
             % (f(b["l4k"]["p50"] / floor if b["l4k"]["p50"] else None, "%.1f"), f(floor))))

print("Run %s, tree %s, %s cores, Linux %s, load average %s (start) / %s (end); build %s;"
      % (start, rev, cores, kernel, load0, load1, os.path.basename(build)))
print("weft bench phases %s s, fio phases %s s; cluster: scripts/cluster.sh, 3 mons + 3 OSDs,"
      " tcp, pool size 3, WAL in each OSD's data file, all on one disk."
      % (secs, raw_secs))
print()
print("| workload | weft bench (size 3) | raw disk, same run | loopback, same run | ratio to the lower limit |")
print("|---|---|---|---|---|")
for r in rows:
    print("| %s |" % " | ".join(r))
print()
extra = []
for n, what in (("w4m", "4 MiB write"), ("w4k", "4 KiB write 32"), ("l4k", "4 KiB write 1")):
    x = b[n]
    extra.append("%s: %s IOPS, p50 %s us, p99 %s us%s" % (
        what, f(x["iops"]), f(x["p50"]), f(x["p99"]),
        ", explainer: %s" % x["explain"] if x["explain"] else ""))
errs = sum(int(x["errors"] or 0) for x in b.values())
print("Also: " + "; ".join(extra) + ". Errors reported by weft bench: %d." % errs)
print("Loopback: iperf3 1 stream %s MB/s, 64 B RTT p50 %s us (tcp-baseline.sh)."
      % (f(net_mbs), f(tcp["tcp64_p50_us"], "%.1f")))
EOF
