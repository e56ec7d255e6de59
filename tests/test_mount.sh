#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Functional tests of weft-mount (docs/mount.md): a real cluster (1 weft-mon,
# 3 weft-osd on loopback, pool rbd of size 3), volumes made with 'weft vol',
# the real FUSE module, fio, a loop device and ext4.
#
#   test_mount.sh CASE PORT WEFT_MON WEFT_OSD WEFT WEFT_MOUNT
#   CASE: args | fio | ext4 | lifecycle | postgres | bench | pgbench
#
# args needs no cluster and no privileges. The others need root, /dev/fuse
# and fusermount3 (ext4: loop devices and mkfs.ext4; fio: fio; postgres:
# PostgreSQL's server binaries and a postgres user) and skip (77)
# with a message without them. Every wait is bounded; every process and
# mount this script makes is undone on exit.
set -u
CASE=$1 PORT=$2 MON=$3 OSD=$4 WEFT=$5 MOUNT=$6
HERE=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }

if [ "$CASE" = args ]; then
	T=$(mktemp -d /tmp/weft-mount-args.XXXXXX)
	trap 'rm -rf "$T"' EXIT
	bad() { echo "FAIL: $*"; exit 1; }
	"$MOUNT" --help > "$T/out" 2>&1 || bad "--help exited $?"
	grep -q "^usage: weft-mount -c CONF" "$T/out" || bad "--help prints no usage"
	# bad arguments: exit 2, one line on stderr pointing at --help, nothing on stdout
	while read -r line; do
		# shellcheck disable=SC2086
		"$MOUNT" $line > "$T/out" 2> "$T/err" < /dev/null
		rc=$?
		[ $rc = 2 ] || bad "'weft-mount $line' exited $rc, not 2: $(cat "$T/err")"
		[ "$(wc -l < "$T/err")" = 1 ] || bad "'weft-mount $line': stderr is not one line"
		# a bad -o is libfuse's to name: "fuse: unknown option(s): ..."
		grep -qE "^(weft-mount|fuse): " "$T/err" || bad "'weft-mount $line': no reason on stderr"
		[ -s "$T/out" ] && bad "'weft-mount $line' wrote to stdout"
		echo "ok: 'weft-mount $line' -> 2: $(head -n 1 "$T/err")"
	done <<EOF

rbd
rbd $T extra
-x rbd $T
--threads 0 rbd $T
--threads lots rbd $T
--timeout -5 rbd $T
--name admin rbd $T
-o no_such_fuse_option rbd $T -f
-c
EOF
	# a conf whose monitor does not exist: unreachable within --timeout, exit 1, one clear line
	printf '[global]\n\tmon_host = 127.1.0.1:%d\n\tms_connect_timeout = 1s\n' "$PORT" > "$T/weft.conf"
	mkdir "$T/mnt"
	timeout 120 "$MOUNT" -c "$T/weft.conf" --timeout 3 -f rbd "$T/mnt" > "$T/out" 2>&1
	rc=$?
	[ $rc = 1 ] || bad "unreachable cluster: exit $rc, not 1: $(cat "$T/out")"
	grep -q "cannot reach the cluster" "$T/out" || bad "unreachable cluster: $(cat "$T/out")"
	echo "ok: unreachable cluster -> 1: $(grep 'cannot reach' "$T/out")"
	timeout 120 "$MOUNT" -c "$T/weft.conf" --timeout 3 rbd "$T/no/such/dir" > "$T/out" 2>&1
	rc=$?
	[ $rc = 1 ] || bad "missing mountpoint: exit $rc, not 1: $(cat "$T/out")"
	grep -q "mountpoint $T/no/such/dir: No such file or directory" "$T/out" ||
		bad "missing mountpoint: $(cat "$T/out")"
	echo "ok: missing mountpoint -> 1 (before any network I/O): $(tail -n 1 "$T/out")"
	timeout 120 "$MOUNT" -c "$T/weft.conf" -f rbd "$T/weft.conf" > "$T/out" 2>&1
	[ $? = 1 ] && grep -q "not a directory" "$T/out" || bad "file as mountpoint: $(cat "$T/out")"
	timeout 120 "$MOUNT" -c "$T/nonexistent.conf" -f rbd "$T/mnt" > "$T/out" 2>&1
	[ $? = 1 ] && grep -q "conf $T/nonexistent.conf" "$T/out" || bad "missing conf: $(cat "$T/out")"
	echo "PASS args"
	exit 0
fi

[ "$(id -u)" = 0 ] || skip "needs root (FUSE mounts, loop devices)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 > /dev/null || skip "fusermount3 missing (apt-get install fuse3)"
grep -qw fuse /proc/filesystems || skip "the kernel has no fuse file system"

# Volumes are made with the CLI; until 'weft vol' exists there is nothing to mount
if "$WEFT" vol --help 2>&1 | grep -q "unknown command 'vol'"; then
	skip "this weft has no 'vol' command yet (the volume CLI)"
fi

# The cluster start-up functions (write_conf, cluster_up, wait_for, fail, log, w).
# The stores are preallocated: 1 GiB per OSD holds these volumes (<= 512 MiB).
WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
source "$HERE/test_osd_cluster.sh" "mount-$CASE" tcp "$PORT" "$MON" "$OSD" "$WEFT" /bin/false
CASE=${CASE#mount-} # it sets CASE from its own arguments
MNT=$DIR/mnt
FS=$DIR/fs
LOOP=""
mkdir -p "$MNT" "$FS"

is_mounted() { grep -q " $1 " /proc/mounts; }
# Undo in reverse: the ext4 mount, the loop device, the FUSE mount, then the cluster.
mount_cleanup() {
	is_mounted "$FS" && umount "$FS"
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2> /dev/null
	is_mounted "$MNT" && fusermount3 -u "$MNT" 2> /dev/null
	is_mounted "$MNT" && umount -l "$MNT"
	is_mounted "$DIR/mnt2" && fusermount3 -u "$DIR/mnt2"
	cleanup
}
trap mount_cleanup EXIT

# mount_fg NAME: weft-mount in the foreground (its pid in PIDS[NAME]), waiting until it mounts
mount_fg() {
	"$MOUNT" -c "$CONF" -f rbd "$MNT" "${@:2}" >> "$DIR/$1.log" 2>&1 &
	PIDS[$1]=$!
	wait_for 30 "weft-mount ($1) mounted $MNT" is_mounted "$MNT"
}
# umount_fuse NAME: fusermount3 -u, then the process must exit 0 on its own
umount_fuse() {
	local pid=${PIDS[$1]} rc
	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT"
	wait_for 60 "weft-mount ($1) exited" sh -c "! kill -0 $pid"
	wait "$pid"
	rc=$?
	unset "PIDS[$1]"
	[ $rc = 0 ] || fail "weft-mount ($1) exited $rc after fusermount3 -u"
	is_mounted "$MNT" && fail "$MNT still mounted"
}
vol_create() {
	w vol create "rbd/$1" --size "$2" > "$DIR/vol_create.out" 2>&1 ||
		{ cat "$DIR/vol_create.out"; fail "vol create rbd/$1 --size $2"; }
}

# PostgreSQL helpers (cases postgres and pgbench): a server on a private unix
# socket, its data in $PGDATA_DIR on an ext4 that this script mounted
pg_prepare() {
	PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)
	[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && command -v pgbench > /dev/null ||
		skip "PostgreSQL missing (apt-get install postgresql)"
	id postgres > /dev/null 2>&1 || skip "no postgres user (apt-get install postgresql)"
	command -v mkfs.ext4 > /dev/null || skip "mkfs.ext4 missing (apt-get install e2fsprogs)"
	losetup -f > /dev/null 2>&1 || skip "no free loop device (losetup -f: $(losetup -f 2>&1))"
	PGPORT=$((PORT + 50)) SOCK=$DIR/pgsock PGLOG=$DIR/pglog PGDATA_DIR=$FS/main PG_UP=0
	chmod o+x "$DIR" # postgres must reach its socket and log directories
	mkdir -p "$SOCK" "$PGLOG" && chown postgres: "$SOCK" "$PGLOG"
	# the database must stop before its file system can be unmounted
	trap '[ "$PG_UP" = 1 ] && asp "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m immediate stop > /dev/null 2>&1
		mount_cleanup' EXIT
}
asp() { runuser -u postgres -- "$@"; }
pg_start() {
	asp "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$PGLOG/pg.log" -w -t 180 -o \
		"-c listen_addresses='' -c unix_socket_directories='$SOCK' -p $PGPORT -c shared_buffers=32MB" \
		start > "$DIR/pg_ctl.out" 2>&1 || { cat "$DIR/pg_ctl.out" "$PGLOG/pg.log"; fail "pg_ctl start"; }
	PG_UP=1
}
pg_stop() {
	asp "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -w -t 180 -m "${1:-fast}" stop > "$DIR/pg_ctl.out" 2>&1 ||
		{ cat "$DIR/pg_ctl.out"; fail "pg_ctl stop"; }
	PG_UP=0
}
sql() { asp psql -h "$SOCK" -p "$PGPORT" -d postgres -X -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# pg_fs_up IMAGE: a loop device (O_DIRECT aio) on IMAGE, a fresh ext4 on $FS, initdb, start
pg_fs_up() {
	LOOP=$(losetup --direct-io=on -f --show "$1") || fail "losetup --direct-io=on $1"
	mkfs.ext4 -q -F "$LOOP" > "$DIR/mkfs.out" 2>&1 || { cat "$DIR/mkfs.out"; fail "mkfs.ext4"; }
	mount -o noatime "$LOOP" "$FS" || fail "mount $LOOP"
	chown postgres: "$FS"
	asp "$PGBIN/initdb" -D "$PGDATA_DIR" -A trust > "$DIR/initdb.out" 2>&1 ||
		{ cat "$DIR/initdb.out"; fail "initdb on $1"; }
	pg_start
}
# pg_fs_down: stop PostgreSQL, unmount ext4, detach the loop device
pg_fs_down() {
	pg_stop fast
	# a just-stopped server's last file can still be closing: retry, bounded, and say who holds it
	if ! umount "$FS" 2> /dev/null; then
		log "umount $FS: busy ($(fuser -vm "$FS" 2>&1 | tr -s ' \n' ' ' | head -c 300)), retrying"
		wait_for 30 "umount $FS" umount "$FS"
	fi
	losetup -d "$LOOP" || fail "losetup -d $LOOP"
	LOOP=""
}
# pgbench_run OUT ARGS...: pgbench into OUT; NTX = the processed transaction count
pgbench_run() {
	local out=$1
	shift
	asp pgbench -h "$SOCK" -p "$PGPORT" "$@" postgres > "$out" 2>&1 || { cat "$out"; fail "pgbench $*"; }
	NTX=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	[ "${NTX:-0}" -gt 0 ] || { cat "$out"; fail "pgbench $* processed no transaction"; }
}

cluster_up
log "cluster up (conf $CONF)"
cd "$DIR" || fail "cd $DIR" # fio leaves its verify state files in the working directory

case $CASE in
fio)
	command -v fio > /dev/null || skip "fio missing (apt-get install fio)"
	vol_create fio 512M
	vol_create other 64M
	mount_fg mount1
	ls "$MNT" > "$DIR/ls.out" || fail "ls $MNT"
	[ "$(sort "$DIR/ls.out" | tr '\n' ' ')" = "fio other " ] || fail "ls shows: $(cat "$DIR/ls.out")"
	[ "$(stat -c %s "$MNT/fio")" = $((512 << 20)) ] || fail "size of $MNT/fio: $(stat -c %s "$MNT/fio")"
	log "ok: ls and stat show the volumes and their sizes"
	# the other volume stays zero while fio runs: reads of never-written ranges
	head -c $((64 << 20)) "$MNT/other" | cmp -s - <(head -c $((64 << 20)) /dev/zero) ||
		fail "a fresh volume does not read as zeros"
	# Random writes of mixed sizes, verified with crc32c (verify_fatal: the first bad block fails)
	COMMON=(--filename="$MNT/fio" --verify=crc32c --verify_fatal=1 --do_verify=1
		--randrepeat=1 --group_reporting --output-format=terse --terse-version=3)
	fio --name=psync --ioengine=psync --rw=randwrite --offset=0 --size=32M \
		--bssplit=4k/40:8k/20:64k/20:256k/15:1m/5 "${COMMON[@]}" \
		> "$DIR/fio-psync.out" 2>&1 || { cat "$DIR/fio-psync.out"; fail "fio psync"; }
	log "ok: fio psync randwrite bssplit 4k-1m, 32 MiB, verify=crc32c"
	fio --name=libaio --ioengine=libaio --direct=1 --iodepth=32 --rw=randwrite \
		--offset=64M --size=64M --bssplit=4k/50:16k/20:64k/15:512k/10:1m/5 "${COMMON[@]}" \
		> "$DIR/fio-libaio.out" 2>&1 || { cat "$DIR/fio-libaio.out"; fail "fio libaio"; }
	log "ok: fio libaio iodepth 32 randwrite bssplit 4k-1m, 64 MiB, verify=crc32c"
	# unaligned offsets and lengths (no O_DIRECT: FUSE direct_io takes any byte range)
	fio --name=unaligned --ioengine=psync --rw=randwrite --offset=200M --size=8M \
		--bsrange=512-96k --bs_unaligned=1 "${COMMON[@]}" \
		> "$DIR/fio-unaligned.out" 2>&1 || { cat "$DIR/fio-unaligned.out"; fail "fio unaligned"; }
	log "ok: fio psync unaligned 512 B-96 KiB randwrite, 8 MiB, verify=crc32c"
	head -c $((64 << 20)) "$MNT/other" | cmp -s - <(head -c $((64 << 20)) /dev/zero) ||
		fail "writes to one volume changed another"
	umount_fuse mount1
	# A new weft-mount process must read back what the first one wrote: the
	# data is in the cluster, not in any cache of the first daemon.
	mount_fg mount2
	fio --name=libaio --ioengine=libaio --direct=1 --iodepth=32 --rw=randwrite \
		--offset=64M --size=64M --bssplit=4k/50:16k/20:64k/15:512k/10:1m/5 "${COMMON[@]}" \
		--verify_only=1 > "$DIR/fio-reverify.out" 2>&1 ||
		{ cat "$DIR/fio-reverify.out"; fail "fio verify_only after remount"; }
	log "ok: a second weft-mount process verifies the libaio job's data (verify_only)"
	# a write past the end of the volume is ENOSPC, as on a block device
	dd if=/dev/zero of="$MNT/other" bs=4k count=1 seek=$((64 << 8)) conv=notrunc \
		2> "$DIR/dd.err" && fail "a write past the end succeeded"
	grep -q "No space left" "$DIR/dd.err" || fail "write past the end: $(cat "$DIR/dd.err")"
	umount_fuse mount2
	;;
ext4)
	command -v mkfs.ext4 > /dev/null || skip "mkfs.ext4 missing (apt-get install e2fsprogs)"
	command -v losetup > /dev/null || skip "losetup missing (apt-get install mount)"
	losetup -f > /dev/null 2>&1 || skip "no free loop device (losetup -f: $(losetup -f 2>&1))"
	vol_create pg 512M
	mount_fg mount1
	LOOP=$(losetup -f --show "$MNT/pg") || fail "losetup on $MNT/pg"
	log "ok: $LOOP backed by $MNT/pg"
	# mkfs discards the whole device first: loop -> fallocate(PUNCH_HOLE) -> volume discard
	mkfs.ext4 -q -F "$LOOP" > "$DIR/mkfs.out" 2>&1 || { cat "$DIR/mkfs.out"; fail "mkfs.ext4"; }
	mount "$LOOP" "$FS" || fail "mount $LOOP"
	# a tree: 8 directories x 25 files of 1 B..512 KiB random bytes, a few big ones
	for d in $(seq 1 8); do
		mkdir -p "$FS/d$d/sub"
		for f in $(seq 1 25); do
			head -c $(((RANDOM * 17 + d * f) % 524288 + 1)) /dev/urandom > "$FS/d$d/f$f" ||
				fail "write $FS/d$d/f$f"
		done
		head -c $((4 << 20)) /dev/urandom > "$FS/d$d/sub/big" || fail "write big file"
	done
	(cd "$FS" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$DIR/sums"
	N=$(wc -l < "$DIR/sums")
	# discards of freed blocks between live ones: the checksums below prove they hit nothing else
	head -c $((16 << 20)) /dev/urandom > "$FS/junk" && sync && rm "$FS/junk" || fail "junk file"
	if command -v fstrim > /dev/null; then
		fstrim -v "$FS" > "$DIR/fstrim.out" 2>&1 || fail "fstrim: $(cat "$DIR/fstrim.out")"
		log "ok: $(cat "$DIR/fstrim.out")"
	fi
	sync
	umount "$FS" || fail "umount $FS"
	losetup -d "$LOOP" || fail "losetup -d $LOOP"
	LOOP=""
	umount_fuse mount1
	log "ok: wrote $N files, sync, unmounted ext4, loop and FUSE"
	mount_fg mount2
	# this time as docs/mount.md advises for databases: the loop device submits O_DIRECT aio
	LOOP=$(losetup --direct-io=on -f --show "$MNT/pg") || fail "losetup --direct-io=on"
	e2fsck -f -n "$LOOP" > "$DIR/fsck.out" 2>&1 || { cat "$DIR/fsck.out"; fail "e2fsck after remount"; }
	mount "$LOOP" "$FS" || fail "mount $LOOP again"
	(cd "$FS" && sha256sum --quiet -c "$DIR/sums") > "$DIR/check.out" 2>&1 ||
		{ head -20 "$DIR/check.out"; fail "checksums differ after remount"; }
	log "ok: new weft-mount process: e2fsck clean, all $N sha256sums match"
	umount "$FS" || fail "umount $FS"
	losetup -d "$LOOP" || fail "losetup -d"
	LOOP=""
	umount_fuse mount2
	;;
postgres) # docs/mount.md's recipe: PostgreSQL on ext4 on a loop device on a volume
	pg_prepare
	vol_create pg 1G
	mount_fg mount1
	pg_fs_up "$MNT/pg"
	log "ok: initdb and PostgreSQL started on ext4 on $LOOP on $MNT/pg"
	asp pgbench -h "$SOCK" -p "$PGPORT" -i -s 4 -q postgres > "$DIR/pgbench-i.out" 2>&1 ||
		{ cat "$DIR/pgbench-i.out"; fail "pgbench -i"; }
	pgbench_run "$DIR/pgbench.out" -n -c 4 -j 2 -T 15
	log "ok: pgbench -c 4 -T 15: $NTX transactions, $(grep '^tps' "$DIR/pgbench.out" | head -n 1)"
	# TPC-B's invariants: every transaction added one history row and moved
	# the same delta into an account, a teller and a branch
	INV="select (select count(*) from pgbench_accounts) || ' ' || (select count(*) from pgbench_history)
		|| ' ' || (select sum(abalance) from pgbench_accounts) || ' ' ||
		coalesce((select sum(delta) from pgbench_history), 0) || ' ' ||
		(select sum(tbalance) from pgbench_tellers) || ' ' || (select sum(bbalance) from pgbench_branches)"
	check_inv() { # INV_OUT = accounts, history rows, sum of balances
		local a h ab d tb bb
		read -r a h ab d tb bb < <(sql "$INV") || fail "invariant query"
		[ "$a" = 400000 ] && [ "$h" = "$NTX" ] && [ "$ab" = "$d" ] && [ "$tb" = "$d" ] &&
			[ "$bb" = "$d" ] || fail "$1: accounts $a, history $h (want $NTX), balances $ab/$tb/$bb vs deltas $d"
		INV_OUT="$a $h $ab"
	}
	check_inv "after pgbench"
	BEFORE=$INV_OUT
	sql "create extension if not exists amcheck" > /dev/null || fail "create extension amcheck"
	pg_fs_down
	umount_fuse mount1
	log "ok: TPC-B invariants hold ($BEFORE); PostgreSQL, ext4, loop and FUSE stopped"
	# a new weft-mount process: everything PostgreSQL fsynced is in the cluster
	mount_fg mount2
	LOOP=$(losetup --direct-io=on -f --show "$MNT/pg") || fail "losetup again"
	e2fsck -f -n "$LOOP" > "$DIR/fsck.out" 2>&1 || { cat "$DIR/fsck.out"; fail "e2fsck"; }
	mount -o noatime "$LOOP" "$FS" || fail "mount $LOOP again"
	pg_start
	check_inv "after remount"
	[ "$INV_OUT" = "$BEFORE" ] || fail "after remount: $INV_OUT, before: $BEFORE"
	sql "select bt_index_check('pgbench_accounts_pkey', true)" > /dev/null ||
		fail "amcheck: pgbench_accounts_pkey"
	log "ok: new weft-mount: e2fsck clean, same rows and balances, amcheck of the accounts index clean"
	pg_fs_down
	umount_fuse mount2
	;;
pgbench) # not in ctest: PostgreSQL on a volume vs. on a local file (docs/performance.md)
	pg_prepare
	SECS=${BENCH_SECONDS:-30} SCALE=${PGBENCH_SCALE:-10} CLIENTS=${PGBENCH_CLIENTS:-8}
	# -l: one line per transaction (its latency in us, 3rd field), for the p99
	mkdir -p "$DIR/pglat" && chown postgres: "$DIR/pglat"
	PGB_ARGS=(-n -c "$CLIENTS" -j 2 -T "$SECS" -l)
	# p99 NAME: the 99th percentile latency (ms) of the run logged as NAME
	p99() {
		cat "$DIR/pglat/$1".* | awk '{ print $3 }' | sort -n |
			awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.1f", v[i] / 1000 }'
	}
	log "load $(cut -d' ' -f1-3 /proc/loadavg)"
	# the raw limit, same run, same disk: ext4 on a loop device on a local file
	truncate -s 2G "$DIR/local.img" || fail "truncate $DIR/local.img"
	pg_fs_up "$DIR/local.img"
	asp pgbench -h "$SOCK" -p "$PGPORT" -i -s "$SCALE" -q postgres > "$DIR/i.out" 2>&1 || fail "pgbench -i"
	pgbench_run "$DIR/local.out" "${PGB_ARGS[@]}" --log-prefix="$DIR/pglat/local"
	pg_fs_down
	rm -f "$DIR/local.img"
	vol_create pg 2G
	mount_fg bench
	pg_fs_up "$MNT/pg"
	asp pgbench -h "$SOCK" -p "$PGPORT" -i -s "$SCALE" -q postgres > "$DIR/i.out" 2>&1 || fail "pgbench -i"
	pgbench_run "$DIR/weft.out" "${PGB_ARGS[@]}" --log-prefix="$DIR/pglat/weft"
	pg_fs_down
	umount_fuse bench
	tps() { sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$1" | head -n 1; }
	lat() { sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$1" | head -n 1; }
	echo "pgbench TPC-B scale $SCALE, $CLIENTS clients, $SECS s (loop device --direct-io=on, ext4):"
	echo "  local file:  $(tps "$DIR/local.out") tps, latency avg $(lat "$DIR/local.out") ms," \
		"p99 $(p99 local) ms"
	echo "  weft volume: $(tps "$DIR/weft.out") tps, latency avg $(lat "$DIR/weft.out") ms," \
		"p99 $(p99 weft) ms" \
		"(pool size 3, the 3 OSDs on the same disk)"
	awk -v w="$(tps "$DIR/weft.out")" -v l="$(tps "$DIR/local.out")" \
		'BEGIN { printf "  ratio: %.2f of the local file\n", w / l }'
	log "load $(cut -d' ' -f1-3 /proc/loadavg)"
	;;
lifecycle)
	vol_create a 64M
	# detached (no -f): exits 0 once mounted; fusermount3 -u ends the daemon
	"$MOUNT" -c "$CONF" rbd "$MNT" > "$DIR/daemon.out" 2>&1 || fail "weft-mount (detached): $(cat "$DIR/daemon.out")"
	is_mounted "$MNT" || fail "weft-mount returned 0 but $MNT is not mounted"
	DPID=$(pgrep -f -x "$MOUNT -c $CONF rbd $MNT") || fail "no detached weft-mount process"
	echo hello | dd of="$MNT/a" conv=notrunc status=none || fail "write through the detached mount"
	fusermount3 -u "$MNT" || fail "fusermount3 -u"
	wait_for 60 "the detached weft-mount exited" sh -c "! kill -0 $DPID"
	is_mounted "$MNT" && fail "stale mount after fusermount3 -u"
	ls "$MNT" > /dev/null || fail "$MNT unusable after unmount"
	log "ok: detached mount, fusermount3 -u: the daemon exits, no stale mount"
	# SIGTERM with I/O in flight: a clean unmount, exit 0, the writer sees an error
	mount_fg term
	PT=${PIDS[term]}
	dd if=/dev/zero of="$MNT/a" bs=64k count=100000 conv=notrunc status=none 2> "$DIR/dd.err" &
	DD=$!
	sleep 1
	kill -TERM "$PT"
	wait_for 60 "weft-mount exited on SIGTERM" sh -c "! kill -0 $PT"
	wait "$PT"
	rc=$?
	unset "PIDS[term]"
	[ $rc = 0 ] || fail "weft-mount exited $rc on SIGTERM: $(tail -n 5 "$DIR/term.log")"
	wait $DD
	is_mounted "$MNT" && fail "stale mount after SIGTERM"
	ls "$MNT" > /dev/null || fail "$MNT unusable after SIGTERM"
	grep -q "signal 15: unmounting" "$DIR/term.log" || fail "no unmount log line"
	log "ok: SIGTERM during writes: exit 0, no stale mount"
	# SIGINT, on a detached daemon (a job started with & by a script ignores SIGINT, as
	# POSIX shells arrange for background jobs, and libfuse leaves ignored signals alone)
	"$MOUNT" -c "$CONF" rbd "$MNT" > "$DIR/daemon2.out" 2>&1 || fail "weft-mount (detached, 2)"
	DPID=$(pgrep -f -x "$MOUNT -c $CONF rbd $MNT") || fail "no detached weft-mount process"
	kill -INT "$DPID"
	wait_for 60 "weft-mount exited on SIGINT" sh -c "! kill -0 $DPID"
	is_mounted "$MNT" && fail "stale mount after SIGINT"
	# a pool that does not exist: exit 1, a clear line, nothing mounted
	"$MOUNT" -c "$CONF" -f nosuchpool "$MNT" > "$DIR/nopool.out" 2>&1
	rc=$?
	[ $rc = 1 ] || fail "missing pool: exit $rc"
	grep -q "pool 'nosuchpool': no such pool" "$DIR/nopool.out" || fail "missing pool: $(cat "$DIR/nopool.out")"
	is_mounted "$MNT" && fail "mounted despite a missing pool"
	log "ok: missing pool -> 1: $(grep nosuchpool "$DIR/nopool.out")"
	# volumes made after the mount appear; size changes: grow yes, shrink no
	mount_fg meta
	vol_create late 32M
	sleep 1.5 # the kernel caches directory entries for 1 s
	ls "$MNT" | grep -qx late || fail "a volume created after mounting is not listed: $(ls "$MNT")"
	truncate -s 16M "$MNT/late" 2> "$DIR/shrink.err" && fail "truncate shrank a volume"
	grep -q "Operation not permitted" "$DIR/shrink.err" || fail "shrink: $(cat "$DIR/shrink.err")"
	truncate -s 48M "$MNT/late" || fail "truncate could not grow a volume"
	[ "$(stat -c %s "$MNT/late")" = $((48 << 20)) ] || fail "grown size: $(stat -c %s "$MNT/late")"
	touch "$MNT/newfile" 2> /dev/null && fail "created a file in the mount"
	rm "$MNT/late" 2> /dev/null && fail "removed a volume through the mount"
	log "ok: late volume listed, grow by truncate works, shrink/create/unlink refused"
	# one writer per volume across mounts: a second weft-mount (another "host") may read a
	# volume the first has open for writing, not write it, until the first closes it
	MNT2=$DIR/mnt2
	mkdir -p "$MNT2"
	(umask 077 && w auth get-or-create client.other mon 'profile mount' osd 'profile mount' \
		> "$DIR/other.keyring") || fail "weft auth get-or-create client.other"
	"$MOUNT" -c "$CONF" --name client.other -k "$DIR/other.keyring" rbd "$MNT2" > "$DIR/other.out" 2>&1 ||
		{ cat "$DIR/other.out"; fail "second mount"; }
	exec 3<> "$MNT/a" || fail "open $MNT/a read-write"
	echo second | dd of="$MNT2/a" conv=notrunc status=none 2> "$DIR/busy.err" &&
		fail "two mounts opened rbd/a for writing at once"
	grep -q "Device or resource busy" "$DIR/busy.err" || fail "second writer: $(cat "$DIR/busy.err")"
	head -c 4096 "$MNT2/a" > /dev/null || fail "read-only open while another mount writes"
	exec 3>&-
	# the kernel sends FUSE's RELEASE after close() has returned: the unlock follows shortly
	write_second() { echo second | dd of="$MNT2/a" conv=notrunc status=none; }
	wait_for 20 "a write by the second mount after the first closed" write_second
	[ "$(head -c 7 "$MNT/a")" = second ] || fail "the first mount does not read the second's write"
	fusermount3 -u "$MNT2" || fail "fusermount3 -u $MNT2"
	log "ok: exclusive open: EBUSY for a second writer, reads allowed, released on close"
	umount_fuse meta
	;;
bench) # not in ctest: the numbers of docs/mount.md (Release binaries; WEFT_TEST_OSD_DATA_SIZE=4G)
	command -v fio > /dev/null || skip "fio missing"
	SECS=${BENCH_SECONDS:-20}
	vol_create bench 1G
	vol_create native 1G
	mount_fg bench
	log "load $(cut -d' ' -f1-3 /proc/loadavg)"
	B=(--filename="$MNT/bench" --ioengine=libaio --direct=1 --group_reporting
		--output-format=json)
	summary() { # JOB.json: one line with IOPS, MB/s and completion latency percentiles
		jq -r '.jobs[0] | (if .write.io_bytes > 0 then .write else .read end) as $d |
			"\(.jobname): \($d.iops | floor) IOPS, \($d.bw_bytes / 1048576 | floor) MiB/s, " +
			"clat p50 \($d.clat_ns.percentile["50.000000"] / 1000 | floor) us, " +
			"p99 \($d.clat_ns.percentile["99.000000"] / 1000 | floor) us, " +
			"p99.9 \($d.clat_ns.percentile["99.900000"] / 1000 | floor) us"' "$1"
	}
	# Each fio run is followed at once by the same load through libweft alone (weft vol
	# bench on another volume of the same cluster, no FUSE): this box's load moves a lot.
	vb() { "$WEFT" vol bench rbd/native "$@" -c "$CONF" --timeout 60 | grep -E "^(elapsed|latency)"; }
	# The 4 MiB sequential writes also fill the volumes, so the reads below hit data.
	# 4 in flight: FUSE splits each into four 1 MiB requests to one object, which its
	# PG orders; at 16 an overloaded 2-core box pushes some past osd_op_timeout.
	fio --name=seqwrite-4m-qd4 --rw=write --bs=4m --iodepth=4 --size=1G "${B[@]}" \
		> "$DIR/seq.json" || fail "bench seqwrite"
	summary "$DIR/seq.json"
	vb --io-type write --io-size 4M --io-threads 4 --io-total 1G --io-pattern seq ||
		fail "vol bench seq"
	fio --name=randwrite-4k-qd32 --rw=randwrite --bs=4k --iodepth=32 --size=1G \
		--time_based --runtime="$SECS" "${B[@]}" > "$DIR/rw.json" || fail "bench randwrite"
	summary "$DIR/rw.json"
	vb --io-type write --io-size 4K --io-threads 32 --io-total 32M --io-pattern rand ||
		fail "vol bench randwrite"
	fio --name=randread-4k-qd32 --rw=randread --bs=4k --iodepth=32 --size=1G \
		--time_based --runtime="$SECS" "${B[@]}" > "$DIR/rr.json" || fail "bench randread"
	summary "$DIR/rr.json"
	vb --io-type read --io-size 4K --io-threads 32 --io-total 256M --io-pattern rand ||
		fail "vol bench randread"
	grep "zero-copy chunks" "$DIR/bench.log"
	# CPU the daemon used over the three fio runs (utime + stime of all its threads)
	awk -v hz="$(getconf CLK_TCK)" '{ printf "weft-mount CPU: %.1f s user, %.1f s system\n", $14 / hz, $15 / hz }' \
		"/proc/${PIDS[bench]}/stat"
	umount_fuse bench
	log "load $(cut -d' ' -f1-3 /proc/loadavg)"
	;;
*) fail "unknown case $CASE" ;;
esac
log "PASS $CASE"
exit 0
