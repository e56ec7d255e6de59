#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages end to end (docs/deploy.md, "Packages"): build them
# with dpkg-buildpackage from a copy of the source, lintian (no errors),
# install the .debs on this machine, check what the maintainer scripts made
# (the weft user, /var/lib/weft, /var/log/weft, /run/weft), the units
# (systemd-analyze verify), the logrotate file, man pages, pkg-config; then
# a cluster from the installed binaries and the /etc/weft + /var/lib/weft
# layout: one mon and three OSDs ('weft osd create' on loop devices) run as
# the weft user with the units' command lines and limits (CI has no
# running systemd), HEALTH_OK, a program built with `pkg-config weft`
# against libweft-dev writes and reads an object, a volume mounted with
# weft-mount@'s ExecStart and written and read through the mount, then read
# over NBD through the packaged nbdkit plugin. Then everything is purged again.
#
#   test_packages.sh SRC_DIR PORT
#
# Needs root, dpkg-buildpackage, lintian; skips (77) without them, or when
# weft packages are already installed here (it would not clobber them).
set -u
SRC=$1 PORT=$2
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i, loop devices)"
for t in dpkg-buildpackage lintian systemd-analyze runuser prlimit losetup jq cc; do
	command -v $t > /dev/null || skip "$t not installed (scripts/install-deps.sh)"
done
dpkg-query -W -f='${Status}' weft-common 2> /dev/null | grep -q "install ok installed" &&
	skip "weft packages are already installed on this machine"
[ -e /etc/weft/weft.conf ] && skip "/etc/weft/weft.conf exists (a real node?)"
[ -e /etc/weft/keyring ] && skip "/etc/weft/keyring exists (a real node?)"

T=$(mktemp -d /tmp/weft-packages.XXXXXX)
PKGS="weft-common weft-mon weft-osd weft-client libweft1 libweft-dev nbdkit-plugin-weft"
LOOPS=()
declare -A PIDS
HAD_VARLIB=$([ -d /var/lib/weft ] && echo 1 || echo 0)
MNT=/mnt/weft/rbd

fail() {
	log "FAIL: $*"
	ls -l /var/log/weft /var/lib/weft/osd/* 2> /dev/null
	for f in /var/log/weft/*.log "$T"/*.out; do
		[ -f "$f" ] || continue
		echo "--- $f (tail)"
		tail -n 15 "$f"
	done
	exit 1
}
# killtree PID: the process and everything under it (runuser forks), by pid
killtree() {
	local c
	for c in $(pgrep -P "$1"); do killtree "$c"; done
	kill -9 "$1" 2> /dev/null
}
cleanup() {
	kill "$WATCHDOG" 2> /dev/null
	fusermount3 -u "$MNT" 2> /dev/null
	for p in "${PIDS[@]}"; do killtree "$p"; done
	wait 2> /dev/null
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2> /dev/null; done
	# and any loop device still on one of our images (one attached just before a kill)
	for f in "$T"/*.img; do
		[ -f "$f" ] && for l in $(losetup -n -O NAME -j "$f"); do losetup -d "$l" 2> /dev/null; done
	done
	# shellcheck disable=SC2086
	dpkg -P $PKGS > "$T/purge.out" 2>&1 || cat "$T/purge.out"
	rm -f /etc/weft/weft.conf
	# ours: the test skips on a node that had one, before this trap is set
	rm -f /etc/weft/keyring
	rmdir /etc/weft "$MNT" /mnt/weft 2> /dev/null
	[ "$HAD_VARLIB" = 1 ] || rm -rf /var/lib/weft
	rm -rf "$T"
}
trap cleanup EXIT
(sleep 840 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'fail "watchdog: over 840 s"' TERM

# --- build from a copy of the tree (tracked and new files, no build dirs)
VER=$(sed -n '1s/^weft (\([^)]*\)).*/\1/p' "$SRC/debian/changelog")
mkdir "$T/weft-${VER%-*}"
(cd "$SRC" && { git ls-files; git ls-files --others --exclude-standard; } 2> /dev/null | sort -u |
	while read -r f; do [ -e "$f" ] && echo "$f"; done | tar -cf - -T -) |
	tar -xf - -C "$T/weft-${VER%-*}" || fail "copying the source"
[ -f "$T/weft-${VER%-*}/debian/rules" ] || fail "no debian/ in the copy (not a git tree?)"
COMMIT=$(git -C "$SRC" rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
(cd "$T/weft-${VER%-*}" && WEFT_GIT_COMMIT=$COMMIT DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b) > "$T/build.out" 2>&1 || {
	# the cause is above fail()'s 15-line tail (dh_missing lists the files first)
	grep -E -m 20 "not installed|^dh_[a-z_]*: error|error:" "$T/build.out"
	fail "dpkg-buildpackage"
}
log "built: $(cd "$T" && ls ./*.deb | grep -vc dbgsym) packages"
lintian --tag-display-limit 0 "$T"/*.changes > "$T/lintian.out" 2>&1
grep -E "^E: " "$T/lintian.out" && fail "lintian errors"
log "lintian: no errors ($(grep -c '^W: ' "$T/lintian.out") warnings)"

# --- install
debs=()
for p in $PKGS; do debs+=("$T/${p}_${VER}_"*.deb); done
dpkg -i "${debs[@]}" > "$T/install.out" 2>&1 || fail "dpkg -i"
getent passwd weft > /dev/null || fail "no weft user"
for d in /var/lib/weft /var/log/weft /run/weft; do
	[ "$(stat -c %U "$d")" = weft ] || fail "$d is not the weft user's"
done
for b in weft weft-mon weft-osd weft-mount; do
	/usr/bin/$b --version | grep -Eq "^$b ${VER%-*} \(git $COMMIT\)" ||
		fail "$b --version says '$(/usr/bin/$b --version)', want ${VER%-*} (git $COMMIT)"
	man -w "$b" > /dev/null 2>&1 || fail "no man page for $b"
done
[ -f /usr/share/bash-completion/completions/weft ] || fail "no bash completion"
# nbdkit finds the plugin by name in its plugin directory
nbdkit --dump-plugin weft > "$T/dump-plugin.out" 2>&1 || { cat "$T/dump-plugin.out"; fail "nbdkit --dump-plugin weft"; }
grep -q "^path=$(nbdkit --dump-config | sed -n 's/^plugindir=//p')/nbdkit-weft-plugin.so$" "$T/dump-plugin.out" ||
	fail "nbdkit weft is not the packaged plugin: $(grep ^path= "$T/dump-plugin.out")"
man -w nbdkit-weft-plugin > /dev/null 2>&1 || fail "no man page for nbdkit-weft-plugin"
mkdir "$T/units"
cp /lib/systemd/system/weft-mon@.service "$T/units/weft-mon@a.service"
cp /lib/systemd/system/weft-osd@.service "$T/units/weft-osd@0.service"
cp /lib/systemd/system/weft-mount@.service "$T/units/weft-mount@rbd.service"
cp /lib/systemd/system/weft.target "$T/units/"
systemd-analyze verify "$T"/units/* > "$T/verify.out" 2>&1 || { cat "$T/verify.out"; fail "systemd-analyze verify"; }
[ -s "$T/verify.out" ] && { cat "$T/verify.out"; fail "systemd-analyze verify printed warnings"; }
logrotate -d /etc/logrotate.d/weft > "$T/logrotate.out" 2>&1 || fail "logrotate -d"
log "ok: installed; user, directories, --version, man pages, units verified, logrotate"

# --- a cluster from the installed layout, started with the units' lines
cat > /etc/weft/weft.conf << EOF
[global]
	fsid = $(cat /proc/sys/kernel/random/uuid)
	mon_host = 127.0.0.1:$PORT
	public_network = 127.0.0.0/8
	cluster_network = 127.0.0.0/8
	ms_type = tcp
	log_file = /var/log/weft/\$name.log
	ms_bind_port_min = $((PORT + 10))
	ms_bind_port_max = $((PORT + 99))
	osd_pool_default_size = 2
	osd_pool_default_min_size = 1
	osd_pool_default_pg_num = 16
	osd_heartbeat_interval = 500ms
	client_buffers = 20
[mon]
	mon_raft_port_offset = 5
	mon_election_timeout = 500ms
[mon.a]
	mon_addr = 127.0.0.1:$PORT
[osd]
	keyring = /var/lib/weft/osd/\$name/keyring
	osd_store_wal_size = 64M
	osd_repl_ring_size = 20M
	osd_op_buffers = 6
	osd_max_op_size = 8M
[osd.0]
	host = pkg0
[osd.1]
	host = pkg1
[osd.2]
	host = pkg2
EOF
W() { weft "$@" --timeout 20; }
wait_for() {
	local secs=$1 what=$2 end
	shift 2
	end=$(($(date +%s) + secs))
	until "$@" > /dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s: $what"
		sleep 0.5
	done
	log "ok: $what"
}
# run_unit UNIT INSTANCE: ExecStartPre lines (as root when '+'), then ExecStart
# in the background as the unit's User= with its LimitMEMLOCK and LimitNOFILE.
run_unit() {
	local u=/lib/systemd/system/$1 inst=$2 user line
	user=$(sed -n 's/^User=//p' "$u")
	while read -r line; do
		line=${line//%i/$inst}
		line=${line//\$\{WEFT_CONF\}//etc/weft/weft.conf}
		if [ "${line#+}" != "$line" ] || [ -z "$user" ]; then
			sh -c "${line#+}" >> "$T/$1-$inst.out" 2>&1 || fail "$1 $inst: ExecStartPre $line"
		else
			runuser -u "$user" -- sh -c "$line" >> "$T/$1-$inst.out" 2>&1 ||
				fail "$1 $inst: ExecStartPre $line"
		fi
	done < <(sed -n 's/^ExecStartPre=//p' "$u")
	line=$(sed -n 's/^ExecStart=//p' "$u")
	line=${line//%i/$inst}
	line=${line//\$\{WEFT_CONF\}//etc/weft/weft.conf}
	if [ -n "$user" ]; then
		"${LIMITS[@]}" runuser -u "$user" -- sh -c "exec $line" \
			< /dev/null >> "$T/$1-$inst.out" 2>&1 &
	else
		sh -c "exec $line" < /dev/null >> "$T/$1-$inst.out" 2>&1 &
	fi
	PIDS[$1-$inst]=$!
}
# The units' LimitMEMLOCK=infinity and LimitNOFILE, where this machine lets
# root raise them (a container may not; TCP needs no pinned memory).
LIMITS=(prlimit)
for l in --memlock=unlimited --nofile=1048576; do
	if prlimit "$l" true 2> /dev/null; then LIMITS+=("$l"); else log "cannot apply $l here"; fi
done
[ "${#LIMITS[@]}" = 1 ] && LIMITS=(env)
runuser -u weft -- weft-mon --mkfs -i a -c /etc/weft/weft.conf > "$T/mkfs-mon.out" 2>&1 ||
	fail "weft-mon --mkfs as weft"
[ -d /var/lib/weft/mon/mon.a ] || fail "mon_data not in /var/lib/weft/mon/mon.a"
# the admin keyring --mkfs wrote (as weft), for root's weft, libweft, weft-mount, nbdkit
grep -q "admin keyring (client.admin and mon., mode 0600): /var/lib/weft/mon/keyring" "$T/mkfs-mon.out" ||
	fail "mkfs did not say where the admin keyring is: $(cat "$T/mkfs-mon.out")"
install -m 600 /var/lib/weft/mon/keyring /etc/weft/keyring || fail "copying the admin keyring"
run_unit weft-mon@.service a
wait_for 30 "mon.a has a map" W status
for i in 0 1 2; do
	truncate -s 600M "$T/disk$i.img"
	l=$(losetup -f --show "$T/disk$i.img") || skip "no loop devices"
	LOOPS+=("$l")
	weft osd create --data "$l" --no-start > "$T/create$i.out" 2>&1 ||
		{ cat "$T/create$i.out"; fail "osd create on $l"; }
	grep -q "^osd.$i: created in /var/lib/weft/osd/osd.$i" "$T/create$i.out" ||
		fail "osd create: $(cat "$T/create$i.out")"
	# osd create got osd.N's key from the monitors, for the weft user only
	[ "$(stat -c '%U %a' "/var/lib/weft/osd/osd.$i/keyring")" = "weft 600" ] ||
		fail "osd.$i keyring: $(stat -c '%U %a' "/var/lib/weft/osd/osd.$i/keyring" 2>&1)"
	run_unit weft-osd@.service "$i"
	upn() { [ "$(W status --format json | jq .osdmap.num_up_osds)" = "$1" ]; }
	wait_for 60 "osd.$i up (as the weft user on $l)" upn $((i + 1))
done
[ "$(stat -c %U /var/log/weft/osd.0.log)" = weft ] || fail "osd.0 does not run as the weft user"
W pool create rbd --size 2 --min-size 1 --pg-num 16 > /dev/null || fail "pool create"
healthy() { W status --format json | jq -e '.health.status == "HEALTH_OK" and (.pgmap.inactive_pgs // 0) == 0'; }
wait_for 90 "weft status HEALTH_OK" healthy

# --- libweft-dev: a program built with pkg-config against the installed library
cat > "$T/obj.c" << 'EOF'
#include <stdio.h>
#include <string.h>
#include <weft/weft.h>
int main(void)
{
	struct weft_cluster *cl;
	uint32_t pool;
	char w[4096], r[4096];
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (char)(i * 7 + 1);
	rc = weft_connect(NULL, "client.admin", &cl);
	if (rc == 0)
		rc = weft_pool_lookup(cl, "rbd", &pool);
	if (rc == 0)
		rc = weft_write_full(cl, pool, "pkgobj", w, sizeof(w));
	if (rc == 0)
		rc = weft_read(cl, pool, "pkgobj", r, sizeof(r), 0, &n);
	if (rc == 0 && (n != sizeof(r) || memcmp(w, r, sizeof(r)) != 0))
		rc = -1;
	printf("libweft %s: %s\n", weft_version(), rc == 0 ? "object written and read back" : weft_strerror(rc));
	return rc != 0;
}
EOF
# shellcheck disable=SC2046
cc -o "$T/obj" "$T/obj.c" $(pkg-config --cflags --libs weft) || fail "build against libweft-dev"
# the library the loader picked is libweft1's (by /lib or /usr/lib: merged /usr)
lib=$(ldd "$T/obj" | awk '$1 == "libweft.so.1" { print $3 }')
[ -n "$lib" ] && dpkg -S "$(readlink -f "$lib")" 2> /dev/null | grep -q "^libweft1:" ||
	fail "not linked to the installed libweft.so.1 (ldd: ${lib:-none})"
"$T/obj" || fail "libweft program"

# --- a volume through weft-mount@rbd's command line
W vol create rbd/pkgvol --size 64M > /dev/null || fail "vol create"
run_unit weft-mount@.service rbd
mounted() { [ -f "$MNT/pkgvol" ]; }
wait_for 30 "pool rbd mounted on $MNT" mounted
head -c 8M /dev/urandom > "$T/pattern"
dd if="$T/pattern" of="$MNT/pkgvol" bs=1M oflag=direct conv=notrunc status=none || fail "write through the mount"
cmp -n 8388608 "$T/pattern" "$MNT/pkgvol" || fail "read back through the mount differs"
log "ok: volume rbd/pkgvol mounted, 8 MiB written and read back through $MNT"
fusermount3 -u "$MNT" || fail "unmount"
# the same volume over NBD through the packaged plugin, read back with nbdcopy
if command -v nbdcopy > /dev/null; then
	nbdkit -U - weft volume=rbd/pkgvol readonly=true --run "nbdcopy \"\$uri\" - | head -c 8388608 > $T/nbd.out" \
		> "$T/nbdkit.out" 2>&1 || { cat "$T/nbdkit.out"; fail "nbdkit weft volume=rbd/pkgvol"; }
	cmp "$T/pattern" "$T/nbd.out" || fail "read back over NBD differs"
	log "ok: rbd/pkgvol read back over NBD (nbdkit weft, the packaged plugin)"
else
	log "nbdcopy not installed (libnbd-bin): NBD read-back not checked"
fi
log "PASS packages: built, lintian-clean, installed, a cluster from the installed layout"
