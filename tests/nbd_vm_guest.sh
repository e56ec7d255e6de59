#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The guest half of tests/test_nbd_vm.sh, run inside the VM as root: its
# virtio disk /dev/vda is a Weft volume (qemu's NBD client -> nbdkit ->
# libweft). ext4 on it, files written with fsync, verified after the host
# has killed an OSD, then e2fsck. Lines starting "GUEST:" are read by the
# host; /run/rdmavm (the xfer share) is where the host says it has killed.
set -u
X=/run/rdmavm
M=/tmp/vol
say() { echo "GUEST: $*"; }
die() { say "FAIL: $*"; exit 1; }
start=$(date +%s)

# the modules the initramfs lacks, in dependency order (some may be loaded or built in)
for ko in "$X"/modules/*.ko; do
	out=$(insmod "$ko" 2>&1) || case "$out" in
	*"File exists"* | *"No such device"*) ;; # loaded already / not for this CPU (crc32c-intel)
	*) die "insmod $(basename "$ko"): $out" ;;
	esac
done
for _ in $(seq 100); do [ -b /dev/vda ] && break; sleep 0.1; done
[ -b /dev/vda ] || die "no /dev/vda"
say "disk /dev/vda: $(blockdev --getsize64 /dev/vda) bytes, serial $(cat /sys/block/vda/serial 2> /dev/null)"
# mkfs discards the whole disk first: NBD trim -> the volume drops its objects
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/vda || die "mkfs.ext4"
mkdir -p "$M" && mount /dev/vda "$M" || die "mount"
n=0
# write_file N SIZE: random bytes, fsync'd (dd conv=fsync: a flush reaches the volume)
write_file() {
	head -c "$2" /dev/urandom > "/tmp/f$1" &&
		dd if="/tmp/f$1" of="$M/d$(($1 % 4))/f$1" bs=64k conv=fsync status=none || die "write f$1"
	(cd "$M" && sha256sum "d$(($1 % 4))/f$1") >> "$X/sums"
	rm -f "/tmp/f$1"
	n=$((n + 1))
}
mkdir -p "$M/d0" "$M/d1" "$M/d2" "$M/d3"
: > "$X/sums"
for i in $(seq 1 12); do write_file "$i" $(((i * 37 % 16 + 1) * 16384)); done
sync
say "phase 1 synced: $n files after $(($(date +%s) - start)) s"
# phase 2: keep writing and fsyncing through the kill, and for 8 files after it
i=100 after=0
while [ $after -lt 8 ]; do
	write_file "$i" $(((i * 53 % 16 + 1) * 8192))
	i=$((i + 1))
	[ -e "$X/killed" ] && after=$((after + 1))
	[ $i -gt 400 ] && die "the host never said it killed an OSD"
done
sync
say "phase 2 done: $n files after $(($(date +%s) - start)) s"
echo 3 > /proc/sys/vm/drop_caches
(cd "$M" && sha256sum --quiet -c "$X/sums") || die "checksums differ (page cache dropped)"
umount "$M" || die "umount"
e2fsck -f -n /dev/vda > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "e2fsck -f -n"; }
mount -o ro /dev/vda "$M" || die "mount again"
(cd "$M" && sha256sum --quiet -c "$X/sums") || die "checksums differ after remount"
umount "$M"
say "verified: $n files, e2fsck clean, after $(($(date +%s) - start)) s"
