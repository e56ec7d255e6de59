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
# --blocks K (implies --interleave): K blocks, each with its own pair of
# fresh clusters and ROUNDS rounds alternating between them; from one block
# to the next the two modes swap ports and the order they are created in.
# What differs between two clusters (placement, the data files, the ports)
# then falls on each mode in half the blocks, and the drift of the machine
# is spread by the alternation within a block. Besides the medians, the
# table gives each block's ratio (its own medians) and their mean, so the
# spread of the estimate is printed next to it.
#
# usage: auth-cost.sh [--seconds S] [--rounds N] [--interleave] [--blocks K]
#                     [--dir DIR] [--port P] [--out FILE] [--keep-results DIR]
#                     [BUILD_DIR]
#   BUILD_DIR (default ./build-release): a Release build. --seconds: each
#   weft bench phase (default 15); --rounds: rounds per mode (default 2);
#   --dir: scratch space (default /var/tmp/weft-auth-cost, about 13 GiB,
#   removed at the end); --port: the cluster's base port (default 39800,
#   uses it..+99); --out: also write stdout there; --keep-results: copy
#   every tool's raw output there. Progress: stderr.
# exit: 0 done, 1 a tool failed, 2 bad usage.
set -uo pipefail

INTERLEAVE=0 BLOCKS=1 SECS=15 ROUNDS=2 SCRATCH=/var/tmp/weft-auth-cost PORT=39800 OUT="" KEEP="" BUILD=./build-release
BL_NAME=auth-cost
# shellcheck source=perftest-scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECS=${2:-}; shift ;;
	--rounds) ROUNDS=${2:-}; shift ;;
	--interleave) INTERLEAVE=1 ;;
	--blocks) BLOCKS=${2:-}; INTERLEAVE=1; shift ;;
	*) bl_common_opt "$@"; [ "$BL_TOOK" = 1 ] || shift ;;
	esac
	shift
done
bl_positive "$SECS" "$ROUNDS" "$BLOCKS"
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
# pair_down: both long-lived clusters of --interleave, wiped
pair_down() {
	local m
	for m in weft none; do
		"${CL[@]}" down --wipe --dir "$BASE-$m" > /dev/null 2>&1
	done
}
# pair_up BLOCK: both clusters, fresh; odd blocks create weft first on PORT,
# even blocks none first on PORT (the other mode on PORT+200)
pair_up() {
	local p=$PORT mode order="weft none"
	[ $(($1 % 2)) = 0 ] && order="none weft"
	for mode in $order; do
		bl_say "block $1: cluster with auth $mode on ports $p.."
		"${CL[@]}" up --dir "$BASE-$mode" --build "$BUILD" --port "$p" --data-size 4G \
			--auth "$mode" >&2 || bl_die "cluster up (auth $mode)"
		p=$((p + 200))
	done
}
[ "$INTERLEAVE" = 1 ] && bl_cleanup_extra() { pair_down; }

bl_pingpong 4096 rtt4k
r=0
for block in $(seq 1 "$BLOCKS"); do
	[ "$INTERLEAVE" = 1 ] && pair_up "$block"
	for _ in $(seq 1 "$ROUNDS"); do
		r=$((r + 1))
		# ABBA: a machine that drifts over the run weighs on both modes alike
		modes="weft none"
		[ $((r % 2)) = 0 ] && modes="none weft"
		for mode in $modes; do
			bl_say "round $r, auth $mode"
			if [ "$INTERLEAVE" = 1 ]; then
				use_cluster "$mode"
			else
				"${CL[@]}" up "${COPTS[@]}" --auth "$mode" >&2 || bl_die "cluster up (auth $mode)"
			fi
			phase "qd1-$mode-$r" write -b 4K -t 1
			phase "s4m-$mode-$r" write -b 4M -t 16 --max-bytes 2G
			[ "$INTERLEAVE" = 1 ] || bl_cluster_down
		done
	done
	# the deleted data files' writeback must not fall on the next block
	[ "$INTERLEAVE" = 1 ] && { pair_down; sync; sleep 5; }
done

python3 - "$RES" "$r" "$(bl_rev)" "$(dirname "$0")" "$INTERLEAVE" "$BLOCKS" << 'EOF' | tee ${OUT:+"$OUT"}
import sys, statistics
res, rounds, rev, here = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
interleave, blocks = sys.argv[5] == "1", int(sys.argv[6])
sys.path.insert(0, here)
from bench_lib import bench, f, load

def cpu_per_op(name, ops):
    ticks, hz = open("%s/%s.cpu" % (res, name)).read().split()
    return None if not ops else int(ticks) / int(hz) / ops * 1e6

KEYS = ("p50", "p99", "qd1_cpu", "mbs", "s4m_cpu")


def medians(lo, hi):
    """each mode's medians over rounds lo..hi"""
    m = {}
    for mode in ("weft", "none"):
        rs = range(lo, hi + 1)
        q = [bench(res, "qd1-%s-%d" % (mode, r)) for r in rs]
        s = [bench(res, "s4m-%s-%d" % (mode, r)) for r in rs]
        m[mode] = {
            "p50": statistics.median(x["p50"] for x in q),
            "p99": statistics.median(x["p99"] for x in q),
            "qd1_cpu": statistics.median(cpu_per_op("qd1-%s-%d" % (mode, r), x["ops"])
                                         for r, x in zip(rs, q)),
            "mbs": statistics.median(x["mbs"] for x in s),
            "s4m_cpu": statistics.median(cpu_per_op("s4m-%s-%d" % (mode, r), x["ops"])
                                         for r, x in zip(rs, s)),
            "errors": sum(x["errors"] for x in q + s),
            "qd1_all": ["%.0f" % x["p50"] for x in q], "mbs_all": ["%.0f" % x["mbs"] for x in s],
        }
    return m


m = medians(1, rounds)
per = rounds // blocks
ratios = {k: [] for k in KEYS}
if blocks > 1:
    for b in range(blocks):
        mb = medians(b * per + 1, (b + 1) * per)
        for k in KEYS:
            ratios[k].append(mb["weft"][k] / mb["none"][k])


def by_block(k):
    if blocks < 2:
        return ""
    r = ratios[k]
    return " %.3f (%s) | %.3f |" % (statistics.mean(r), " ".join("%.3f" % x for x in r),
                                   statistics.stdev(r) / len(r) ** 0.5)


rtt = load(res, "rtt4k.json")["lat_p50_us"]
w, n = m["weft"], m["none"]
head = "| measure | auth weft | auth none | weft / none |"
rule = "|---|---|---|---|"
if blocks > 1:
    head += " mean of the blocks' ratios (each block) | its standard error |"
    rule += "---|---|"
print(head)
print(rule)
rows = (("p50", "4 KiB write QD1, p50", "us"), ("p99", "4 KiB write QD1, p99", "us"),
        ("qd1_cpu", "4 KiB write QD1, daemons' CPU per write", "us"),
        ("mbs", "4 MiB write -t 16", "MB/s"), ("s4m_cpu", "4 MiB write, daemons' CPU per write", "us"))
for k, label, unit in rows:
    print("| %s | %s %s | %s %s | %.3f |%s" % (label, f(w[k]), unit, f(n[k]), unit, w[k] / n[k], by_block(k)))
print()
print("Medians of %d rounds per mode, in ABBA order%s (QD1 p50 per round: weft %s, none %s us;"
      " 4 MiB: weft %s, none %s MB/s). Loopback 4 KiB round trip p50 %.1f us in the same run."
      " Errors reported by weft bench: %d. Tree %s."
      % (rounds, (", %d blocks of two fresh clusters alternated (--blocks)" % blocks if blocks > 1 else
                   ", two long-lived clusters (--interleave)") if interleave else "", "/".join(w["qd1_all"]), "/".join(n["qd1_all"]), "/".join(w["mbs_all"]),
         "/".join(n["mbs_all"]), rtt, w["errors"] + n["errors"], rev))
EOF
