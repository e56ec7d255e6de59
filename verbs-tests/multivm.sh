#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The three-VM verbs cluster (issue 19, docs/deploy.md "CI"): three qemu VMs
# joined by a virtual Ethernet, each with Soft-RoCE (rxe0 on its eth0), a
# mon and one OSD per VM over ms_type = verbs, and the client in the first:
# the first run of Weft's RDMA between machines (rdma_cm address and route
# resolution across hosts, GIDs of a real netdev, the path MTU of a 1500-byte
# Ethernet).
#
#   verbs-tests/multivm.sh BUILD_DIR PORT
#
# The network: a network namespace this script creates holds a bridge and
# three tap devices; each qemu runs in that namespace with its NIC on one
# tap (198.19.30.11-13/24). Nothing leaves the namespace. The VMs boot
# Debian's stock kernel from the rdma-vm cache (../shared/rdma-vm, setup.sh
# builds it) with this script's own initramfs: the cache's, plus virtio_net
# and verbs-tests/multivm-init.sh as /init. They see the host's / read-only
# (a checkout or build under /tmp is shared read-write) and share one read-write directory
# (the conf, the daemons' logs, the guests' progress files).
# Each VM runs verbs-tests/multivm-guest.sh with its index.
#
# Needs root (network namespaces, tap devices) and qemu; skips (77) without
# them, or without the harness. Env: WEFT_RDMA_VM, RDMAVM_CACHE,
# WEFT_MULTIVM_MEM (per VM, default 2G), WEFT_MULTIVM_TIMEOUT (900 s),
# WEFT_MULTIVM_OBJECTS (objects of the I/O case, default 40),
# WEFT_MULTIVM_KEEP=1 (keep the temp dir: logs, consoles).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=${1:-} PORT=${2:-}
[ -n "$BUILD" ] && [ -n "$PORT" ] || { echo "usage: $0 BUILD_DIR PORT" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd) || exit 2
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
skip() { echo "SKIP: $*"; exit 77; }
# The guests see the host's / read-only with their own tmpfs on /tmp,
# /var/tmp, /root, /run and /dev/shm: a checkout or build there (a clone
# under /tmp) is shared read-write at the same path instead.
EXTRA=()
in_guest_tmpfs() { case "$1" in /tmp/* | /var/tmp/* | /root/* | /run/* | /dev/shm/*) return 0 ;; esac; return 1; }
in_guest_tmpfs "$top/" && EXTRA+=("$top")
if in_guest_tmpfs "$BUILD/"; then
	case "$BUILD/" in "$top"/*) ;; *) EXTRA+=("$BUILD") ;; esac
fi
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap devices)"
for t in qemu-system-x86_64 ip cpio gzip depmod modprobe; do
	command -v $t > /dev/null || skip "$t not installed (scripts/install-deps.sh)"
done
[ -c /dev/net/tun ] || skip "no /dev/net/tun (tap devices)"
for b in mon/weft-mon osd/weft-osd tools/weft tests/test_osd_io; do
	[ -x "$BUILD/$b" ] || { echo "multivm: $BUILD/$b is not built" >&2; exit 1; }
done

vm=""
for c in "${WEFT_RDMA_VM:-}" "$top/../shared/rdma-vm" /work/shared/rdma-vm; do
	if [ -n "$c" ] && [ -x "$c/run-in-vm.sh" ]; then
		vm=$(cd "$c" && pwd)
		break
	fi
done
[ -n "$vm" ] || skip "the rdma-vm harness is not here (../shared/rdma-vm or WEFT_RDMA_VM)"
CACHE=${RDMAVM_CACHE:-/var/tmp/rdma-vm-cache}
if [ ! -s "$CACHE/vmlinuz" ] || [ ! -s "$CACHE/initrd.img" ] || [ ! -s "$CACHE/KVER" ]; then
	log "no VM cache in $CACHE: running $vm/setup.sh --no-siw (downloads a kernel)"
	mkdir -p "$(dirname "$CACHE")"
	(
		flock -w 1200 9 || exit 1
		[ -s "$CACHE/vmlinuz" ] && [ -s "$CACHE/initrd.img" ] || "$vm/setup.sh" --no-siw
	) 9> "$(dirname "$CACHE")/.weft-rdma-vm-setup.lock" || { echo "multivm: setup.sh failed" >&2; exit 1; }
fi
KVER=$(cat "$CACHE/KVER")
KROOT=$CACHE/work-$KVER/kroot
[ -d "$KROOT/lib/modules/$KVER" ] ||
	{ echo "multivm: $KROOT/lib/modules/$KVER missing (run $vm/setup.sh --force)" >&2; exit 1; }

ID=$$
NS=wvm$ID
T=$(mktemp -d /tmp/weft-multivm.XXXXXX)
SHARE=$T/share
NVM=3
QPIDS=()
WATCHDOG=
cleanup() {
	[ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2> /dev/null
	for p in "${QPIDS[@]}"; do kill -9 "$p" 2> /dev/null; done
	wait 2> /dev/null
	ip netns del "$NS" 2> /dev/null
	if [ "${WEFT_MULTIVM_KEEP:-0}" = 1 ]; then echo "multivm: kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

# --- the initramfs: the cache's, plus virtio_net (and what it needs), our /init
mkdir -p "$T/initrd" "$SHARE/log"
(cd "$T/initrd" && gzip -dc "$CACHE/initrd.img" | cpio -idm --quiet) || { echo "multivm: cannot unpack $CACHE/initrd.img" >&2; exit 1; }
for f in $(modprobe -d "$KROOT" -S "$KVER" --show-depends virtio_net | awk '$1 == "insmod" { print $2 }'); do
	rel=${f#"$KROOT"/lib/modules/"$KVER"/}
	mkdir -p "$T/initrd/lib/modules/$KVER/$(dirname "$rel")"
	case "$f" in
	*.xz) xz -dc "$f" > "$T/initrd/lib/modules/$KVER/${rel%.xz}" ;;
	*.zst) zstd -dcq "$f" > "$T/initrd/lib/modules/$KVER/${rel%.zst}" ;;
	*) cp "$f" "$T/initrd/lib/modules/$KVER/$rel" ;;
	esac
done
[ -n "$(find "$T/initrd/lib/modules" -name 'virtio_net.ko*')" ] || { echo "multivm: virtio_net.ko not found in $KROOT" >&2; exit 1; }
install -m 755 "$here/multivm-init.sh" "$T/initrd/init"
depmod -b "$T/initrd" "$KVER" || exit 1
(cd "$T/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$T/initrd.img" || exit 1
rm -rf "$T/initrd"

# --- the network: a namespace with a bridge and a tap per VM
ip netns add "$NS" || skip "cannot create a network namespace"
ip -n "$NS" link set lo up
ip -n "$NS" link add br0 type bridge && ip -n "$NS" link set br0 up || { echo "multivm: bridge" >&2; exit 1; }
for k in $(seq 0 $((NVM - 1))); do
	ip -n "$NS" tuntap add dev "tap$k" mode tap || skip "cannot create tap devices"
	ip -n "$NS" link set "tap$k" master br0 up || exit 1
done
ADDR=(198.19.30.11 198.19.30.12 198.19.30.13)
log "network: namespace $NS, bridge br0, taps tap0-tap2; VMs ${ADDR[*]} (/24)"

# --- the conf, one for the three VMs (read from the share)
cat > "$SHARE/weft.conf" << EOF
# verbs-tests/multivm.sh: three VMs, a mon and an OSD on each, over verbs
[global]
	mon_host = ${ADDR[0]}:$PORT, ${ADDR[1]}:$PORT, ${ADDR[2]}:$PORT
	public_network = 198.19.30.0/24
	cluster_network = 198.19.30.0/24
	ms_type = verbs
	log_file = $SHARE/log/\$name.log
	admin_socket = /tmp/weft/\$name.asok
	ms_bind_port_min = $((PORT + 10))
	ms_bind_port_max = $((PORT + 60))
	# TCG emulates every instruction (rxe's ICRC too) on a shared 2-core
	# host: an rdma_cm connect takes seconds, a daemon's loop can stall
	ms_connect_timeout = 20s
	ms_peer_timeout = 20s
	osd_heartbeat_interval = 1s
	osd_heartbeat_grace = 30s
	osd_pool_default_size = 3
	osd_pool_default_min_size = 2
	osd_pool_default_pg_num = 16
	osd_max_op_size = 8M
	client_op_timeout = 180s
	client_buffers = 20
	# mon. and client.admin for all three mons, made below before the VMs boot
	keyring = $SHARE/keyring
[mon]
	mon_data = /tmp/weft/\$name
	mon_raft_port_offset = 5
	mon_election_timeout = 5s
	mon_osd_down_out_interval = 3600s
	mon_osd_min_down_reporters = 1
[mon.a]
	mon_addr = ${ADDR[0]}:$PORT
[mon.b]
	mon_addr = ${ADDR[1]}:$PORT
[mon.c]
	mon_addr = ${ADDR[2]}:$PORT
[osd]
	# osd.N's own key: vmN asks the mons for it once they are in quorum
	keyring = /tmp/weft/\$name/keyring
	osd_data = /tmp/weft/\$name/block
	osd_db = /tmp/weft/\$name/db
	# the WAL inside the data file (the default is the deployed layout's device)
	osd_wal =
	osd_store_data_size = 256M
	osd_store_wal_size = 32M
	# the store lives in the VM's RAM (tmpfs): only what is written takes memory
	osd_store_preallocate = false
	osd_repl_ring_size = 16M
	osd_op_buffers = 6
	osd_op_timeout = 120s
EOF
# --- the admin keyring (mon. and client.admin): the three mons' --mkfs run at
# once in three VMs, so each would make its own keys; one scratch mkfs here
# makes them and every mon's --mkfs takes them from the conf's keyring
mkdir -p "$T/keygen"
cat > "$T/keygen/weft.conf" << EOF
[global]
	mon_host = 127.0.0.1:$PORT
	keyring = $T/keygen/none
	log_file = $T/keygen/\$name.log
[mon]
	mon_data = $T/keygen/\$name
[mon.a]
	mon_addr = 127.0.0.1:$PORT
EOF
"$BUILD/mon/weft-mon" --mkfs -i a -c "$T/keygen/weft.conf" > "$T/keygen/mkfs.out" 2>&1 &&
	cp "$T/keygen/keyring" "$SHARE/keyring" ||
	{ cat "$T/keygen/mkfs.out" >&2; echo "multivm: cannot make the admin keyring" >&2; exit 1; }

# --- three VMs, each in the namespace on its tap
MEM=${WEFT_MULTIVM_MEM:-2G}
TIMEOUT=${WEFT_MULTIVM_TIMEOUT:-900}
HN=(wvm1 wvm2 wvm3)
for k in $(seq 0 $((NVM - 1))); do
	x=$T/vm$k/xfer
	mkdir -p "$x"
	printf 'RDMAVM_IP=%q\nRDMAVM_HOSTNAME=%q\nRDMAVM_RW_COUNT=%d\nRDMAVM_RW_0=%q\n' \
		"${ADDR[$k]}/24" "${HN[$k]}" $((1 + ${#EXTRA[@]})) "$SHARE" > "$x/config"
	vfs=()
	for j in "${!EXTRA[@]}"; do
		printf 'RDMAVM_RW_%d=%q\n' $((j + 1)) "${EXTRA[$j]}" >> "$x/config"
		vfs+=(-virtfs "local,path=${EXTRA[$j]},mount_tag=rw$((j + 1)),security_model=none")
	done
	{
		echo 'ulimit -l unlimited 2> /dev/null'
		for e in "WEFT_BUILD=$BUILD" "WEFT_VM_INDEX=$k" "WEFT_VM_COUNT=$NVM" "WEFT_SHARE=$SHARE" \
			"WEFT_PORT=$PORT" "WEFT_MULTIVM_OBJECTS=${WEFT_MULTIVM_OBJECTS:-40}" \
			"WEFT_GUEST_DEADLINE=$(($(date +%s) + TIMEOUT - 60))" \
			"ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
			"UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"; do
			printf 'export %q\n' "$e"
		done
		printf 'cd %q || exit 125\nexec /bin/bash %q\n' "$top" "$here/multivm-guest.sh"
	} > "$x/cmd.sh"
	# TCG: this host's /dev/kvm cannot run a stock kernel (../shared/rdma-vm/README.md)
	accel=(-accel tcg,thread=multi -cpu max)
	[ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && accel=(-enable-kvm -cpu host)
	ip netns exec "$NS" timeout -k 5 "$TIMEOUT" qemu-system-x86_64 "${accel[@]}" \
		-machine q35 -m "$MEM" -smp 1 -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$CACHE/vmlinuz" -initrd "$T/initrd.img" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 oops=panic rdinit=/init" \
		-chardev file,id=con,path="$T/vm$k/console.log" -serial chardev:con \
		-chardev file,id=out,path="$T/vm$k/out.log" -serial chardev:out \
		-chardev file,id=err,path="$T/vm$k/err.log" -serial chardev:err \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$x",mount_tag=xfer,security_model=none \
		-virtfs local,path="$SHARE",mount_tag=rw0,security_model=none "${vfs[@]}" \
		-netdev tap,id=n0,ifname="tap$k",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:57:46:1$k \
		-device virtio-rng-pci < /dev/null > "$T/vm$k/qemu.log" 2>&1 &
	QPIDS+=($!)
done
log "3 VMs booting (TCG, 1 vCPU and $MEM each; at most ${TIMEOUT}s)"

# --- wait for the three; report progress from the first (the client's)
rcs=()
seen=0
while :; do
	n=0
	[ -f "$T/vm0/out.log" ] && n=$(wc -l < "$T/vm0/out.log")
	[ "$n" -gt "$seen" ] && { sed -n "$((seen + 1)),${n}p" "$T/vm0/out.log" | sed 's/^/  vm1| /'; seen=$n; }
	alive=0
	for p in "${QPIDS[@]}"; do kill -0 "$p" 2> /dev/null && alive=1; done
	[ $alive = 0 ] && break
	sleep 2
done
sed -n "$((seen + 1)),\$p" "$T/vm0/out.log" | sed 's/^/  vm1| /'
rc=0
for k in $(seq 0 $((NVM - 1))); do
	wait "${QPIDS[$k]}"
	q=$?
	if [ -f "$T/vm$k/xfer/rc" ]; then
		r=$(cat "$T/vm$k/xfer/rc")
	elif [ $q = 124 ] || [ $q = 137 ]; then
		r=124
		echo "multivm: VM $((k + 1)) timed out after ${TIMEOUT}s" >&2
	else
		r=125
		echo "multivm: VM $((k + 1)) ended without a command status (qemu rc $q)" >&2
	fi
	rcs+=("$r")
	if [ "$r" != 0 ]; then
		[ "$rc" = 0 ] && rc=$r
		[ $k = 0 ] || { echo "--- vm$((k + 1)) output"; cat "$T/vm$k/out.log"; }
		echo "--- vm$((k + 1)) stderr (tail)"
		tail -n 20 "$T/vm$k/err.log"
		echo "--- vm$((k + 1)) console (tail)"
		tail -n 20 "$T/vm$k/console.log"
	fi
done
QPIDS=()
if [ "$rc" != 0 ]; then
	for f in "$SHARE"/log/*.log "$SHARE"/log/*.out; do
		[ -s "$f" ] || continue
		echo "--- $(basename "$f") (tail)"
		if grep -q "ERROR: AddressSanitizer" "$f"; then
			grep -A 14 "ERROR: AddressSanitizer" "$f"
		else
			tail -n 25 "$f"
		fi
	done
	log "FAIL multivm: VM exit statuses ${rcs[*]}"
	[ "$rc" = 77 ] && rc=1 # a guest without rxe0 is a failure here: the VMs are ours
	exit "$rc"
fi
log "PASS multivm: 3 VMs, a mon and an OSD each over verbs (rxe0), the client in vm1"
