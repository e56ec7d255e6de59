#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A Weft cluster on three "hosts" (docs/deploy.md, run step by step): three
# network namespaces, each with one port on a public bridge
# (198.19.10.0/24) and one on a cluster bridge (198.19.20.0/24) in a fourth
# "switch" namespace, each with its own hostname (UTS namespace). Every
# daemon runs from the *installed* tree (cmake --install with DESTDIR) with
# the command lines of the installed systemd units (ExecStartPre and
# ExecStart, %i and ${WEFT_CONF} filled in), from one conf file shared by
# all hosts, addresses picked by subnet (public_network / cluster_network).
#
#   test_multihost.sh BUILD_DIR PORT HELLO_PEER TEST_OSD_IO TEST_VOL_IO
#
# Steps: a mon per host (weft-mon --mkfs, then its unit's ExecStart); two
# OSDs per host with 'weft osd create' on loop devices (one of them with a
# separate WAL device; host 3's with the bootstrap key, not the admin's),
# started through their units' lines; a size-3 pool whose every PG has its three copies on three hosts; the object case
# (write + read back + every replica) and the volume case (libweft volumes)
# from a client on host 1; a peer requiring an unknown feature refused by a
# real mon and a real OSD; host 3 killed (its mon and OSDs SIGKILLed, its
# links down): I/O goes on with 2 hosts and reads every acknowledged
# write; host 3 back via 'weft osd activate --all' after its OSD
# directories were removed; HEALTH_OK and every PG active+clean again.
# Needs root (namespaces, loop devices); skips (77) without them.
set -u
BUILD=$1 PORT=$2 HELLO_PEER=$3 IO=$4 VOLIO=$5
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, loop devices)"
for t in ip losetup unshare jq; do command -v $t > /dev/null || skip "$t not installed"; done

ID=$$
T=$(mktemp -d /tmp/weft-multihost.XXXXXX)
SW=wsw$ID
HOSTS=(wh1-$ID wh2-$ID wh3-$ID)
HN=(stor1 stor2 stor3)
declare -A PIDS

fail() {
	log "FAIL: $*"
	for f in "$T"/log/*.log "$T"/*.out; do
		[ -f "$f" ] || continue
		echo "--- $(basename "$f") (tail)"
		if grep -q "ERROR: AddressSanitizer" "$f"; then
			grep -A 14 "ERROR: AddressSanitizer" "$f"
		else
			tail -n 15 "$f"
		fi
	done
	exit 1
}
# killtree PID: the process and everything under it, by pid
killtree() {
	local c
	for c in $(pgrep -P "$1"); do killtree "$c"; done
	kill -9 "$1" 2> /dev/null
}
cleanup() {
	kill "$WATCHDOG" 2> /dev/null
	for p in "${PIDS[@]}"; do killtree "$p"; done
	# and whatever still runs in our namespaces (ours: we made them)
	for h in "${HOSTS[@]}"; do
		for p in $(ip netns pids "$h" 2> /dev/null); do kill -9 "$p" 2> /dev/null; done
	done
	wait 2> /dev/null
	for h in "${HOSTS[@]}" "$SW"; do ip netns del "$h" 2> /dev/null; done
	[ -f "$T/loops" ] && while read -r l; do losetup -d "$l" 2> /dev/null; done < "$T/loops"
	# and any loop device still on one of our images (one attached just before a kill)
	for f in "$T"/*.img; do
		[ -f "$f" ] && for l in $(losetup -n -O NAME -j "$f"); do losetup -d "$l" 2> /dev/null; done
	done
	# WEFT_TEST_SAVE_LOGS=DIR keeps the daemons' logs and the steps' outputs
	[ -n "${WEFT_TEST_SAVE_LOGS:-}" ] && mkdir -p "$WEFT_TEST_SAVE_LOGS" &&
		cp "$T"/log/* "$T"/*.out "$T"/*.json "$WEFT_TEST_SAVE_LOGS"/ 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
(sleep 560 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'fail "watchdog: over 560 s"' TERM

# --- the installed tree
PREFIX=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")
UNITDIR=$(sed -n 's/^WEFT_SYSTEMD_UNITDIR:STRING=//p' "$BUILD/CMakeCache.txt")
case $UNITDIR in /*) ;; *) UNITDIR=$PREFIX/$UNITDIR ;; esac
ROOT=$T/root
DESTDIR=$ROOT cmake --install "$BUILD" > "$T/install.out" 2>&1 || fail "cmake --install"
BIN=$ROOT$PREFIX/bin
for b in weft weft-mon weft-osd weft-mount; do
	[ -x "$BIN/$b" ] || fail "not installed: $BIN/$b"
	"$BIN/$b" --version | grep -Eq "^$b [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7,}" ||
		fail "$b --version: $("$BIN/$b" --version)"
done
log "installed into $ROOT$PREFIX: $("$BIN/weft" --version)"

# unit_cmds UNIT INSTANCE: the unit's ExecStartPre and ExecStart lines, as
# systemd would run them ('+' dropped: we are root), binaries from DESTDIR.
unit_cmds() {
	sed -n 's/^ExecStart\(Pre\)\{0,1\}=+\{0,1\}//p' "$ROOT$UNITDIR/$1" |
		sed -e "s|%i|$2|g" -e "s|\${WEFT_CONF}|$CONF|g" -e "s|$PREFIX/bin/|$BIN/|g"
}

# --- the network: a switch namespace with two bridges, three hosts
ip netns add "$SW" || skip "cannot create network namespaces"
ip -n "$SW" link set lo up
for br in brpub brclu; do
	ip -n "$SW" link add $br type bridge && ip -n "$SW" link set $br up || fail "bridge $br"
done
for k in 0 1 2; do
	h=${HOSTS[$k]}
	ip netns add "$h" || fail "netns $h"
	ip -n "$h" link set lo up
	for net in pub clu; do
		a=v$net$k
		ip link add "$a" netns "$h" type veth peer name "s$net$k" netns "$SW" || fail "veth $a"
		ip -n "$SW" link set "s$net$k" master "br$net" up
		sub=$([ $net = pub ] && echo 10 || echo 20)
		ip -n "$h" addr add "198.19.$sub.$((11 + k))/24" dev "$a"
		ip -n "$h" link set "$a" up
	done
done
# on_host K CMD...: run CMD on host K (its network, its hostname)
on_host() {
	local k=$1
	shift
	ip netns exec "${HOSTS[$k]}" unshare --uts sh -c 'hostname "$0"; exec "$@"' "${HN[$k]}" "$@"
}
# the public network works between hosts, the cluster network too
on_host 0 ping -c 1 -W 2 198.19.10.13 > /dev/null || fail "public bridge"
on_host 0 ping -c 1 -W 2 198.19.20.13 > /dev/null || fail "cluster bridge"
log "3 hosts: public 198.19.10.0/24, cluster 198.19.20.0/24"

# --- the conf of docs/deploy.md, the same on every host
mkdir -p "$T/log" "$T/run" "$T/lib/mon" "$T/lib/osd" "$T/lib/osd-db"
CONF=$T/weft.conf
FSID=$(cat /proc/sys/kernel/random/uuid)
cat > "$CONF" << EOF
[global]
	fsid = $FSID
	mon_host = 198.19.10.11:$PORT, 198.19.10.12:$PORT, 198.19.10.13:$PORT
	public_network = 198.19.10.0/24
	cluster_network = 198.19.20.0/24
	ms_type = tcp
	log_file = $T/log/\$name.log
	admin_socket = $T/run/\$name.asok
	# the admin keyring mon.a's --mkfs writes (beside every mon_data: the
	# hosts share this filesystem, so b and c take the same keys)
	keyring = $T/lib/mon/keyring
	ms_bind_port_min = $((PORT + 100))
	ms_bind_port_max = $((PORT + 199))
	ms_connect_timeout = 2s
	ms_peer_timeout = 3s
	osd_heartbeat_interval = 500ms
	osd_heartbeat_grace = 3s
	osd_pool_default_size = 3
	osd_pool_default_min_size = 2
	osd_pool_default_pg_num = 32
	osd_max_op_size = 8M
	client_op_timeout = 60s
	client_buffers = 20
[mon]
	mon_data = $T/lib/mon/\$name
	mon_raft_port_offset = 5
	mon_election_timeout = 1500ms
	mon_osd_down_out_interval = 3600s
	mon_osd_min_down_reporters = 1
[mon.a]
	mon_addr = 198.19.10.11:$PORT
[mon.b]
	mon_addr = 198.19.10.12:$PORT
[mon.c]
	mon_addr = 198.19.10.13:$PORT
[client.bootstrap-osd]
	keyring = $T/lib/bootstrap-osd.keyring
[osd]
	keyring = $T/lib/osd/\$name/keyring
	osd_data = $T/lib/osd/\$name/block
	osd_wal = $T/lib/osd/\$name/wal
	osd_db = $T/lib/osd/\$name/db
	osd_store_wal_size = 64M
	osd_repl_ring_size = 20M
	osd_op_buffers = 6
	osd_op_timeout = 30s
EOF
W() { on_host 0 "$BIN/weft" "$@" -c "$CONF" --timeout 20; }
WJ() { W "$@" --format json; }
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
# spawn K NAME CMDLINE: a daemon on host K, killed by pid at the end
spawn() {
	local k=$1 name=$2
	shift 2
	# exec all the way down: $! is the daemon itself, so a kill by pid reaches it
	(exec ip netns exec "${HOSTS[$k]}" unshare --uts sh -c 'hostname "$0"; exec sh -c "$1"' \
		"${HN[$k]}" "exec $*") < /dev/null >> "$T/log/$name.out" 2>&1 &
	PIDS[$name]=$!
}
run_unit() { # run_unit K UNIT INSTANCE NAME: ExecStartPre lines, then ExecStart in the background
	local k=$1 unit=$2 inst=$3 name=$4 lines n i
	mapfile -t lines < <(unit_cmds "$unit" "$inst")
	n=${#lines[@]}
	[ "$n" -ge 1 ] || fail "no ExecStart in $unit"
	for ((i = 0; i < n - 1; i++)); do
		on_host "$k" sh -c "${lines[$i]}" >> "$T/log/$name.out" 2>&1 ||
			fail "$unit: ExecStartPre '${lines[$i]}' failed"
	done
	grep -q "^ExecStart=" "$ROOT$UNITDIR/$unit" || fail "$unit has no ExecStart"
	spawn "$k" "$name" "${lines[$((n - 1))]}"
}

# --- step 1: a monitor on each host
MONS=(a b c)
for k in 0 1 2; do
	on_host "$k" "$BIN/weft-mon" --mkfs -i "${MONS[$k]}" -c "$CONF" >> "$T/log/mon.${MONS[$k]}.out" 2>&1 ||
		fail "mkfs mon.${MONS[$k]}"
	run_unit "$k" weft-mon@.service "${MONS[$k]}" "mon.${MONS[$k]}"
done
quorum3() { [ "$(WJ mon stat | jq '.quorum | length')" = 3 ]; }
wait_for 60 "3 mons in quorum" quorum3

# --- step 2: OSDs on devices: two per host, osd create on loop devices
# newloop NAME SIZE: a loop device over a sparse file (called in $(...): the
# device is remembered in $T/loops for the cleanup, not in a variable)
newloop() {
	local f=$T/disk$1.img l
	truncate -s "$2" "$f"
	l=$(losetup -f --show "$f") || skip "no loop devices"
	echo "$l" >> "$T/loops"
	echo "$l"
}
# a second OSD on a disk already holding a filesystem must be refused
L=$(newloop fs 300M)
mkfs.ext4 -q "$L" 2> /dev/null && {
	on_host 0 "$BIN/weft" osd create --data "$L" --no-start -c "$CONF" > "$T/refuse.out" 2>&1 &&
		fail "osd create accepted a disk holding ext4"
	grep -q "holds ext4" "$T/refuse.out" || fail "refusal does not say ext4: $(cat "$T/refuse.out")"
	log "ok: osd create refuses a disk holding ext4"
}
# host 2 adds its OSDs with the bootstrap key (mon 'profile bootstrap-osd'), not the admin's
(umask 077 && W auth get-or-create client.bootstrap-osd mon "profile bootstrap-osd" \
	> "$T/lib/bootstrap-osd.keyring") || fail "the bootstrap-osd key"
OSDS=0
for k in 0 1 2; do
	for j in 0 1; do
		data=$(newloop "$k$j" 600M)
		extra=()
		[ "$k$j" = 11 ] && extra=(--wal "$(newloop "${k}${j}w" 80M)")
		[ "$k" = 2 ] && extra=(--bootstrap)
		on_host "$k" "$BIN/weft" osd create --data "$data" "${extra[@]}" --no-start -c "$CONF" \
			> "$T/create$k$j.out" 2>&1 || { cat "$T/create$k$j.out"; fail "osd create on $data"; }
		id=$(sed -n 's/^osd\.\([0-9]*\): created in .*/\1/p' "$T/create$k$j.out")
		[ -n "$id" ] || fail "no id from osd create: $(cat "$T/create$k$j.out")"
		[ "$(readlink "$T/lib/osd/osd.$id/block")" = "$data" ] || fail "osd.$id block link"
		OSD_HOST[$id]=$k
		run_unit "$k" weft-osd@.service "$id" "osd.$id"
		OSDS=$((OSDS + 1))
		upn() { [ "$(WJ status | jq .osdmap.num_up_osds)" = "$1" ]; }
		wait_for 60 "osd.$id up (on ${HN[$k]}${extra[*]:+, ${extra[0]}})" upn "$OSDS"
	done
done
on_host 0 "$BIN/weft" osd list-devices -c "$CONF" > "$T/list.out" 2>&1
[ "$(grep -c "fsid $FSID" "$T/list.out")" = 6 ] || fail "list-devices: $(cat "$T/list.out")"

# --- step 3: a pool; every PG on three distinct hosts; addresses by subnet
W pool create rbd --size 3 --min-size 2 --pg-num 32 > /dev/null || fail "pool create"
clean() {
	local s
	s=$(WJ status) || return 1
	[ "$(echo "$s" | jq -r .health.status)" = HEALTH_OK ] &&
		[ "$(echo "$s" | jq '.pgmap.inactive_pgs // 0')" = 0 ] &&
		[ "$(WJ pg ls | jq '[.. | objects | select(has("acting")) | select(.state != "active+clean")] | length')" = 0 ] &&
		[ "$(WJ balancer eval | jq '[.pools[].balancer_would_move] | add // 0')" = 0 ]
}
# clean, and the mons' balancer (on by default) has nothing left to move:
# while it moves a PG, the PG's old copy stays until the new one is complete
wait_for 180 "HEALTH_OK, every PG active+clean, the balancer done" clean
WJ osd dump > "$T/dump.json"
jq -e '[.osds[] | select((.public_addr | startswith("198.19.10.")) and (.cluster_addr | startswith("198.19.20.")))] | length == 6' \
	"$T/dump.json" > /dev/null || fail "addresses not picked by subnet: $(jq -c '.osds' "$T/dump.json")"
declare -A HOST_OF
while read -r id host; do HOST_OF[$id]=$host; done < <(jq -r '.osds[] | "\(.id) \(.host)"' "$T/dump.json")
[ "$(printf '%s\n' "${HOST_OF[@]}" | sort -u | tr '\n' ' ')" = "stor1 stor2 stor3 " ] ||
	fail "OSD hosts: ${HOST_OF[*]}"
bad=0
while read -r acting; do
	hs=$(for o in $acting; do echo "${HOST_OF[$o]}"; done | sort -u | wc -l)
	[ "$hs" = 3 ] || { log "PG with acting [$acting] spans $hs hosts"; bad=$((bad + 1)); }
done < <(WJ pg ls | jq -r '.. | objects | select(has("acting")) | .acting | map(tostring) | join(" ")')
[ "$bad" = 0 ] || fail "$bad PGs do not have their copies on 3 hosts"
log "ok: addresses from the subnets, 32 PGs each on 3 distinct hosts"

# --- step 4: the object and volume cases from a client on host 1
on_host 0 env WEFT_TEST_COPIES=3 "$IO" -c "$CONF" -p rbd verify 600 7 > "$T/io.out" 2>&1 || fail "object case (verify)"
grep -E "^ok|verified" "$T/io.out" | tail -2
on_host 0 env WEFT_TEST_OSDS=6 "$VOLIO" -c "$CONF" -p rbd 42 > "$T/vol.out" 2>&1 || fail "volume case"
log "ok: volume case ($(grep -c '^ok:' "$T/vol.out") checks)"

# --- step 5: version mismatch against real daemons
on_host 1 "$HELLO_PEER" mon 198.19.10.11:$PORT > "$T/hello-mon.out" 2>&1 || fail "mon hello refusal"
o0=$(jq -r '.osds[] | select(.id == 0) | .public_addr' "$T/dump.json")
on_host 1 "$HELLO_PEER" osd "$o0" > "$T/hello-osd.out" 2>&1 || fail "osd hello refusal"
grep -q "refusing client.future .*requires feature bits 0x10000000000" "$T/log/mon.a.log" ||
	fail "mon.a did not log the refusal"
grep -q "refusing client.future .*requires feature bits 0x10000000000" "$T/log/osd.0.log" ||
	fail "osd.0 did not log the refusal"
log "ok: a peer requiring an unknown feature is refused by mon.a and osd.0, and refuses them"
[ "$(WJ status | jq -r .health.status)" = HEALTH_OK ] || fail "cluster unhealthy after the refusals"

# --- step 6: host 3 dies
for n in "${!PIDS[@]}"; do
	case $n in mon.c | osd.*) ;; *) continue ;; esac
	if [ "$n" = mon.c ] || [ "${OSD_HOST[${n#osd.}]}" = 2 ]; then
		killtree "${PIDS[$n]}" && unset "PIDS[$n]"
	fi
done
ip -n "${HOSTS[2]}" link set vpub2 down
ip -n "${HOSTS[2]}" link set vclu2 down
log "host ${HN[2]} killed (mon.c and its OSDs SIGKILLed, links down)"
down4() { [ "$(WJ status | jq .osdmap.num_up_osds)" = 4 ]; }
wait_for 60 "its 2 OSDs marked down" down4
WJ pg ls > "$T/pgs-outage.out" 2>&1
on_host 0 env WEFT_TEST_COPIES=2+ "$IO" -c "$CONF" -p rbd readback 600 7 > "$T/io2.out" 2>&1 || fail "read back with a host down"
on_host 0 env WEFT_TEST_COPIES=2+ "$IO" -c "$CONF" -p rbd verify 200 9 > "$T/io3.out" 2>&1 ||
	fail "write with a host down (min_size 2)"
log "ok: with 2 of 3 hosts: every object reads back (2 or more identical copies), 200 rewritten"

# --- step 7: host 3 back: its OSD directories are gone, activate rebuilds them
ip -n "${HOSTS[2]}" link set vpub2 up
ip -n "${HOSTS[2]}" link set vclu2 up
for id in "${!OSD_HOST[@]}"; do
	[ "${OSD_HOST[$id]}" = 2 ] && rm -rf "$T/lib/osd/osd.$id"
done
on_host 2 "$BIN/weft" osd activate --all --no-start --bootstrap -c "$CONF" > "$T/activate.out" 2>&1 ||
	{ cat "$T/activate.out"; fail "osd activate --all"; }
for id in "${!OSD_HOST[@]}"; do
	[ "${OSD_HOST[$id]}" = 2 ] || continue
	grep -q "^osd.$id: activated" "$T/activate.out" || fail "osd.$id not activated: $(cat "$T/activate.out")"
	[ -L "$T/lib/osd/osd.$id/block" ] && [ "$(cat "$T/lib/osd/osd.$id/whoami")" = "$id" ] ||
		fail "osd.$id directory not rebuilt"
done
run_unit 2 weft-mon@.service c mon.c
for id in "${!OSD_HOST[@]}"; do
	[ "${OSD_HOST[$id]}" = 2 ] && run_unit 2 weft-osd@.service "$id" "osd.$id"
done
wait_for 180 "host ${HN[2]} back: HEALTH_OK, every PG active+clean, balanced" clean
on_host 0 env WEFT_TEST_COPIES=3 "$IO" -c "$CONF" -p rbd readback 200 9 > "$T/io4.out" 2>&1 || fail "read back after recovery"
log "PASS multihost: 3 hosts, 3 mons, 6 OSDs on loop devices, one host killed and back"
