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
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	--seconds) SECS=${2:-}; shift ;;
	--raw-seconds) RAW_SECS=${2:-}; shift ;;
	--dir) SCRATCH=${2:-}; shift ;;
	--port) PORT=${2:-}; shift ;;
	--out) OUT=${2:-}; shift ;;
	--keep-results) KEEP=${2:-}; shift ;;
	-*) echo "cluster-bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
for v in "$SECS" "$RAW_SECS" "$PORT"; do
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "cluster-bench: '$v' is not a positive number" >&2; exit 2; }
done
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "$BUILD")
SCRATCH=$(realpath -m "$SCRATCH")
WEFT=$BUILD/tools/weft
for bin in "$WEFT" "$BUILD/mon/weft-mon" "$BUILD/osd/weft-osd" "$BUILD/perftest-scripts/tcp-pingpong"; do
	[ -x "$bin" ] || { echo "cluster-bench: $bin not found: build it (cmake --build $BUILD)" >&2; exit 2; }
done
for tool in fio jq iperf3 python3; do
	command -v $tool > /dev/null || { echo "cluster-bench: $tool not installed (scripts/install-deps.sh)" >&2; exit 2; }
done
"$WEFT" bench --help > /dev/null 2>&1 || { echo "cluster-bench: $WEFT has no 'bench' command" >&2; exit 2; }

CDIR=$SCRATCH/cluster
RES=$SCRATCH/results
CL=("$top/scripts/cluster.sh")
COPTS=(--dir "$CDIR" --build "$BUILD" --port "$PORT" --data-size 5G)
say() { echo "cluster-bench: $*" >&2; }
die() { say "FAIL: $*"; exit 1; }
SERVER=""
cleanup() {
	[ -z "$SERVER" ] || kill "$SERVER" 2> /dev/null
	[ ! -e "$CDIR/cluster.env" ] || "${CL[@]}" down --wipe --dir "$CDIR" > /dev/null 2>&1
	[ -z "$KEEP" ] || { mkdir -p "$KEEP" && cp -r "$RES"/. "$KEEP"/; }
	rm -rf "$SCRATCH/fio.dat" "$RES"
	rmdir "$SCRATCH" 2> /dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$RES" || die "cannot create $SCRATCH"
[ ! -e "$CDIR/cluster.env" ] || "${CL[@]}" down --wipe --dir "$CDIR" > /dev/null 2>&1

START=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- raw disk ----
# fio_run NAME ARGS...: one fio job on SCRATCH/fio.dat (1 GiB), JSON in RES/NAME.json
fio_run() {
	local name=$1
	shift
	say "fio $name ($RAW_SECS s)"
	fio --name="$name" --filename="$SCRATCH/fio.dat" --size=1G --direct=1 --time_based \
		--runtime="$RAW_SECS" --output-format=json "$@" > "$RES/fio-$name.json" 2> "$RES/fio-$name.err" ||
		die "fio $name: $(head -c 300 "$RES/fio-$name.err")"
}
# written once in full first (so writes overwrite allocated blocks, as on a device)
say "fio: preparing a 1 GiB file in $SCRATCH"
fio --name=prep --filename="$SCRATCH/fio.dat" --size=1G --rw=write --bs=4M --direct=1 \
	--ioengine=io_uring --iodepth=16 --end_fsync=1 --output-format=json > /dev/null 2>&1 ||
	die "fio cannot write $SCRATCH/fio.dat"
U=(--ioengine=io_uring)
fio_run w4m "${U[@]}" --rw=write --bs=4M --iodepth=16 --end_fsync=1
fio_run r4m "${U[@]}" --rw=read --bs=4M --iodepth=16
fio_run rr4m "${U[@]}" --rw=randread --bs=4M --iodepth=16
fio_run rw4k "${U[@]}" --rw=randwrite --bs=4k --iodepth=32
fio_run rr4k "${U[@]}" --rw=randread --bs=4k --iodepth=32
fio_run dsync4k --ioengine=psync --rw=randwrite --bs=4k --iodepth=1 --sync=dsync
rm -f "$SCRATCH/fio.dat"
fj() { jq -r "$2" "$RES/fio-$1.json"; }
pct() { echo ".jobs[0].$1.clat_ns.percentile[\"$2\"] / 1000"; }

# ---- loopback ----
say "loopback: perftest-scripts/tcp-baseline.sh --json (iperf3, fabric-bench, 64 B ping-pong)"
"$top/perftest-scripts/tcp-baseline.sh" --json "$BUILD" > "$RES/tcp.json" 2> "$RES/tcp.err"
[ $? -le 3 ] && jq -e .iperf3_mb_s "$RES/tcp.json" > /dev/null 2>&1 ||
	die "tcp-baseline.sh: $(tail -n 3 "$RES/tcp.err")"
say "loopback: tcp-pingpong -s 4096"
"$BUILD/perftest-scripts/tcp-pingpong" --server 127.0.0.1:0 > "$RES/pp.srv" 2>&1 &
SERVER=$!
for _ in $(seq 1 50); do grep -q "listening on" "$RES/pp.srv" && break; sleep 0.1; done
PPORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$RES/pp.srv" | head -1)
[ -n "$PPORT" ] || die "tcp-pingpong server did not start: $(cat "$RES/pp.srv")"
timeout 120 "$BUILD/perftest-scripts/tcp-pingpong" --connect "127.0.0.1:$PPORT" -s 4096 -n 20000 \
	--format json > "$RES/pp4k.json" 2> "$RES/pp4k.err" || die "tcp-pingpong 4 KiB: $(cat "$RES/pp4k.err")"
kill "$SERVER" 2> /dev/null
wait "$SERVER" 2> /dev/null
SERVER=""

# ---- cluster ----
say "cluster: scripts/cluster.sh up (3 mons, 3 OSDs, pool bench size 3 min_size 2)"
"${CL[@]}" up "${COPTS[@]}" >&2 || die "cluster up"
CONF=$CDIR/weft.conf
# bench NAME ARGS...: one weft bench phase, JSON in RES/NAME.json
bench() {
	local name=$1
	shift
	say "weft bench bench $SECS $* ($name)"
	timeout $((SECS * 4 + 120)) "$WEFT" bench bench "$SECS" "$@" --format json -c "$CONF" \
		> "$RES/$name.json" 2> "$RES/$name.err" ||
		die "weft bench $* failed: $(tail -n 3 "$RES/$name.err")"
}
bench w4m write -b 4M -t 16 --no-cleanup --run-name big
bench s4m seq -t 16 --run-name big
bench r4m rand -t 16 --run-name big
bench w4k write -b 4K -t 32 --no-cleanup --run-name small
bench r4k rand -t 32 --run-name small
bench l4k write -b 4K -t 1 --run-name lat
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
REV=$(git -C "$top" rev-parse --short HEAD 2> /dev/null || echo unknown)
"${CL[@]}" down --wipe --dir "$CDIR" >&2

# ---- the table ----
python3 - "$RES" "$SECS" "$RAW_SECS" "$START" "$REV" "$(nproc)" "$(uname -r)" "$LOAD0" "$LOAD1" \
	"$BUILD" << 'EOF' | tee ${OUT:+"$OUT"}
import json, os, sys
res, secs, raw_secs, start, rev, cores, kernel, load0, load1, build = sys.argv[1:11]
def load(name):
    text = open(os.path.join(res, name)).read()
    return json.loads(text[text.index("{"):])
def fio(name):
    j = load("fio-%s.json" % name)["jobs"][0]
    op = "read" if j["read"]["io_bytes"] else "write"
    o = j[op]
    p = o["clat_ns"]["percentile"]
    return {"mbs": o["bw_bytes"] / 1e6, "iops": o["iops"],
            "p50": p["50.000000"] / 1e3, "p99": p["99.000000"] / 1e3, "p999": p["99.900000"] / 1e3}
tcp = load("tcp.json")
pp4k = load("pp4k.json")

# weft bench --format json (docs/bench.md): bandwidth_mb_s / iops {avg, stddev,
# max, min}, latency_s {avg, p50, p99, "p99.9", ...} in seconds, errors, explain.
def bench(name):
    j = load(name + ".json")
    def g(*path):
        v = j
        for part in path:
            v = v.get(part) if isinstance(v, dict) else None
        return v
    us = lambda k: None if g("latency_s", k) is None else g("latency_s", k) * 1e6
    mbs = g("bandwidth_mb_s", "avg")
    if g("bytes") is not None and g("total_time_s"):
        mbs = g("bytes") / g("total_time_s") / 1e6  # what rados bench calls Bandwidth
    iops = g("ops") / g("total_time_s") if g("ops") is not None and g("total_time_s") else None
    return {"mbs": mbs, "iops": iops, "p50": us("p50"), "p99": us("p99"), "p999": us("p99.9"),
            "errors": g("errors") or 0, "explain": g("explain", "verdict")}

raw = {n: fio(n) for n in ("w4m", "r4m", "rr4m", "rw4k", "rr4k", "dsync4k")}
b = {n: bench(n) for n in ("w4m", "s4m", "r4m", "w4k", "r4k", "l4k")}
net_mbs = tcp["iperf3_mb_s"]
rtt4k = pp4k["lat_p50_us"]

def f(v, fmt="%.0f"):
    return "n/a" if v is None else fmt % v
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
