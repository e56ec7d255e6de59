#!/usr/bin/env bash
# scale-sim.sh: the full-size placement simulator run for docs/scale.md.
#
#   1. weft sim at 10,000 OSDs (40 racks x 25 hosts x 10 OSDs, 262,144 PGs of
#      3 replicas), failure domain host, then rack: table, CSV and plots
#      (spread.png, movement.png) into OUT/host and OUT/rack;
#   2. the mons' epoch fan-out with real connections: one weft-mon on
#      loopback (scripts/cluster-lib.sh, no OSDs), weft sim --fanout N for
#      N = 100, 200, 400, 800 subscribers in one client process; the cost
#      per subscriber, extrapolated to 10,000 clients in docs/scale.md.
#   The machine's one-core raw limit for the placement numbers is the
#   straw2 draw itself: reported by the sim as place_per_pg_us.
#
# usage: scale-sim.sh [--out DIR] [--port P] [BUILD_DIR]
#   BUILD_DIR (default ./build-release) holds tools/weft and mon/weft-mon: a
#   Release build. --out: results (default ./scale-results); --port: the
#   mon's base port (default 33100, uses it..+99). Run it alone on the
#   machine (flock /work/.heavy.lock on the shared one). Progress: stderr.
# exit: 0 done, 1 a step failed, 2 bad usage.
set -uo pipefail

OUT=./scale-results PORT=33100 BUILD=./build-release
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	--out) OUT=${2:-}; shift ;;
	--port) PORT=${2:-}; shift ;;
	-*) echo "scale-sim: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
WEFT=$BUILD/tools/weft MON=$BUILD/mon/weft-mon OSD=$BUILD/osd/weft-osd
[ -x "$WEFT" ] && [ -x "$MON" ] || { echo "scale-sim: no weft or weft-mon in $BUILD" >&2; exit 2; }
mkdir -p "$OUT" || exit 1

for d in host rack; do
	echo "scale-sim: weft sim, 10,000 OSDs, failure domain $d" >&2
	mkdir -p "$OUT/$d" || exit 1
	"$WEFT" sim --domain "$d" --out "$OUT/$d" --plot --check | tee "$OUT/$d/table.txt" ||
		{ echo "scale-sim: weft sim ($d) failed" >&2; exit 1; }
done

echo "scale-sim: fan-out, one weft-mon on loopback" >&2
DIR=$(mktemp -d /tmp/weft-scale-fanout.XXXXXX)
CONF=$DIR/weft.conf MS=tcp NMON=1 NOSD=0
log() { echo "scale-sim: $*" >&2; }
fail() { log "FAIL: $*"; tail -n 20 "$DIR"/mon.*.log >&2; exit 1; }
# shellcheck source=../scripts/cluster-lib.sh
. "$(dirname "$0")/../scripts/cluster-lib.sh"
trap 'for p in "${!PIDS[@]}"; do kill -9 "${PIDS[$p]}" 2> /dev/null; done; rm -rf "$DIR"' EXIT
write_conf
mons_up
ulimit -n 4096 2> /dev/null
{
	echo "subscribers,round,first_s,last_s"
	for n in 100 200 400 800; do
		"$WEFT" sim --fanout "$n" --conf "$CONF" --out "$DIR/f$n" >&2 || fail "fan-out $n"
		tail -n +2 "$DIR/f$n/fanout.csv"
	done
} > "$OUT/fanout.csv"
log "done: $OUT"
