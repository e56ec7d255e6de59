#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Functional tests of nbdkit-weft-plugin (client/nbd/, docs/vm.md): the real
# nbdkit serving a volume of a real cluster (1 weft-mon, 3 weft-osd on
# loopback, pool rbd of size 3) to fio's nbd engine, nbdinfo, qemu-img and
# qemu-io, over a unix socket.
#
#   test_nbd.sh CASE PORT WEFT_MON WEFT_OSD WEFT PLUGIN NBD_VOL_COPIES
#   CASE: args | fio | qemu | flush
#
# args needs no cluster. The others skip (77) with a message when nbdkit,
# nbdinfo, fio (with its nbd engine) or qemu-img/qemu-io are missing. Every
# wait is bounded; every process this script starts is killed on exit.
set -u
CASE=$1 PORT=$2 MON=$3 OSD=$4 WEFT=$5 PLUGIN=$6 COPIES=$7
HERE=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
command -v nbdkit > /dev/null || skip "nbdkit missing (apt-get install nbdkit)"

# shellcheck source=tests/nbd_lib.sh
. "$HERE/nbd_lib.sh"
# expect_fail WANT ARGS...: nbdkit (scratch files in $T) exits 1 (sanitizer build: hangs in
# exit, see above) after the plugin's error line WANT, and serves nothing; EXPECT_LINE = that line
expect_fail() {
	local want=$1 pid
	shift
	: > "$T/out"
	"${NBDKIT_ENV[@]}" nbdkit -f -U "$T/sock" "$PLUGIN" "$@" > "$T/out" 2>&1 &
	pid=$!
	nbdkit_wait $pid "$T/out" "error: " 60 || { kill -9 $pid; bad "'nbdkit weft $*' still runs after 60 s: $(cat "$T/out")"; }
	[ "$NBDKIT_RC" = 1 ] || [ "$NBDKIT_RC" = hung ] || bad "'nbdkit weft $*' exited $NBDKIT_RC, not 1: $(cat "$T/out")"
	grep -q -- "$want" "$T/out" || bad "'nbdkit weft $*': want '$want': $(cat "$T/out")"
	[ -S "$T/sock" ] && nbdinfo --size "nbd+unix:///?socket=$T/sock" > /dev/null 2>&1 && bad "'nbdkit weft $*' served"
	rm -f "$T/sock"
	EXPECT_LINE=$(grep -- "$want" "$T/out" | head -n 1)
	echo "ok: 'nbdkit weft $*' -> $NBDKIT_RC: $EXPECT_LINE"
}

if [ "$CASE" = args ]; then
	T=$(mktemp -d /tmp/weft-nbd-args.XXXXXX)
	trap 'rm -rf "$T"' EXIT
	nbdkit_run --dump-plugin "$PLUGIN" > "$T/out" 2>&1 || bad "--dump-plugin: $(cat "$T/out")"
	grep -qx "name=weft" "$T/out" && grep -qx "max_thread_model=parallel" "$T/out" ||
		bad "--dump-plugin: $(cat "$T/out")"
	nbdkit_run "$PLUGIN" --help > "$T/out" 2>&1 || bad "--help exited $?"
	grep -q "^volume=NAME" "$T/out" || bad "--help lists no parameters: $(cat "$T/out")"
	echo "ok: --dump-plugin (thread model parallel) and --help"
	printf '[global]\n\tmon_host = 127.1.0.1:%d\n\tms_connect_timeout = 1s\n' "$PORT" > "$T/weft.conf"
	# bad parameters: nbdkit exits 1 with the plugin's one line, before any network I/O
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		expect_fail "$want" $args
	done <<EOF
pool=rbd|pool= and volume= are required
volume=img0|pool= and volume= are required
pool=rbd volume=img0 nosuch=1|unknown parameter 'nosuch'
pool=rbd volume=img0 name=admin|name='admin': want client.NAME
pool=rbd volume=img0 readonly=true shared=true|not with readonly=true
pool=rbd volume=img0 readonly=maybe|readonly=maybe: want true or false
volume=/img0|the pool part is empty
pool=rbd volume=img0 conf=$T/nonexistent.conf|conf=$T/nonexistent.conf: No such file
EOF
	# a cluster that does not answer: one clear line, exit 1, within the op timeout
	WEFT_CLIENT_OP_TIMEOUT=3s expect_fail "cannot reach the cluster as client.admin" rbd/img0 conf="$T/weft.conf"
	echo "ok: unreachable cluster (the bare volume=POOL/NAME form), within the op timeout"
	echo "PASS args"
	exit 0
fi

command -v nbdinfo > /dev/null || skip "nbdinfo missing (apt-get install libnbd-bin)"
case $CASE in
fio) command -v fio > /dev/null && fio --enghelp=nbd > /dev/null 2>&1 ||
	skip "fio with its nbd engine missing (apt-get install fio)" ;;
qemu | flush) command -v qemu-img > /dev/null && command -v qemu-io > /dev/null ||
	skip "qemu-img/qemu-io missing (apt-get install qemu-utils)" ;;
esac

# The cluster start-up (write_conf, cluster_up, wait_for, fail, log, w, stop_osd).
WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
source "$HERE/test_osd_cluster.sh" "nbd-$CASE" tcp "$PORT" "$MON" "$OSD" "$WEFT" /bin/false
CASE=${CASE#nbd-}
bad() { fail "$@"; }
declare -A SOCKS

nbd_cleanup() {
	for n in "${!SOCKS[@]}"; do [ -n "${PIDS[$n]:-}" ] && kill -TERM "${PIDS[$n]}" 2> /dev/null; done
	cleanup
}
trap nbd_cleanup EXIT

vol_create() {
	w vol create "rbd/$1" --size "$2" > "$DIR/vol_create.out" 2>&1 ||
		{ cat "$DIR/vol_create.out"; fail "vol create rbd/$1 --size $2"; }
}
uri() { echo "nbd+unix:///?socket=${SOCKS[$1]}"; }
# nbd_start NAME VOLUME [PARAMS...]: nbdkit in the foreground (pid in PIDS[NAME]) on a
# unix socket, waiting until it answers
nbd_start() {
	local name=$1 vol=$2
	shift 2
	SOCKS[$name]=$DIR/$name.sock
	"${NBDKIT_ENV[@]}" nbdkit -f -U "${SOCKS[$name]}" "$PLUGIN" pool=rbd volume="$vol" \
		conf="$CONF" "$@" >> "$DIR/$name.log" 2>&1 &
	PIDS[$name]=$!
	wait_for 60 "nbdkit ($name) serves $vol" nbdinfo --size "$(uri "$name")"
}
# nbd_stop NAME: SIGTERM; nbdkit must close the volume and exit 0 on its own
nbd_stop() {
	local pid=${PIDS[$1]}
	kill -TERM "$pid"
	nbdkit_wait "$pid" "$DIR/$1.log" "nbd (INFO|WARN): rbd/[^ ]* closed" 90 ||
		fail "nbdkit ($1) still runs 90 s after SIGTERM"
	unset "PIDS[$1]" "SOCKS[$1]"
	[ "$NBDKIT_RC" = 0 ] || [ "$NBDKIT_RC" = hung ] ||
		fail "nbdkit ($1) exited $NBDKIT_RC after SIGTERM: $(tail -n 5 "$DIR/$1.log")"
	grep -qE "nbd (INFO|WARN): rbd/[^ ]* closed" "$DIR/$1.log" || fail "nbdkit ($1) did not close its volume"
	STOPPED="exited 0"
	[ "$NBDKIT_RC" = hung ] && STOPPED="hung in exit() after it (sanitizer build) and was killed"
}
# map NAME: nbdinfo --map as "start length type" lines
map() { nbdinfo --map "$(uri "$1")" | awk '{print $1, $2, $NF}'; }
# map_is NAME OFF LEN TYPE: every extent that overlaps [OFF, OFF+LEN) is TYPE (data, hole,zero)
map_is() {
	map "$1" | awk -v o="$2" -v l="$3" -v t="$4" \
		'$1 < o + l && $1 + $2 > o { n++; if ($3 != t) bad = 1 } END { exit (bad || !n) }' ||
		fail "map of [$2, +$3) is not all $4: $(map "$1" | tr '\n' ';')"
}
# bytes NAME OFF LEN: LEN bytes at OFF, read through the export (holes included: no map)
bytes() { nbdcopy --no-extents "$(uri "$1")" - | tail -c +$(($2 + 1)) | head -c "$3"; }
lock_holder() { w vol lock ls "rbd/$1" 2> /dev/null | head -n 1; }
copies() { "$COPIES" "$CONF" rbd "$@"; }

cluster_up
log "cluster up (conf $CONF)"
cd "$DIR" || fail "cd $DIR" # fio leaves its verify state files in the working directory

case $CASE in
fio)
	vol_create fio 512M
	nbd_start a fio
	nbdinfo "$(uri a)" > "$DIR/info.out" || fail "nbdinfo"
	for want in "export-size: 536870912" "is_read_only: false" "can_flush: true" \
		"can_fua: true" "can_multi_conn: true" "can_trim: true" "can_zero: true" \
		"can_fast_zero: true" "base:allocation" "block_size_maximum: 33554432"; do
		grep -q "$want" "$DIR/info.out" || fail "nbdinfo: no '$want': $(cat "$DIR/info.out")"
	done
	log "ok: nbdinfo: size, flush, FUA, multi-conn, trim, zero, fast zero, block status, sizes"
	[ "$(map a)" = "0 536870912 hole,zero" ] || fail "fresh volume map: $(map a)"
	[ "$(lock_holder fio)" != "(free)" ] || fail "a writable export holds no lock"
	COMMON=(--ioengine=nbd --uri="$(uri a)" --verify=crc32c --verify_fatal=1 --do_verify=1
		--randrepeat=1 --group_reporting --output-format=terse --terse-version=3)
	fio --name=qd1 --rw=randwrite --offset=0 --size=16M --bs=4k --iodepth=1 "${COMMON[@]}" \
		> "$DIR/fio-qd1.out" 2>&1 || { cat "$DIR/fio-qd1.out"; fail "fio nbd QD1"; }
	log "ok: fio nbd engine randwrite 4k QD1, 16 MiB, verify=crc32c"
	fio --name=qd32 --rw=randwrite --offset=64M --size=64M --iodepth=32 \
		--bssplit=4k/50:16k/20:64k/15:512k/10:1m/5 "${COMMON[@]}" \
		> "$DIR/fio-qd32.out" 2>&1 || { cat "$DIR/fio-qd32.out"; fail "fio nbd QD32"; }
	log "ok: fio nbd engine randwrite bssplit 4k-1m QD32, 64 MiB, verify=crc32c"
	fio --name=big --rw=write --offset=256M --size=64M --bs=4m --iodepth=8 "${COMMON[@]}" \
		> "$DIR/fio-big.out" 2>&1 || { cat "$DIR/fio-big.out"; fail "fio nbd 4m"; }
	log "ok: fio nbd engine write 4m QD8, 64 MiB, verify=crc32c"
	# the map follows the writes: data where fio wrote, holes elsewhere (4 MiB objects)
	map_is a 0 $((16 << 20)) data
	map_is a $((16 << 20)) $((48 << 20)) hole,zero
	map a | grep -q "^67108864 [0-9]* data$" || fail "no data at 64 MiB: $(map a | tr '\n' ';')"
	map_is a $((256 << 20)) $((64 << 20)) data
	map_is a $((320 << 20)) $((192 << 20)) hole,zero
	log "ok: nbdinfo --map: data exactly where fio wrote, holes between"
	# a second, writable export of the same volume is refused (the lock); read-only works
	T=$DIR expect_fail "volume rbd/fio is locked by client.admin@" pool=rbd volume=fio conf="$CONF" > /dev/null
	log "ok: a second writable export -> $NBDKIT_RC: ${EXPECT_LINE#*error: }"
	nbd_start ro fio readonly=true
	nbdinfo "$(uri ro)" | grep -q "is_read_only: true" || fail "readonly=true export is writable"
	fio --name=qd32 --rw=randwrite --offset=64M --size=64M --iodepth=32 \
		--bssplit=4k/50:16k/20:64k/15:512k/10:1m/5 "${COMMON[@]}" --uri="$(uri ro)" \
		--verify_only=1 > "$DIR/fio-ro.out" 2>&1 || { cat "$DIR/fio-ro.out"; fail "verify_only via ro"; }
	log "ok: a read-only export beside the writer verifies the QD32 job's data"
	nbd_stop ro
	nbd_stop a
	[ "$(lock_holder fio)" = "(free)" ] || fail "lock still held after nbdkit exited: $(lock_holder fio)"
	log "ok: SIGTERM: the plugin closed the volume, nbdkit $STOPPED, the lock is free again"
	# a new nbdkit process reads what the first wrote: it is in the cluster, not in a cache
	nbd_start c fio
	fio --name=big --rw=write --offset=256M --size=64M --bs=4m --iodepth=8 "${COMMON[@]}" \
		--uri="$(uri c)" --verify_only=1 > "$DIR/fio-re.out" 2>&1 ||
		{ cat "$DIR/fio-re.out"; fail "fio verify_only after restart"; }
	log "ok: a new nbdkit process verifies the 4 MiB job's data (verify_only)"
	# trim and zero through fio's engine: whole objects go (no space), the rest reads zeros
	[ "$(copies fio objects 268435456 67108864)" = 16 ] || fail "objects before trim"
	fio --name=trim --rw=trim --offset=256M --size=64M --bs=4m --iodepth=4 --ioengine=nbd \
		--uri="$(uri c)" > "$DIR/fio-trim.out" 2>&1 || { cat "$DIR/fio-trim.out"; fail "fio trim"; }
	[ "$(copies fio objects 268435456 67108864)" = 0 ] || fail "trim left objects"
	map_is c $((256 << 20)) $((64 << 20)) hole,zero
	cmp <(bytes c $((256 << 20)) $((64 << 20))) <(head -c $((64 << 20)) /dev/zero) ||
		fail "the trimmed range does not read as zeros"
	log "ok: fio trim of 64 MiB: its 16 objects removed, a hole in the map, reads zeros"
	nbd_stop c
	;;
qemu)
	vol_create img 96M
	nbd_start a img
	# an image with data, zeros and holes: random 1 MiB pieces here and there
	truncate -s 64M "$DIR/src.img"
	for i in 0 3 4 9 17 31 32 63; do
		head -c $((1 << 20)) /dev/urandom | dd of="$DIR/src.img" bs=1M seek=$i conv=notrunc status=none
	done
	head -c 12345 /dev/urandom | dd of="$DIR/src.img" bs=1 seek=$((40 << 20)) conv=notrunc status=none
	qemu-img convert -p -n -f raw -O raw "$DIR/src.img" "$(uri a)" > "$DIR/convert.out" 2>&1 ||
		{ cat "$DIR/convert.out"; fail "qemu-img convert into the volume"; }
	qemu-img convert -f raw -O raw "$(uri a)" "$DIR/back.img" > "$DIR/back.out" 2>&1 ||
		{ cat "$DIR/back.out"; fail "qemu-img convert out of the volume"; }
	truncate -s 64M "$DIR/zero32"
	cmp <(head -c $((64 << 20)) "$DIR/back.img") "$DIR/src.img" || fail "converted back: bytes differ"
	cmp <(tail -c $((32 << 20)) "$DIR/back.img") <(head -c $((32 << 20)) /dev/zero) ||
		fail "the volume's tail past the image is not zeros"
	qemu-img compare -f raw -F raw "$DIR/src.img" "$(uri a)" > /dev/null 2>&1 ||
		fail "qemu-img compare: the volume and the image differ"
	log "ok: qemu-img convert image -> volume -> image: byte-identical (cmp, qemu-img compare)"
	# qemu-img skips holes: never-written objects of the volume stay missing
	# the image's data lies in 8 of the volume's 4 MiB objects (0, 1, 2, 4, 7, 8, 10, 15)
	[ "$(copies img objects 0 100663296)" = 8 ] || fail "convert wrote holes: $(copies img objects 0 100663296) objects"
	qemu-img map -f raw --output=json "$(uri a)" > "$DIR/qmap.json" || fail "qemu-img map"
	jq -e '[.[] | select(.data == false)] | length > 0' "$DIR/qmap.json" > /dev/null ||
		fail "qemu-img map sees no hole: $(cat "$DIR/qmap.json")"
	log "ok: holes stay holes ($(copies img objects 0 100663296) of 24 objects exist), qemu-img map sees them"
	# qemu-io patterns: aio writes, FUA, zero (with and without unmap), discard, verify each
	qemu-io -d unmap -f raw "$(uri a)" \
		-c "aio_write -P 0xa1 70M 300k" -c "aio_write -P 0xa2 71M 5k" -c aio_flush \
		-c "read -P 0xa1 70M 300k" -c "read -P 0xa2 71M 5k" \
		-c "write -f -P 0xb7 72M 64k" -c "read -P 0xb7 72M 64k" \
		-c "write -P 0xc3 80M 8M" -c "write -z 81M 1M" -c "read -P 0 81M 1M" \
		-c "read -P 0xc3 80M 1M" -c "read -P 0xc3 82M 6M" \
		-c "write -z -u 84M 4M" -c "read -P 0 84M 4M" \
		-c "discard 82M 1M" -c "read -P 0 82M 1M" -c "read -P 0xc3 83M 1M" \
		-c "read -P 0xc3 80M 1M" -c flush > "$DIR/qio.out" 2>&1 ||
		{ cat "$DIR/qio.out"; fail "qemu-io"; }
	grep -qi "verification failed\|error\|fail" "$DIR/qio.out" && { cat "$DIR/qio.out"; fail "qemu-io pattern"; }
	log "ok: qemu-io: aio writes + aio_flush, FUA write, write -z, write -z -u, discard, all verified"
	# zero without unmap keeps the object; zero with unmap (may trim) of a whole object frees it
	[ "$(copies img objects $((80 << 20)) $((4 << 20)))" = 1 ] || fail "write -z freed an object"
	[ "$(copies img objects $((84 << 20)) $((4 << 20)))" = 0 ] || fail "write -z -u left the object"
	log "ok: write -z keeps its object (allocated zeros), write -z -u of a whole object removes it"
	# the lock broken under the export: its next write or flush fails (ENOLCK -> EPERM), then
	# every write. Which one sees it first is a race: the break blocklists this client instance
	# (docs/volumes.md), and a write that reaches an OSD after the new map is refused at once;
	# one that got there before is caught by the flush.
	w vol lock break rbd/img > "$DIR/break.out" 2>&1 || { cat "$DIR/break.out"; fail "vol lock break"; }
	# qemu-io's flush prints nothing when it fails: its exit status and the plugin's log tell
	qemu-io -f raw "$(uri a)" -c "write -P 0x11 0 4k" -c flush > "$DIR/qio-lost.out" 2>&1 &&
		{ cat "$DIR/qio-lost.out"; fail "a flush after the lock break succeeded"; }
	grep -Eq "(write at offset 0, 4096|flush at offset 0, 0) bytes: No locks available \(1 I/O errors so far\)" \
		"$DIR/a.log" || fail "the lost lock's error is not logged: $(tail -n 3 "$DIR/a.log")"
	# what offset 0 holds now: 0x11 when the write landed before the fence, else the image's bytes
	if grep -q "write at offset 0, 4096 bytes: No locks available" "$DIR/a.log"; then
		head -c 4096 "$DIR/src.img" > "$DIR/first4k"
	else
		head -c 4096 /dev/zero | tr '\0' '\021' > "$DIR/first4k"
	fi
	qemu-io -f raw "$(uri a)" -c "write -P 0x22 0 4k" > "$DIR/qio-lost2.out" 2>&1
	grep -q "write failed: Operation not permitted" "$DIR/qio-lost2.out" ||
		{ cat "$DIR/qio-lost2.out"; fail "a write after the lost lock did not fail with EPERM"; }
	log "ok: lock broken under the export: the next write or flush fails ENOLCK, every write after it EPERM, logged"
	nbd_stop a
	# the second process sees the same bytes
	nbd_start b img readonly=true
	qemu-io -r -f raw "$(uri b)" -c "read -P 0xa1 70M 300k" -c "read -P 0xb7 72M 64k" \
		-c "read -P 0xc3 83M 1M" -c "read -P 0 84M 4M" > "$DIR/qio2.out" 2>&1 ||
		{ cat "$DIR/qio2.out"; fail "qemu-io read-only re-read"; }
	grep -qi "pattern verification failed" "$DIR/qio2.out" && { cat "$DIR/qio2.out"; fail "re-read pattern"; }
	nbdcopy "$(uri b)" - 2> "$DIR/copy.err" | head -c 4096 > "$DIR/got4k"
	cmp "$DIR/got4k" "$DIR/first4k" || fail "offset 0 after the lock break: not what the fence let through"
	log "ok: a new read-only nbdkit process reads the same patterns"
	nbd_stop b
	;;
flush)
	vol_create fl 64M
	nbd_start a fl
	OFF=$((8 << 20)) LEN=$((1 << 20)) # inside object 2
	head -c "$LEN" /dev/urandom > "$DIR/payload"
	# one write, then one flush; qemu-io returns only after both are acknowledged
	qemu-io -f raw "$(uri a)" -c "write -s $DIR/payload $OFF $LEN" -c flush > "$DIR/qio.out" 2>&1 ||
		{ cat "$DIR/qio.out"; fail "qemu-io write + flush"; }
	PRIMARY=$(copies fl primary "$OFF") || fail "primary of the object"
	OTHERS=$(for i in 0 1 2; do [ "$i" != "$PRIMARY" ] && echo "$i"; done | tr '\n' ' ')
	log "write + flush acknowledged; primary osd.$PRIMARY, replicas $OTHERS"
	stop_osd "$PRIMARY" KILL
	log "kill -9 osd.$PRIMARY"
	# no recovery has run: what the replicas hold is what the write's ack promised
	# shellcheck disable=SC2086
	copies fl check "$OFF" "$LEN" "$DIR/payload" $OTHERS > "$DIR/copies.out" 2> "$DIR/copies.err" ||
		{ cat "$DIR/copies.out" "$DIR/copies.err"; fail "the acknowledged write is not on the surviving replicas"; }
	log "ok: $(cat "$DIR/copies.out")"
	# the export carries on: the primary's PGs move, reads and writes go on (min_size 2)
	cmp <(bytes a "$OFF" "$LEN") "$DIR/payload" || fail "the export reads other bytes after the kill"
	qemu-io -f raw "$(uri a)" -c "write -P 0x6e 0 2M" -c flush -c "read -P 0x6e 0 2M" \
		> "$DIR/qio2.out" 2>&1 || { cat "$DIR/qio2.out"; fail "I/O through the export after the kill"; }
	grep -qi "verification failed" "$DIR/qio2.out" && { cat "$DIR/qio2.out"; fail "after the kill"; }
	log "ok: after the kill the export reads the flushed data back and writes, flushes, reads on"
	nbd_stop a
	;;
*)
	fail "unknown case $CASE"
	;;
esac
log "PASS $CASE"
