#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# /init of the multi-VM initramfs (verbs-tests/multivm.sh builds it from the
# rdma-vm cache; this is ../shared/rdma-vm/init.sh cut down and changed for
# a VM on a network): the host's / over 9p read-only, tmpfs scratch areas,
# a read-write share, then the VM's virtio NIC (eth0, a tap on the test's
# bridge) with its address, Soft-RoCE rxe0 on that NIC, the VM's hostname,
# and the command (/run/rdmavm/cmd.sh) with stdout on ttyS1, stderr on
# ttyS2; its exit status goes to /run/rdmavm/rc, then power off.
# Config (/run/rdmavm/config, written by the host): RDMAVM_IP (CIDR),
# RDMAVM_HOSTNAME, RDMAVM_RW_COUNT / RDMAVM_RW_N (extra 9p shares).

/bin/busybox mkdir -p /bin /sbin /proc /sys /dev /newroot /tmp
/bin/busybox --install -s /bin
export PATH=/bin:/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

log() { echo "multivm-init: $*" > /dev/ttyS0; }
die() {
	log "FATAL: $*"
	sync
	poweroff -f
	sleep 5
}
mp() { modprobe "$@" 2> /dev/ttyS0 || log "modprobe $* failed"; }

echo /sbin/modprobe > /proc/sys/kernel/modprobe 2> /dev/null
[ -e /sbin/modprobe ] || ln -s /bin/modprobe /sbin/modprobe
for m in virtio_pci 9pnet_virtio 9p virtio_net; do mp $m; done

MSIZE=512000
NR=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=$MSIZE hostroot $NR ||
	die "cannot mount 9p hostroot"
mount -t tmpfs -o mode=0755,size=64m tmpfs $NR/run || die "tmpfs /run"
mkdir -p $NR/run/rdmavm
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=$MSIZE xfer $NR/run/rdmavm ||
	die "cannot mount 9p xfer"
X=$NR/run/rdmavm
[ -f $X/config ] || die "no $X/config"
RDMAVM_IP=
RDMAVM_HOSTNAME=vm
RDMAVM_RW_COUNT=0
. $X/config

mount -t tmpfs -o mode=1777,size=50% tmpfs $NR/tmp
mount -t tmpfs -o mode=1777,size=50% tmpfs $NR/var/tmp
mount -t tmpfs -o mode=0700 tmpfs $NR/root
mount -t proc proc $NR/proc
mount -t sysfs sysfs $NR/sys
mount --bind /dev $NR/dev
mkdir -p $NR/dev/pts $NR/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $NR/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $NR/dev/shm
mount -t tmpfs -o mode=0755 tmpfs $NR/var/log 2> /dev/null
mount --bind /lib/modules $NR/lib/modules 2> /dev/null || log "cannot bind /lib/modules"
i=0
while [ $i -lt "$RDMAVM_RW_COUNT" ]; do
	eval "p=\$RDMAVM_RW_$i"
	mkdir -p "$NR$p" 2> /dev/null
	# cache=none: the other VMs write into the same host directory
	mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=$MSIZE rw$i "$NR$p" ||
		log "cannot mount rw$i at $p"
	i=$((i + 1))
done

# ---- the network: eth0 on the bridge, rxe0 on eth0 -------------------------
hostname "$RDMAVM_HOSTNAME"
ip link set lo up
[ -e /sys/class/net/eth0 ] || die "no eth0 (virtio_net not loaded?)"
ip addr add "$RDMAVM_IP" dev eth0 || die "cannot set $RDMAVM_IP on eth0"
ip link set eth0 up
for m in crc32_pclmul crc32_generic crc32c_intel crc32c_generic; do mp $m; done
for m in ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe; do mp $m; done
chroot $NR /usr/bin/rdma link add rxe0 type rxe netdev eth0 2> /dev/ttyS0 ||
	log "rdma link add rxe0 failed"
chroot $NR /usr/bin/rdma link show > /dev/ttyS0 2>&1

stty -F /dev/ttyS1 raw -echo 2> /dev/null
stty -F /dev/ttyS2 raw -echo 2> /dev/null
log "running command"
chroot $NR /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM=dumb LANG=C.UTF-8 /bin/bash /run/rdmavm/cmd.sh \
	< /dev/null > /dev/ttyS1 2> /dev/ttyS2
rc=$?
echo "$rc" > $X/rc
echo "MULTIVM_EXIT_CODE=$rc" > /dev/ttyS0
sync
umount $X 2> /dev/null
poweroff -f
sleep 10
