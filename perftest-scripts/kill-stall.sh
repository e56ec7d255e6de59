#!/usr/bin/env bash
# kill-stall.sh: how long client writes stall when an OSD is killed (kill -9)
# under load, with failure detection by beacons only (the monitors mark the
# OSD down after osd_heartbeat_grace: what Weft did before peer reports) and
# with peer reports (docs/osd.md, "Failure detection"), in one run on the
# same machine, as a markdown table for docs/performance.md.
#
# Each mode: a local cluster (scripts/cluster.sh: 3 mons, 4 OSDs, pool size
# 3, min_size 2, tcp on loopback, osd_heartbeat_grace GRACE), `weft bench
# bench S write -b 64K -t 16`, osd.1 killed K seconds in. "beacons only" sets
# mon_osd_min_down_reporters = 1000 (more hosts than exist: reports never
# count); "peer reports" the default 2. Reported per mode: when the mons
# marked osd.1 down after the kill (their log's timestamp), the longest run
# of whole seconds in which no write completed, the longest write's latency,
# errors, and the bandwidth.
#
# usage: kill-stall.sh [--seconds S] [--kill-at K] [--grace G] [--port P]
#                      [--dir DIR] [BUILD_DIR]
#   defaults: S 30, K 10, G 20s, P 22800 (uses P..P+99), DIR
#   /var/tmp/weft-kill-stall (sparse 8 GiB stores, removed at the end; the
#   bench outputs stay there),
#   BUILD_DIR ./build-release. Progress: stderr. exit: 0 done, 1 a step
#   failed, 2 bad usage.
set -uo pipefail

SECS=30 KILL_AT=10 GRACE=20s PORT=22800 SCRATCH=/var/tmp/weft-kill-stall BUILD=./build-release
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	--seconds) SECS=${2:-}; shift ;;
	--kill-at) KILL_AT=${2:-}; shift ;;
	--grace) GRACE=${2:-}; shift ;;
	--port) PORT=${2:-}; shift ;;
	--dir) SCRATCH=${2:-}; shift ;;
	-*) echo "kill-stall: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
for v in "$SECS" "$KILL_AT" "$PORT"; do
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "kill-stall: '$v' is not a positive number" >&2; exit 2; }
done
[ "$KILL_AT" -lt "$SECS" ] || { echo "kill-stall: --kill-at must be below --seconds" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "$BUILD")
WEFT=$BUILD/tools/weft
[ -x "$WEFT" ] || { echo "kill-stall: no $WEFT (build Release first)" >&2; exit 2; }
command -v jq > /dev/null || { echo "kill-stall: needs jq" >&2; exit 2; }

DIR=""
cleanup() { [ -z "$DIR" ] || "$top/scripts/cluster.sh" down --wipe --dir "$DIR" > /dev/null 2>&1; }
trap cleanup EXIT

ROWS=""
run_mode() { # run_mode NAME REPORTERS
	local name=$1 rep=$2 t_kill line t_down down_s gap maxlat errs mbs
	DIR=$SCRATCH/$rep
	rm -rf "$DIR"
	echo "kill-stall: $name: cluster up ($DIR)" >&2
	CL_CONF_EXTRA="[mon]
	mon_osd_min_down_reporters = $rep" "$top/scripts/cluster.sh" up --dir "$DIR" --build "$BUILD" \
		--osds 4 --port "$PORT" --data-size 8G --heartbeat-grace "$GRACE" > "$SCRATCH/$rep.up.log" 2>&1 ||
		{ tail -n 20 "$SCRATCH/$rep.up.log" >&2; return 1; }
	"$WEFT" bench bench "$SECS" write -b 64K -t 16 --no-cleanup --no-explain -c "$DIR/weft.conf" --format json \
		> "$SCRATCH/$rep.bench.json" 2> "$SCRATCH/$rep.bench.err" &
	local bench=$!
	sleep "$KILL_AT"
	t_kill=$(date +%s.%N)
	kill -9 "$(cat "$DIR/osd.1.pid")" || return 1
	echo "kill-stall: $name: osd.1 killed at second $KILL_AT" >&2
	wait "$bench"
	line=$(grep -hE "epoch [0-9]+: osd\.1 [a-z,]+ -> down" "$DIR"/mon.a.log | head -n 1)
	if [ -n "$line" ]; then
		t_down=$(date -d "$(echo "$line" | cut -d' ' -f1)" +%s.%N)
		down_s=$(printf '%.2f s' "$(echo "$t_down - $t_kill" | bc)")
		echo "$line" | grep -q "reported failed" && down_s="$down_s (peer reports)" ||
			down_s="$down_s (beacon grace)"
	else
		down_s="not within the run"
	fi
	# whole seconds after the kill in which the finished count did not move
	gap=$(jq --argjson k "$KILL_AT" '[.per_second | . as $t | range(1; length) |
		select($t[.].sec > $k) | ($t[.].finished - $t[. - 1].finished)] |
		reduce .[] as $d ({run: 0, best: 0};
			if $d == 0 then .run += 1 | .best = ([.best, .run] | max) else .run = 0 end) | .best' \
		"$SCRATCH/$rep.bench.json")
	maxlat=$(jq '.latency_s.max' "$SCRATCH/$rep.bench.json")
	errs=$(jq '.errors' "$SCRATCH/$rep.bench.json")
	mbs=$(jq '.bandwidth_mb_s.avg' "$SCRATCH/$rep.bench.json")
	ROWS="$ROWS| $name | $down_s | $gap s | $(printf '%.2f' "$maxlat") s | $errs | $(printf '%.0f' "$mbs") |
"
	"$top/scripts/cluster.sh" down --wipe --dir "$DIR" > /dev/null 2>&1
	DIR=""
}

mkdir -p "$SCRATCH" || exit 1
[ "${KILL_STALL_ONLY:-}" = after ] || run_mode "beacons only (before)" 1000 || exit 1
[ "${KILL_STALL_ONLY:-}" = before ] || run_mode "peer reports (after)" 2 || exit 1
echo "kill -9 of osd.1 at second $KILL_AT of a ${SECS} s \`weft bench write -b 64K -t 16\`, 4 OSDs, size 3, grace $GRACE, $(date -u +%Y-%m-%d):"
echo
echo "| failure detection | osd.1 marked down after the kill | longest time with no write completing | max write latency | errors | MB/s |"
echo "|---|---|---|---|---|---|"
printf '%s' "$ROWS"
echo "kill-stall: the bench outputs are in $SCRATCH" >&2
