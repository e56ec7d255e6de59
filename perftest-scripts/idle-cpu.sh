#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# idle-cpu.sh: what an idle OSD costs with many PGs (docs/osd.md "Ticks",
# docs/performance.md). A local cluster (3 mons, 3 OSDs, one pool of PGS
# PGs, size 3, tcp, loopback) from BUILD_DIR; once every PG is active+clean
# and a few seconds have passed, the reactor CPU of the three OSDs
# (`perf dump` process.reactor_cpu_seconds) is sampled SECS apart with
# nothing running, and each OSD's `pgs` counters are printed (an OSD
# without them is an older build). Run it on two builds one after the
# other to compare them; numbers from a busy machine mean little.
#
# usage: idle-cpu.sh [--pgs N] [--seconds S] [--port P] [--dir DIR] [BUILD_DIR]
#   BUILD_DIR (default ./build-release) needs mon/weft-mon, osd/weft-osd and
#   tools/weft; --pgs: PGs in the pool (default 1024); --seconds: the idle
#   window (default 30); --port: the cluster's base port (default 39900);
#   --dir: scratch (default /var/tmp/weft-idle-cpu, removed at the end).
# exit: 0 done, 1 the cluster did not come up or settle, 2 bad usage.
set -uo pipefail

PGS=1024 SECS=30 PORT=39900 DIR=/var/tmp/weft-idle-cpu BUILD=./build-release
usage() { sed -n '12,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--pgs) PGS=${2:?}; shift 2 ;;
	--seconds) SECS=${2:?}; shift 2 ;;
	--port) PORT=${2:?}; shift 2 ;;
	--dir) DIR=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--version) echo "idle-cpu.sh (weft perftest-scripts)"; exit 0 ;;
	-*) echo "idle-cpu.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) BUILD=$1; shift ;;
	esac
done
for v in "$PGS" "$SECS" "$PORT"; do
	case $v in
	'' | *[!0-9]* | 0*) echo "idle-cpu.sh: '$v' is not a positive number" >&2; exit 2 ;;
	esac
done
[ "$PORT" -le 65400 ] || { echo "idle-cpu.sh: --port $PORT: the cluster needs PORT..PORT+99" >&2; exit 2; }
for b in mon/weft-mon osd/weft-osd tools/weft; do
	[ -x "$BUILD/$b" ] || { echo "idle-cpu.sh: $BUILD/$b not found: build it first" >&2; exit 2; }
done
command -v jq > /dev/null || { echo "idle-cpu.sh: jq is needed (scripts/install-deps.sh)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
W="$BUILD/tools/weft" C="$DIR/weft.conf"
w() { "$W" "$@" -c "$C"; }
down() { "$here/scripts/cluster.sh" down --dir "$DIR" --wipe > /dev/null 2>&1; }
trap down EXIT

down
echo "idle-cpu.sh: starting 3 mons + 3 OSDs, $PGS PGs ($BUILD)" >&2
"$here/scripts/cluster.sh" up --dir "$DIR" --port "$PORT" --pg-num "$PGS" --data-size 2G \
	--build "$BUILD" > /dev/null || { echo "idle-cpu.sh: the cluster did not start" >&2; exit 1; }
settled=0
for _ in $(seq 1 120); do
	if w status --format json 2> /dev/null |
		jq -e --argjson n "$PGS" '.pgmap.num_pgs == $n and (.pgmap.inactive_pgs // 0) == 0 and
			([.pgmap.states | to_entries[] | select(.key != "active+clean")] | length) == 0' \
			> /dev/null 2>&1; then
		settled=1
		break
	fi
	sleep 1
done
[ $settled = 1 ] || { echo "idle-cpu.sh: the PGs did not all get active+clean in 120 s" >&2; exit 1; }
sleep 5
cpu() {
	local t=0 v
	for o in 0 1 2; do
		v=$(w daemon "osd.$o" perf dump | jq '.process.reactor_cpu_seconds') || return 1
		t=$(echo "$t + $v" | bc -l)
	done
	echo "$t"
}
echo "idle-cpu.sh: idle for $SECS s" >&2
a=$(cpu) || exit 1
sleep "$SECS"
b=$(cpu) || exit 1
printf 'reactor CPU of 3 idle OSDs with %s PGs over %s s: %.3f s (%.2f %% of a core per OSD)\n' \
	"$PGS" "$SECS" "$(echo "$b - $a" | bc -l)" "$(echo "($b - $a) * 100 / 3 / $SECS" | bc -l)"
for o in 0 1 2; do
	printf 'osd.%s pgs: %s\n' "$o" "$(w daemon "osd.$o" perf dump | jq -c '.pgs')"
done
