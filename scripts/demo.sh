#!/usr/bin/env bash
# The main job: install what is missing, build (Release), bring up a local
# cluster (3 weft-mon + 3 weft-osd on loopback, pool 'bench' of size 3, see
# docs/cluster.md), run `weft bench` writes then random reads for about 10 s
# each, print the summaries and take the cluster down again (also on failure
# or Ctrl-C; the logs of a failed run are kept in BUILD/demo-logs). The OSD
# stores are sized from the disk's free space (4 GiB each at most) and the
# write phase is capped to 80 % of what they hold, so a fast disk fills no store.
#
#   scripts/demo.sh [--help]
# Environment: WEFT_BUILD (default build-release), WEFT_JOBS (default nproc),
# WEFT_DEMO_SECONDS (10), WEFT_DEMO_PORT (22600: the cluster uses it..+99),
# WEFT_DEMO_BACKEND (tcp), WEFT_DEMO_SKIP_DEPS=1 (do not run install-deps.sh),
# WEFT_DEMO_DATA_SIZE (each OSD's store, MiB or with a G/M suffix; default
# from the free space), WEFT_DEMO_SKIP_BUILD=1 (use the binaries in WEFT_BUILD).
set -euo pipefail

case ${1:-} in
-h | --help)
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
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

# Space first: 3 OSD stores (fallocated), the build and the logs. A store
# is 4 GiB, or what fits in the free space less 2 GiB, but not below 1 GiB.
mib_of() { # "4G", "512M", "512" -> MiB
	case $1 in
	*[gG]) echo $((${1%[gG]} * 1024)) ;;
	*[mM]) echo "${1%[mM]}" ;;
	*) echo "$1" ;;
	esac
}
probe=$build
while [ ! -d "$probe" ]; do probe=$(dirname "$probe"); done
free_mib=$(($(df -Pk "$probe" | awk 'NR == 2 { print $4 }') / 1024))
if [ -n "${WEFT_DEMO_DATA_SIZE:-}" ]; then
	store_mib=$(mib_of "$WEFT_DEMO_DATA_SIZE")
	[ "$store_mib" -ge 256 ] 2> /dev/null ||
		{ echo "demo.sh: WEFT_DEMO_DATA_SIZE=$WEFT_DEMO_DATA_SIZE: at least 256M" >&2; exit 2; }
else
	store_mib=$(((free_mib - 2048) / 3))
	[ "$store_mib" -le 4096 ] || store_mib=4096
fi
if [ "$store_mib" -lt 1024 ] && [ -z "${WEFT_DEMO_DATA_SIZE:-}" ] ||
	[ "$free_mib" -lt $((3 * store_mib + 1024)) ]; then
	echo "demo.sh: only $((free_mib / 1024)).$((free_mib % 1024 * 10 / 1024)) GiB free on the file system of $probe;" \
		"the demo needs $(((3 * (store_mib > 1024 ? store_mib : 1024) + 2048) / 1024)) GiB or more" \
		"(3 OSD stores of at least 1 GiB, the build and the logs): free some space or set" \
		"WEFT_BUILD to a directory on a larger disk" >&2
	exit 1
fi
# The write phase stops at 80 % of a store's data area (its 64 MiB WAL out) less
# half the WAL, which "used" also counts: below the nearfull ratio (85 %) of
# every OSD, each of which holds every object (size 3).
cap_mib=$(((store_mib - 64) * 80 / 100 - 32))

if [ "${WEFT_DEMO_SKIP_DEPS:-0}" != 1 ]; then
	echo "== dependencies (scripts/install-deps.sh)"
	"$top/scripts/install-deps.sh"
fi

if [ "${WEFT_DEMO_SKIP_BUILD:-0}" != 1 ]; then
	echo "== build ($build, Release)"
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release > "$build.configure.log" 2>&1 ||
		{ cat "$build.configure.log"; exit 1; }
	cmake --build "$build" -j"$jobs" --target weft weft-mon weft-osd > "$build/build.log" 2>&1 ||
		{ grep -E "error|warning" "$build/build.log" | head -40; echo "build FAILED ($build/build.log)"; exit 1; }
fi
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
echo "== local cluster: 3 monitors, 3 OSDs of ${store_mib} MiB, pool 'bench' size 3 (scripts/cluster.sh;" \
	"$((free_mib / 1024)) GiB free)"
up=1
"${cluster[@]}" up "${copts[@]}" --data-size "${store_mib}M"

echo
echo "== weft bench bench $secs write --no-cleanup --max-bytes ${cap_mib}M   (4 MiB objects, 16 in flight;" \
	"at most ${cap_mib} MiB: what the stores hold below nearfull)"
"$weft" bench bench "$secs" write --no-cleanup --max-bytes "${cap_mib}M" -c "$conf" |
	tee "$dir/bench-write.out"
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
