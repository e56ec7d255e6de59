#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# auth-cost.sh: what authentication costs on the data path (issue 17,
# docs/performance.md "Cost of authentication"): the same cluster with the
# auth_*_required options at weft and at none, one after the other in one
# run, ROUNDS times in ABBA order (weft, none, none, weft, ...), so drift of
# a busy machine falls on both. Each round: scripts/cluster.sh (3 mons, 3 OSDs,
# pool size 3, tcp, loopback), then weft bench: 4 KiB write -t 1 (p50, p99)
# and 4 MiB write -t 16 (MB/s, stopped at 2 GiB), with every daemon's CPU
# (utime + stime) per op around each phase. The table gives the medians
# over the rounds and the ratio weft / none (the issue's bound: at most 3 %
# worse on each). The loopback 4 KiB round trip (tcp-pingpong) of the same
# run says how far the QD1 p50 sits above the network's limit.
#
# --interleave: both clusters up for the whole run (the second one on
# PORT+200), and the rounds alternate between them in the same ABBA order.
# A fresh cluster per round moves a round's QD1 p50 by 10-20 % (placement,
# the data files' state), more than the 3 % being measured; two long-lived
# clusters keep that difference fixed and let only the drift of the
# machine vary, which the alternation spreads over both. The idle cluster's
# background work (heartbeats, ticks) weighs on both modes alike; the CPU
# per op counts the measured cluster's daemons only.
#
# usage: auth-cost.sh [--seconds S] [--rounds N] [--interleave] [--dir DIR]
#                     [--port P] [--out FILE] [--keep-results DIR] [BUILD_DIR]
#   BUILD_DIR (default ./build-release): a Release build. --seconds: each
#   weft bench phase (default 15); --rounds: rounds per mode (default 2);
#   --dir: scratch space (default /var/tmp/weft-auth-cost, about 13 GiB,
#   removed at the end); --port: the cluster's base port (default 39800,
#   uses it..+99); --out: also write stdout there; --keep-results: copy
#   every tool's raw output there. Progress: stderr.
# exit: 0 done, 1 a tool failed, 2 bad usage.
set -uo pipefail

INTERLEAVE=0 SECS=15 ROUNDS=2 SCRATCH=/var/tmp/weft-auth-cost PORT=39800 OUT="" KEEP="" BUILD=./build-release
BL_NAME=auth-cost
# shellcheck source=perftest-scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) bl_help "$0"; exit 0 ;;
	--seconds) SECS=${2:-}; shift ;;
	--rounds) ROUNDS=${2:-}; shift ;;
	--interleave) INTERLEAVE=1 ;;
	--dir) SCRATCH=${2:-}; shift ;;
	--port) PORT=${2:-}; shift ;;
	--out) OUT=${2:-}; shift ;;
	--keep-results) KEEP=${2:-}; shift ;;
	-*) bl_usage_error "unknown option '$1'" ;;
	*) BUILD=$1 ;;
	esac
	shift
done
bl_positive "$SECS" "$ROUNDS"
bl_paths
COPTS+=(--data-size 4G)
bl_require_bins "$WEFT" "$BUILD/mon/weft-mon" "$BUILD/osd/weft-osd" "$BUILD/perftest-scripts/tcp-pingpong"
bl_require_tools jq python3
bl_init

# cpu_of: utime + stime (clock ticks) of every mon and OSD of the cluster
cpu_of() {
	local t=0 pid f
	for f in "$CDIR"/*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		[ -r "/proc/$pid/stat" ] || continue
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
	done
	echo "$t"
}
# phase NAME ARGS...: one weft bench phase, the daemons' CPU ticks around it in RES/NAME.cpu
phase() {
	local name=$1 c0 c1
	shift
	c0=$(cpu_of)
	bl_bench "$name" "$SECS" "$@"
	c1=$(cpu_of)
	echo "$((c1 - c0)) $(getconf CLK_TCK)" > "$RES/$name.cpu"
}

# use_cluster MODE: the long-lived cluster of MODE (--interleave) is the one measured
BASE=$CDIR
use_cluster() {
	CDIR=$BASE-$1
	CONF=$CDIR/weft.conf
}
if [ "$INTERLEAVE" = 1 ]; then
	bl_cleanup_extra() {
		local m
		for m in weft none; do
			"${CL[@]}" down --wipe --dir "$BASE-$m" > /dev/null 2>&1
		done
	}
	p=$PORT
	for mode in weft none; do
		bl_say "cluster with auth $mode on ports $p.."
		"${CL[@]}" up --dir "$BASE-$mode" --build "$BUILD" --port "$p" --data-size 4G \
			--auth "$mode" >&2 || bl_die "cluster up (auth $mode)"
		p=$((p + 200))
	done
fi

bl_pingpong 4096 rtt4k
for round in $(seq 1 "$ROUNDS"); do
	# ABBA: a machine that drifts over the run weighs on both modes alike
	modes="weft none"
	[ $((round % 2)) = 0 ] && modes="none weft"
	for mode in $modes; do
		bl_say "round $round, auth $mode"
		if [ "$INTERLEAVE" = 1 ]; then
			use_cluster "$mode"
		else
			"${CL[@]}" up "${COPTS[@]}" --auth "$mode" >&2 || bl_die "cluster up (auth $mode)"
		fi
		phase "qd1-$mode-$round" write -b 4K -t 1
		phase "s4m-$mode-$round" write -b 4M -t 16 --max-bytes 2G
		[ "$INTERLEAVE" = 1 ] || bl_cluster_down
	done
done

python3 - "$RES" "$ROUNDS" "$(bl_rev)" "$(dirname "$0")" "$INTERLEAVE" << 'EOF' | tee ${OUT:+"$OUT"}
import sys, statistics
res, rounds, rev, here = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
interleave = sys.argv[5] == "1"
sys.path.insert(0, here)
from bench_lib import bench, f, load

def cpu_per_op(name, ops):
    ticks, hz = open("%s/%s.cpu" % (res, name)).read().split()
    return None if not ops else int(ticks) / int(hz) / ops * 1e6

m = {}
for mode in ("weft", "none"):
    q = [bench(res, "qd1-%s-%d" % (mode, r)) for r in range(1, rounds + 1)]
    s = [bench(res, "s4m-%s-%d" % (mode, r)) for r in range(1, rounds + 1)]
    m[mode] = {
        "p50": statistics.median(x["p50"] for x in q),
        "p99": statistics.median(x["p99"] for x in q),
        "qd1_cpu": statistics.median(cpu_per_op("qd1-%s-%d" % (mode, r), q[r - 1]["ops"])
                                     for r in range(1, rounds + 1)),
        "mbs": statistics.median(x["mbs"] for x in s),
        "s4m_cpu": statistics.median(cpu_per_op("s4m-%s-%d" % (mode, r), s[r - 1]["ops"])
                                     for r in range(1, rounds + 1)),
        "errors": sum(x["errors"] for x in q + s),
        "qd1_all": ["%.0f" % x["p50"] for x in q], "mbs_all": ["%.0f" % x["mbs"] for x in s],
    }
rtt = load(res, "rtt4k.json")["lat_p50_us"]
w, n = m["weft"], m["none"]
print("| measure | auth weft | auth none | weft / none |")
print("|---|---|---|---|")
print("| 4 KiB write QD1, p50 | %s us | %s us | %.3f |" % (f(w["p50"]), f(n["p50"]), w["p50"] / n["p50"]))
print("| 4 KiB write QD1, p99 | %s us | %s us | %.3f |" % (f(w["p99"]), f(n["p99"]), w["p99"] / n["p99"]))
print("| 4 KiB write QD1, daemons' CPU per write | %s us | %s us | %.3f |"
      % (f(w["qd1_cpu"]), f(n["qd1_cpu"]), w["qd1_cpu"] / n["qd1_cpu"]))
print("| 4 MiB write -t 16 | %s MB/s | %s MB/s | %.3f |" % (f(w["mbs"]), f(n["mbs"]), w["mbs"] / n["mbs"]))
print("| 4 MiB write, daemons' CPU per write | %s us | %s us | %.3f |"
      % (f(w["s4m_cpu"]), f(n["s4m_cpu"]), w["s4m_cpu"] / n["s4m_cpu"]))
print()
print("Medians of %d rounds per mode, in ABBA order%s (QD1 p50 per round: weft %s, none %s us;"
      " 4 MiB: weft %s, none %s MB/s). Loopback 4 KiB round trip p50 %.1f us in the same run."
      " Errors reported by weft bench: %d. Tree %s."
      % (rounds, ", two long-lived clusters (--interleave)" if interleave else "", "/".join(w["qd1_all"]), "/".join(n["qd1_all"]), "/".join(w["mbs_all"]),
         "/".join(n["mbs_all"]), rtt, w["errors"] + n["errors"], rev))
EOF
