#!/usr/bin/env bash
# Run one of the verbs-tests guest scripts inside a throw-away Soft-RoCE VM
# (../shared/rdma-vm, see its README). Used by ctest (label "verbs") and by hand:
#
#   verbs-tests/run-vm.sh suite  BUILD_DIR   # tests/test_fabric.c on verbs (rxe0)
#   verbs-tests/run-vm.sh doctor BUILD_DIR   # weft doctor: lists rxe0, passes a matching conf
#   verbs-tests/run-vm.sh osd    BUILD_DIR   # 1 mon + 3 OSDs + client over verbs (osd-in-vm.sh;
#                                            # WEFT_VM_OSD_CASE=memory: the memory-target case)
#
# Builds the VM cache (setup.sh --no-siw: kernel + initramfs, no linux-source
# download) when it is missing. Exits 77 (skip) only when a VM is impossible
# here: no harness, no qemu, or no /dev/kvm-free TCG... i.e. qemu missing.
# Every other problem is a failure. Env: WEFT_RDMA_VM (harness dir),
# RDMAVM_CACHE, WEFT_VM_MEM (default 3G: ASan builds), WEFT_VM_TIMEOUT (900 s),
# WEFT_VM_SAVE_LOGS=DIR (the daemons' logs of the osd mode land there).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
mode=${1:-}
build=${2:-}
[ -n "$mode" ] && [ -n "$build" ] || { echo "usage: $0 suite|doctor|osd BUILD_DIR" >&2; exit 2; }
[ -f "$here/$mode-in-vm.sh" ] || { echo "run-vm: unknown mode '$mode' (suite, doctor or osd)" >&2; exit 2; }
build=$(cd "$build" && pwd) || exit 2
# The guest sees the host's root read-only, but /tmp, /var/tmp, /root, /run
# and /dev/shm are its own tmpfs: a checkout or build there (a clone under
# /tmp, or in root's home) is mounted read-write at the same path instead.
share=()
in_guest_tmpfs() { case "$1" in /tmp/* | /var/tmp/* | /root/* | /run/* | /dev/shm/*) return 0 ;; esac; return 1; }
in_guest_tmpfs "$top/" && share+=(--rw "$top")
if in_guest_tmpfs "$build/"; then
	case "$build/" in "$top"/*) ;; *) share+=(--rw "$build") ;; esac
fi

vm=""
for c in "${WEFT_RDMA_VM:-}" "$top/../shared/rdma-vm" /work/shared/rdma-vm; do
	if [ -n "$c" ] && [ -x "$c/run-in-vm.sh" ]; then
		vm=$(cd "$c" && pwd)
		break
	fi
done
if [ -z "$vm" ]; then
	echo "SKIP: the rdma-vm harness is not here (expected ../shared/rdma-vm beside the checkout, or WEFT_RDMA_VM)"
	exit 77
fi
if ! command -v qemu-system-x86_64 > /dev/null; then
	echo "SKIP: qemu-system-x86_64 is not installed (scripts/install-deps.sh installs it)"
	exit 77
fi

cache=${RDMAVM_CACHE:-/var/tmp/rdma-vm-cache}
if [ ! -s "$cache/vmlinuz" ] || [ ! -s "$cache/initrd.img" ]; then
	echo "run-vm: no VM cache in $cache: running $vm/setup.sh --no-siw (downloads a kernel)"
	mkdir -p "$(dirname "$cache")"
	(
		flock -w 1200 9 || { echo "run-vm: setup lock timed out" >&2; exit 1; }
		if [ ! -s "$cache/vmlinuz" ] || [ ! -s "$cache/initrd.img" ]; then
			"$vm/setup.sh" --no-siw
		fi
	) 9> "$(dirname "$cache")/.weft-rdma-vm-setup.lock" || {
		echo "run-vm: setup.sh failed (see above): cannot build the VM" >&2
		exit 1
	}
fi

cd "$top" || exit 1
# WEFT_VM_SAVE_LOGS=DIR: the guest writes the daemons' logs there (read-write share)
save=()
if [ -n "${WEFT_VM_SAVE_LOGS:-}" ]; then
	mkdir -p "$WEFT_VM_SAVE_LOGS" && WEFT_VM_SAVE_LOGS=$(cd "$WEFT_VM_SAVE_LOGS" && pwd) || exit 2
	save=(--rw "$WEFT_VM_SAVE_LOGS" -e WEFT_TEST_SAVE_LOGS="$WEFT_VM_SAVE_LOGS")
fi
start=$(date +%s)
"$vm/run-in-vm.sh" --mem "${WEFT_VM_MEM:-3G}" --timeout "${WEFT_VM_TIMEOUT:-900}" "${share[@]}" "${save[@]}" \
	-e WEFT_BUILD="$build" -e WEFT_TEST_ADDR=198.18.0.1 -e WEFT_VM_OSD_CASE="${WEFT_VM_OSD_CASE:-io}" \
	-e ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
	-e UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
	-- bash "$here/$mode-in-vm.sh"
rc=$?
echo "run-vm: $mode finished with $rc after $(($(date +%s) - start)) s (VM boot included)"
case $rc in
124) echo "run-vm: the VM timed out" >&2; exit 1 ;;
125) echo "run-vm: the VM failed to boot or lost the command (console above)" >&2; exit 1 ;;
77) echo "run-vm: the guest skipped: rxe0 missing in the VM is a failure here" >&2; exit 1 ;;
esac
exit $rc
