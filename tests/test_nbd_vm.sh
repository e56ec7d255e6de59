#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A qemu VM with a second disk on a Weft volume (docs/vm.md): the host runs
# a cluster (1 weft-mon, 3 weft-osd, pool rbd of size 3) and nbdkit with the
# weft plugin on a unix socket; qemu's own NBD client attaches the export as
# a virtio-blk disk (cache=none, so the guest's flushes reach the volume).
# Inside, tests/nbd_vm_guest.sh makes ext4 on it, writes and fsyncs files,
# and verifies them; meanwhile this script kill -9's one OSD. The guest's
# workload must finish without an error and verify, and the host then
# checks the file system once more from the volume itself.
#
#   test_nbd_vm.sh PORT WEFT_MON WEFT_OSD WEFT PLUGIN
#
# The VM is the rdma-vm harness's (../shared/rdma-vm, README.md there):
# Debian's stock kernel with its initramfs and the host's / over 9p. This
# script boots qemu itself, with the harness's /init protocol (the xfer
# share's config and cmd.sh, the rc file) plus the -drive; the guest loads
# virtio_blk and ext4 (which the initramfs lacks) from the xfer share, taken
# from the kernel package the harness's setup.sh unpacked.
# TCG when there is no usable KVM: the guest's work is kept small.
# Skips (77) without the harness, qemu or nbdkit. Env: WEFT_RDMA_VM,
# RDMAVM_CACHE, WEFT_VM_MEM (1G), WEFT_VM_TIMEOUT (600 s for the boot).
set -u
PORT=$1 MON=$2 OSD=$3 WEFT=$4 PLUGIN=$5
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)

skip() { echo "SKIP: $*"; exit 77; }
command -v nbdkit > /dev/null || skip "nbdkit missing (apt-get install nbdkit)"
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 missing (scripts/install-deps.sh)"
command -v qemu-img > /dev/null || skip "qemu-img missing (apt-get install qemu-utils)"
VM=""
for c in "${WEFT_RDMA_VM:-}" "$TOP/../shared/rdma-vm" /work/shared/rdma-vm; do
	if [ -n "$c" ] && [ -x "$c/setup.sh" ] && [ -f "$c/init.sh" ]; then
		VM=$(cd "$c" && pwd)
		break
	fi
done
[ -n "$VM" ] || skip "the rdma-vm harness is not here (../shared/rdma-vm beside the checkout, or WEFT_RDMA_VM)"
# The guest sees the host's / read-only with its own tmpfs on /tmp, /var/tmp,
# /root, /run and /dev/shm: a checkout there (a clone under /tmp) is shared
# read-write at the same path (the harness's rw0) instead.
RW_CONF='RDMAVM_RW_COUNT=0\n' RW_FS=()
case "$TOP/" in
/tmp/* | /var/tmp/* | /root/* | /run/* | /dev/shm/*)
	RW_CONF="RDMAVM_RW_COUNT=1\nRDMAVM_RW_0=$TOP\n"
	RW_FS=(-virtfs "local,path=$TOP,mount_tag=rw0,security_model=none") ;;
esac

# shellcheck source=tests/nbd_lib.sh
. "$HERE/nbd_lib.sh"

# ---- the harness's kernel and initramfs (built by its setup.sh when missing)
CACHE=${RDMAVM_CACHE:-/var/tmp/rdma-vm-cache}
mkdir -p "$(dirname "$CACHE")"
(
	flock -w 1200 9 || { echo "FAIL: VM setup lock timed out"; exit 1; }
	if [ ! -s "$CACHE/vmlinuz" ] || [ ! -s "$CACHE/initrd.img" ] || [ ! -s "$CACHE/KVER" ]; then
		echo "no VM cache in $CACHE: running $VM/setup.sh --no-siw (downloads a kernel)"
		"$VM/setup.sh" --no-siw || { echo "FAIL: setup.sh"; exit 1; }
	fi
) 9> "$(dirname "$CACHE")/.weft-rdma-vm-setup.lock" || exit 1
KVER=$(cat "$CACHE/KVER")
KROOT=$CACHE/work-$KVER/kroot
[ -d "$KROOT/lib/modules/$KVER" ] ||
	{ echo "FAIL: $KROOT has no modules (rerun $VM/setup.sh --force --no-siw)"; exit 1; }

# ---- the cluster and the export
WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
WEFT_TEST_WATCHDOG=840
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
source "$HERE/test_osd_cluster.sh" nbd-vm tcp "$PORT" "$MON" "$OSD" "$WEFT" /bin/false
X=$DIR/xfer
QPID=""
vm_cleanup() {
	[ -n "$QPID" ] && kill -9 "$QPID" 2> /dev/null
	[ -n "${PIDS[nbdkit]:-}" ] && kill -TERM "${PIDS[nbdkit]}" 2> /dev/null
	cleanup
}
trap vm_cleanup EXIT
cluster_up
log "cluster up (conf $CONF)"
w vol create rbd/vmdisk --size 256M > "$DIR/vol.out" 2>&1 || { cat "$DIR/vol.out"; fail "vol create"; }
SOCK=$DIR/nbd.sock
"${NBDKIT_ENV[@]}" nbdkit -f -U "$SOCK" "$PLUGIN" pool=rbd volume=vmdisk conf="$CONF" \
	>> "$DIR/nbdkit.log" 2>&1 &
PIDS[nbdkit]=$!
wait_for 60 "nbdkit serves rbd/vmdisk" nbdinfo --size "nbd+unix:///?socket=$SOCK"
log "nbdkit serves rbd/vmdisk on $SOCK"

# ---- the VM: the harness's /init protocol (config + cmd.sh in the xfer share, rc back)
# The initramfs has no block or ext4 modules and the guest's chroot sees none
# (the host root has no /lib/modules for this kernel): the guest insmods them
# from the xfer share, in modprobe's dependency order, decompressed here.
mkdir -p "$X/modules"
for m in virtio_blk ext4; do
	modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' > "$DIR/modules.list"
n=0
while read -r f; do
	n=$((n + 1))
	base=$(printf '%02d-%s' $n "$(basename "${f%.xz}")")
	base=${base%.zst}
	case "$f" in
	*.xz) xz -dc "$f" > "$X/modules/$base" ;;
	*.zst) zstd -dcq "$f" > "$X/modules/$base" ;;
	*) cp "$f" "$X/modules/$base" ;;
	esac || fail "module $f"
done < "$DIR/modules.list"
[ $n -gt 0 ] || fail "no modules for virtio_blk and ext4 in $KROOT"
printf "RDMAVM_MODE=none\nRDMAVM_NETDEV=dummy0\nRDMAVM_IP=198.18.0.1/24\n$RW_CONF" > "$X/config"
printf 'cd %q || exit 125\nexec /bin/bash %q\n' "$HERE" "$HERE/nbd_vm_guest.sh" > "$X/cmd.sh"
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	ACCEL=(-enable-kvm -cpu host)
else
	ACCEL=(-accel tcg,thread=multi -cpu max)
fi
T_BOOT=$(date +%s)
timeout -k 5 "${WEFT_VM_TIMEOUT:-600}" qemu-system-x86_64 "${ACCEL[@]}" \
	-machine q35 -m "${WEFT_VM_MEM:-1G}" -smp 2 \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$CACHE/vmlinuz" -initrd "$CACHE/initrd.img" \
	-append "console=ttyS0 quiet loglevel=4 panic=-1 oops=panic rdinit=/init" \
	-chardev file,id=con,path="$DIR/console.log" -serial chardev:con \
	-chardev file,id=out,path="$DIR/guest.out" -serial chardev:out \
	-chardev file,id=err,path="$DIR/guest.err" -serial chardev:err \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$X",mount_tag=xfer,security_model=none "${RW_FS[@]}" \
	-drive "file=nbd+unix:///?socket=$SOCK,format=raw,if=none,id=weft,cache=none,discard=unmap" \
	-device virtio-blk-pci,drive=weft,serial=weft-vmdisk \
	-device virtio-rng-pci < /dev/null > "$DIR/qemu.log" 2>&1 &
QPID=$!
log "qemu started (${ACCEL[*]})"

guest_said() { grep -q "$1" "$DIR/guest.out" 2> /dev/null; }
# the kill comes once the guest has a synced file system and is writing more
VICTIM=1
while kill -0 "$QPID" 2> /dev/null && ! guest_said "GUEST: phase 1 synced"; do sleep 0.5; done
guest_said "GUEST: phase 1 synced" || { cat "$DIR/guest.out" "$DIR/guest.err"; tail -30 "$DIR/console.log"; fail "the guest never reached phase 1"; }
log "guest: $(grep 'GUEST: phase 1' "$DIR/guest.out") after $(($(date +%s) - T_BOOT)) s"
sleep 2
stop_osd "$VICTIM" KILL
log "kill -9 osd.$VICTIM while the guest writes and fsyncs"
touch "$X/killed" # the guest writes on for a while after it sees this
wait "$QPID"
QRC=$?
QPID=""
log "qemu exited $QRC after $(($(date +%s) - T_BOOT)) s"
sed 's/^/  guest| /' "$DIR/guest.out"
[ -s "$DIR/guest.err" ] && sed 's/^/  guest stderr| /' "$DIR/guest.err"
[ $QRC = 124 ] || [ $QRC = 137 ] && { tail -30 "$DIR/console.log"; fail "the VM timed out"; }
[ -f "$X/rc" ] || { tail -40 "$DIR/console.log"; cat "$DIR/qemu.log"; fail "the VM ended without the guest's exit status"; }
[ "$(cat "$X/rc")" = 0 ] || fail "the guest's workload failed (exit $(cat "$X/rc"))"
guest_said "GUEST: verified" || fail "the guest did not verify its files"
grep -q "Buffer I/O error\|EXT4-fs error\|I/O error" "$DIR/console.log" &&
	{ grep "I/O error\|EXT4-fs error" "$DIR/console.log" | head; fail "the guest kernel logged I/O errors"; }
log "ok: the guest's workload wrote, fsynced and verified across the kill of osd.$VICTIM"

# the host reads the volume itself: the file system the guest left is clean
qemu-img convert -f raw -O raw "nbd+unix:///?socket=$SOCK" "$DIR/disk.img" > "$DIR/convert.out" 2>&1 ||
	{ cat "$DIR/convert.out"; fail "qemu-img convert of the volume"; }
e2fsck -f -n "$DIR/disk.img" > "$DIR/fsck.out" 2>&1 || { cat "$DIR/fsck.out"; fail "e2fsck of the volume"; }
N=$(grep -c . "$X/sums" 2> /dev/null || echo 0)
log "ok: host e2fsck -f -n of the volume: clean; $(tail -n 1 "$DIR/fsck.out")"
kill -TERM "${PIDS[nbdkit]}"
nbdkit_wait "${PIDS[nbdkit]}" "$DIR/nbdkit.log" "nbd INFO: rbd/vmdisk closed, lock released" 90 ||
	fail "nbdkit still runs 90 s after SIGTERM"
unset "PIDS[nbdkit]"
[ "$NBDKIT_RC" = 0 ] || [ "$NBDKIT_RC" = hung ] || fail "nbdkit exited $NBDKIT_RC after SIGTERM"
grep -q "nbd INFO: rbd/vmdisk closed, lock released" "$DIR/nbdkit.log" || fail "nbdkit did not close the volume"
[ "$(w vol lock ls rbd/vmdisk | head -n 1)" = "(free)" ] || fail "the lock is still held"
log "PASS vm ($N files; nbdkit closed the volume and $([ "$NBDKIT_RC" = hung ] && echo "hung in exit() (sanitizer build), killed" || echo "exited 0"), lock free)"
