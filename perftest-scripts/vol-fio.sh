#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The standard fio set on a Weft volume three ways, side by side in one run
# on one cluster (docs/performance.md, "fio through NBD"):
#   nbd    fio --ioengine=nbd (libnbd) -> nbdkit + nbdkit-weft-plugin (no FUSE)
#   mount  fio --ioengine=libaio --direct=1 on the volume file of weft-mount (FUSE)
#   native weft vol bench (libweft alone: no NBD, no FUSE, no kernel)
# plus the raw limit of the same run: fio libaio direct on a local file on the
# disk that holds the OSDs' stores. The set (each on its own volume of the
# same cluster, every run right after the others of its row):
#   4 MiB sequential write, 16 in flight (fills the volumes, so reads hit data)
#   4 KiB random write, 1 in flight (latency)
#   4 KiB random write, 32 in flight
#   4 KiB random read, 32 in flight
# and a separate correctness pass: 4 KiB random writes, 32 in flight, with
# verify=crc32c, through NBD and through the mount. CPU per op of the nbdkit
# and weft-mount processes (utime + stime over the run) is printed per row.
# Not a ctest: numbers are not pass/fail. Run it on a quiet machine (HELPERS:
# under flock /work/.heavy.lock), with a Release build:
#
#   perftest-scripts/vol-fio.sh BUILD_DIR [PORT]
# Environment: SECS (20: time-based rows), VOL_SIZE (1G), VERIFY_SIZE (64M).
set -u
B=$(cd "${1:?usage: vol-fio.sh BUILD_DIR [PORT]}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
PLUGIN=$B/client/nbd/nbdkit-weft-plugin.so MOUNTBIN=$B/client/mount/weft-mount
for f in "$PLUGIN" "$MOUNTBIN"; do [ -e "$f" ] || { echo "vol-fio: $f missing (build first)"; exit 1; }; done
for c in nbdkit nbdinfo fio jq fusermount3; do
	command -v $c > /dev/null || { echo "vol-fio: $c missing (scripts/install-deps.sh)"; exit 1; }
done
fio --enghelp=nbd > /dev/null 2>&1 || { echo "vol-fio: this fio has no nbd engine"; exit 1; }
ldd "$PLUGIN" | grep -q libasan && { echo "vol-fio: $PLUGIN is a sanitizer build: use a Release build"; exit 1; }
set -- bench tcp "${2:-32500}" "$B/mon/weft-mon" "$B/osd/weft-osd" "$B/tools/weft" /bin/false
WEFT_CLUSTER_LIB=1
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-5G}
export WEFT_TEST_LOG_LEVEL=${WEFT_TEST_LOG_LEVEL:-warn}
export WEFT_TEST_WATCHDOG=${WEFT_TEST_WATCHDOG:-1500}
# every client (nbdkit, weft-mount, weft vol bench) gets 40 registered 8 MiB buffers: 16
# requests of 4 MiB in flight must not wait for a bounce buffer (the default is 8)
export CL_CONF_EXTRA=${CL_CONF_EXTRA:-$'[client]\n\tclient_buffers = 40'}
# shellcheck source=tests/test_osd_cluster.sh
. "$here/tests/test_osd_cluster.sh"

SECS=${SECS:-20} VOL_SIZE=${VOL_SIZE:-1G} VERIFY_SIZE=${VERIFY_SIZE:-64M}
MNT=$DIR/mnt SOCK=$DIR/nbd.sock
bench_cleanup() {
	[ -n "${PIDS[nbdkit]:-}" ] && kill -TERM "${PIDS[nbdkit]}" 2> /dev/null
	grep -q " $MNT " /proc/mounts && fusermount3 -u "$MNT"
	sleep 1
	cleanup
}
trap bench_cleanup EXIT
cluster_up
cd "$DIR" || fail "cd $DIR" # fio leaves its verify state files in the working directory
for v in nbd mnt native; do
	w vol create "rbd/$v" --size "$VOL_SIZE" > /dev/null || fail "vol create rbd/$v"
done
# -t: nbdkit serves at most THREADS requests of a connection at once (default 16): QD32 needs more
nbdkit -f -t 64 -U "$SOCK" "$PLUGIN" pool=rbd volume=nbd conf="$CONF" >> "$DIR/nbdkit.log" 2>&1 &
PIDS[nbdkit]=$!
URI="nbd+unix:///?socket=$SOCK"
wait_for 60 "nbdkit serves rbd/nbd" nbdinfo --size "$URI"
mkdir -p "$MNT"
"$MOUNTBIN" -c "$CONF" -f rbd "$MNT" >> "$DIR/mount.log" 2>&1 &
PIDS[mount]=$!
wait_for 30 "weft-mount mounted $MNT" grep -q " $MNT " /proc/mounts
RAW=$DIR/raw.img
fallocate -l "$VOL_SIZE" "$RAW" || fail "fallocate $RAW"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
# fio_row NAME TARGET JOB...: one fio run, a line "IOPS MB/s clat-avg-us p99-us"
fio_row() {
	local name=$1 target=$2
	shift 2
	local t=()
	case $target in
	nbd) t=(--ioengine=nbd --uri="$URI") ;;
	mount) t=(--ioengine=libaio --direct=1 --filename="$MNT/mnt") ;;
	raw) t=(--ioengine=libaio --direct=1 --filename="$RAW") ;;
	esac
	# a failed run (an overloaded box can push ops past osd_op_timeout) is reported, not fatal
	# --output: the nbd engine prints "connected to NBD server" on stdout, outside the JSON
	fio --name="$name" "${t[@]}" "$@" --group_reporting --output-format=json --output="$DIR/$name.json" \
		> "$DIR/$name.err" 2>&1 ||
		{ echo "  $name failed: $(grep -m1 -i err "$DIR/$name.err")" >&2; echo "FAILED - - - 1"; return; }
	jq -r '.jobs[0] | (if .write.io_bytes > 0 then .write else .read end) as $d |
		"\($d.iops | floor) \($d.bw_bytes / 1000000 * 10 | floor / 10) \($d.clat_ns.mean / 1000 | floor) \($d.clat_ns.percentile["99.000000"] / 1000 | floor) \($d.total_ios)"' "$DIR/$name.json"
}
# vb_row ARGS...: weft vol bench on rbd/native, the same line from its summary
vb_row() {
	"$WEFT" vol bench rbd/native "$@" -c "$CONF" --timeout 60 --format json > "$DIR/vb.json" 2> "$DIR/vb.err" ||
		{ echo "  vol bench $* failed: $(head -n 1 "$DIR/vb.err")" >&2; echo "FAILED - - - 1"; return; }
	jq -r '"\(.ops_per_sec | floor) \(.mb_per_sec * 10 | floor / 10) \(.lat_avg_ms * 1000 | floor) \(.lat_p99_ms * 1000 | floor) \(.ops)"' "$DIR/vb.json"
}
# row LABEL FIO_ARGS... -- VB_ARGS...: the four ways, a table row each, CPU/op for the daemons
row() {
	local label=$1 fio_args=() vb_args=() n0 m0 r
	shift
	while [ "$1" != -- ]; do fio_args+=("$1"); shift; done
	shift
	vb_args=("$@")
	echo "== $label"
	printf '  %-8s %9s %8s %10s %9s %s\n' way IOPS MB/s "avg us" "p99 us" "daemon CPU per op"
	n0=$(cpu_ticks "${PIDS[nbdkit]}")
	r=$(fio_row "$label-nbd" nbd "${fio_args[@]}")
	set -- $r
	printf '  %-8s %9s %8s %10s %9s %s\n' nbd "$1" "$2" "$3" "$4" \
		"$(awk -v a="$n0" -v b="$(cpu_ticks "${PIDS[nbdkit]}")" -v n="$5" -v hz="$HZ" \
			'BEGIN { printf "nbdkit %.1f us", (b - a) / hz * 1e6 / n }')"
	m0=$(cpu_ticks "${PIDS[mount]}")
	r=$(fio_row "$label-mount" mount "${fio_args[@]}")
	set -- $r
	printf '  %-8s %9s %8s %10s %9s %s\n' mount "$1" "$2" "$3" "$4" \
		"$(awk -v a="$m0" -v b="$(cpu_ticks "${PIDS[mount]}")" -v n="$5" -v hz="$HZ" \
			'BEGIN { printf "weft-mount %.1f us", (b - a) / hz * 1e6 / n }')"
	r=$(vb_row "${vb_args[@]}")
	set -- $r
	printf '  %-8s %9s %8s %10s %9s\n' native "$1" "$2" "$3" "$4"
	r=$(fio_row "$label-raw" raw "${fio_args[@]}")
	set -- $r
	printf '  %-8s %9s %8s %10s %9s %s\n' raw "$1" "$2" "$3" "$4" "(local file, same disk)"
}

echo "== $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores," \
	"$(git -C "$here" rev-parse --short HEAD), $B, pool size 3, $SECS s per timed run"
row "seqwrite-4m-qd16" --rw=write --bs=4m --iodepth=16 --size="$VOL_SIZE" \
	-- --io-type write --io-size 4M --io-threads 16 --io-total "$VOL_SIZE" --io-pattern seq
row "randwrite-4k-qd1" --rw=randwrite --bs=4k --iodepth=1 --size="$VOL_SIZE" --time_based \
	--runtime="$SECS" -- --io-type write --io-size 4K --io-threads 1 --io-total 4M --io-pattern rand
row "randwrite-4k-qd32" --rw=randwrite --bs=4k --iodepth=32 --size="$VOL_SIZE" --time_based \
	--runtime="$SECS" -- --io-type write --io-size 4K --io-threads 32 --io-total 32M --io-pattern rand
row "randread-4k-qd32" --rw=randread --bs=4k --iodepth=32 --size="$VOL_SIZE" --time_based \
	--runtime="$SECS" -- --io-type read --io-size 4K --io-threads 32 --io-total 256M --io-pattern rand
echo "== verify pass: 4 KiB random writes, 32 in flight, $VERIFY_SIZE, verify=crc32c"
for t in nbd mount; do
	r=$(fio_row "verify-$t" "$t" --rw=randwrite --bs=4k --iodepth=32 --size="$VERIFY_SIZE" \
		--verify=crc32c --do_verify=1 --verify_fatal=1)
	set -- $r
	echo "  $t: verified, $1 IOPS over the write+verify pass"
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
