#!/usr/bin/env bash
# Install every Debian 12 package Weft needs to build, test and benchmark.
# Idempotent: apt-get skips what is already installed. Needs root (or sudo).
set -euo pipefail

PKGS=(
	# toolchain
	build-essential cmake pkg-config git clang libclang-rt-14-dev
	# common/: conf parsing, crc32c, JSON output
	libinih-dev libisal-dev libjansson-dev
	# auth/: HMAC-SHA256, HKDF, AES-256-GCM, RAND_bytes, base64 (OpenSSL 3)
	libssl-dev
	# OSD store: metadata, io_uring; monitors: Raft over libuv
	librocksdb-dev liburing-dev libraft-dev libuv1-dev
	# fabric backends (auto-detected at configure time)
	libibverbs-dev librdmacm-dev libucx-dev libnuma-dev
	# ucx_info / ucx_perftest: what UCX sees here, raw UCX baselines (docs/ucx.md)
	ucx-utils
	# tests and baselines
	libcmocka-dev iperf3 procps python3 jq
	# weft sim: the PG-spread and data-movement plots (docs/scale.md)
	gnuplot-nox
	# weft-mount (FUSE low-level API) and its tests, cluster-bench.sh's raw disk limits:
	# fio, loop devices, ext4
	libfuse3-dev fuse3 fio e2fsprogs util-linux mount
	# nbdkit-weft-plugin (client/nbd/, docs/vm.md): nbdkit and its plugin header; its tests
	# and perftest-scripts/vol-fio.sh: nbdinfo/nbdcopy (libnbd), fio's nbd engine (Debian's
	# fio links libnbd), qemu-img/qemu-io
	nbdkit nbdkit-plugin-dev libnbd-bin qemu-utils
	# weft osd create (device signatures), man pages from dist/man/*.scd
	libblkid-dev scdoc
	# /metrics in the daemons (metrics/) and its test against a real Prometheus server
	libmicrohttpd-dev prometheus
	# packages (debian/, tests/test_packages.sh): build, check, logrotate file
	debhelper devscripts lintian fakeroot bash-completion logrotate
	# mount_postgres: PostgreSQL (server, psql, pgbench, amcheck) on a mounted volume
	postgresql postgresql-contrib
	# verbs tests: a Soft-RoCE VM (../shared/rdma-vm; docs/verbs.md) and perftest baselines
	qemu-system-x86 busybox-static rdma-core ibverbs-utils ibverbs-providers rdmacm-utils
	perftest iproute2 kmod cpio gzip xz-utils
	# multihost_netns: the hosts reach each other on both bridges
	iputils-ping
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages already installed"
	exit 0
fi

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
