# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# bench-lib.sh: the parts cluster-bench.sh and small-write.sh share, sourced
# (not run): option checks, the raw limits (fio on the cluster's filesystem,
# tcp-pingpong on loopback), the local cluster (scripts/cluster.sh) and one
# `weft bench` phase, and the clean-up on exit or interrupt.
#
# The caller sets, before bl_paths and bl_init:
#   BL_NAME  message prefix ("cluster-bench")
#   BUILD    the build directory; SCRATCH the scratch directory
#   PORT     the cluster's base port; SECS / RAW_SECS phase lengths
#   KEEP     where to copy the raw results at the end ("" for nowhere)
# and gets RES (raw results), CDIR (the cluster), CONF, WEFT, CL (cluster.sh),
# COPTS (its options). Progress goes to stderr; bl_die exits 1.

bl_say() { echo "$BL_NAME: $*" >&2; }
bl_die() {
	bl_say "FAIL: $*"
	exit 1
}
bl_usage_error() {
	echo "$BL_NAME: $* (try --help)" >&2
	exit 2
}
# bl_help FILE: the comment block at the top of FILE, without '# '
bl_help() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"; }
# bl_common_opt ARGS...: an option every script takes (-h/--help, --dir,
# --port, --out, --keep-results) or the build directory, from "$@" of the
# caller's loop; BL_TOOK is then how many words it used (1 or 2). An unknown
# option is bad usage.
# shellcheck disable=SC2034 # OUT, KEEP, BL_TOOK are the caller's
bl_common_opt() {
	BL_TOOK=2
	case $1 in
	-h | --help) bl_help "$0"; exit 0 ;;
	--dir) SCRATCH=${2:-} ;;
	--port) PORT=${2:-} ;;
	--out) OUT=${2:-} ;;
	--keep-results) KEEP=${2:-} ;;
	-*) bl_usage_error "unknown option '$1'" ;;
	*) BUILD=$1; BL_TOOK=1 ;;
	esac
}
# bl_positive V...: each V a positive integer, else bad usage
bl_positive() {
	local v
	for v in "$@"; do
		[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || bl_usage_error "'$v' is not a positive number"
	done
}
# bl_require_bins PATH...: executables of the build
bl_require_bins() {
	local bin
	for bin in "$@"; do
		[ -x "$bin" ] || { echo "$BL_NAME: $bin not found: build it (cmake --build $BUILD)" >&2; exit 2; }
	done
}
# bl_require_tools NAME...: programs on PATH
bl_require_tools() {
	local tool
	for tool in "$@"; do
		command -v "$tool" > /dev/null ||
			{ echo "$BL_NAME: $tool not installed (scripts/install-deps.sh)" >&2; exit 2; }
	done
}

BL_SERVER=""
BL_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# bl_paths: absolute BUILD and SCRATCH, and the paths derived from them
bl_paths() {
	BUILD=$(realpath -m "$BUILD")
	SCRATCH=$(realpath -m "$SCRATCH")
	WEFT=$BUILD/tools/weft
	CDIR=$SCRATCH/cluster
	RES=$SCRATCH/results
	CONF=$CDIR/weft.conf
	CL=("$BL_TOP/scripts/cluster.sh")
	COPTS=(--dir "$CDIR" --build "$BUILD" --port "$PORT" --data-size 5G)
}
# bl_init: the exit trap, a scratch directory without a stale cluster
bl_init() {
	trap bl_cleanup EXIT
	trap 'exit 1' INT TERM
	mkdir -p "$RES" || bl_die "cannot create $SCRATCH"
	[ ! -e "$CDIR/cluster.env" ] || "${CL[@]}" down --wipe --dir "$CDIR" > /dev/null 2>&1
}
# bl_cleanup: the ping-pong server, the caller's bl_cleanup_extra, the
# cluster, then the results (copied to KEEP first) and the scratch space
bl_cleanup() {
	[ -z "$BL_SERVER" ] || kill "$BL_SERVER" 2> /dev/null
	declare -F bl_cleanup_extra > /dev/null && bl_cleanup_extra
	[ ! -e "$CDIR/cluster.env" ] || "${CL[@]}" down --wipe --dir "$CDIR" > /dev/null 2>&1
	[ -z "$KEEP" ] || { mkdir -p "$KEEP" && cp -r "$RES"/. "$KEEP"/; }
	rm -rf "$SCRATCH/fio.dat" "$RES"
	rmdir "$SCRATCH" 2> /dev/null
}

# ---- raw disk: fio on SCRATCH/fio.dat (1 GiB), on the cluster's filesystem ----
# bl_fio_prep: write the file once in full, so later writes overwrite
# allocated blocks, as on a device
bl_fio_prep() {
	bl_say "fio: preparing a 1 GiB file in $SCRATCH"
	fio --name=prep --filename="$SCRATCH/fio.dat" --size=1G --rw=write --bs=4M --direct=1 \
		--ioengine=io_uring --iodepth=16 --end_fsync=1 --output-format=json > /dev/null 2>&1 ||
		bl_die "fio cannot write $SCRATCH/fio.dat"
}
# bl_fio_run NAME ARGS...: one O_DIRECT fio job of RAW_SECS, JSON in RES/fio-NAME.json
bl_fio_run() {
	local name=$1
	shift
	bl_say "fio $name ($RAW_SECS s)"
	fio --name="$name" --filename="$SCRATCH/fio.dat" --size=1G --direct=1 --time_based \
		--runtime="$RAW_SECS" --output-format=json "$@" > "$RES/fio-$name.json" 2> "$RES/fio-$name.err" ||
		bl_die "fio $name: $(head -c 300 "$RES/fio-$name.err")"
}

# ---- loopback ----
# bl_pingpong SIZE NAME: tcp-pingpong round trips of SIZE bytes, JSON in RES/NAME.json
bl_pingpong() {
	local size=$1 name=$2 pport
	bl_say "loopback: tcp-pingpong -s $size"
	"$BUILD/perftest-scripts/tcp-pingpong" --server 127.0.0.1:0 > "$RES/$name.srv" 2>&1 &
	BL_SERVER=$!
	for _ in $(seq 1 50); do grep -q "listening on" "$RES/$name.srv" && break; sleep 0.1; done
	pport=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$RES/$name.srv" | head -1)
	[ -n "$pport" ] || bl_die "tcp-pingpong server did not start: $(cat "$RES/$name.srv")"
	timeout --foreground 120 "$BUILD/perftest-scripts/tcp-pingpong" --connect "127.0.0.1:$pport" -s "$size" \
		-n 20000 --format json > "$RES/$name.json" 2> "$RES/$name.err" ||
		bl_die "tcp-pingpong $size B: $(cat "$RES/$name.err")"
	kill "$BL_SERVER" 2> /dev/null
	wait "$BL_SERVER" 2> /dev/null
	BL_SERVER=""
}

# ---- cluster ----
bl_cluster_up() {
	bl_say "cluster: scripts/cluster.sh up (3 mons, 3 OSDs, pool bench size 3 min_size 2)"
	"${CL[@]}" up "${COPTS[@]}" >&2 || bl_die "cluster up"
}
bl_cluster_down() { "${CL[@]}" down --wipe --dir "$CDIR" >&2; }
# bl_bench NAME SECONDS ARGS...: one weft bench phase on pool bench, JSON in RES/NAME.json
bl_bench() {
	local name=$1 secs=$2
	shift 2
	bl_say "weft bench bench $secs $* ($name)"
	timeout --foreground $((secs * 4 + 120)) "$WEFT" bench bench "$secs" "$@" --format json -c "$CONF" \
		> "$RES/$name.json" 2> "$RES/$name.err" ||
		bl_die "weft bench $* failed: $(tail -n 3 "$RES/$name.err")"
	bl_interrupted "$RES/$name.json"
}
# bl_interrupted FILE: exit 1 if the weft bench run in FILE was interrupted.
# weft bench ends a run cleanly on SIGINT and exits 0, and bash then runs no
# INT trap (the child handled the signal): without this a Ctrl-C would only
# cut one phase short. (Every timeout here is --foreground, so that the
# command stays in our process group and gets the Ctrl-C at all.)
bl_interrupted() {
	! jq -e '.interrupted == true' "$1" > /dev/null 2>&1 || bl_die "interrupted"
}
# bl_rev: the tree's commit, "+dirty" when it has uncommitted changes
bl_rev() {
	local rev
	rev=$(git -C "$BL_TOP" rev-parse --short HEAD 2> /dev/null) || { echo unknown; return; }
	git -C "$BL_TOP" diff --quiet HEAD 2> /dev/null || rev="$rev+dirty"
	echo "$rev"
}
