#!/usr/bin/env bash
# The main job: install what is missing, build (Release), bring up a local
# cluster (3 weft-mon + 3 weft-osd on loopback, pool 'bench' of size 3, see
# docs/cluster.md), run `weft bench` writes then random reads for about 10 s
# each, print the summaries and take the cluster down again (also on failure
# or Ctrl-C; the logs of a failed run are kept in BUILD/demo-logs).
#
#   scripts/demo.sh [--help]
# Environment: WEFT_BUILD (default build-release), WEFT_JOBS (default nproc),
# WEFT_DEMO_SECONDS (10), WEFT_DEMO_PORT (22600: the cluster uses it..+99),
# WEFT_DEMO_BACKEND (tcp), WEFT_DEMO_SKIP_DEPS=1 (do not run install-deps.sh).
set -euo pipefail

case ${1:-} in
-h | --help)
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
"") ;;
*)
	echo "demo.sh: unknown argument '$1' (try --help)" >&2
	exit 2
	;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD:-$top/build-release}
jobs=${WEFT_JOBS:-$(nproc)}
secs=${WEFT_DEMO_SECONDS:-10}
dir=$build/demo-cluster
cluster=("$top/scripts/cluster.sh")
copts=(--dir "$dir" --build "$build" --port "${WEFT_DEMO_PORT:-22600}"
	--backend "${WEFT_DEMO_BACKEND:-tcp}")

if [ "${WEFT_DEMO_SKIP_DEPS:-0}" != 1 ]; then
	echo "== dependencies (scripts/install-deps.sh)"
	"$top/scripts/install-deps.sh"
fi

echo "== build ($build, Release)"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release > "$build.configure.log" 2>&1 ||
	{ cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$jobs" --target weft weft-mon weft-osd > "$build/build.log" 2>&1 ||
	{ grep -E "error|warning" "$build/build.log" | head -40; echo "build FAILED ($build/build.log)"; exit 1; }
weft=$build/tools/weft
conf=$dir/weft.conf

up=0
finish() {
	local rc=$?
	trap - EXIT INT TERM
	if [ "$up" = 1 ]; then
		if [ "$rc" != 0 ]; then
			rm -rf "$build/demo-logs"
			mkdir -p "$build/demo-logs"
			cp "$dir"/*.log "$dir/weft.conf" "$build/demo-logs/" 2> /dev/null || true
			echo "demo FAILED (exit $rc); daemon logs kept in $build/demo-logs"
		fi
		echo
		echo "== stopping the cluster"
		"${cluster[@]}" down --wipe "${copts[@]:0:2}" || true
	fi
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

rm -rf "$build/demo-logs" # an earlier failure's
# A cluster left in the demo directory by an earlier run that was killed hard.
[ ! -e "$dir/cluster.env" ] || "${cluster[@]}" down --wipe "${copts[@]:0:2}" > /dev/null

echo
echo "== local cluster: 3 monitors, 3 OSDs, pool 'bench' size 3 (scripts/cluster.sh)"
up=1
"${cluster[@]}" up "${copts[@]}"

echo
echo "== weft bench bench $secs write --no-cleanup   (4 MiB objects, 16 in flight)"
"$weft" bench bench "$secs" write --no-cleanup -c "$conf" | tee "$dir/bench-write.out"
echo
echo "== weft bench bench $secs rand   (random reads of those objects, each verified)"
"$weft" bench bench "$secs" rand -c "$conf" | tee "$dir/bench-rand.out"

# The two summaries again, one after the other (from rados bench's "Total time run").
echo
echo "== summaries"
for phase in write rand; do
	echo "-- weft bench bench $secs $phase"
	sed -n '/^Total time run:/,$p' "$dir/bench-$phase.out"
done
