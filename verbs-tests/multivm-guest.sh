#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of verbs-tests/multivm.sh, in VM number WEFT_VM_INDEX (0..2):
# a mon (a, b, c) and one OSD (osd.INDEX) over verbs on rxe0, from the host
# build WEFT_BUILD, with the conf in the share WEFT_SHARE (logs land there
# too). VM 0 is also the client: it waits for the quorum and the three
# OSDs, makes a size-3 pool, checks every PG has its copies on the three
# VMs, runs the object I/O case (test_osd_io verify: write, read back, and
# compare each OSD's own copy, so every byte crossed between VMs) and
# writes $WEFT_SHARE/done with its verdict; the others serve until then.
# Every VM then stops its daemons with SIGTERM and fails on a sanitizer
# report or a daemon that died early.
set -uo pipefail
: "${WEFT_BUILD:?}" "${WEFT_VM_INDEX:?}" "${WEFT_SHARE:?}" "${WEFT_GUEST_DEADLINE:?}"
K=$WEFT_VM_INDEX
MONS=(a b c)
M=${MONS[$K]}
CONF=$WEFT_SHARE/weft.conf
LOGS=$WEFT_SHARE/log
B=$WEFT_BUILD
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s: %s\n' "$(since "$T0")" "$(hostname)" "$*"; }
declare -A PIDS
VERDICT=1
finish() {
	local rc=$1 n pid st
	# a failed case: what this VM's OSD still holds, before it stops (the host prints it)
	if [ "$rc" != 0 ] || [ "$(cat "$WEFT_SHARE/done" 2> /dev/null || echo 0)" != 0 ]; then
		{
			echo "ops in flight:"
			timeout 20 "$B/tools/weft" daemon "osd.$K" ops in flight -c "$CONF" 2>&1
			echo "perf dump:"
			timeout 20 "$B/tools/weft" daemon "osd.$K" perf dump -c "$CONF" 2>&1
		} > "$LOGS/osd.$K.diag.out" 2>&1
	fi
	[ "$K" = 0 ] && echo "$rc" > "$WEFT_SHARE/done.tmp" && mv "$WEFT_SHARE/done.tmp" "$WEFT_SHARE/done"
	for n in "${!PIDS[@]}"; do
		pid=${PIDS[$n]}
		if ! kill -0 "$pid" 2> /dev/null; then
			wait "$pid"
			log "FAIL: $n had exited before the end (status $?)"
			rc=1
			continue
		fi
		kill -TERM "$pid"
		for _ in $(seq 1 300); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
		kill -0 "$pid" 2> /dev/null && { log "$n still runs 30 s after SIGTERM: SIGKILL"; kill -9 "$pid"; }
		wait "$pid"
		st=$?
		if [ "$st" != 0 ]; then
			# its own words next to the verdict: the host prints only log tails
			log "FAIL: $n exited with $st after SIGTERM; its errors and stderr:"
			grep -h " ERROR: \| WARN: " "$LOGS/$n.log" 2> /dev/null | tail -n 12
			tail -n 12 "$LOGS/$n.out" 2> /dev/null
			rc=1
		fi
	done
	# stderr (.out) too: that is where a sanitizer writes
	grep -l "ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer" "$LOGS/mon.$M.log" "$LOGS/osd.$K.log" \
		"$LOGS/mon.$M.out" "$LOGS/osd.$K.out" "$LOGS"/client*.log 2> /dev/null |
		while read -r f; do log "FAIL: sanitizer report in $(basename "$f")"; done | grep . && rc=1
	log "done: $([ "$rc" = 0 ] && echo ok || echo "FAILED ($rc)")"
	exit "$rc"
}
fail() {
	log "FAIL: $*"
	finish 1
}
trap 'fail "terminated"' TERM

log "kernel $(uname -r), $(nproc) vCPU, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB;" \
	"eth0 $(ip -4 -o addr show dev eth0 | awk '{ print $4 }') mtu $(cat /sys/class/net/eth0/mtu)"
[ -d /sys/class/infiniband/rxe0 ] || fail "no rxe0 (Soft-RoCE on eth0) in this VM"
p=/sys/class/infiniband/rxe0/ports/1
# the GID table has hundreds of empty entries: one grep reads them all (a
# process per entry costs minutes under TCG)
gids() {
	local g i
	grep -H -v '^0000:0000:0000:0000:0000:0000:0000:0000$' $p/gids/* 2> /dev/null | while IFS=: read -r g v; do
		i=${g##*/}
		echo "$i=$v($(cat $p/gid_attrs/types/$i 2> /dev/null))"
	done | tr '\n' ' '
}
MTU=$(ibv_devinfo -d rxe0 2> /dev/null | awk '/active_mtu/ { print $2; exit }')
log "rxe0 port 1: $(cat $p/state), active MTU $MTU, GIDs: $(gids)"
# the GID rdma_cm must pick for our IPv4 address: its RoCEv2 IPv4-mapped one
V4GID=$(grep -l '^0000:0000:0000:0000:0000:ffff:' $p/gids/* 2> /dev/null | while read -r g; do
	[ "$(cat "$p/gid_attrs/types/${g##*/}" 2> /dev/null)" = "RoCE v2" ] && echo "${g##*/}"
done | head -n 1)
[ -n "$V4GID" ] && [ -n "$MTU" ] || fail "no RoCEv2 IPv4 GID or no active MTU on rxe0"
echo "$V4GID $MTU" > "$WEFT_SHARE/path.$K"
ulimit -l unlimited
mkdir -p /tmp/weft

W() { "$B/tools/weft" "$@" -c "$CONF" --timeout 30; }
WJ() { W "$@" --format json; }
wait_for() { # wait_for SECONDS WHAT CMD...: poll, fail when a daemon died or time ran out
	local secs=$1 what=$2 end n next
	shift 2
	end=$(($(date +%s) + secs))
	next=$(($(date +%s) + 30))
	until "$@" > /dev/null 2>&1; do
		for n in "${!PIDS[@]}"; do
			kill -0 "${PIDS[$n]}" 2> /dev/null || fail "$n died: $(tail -n 2 "$LOGS/$n.log" | tr '\n' ' ')"
		done
		[ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s: $what"
		[ "$(date +%s)" -lt "$next" ] || { log "still waiting for: $what"; next=$((next + 30)); }
		sleep 1
	done
	log "ok: $what"
}

# --- the mon and the OSD of this VM
"$B/mon/weft-mon" --mkfs -i "$M" -c "$CONF" >> "$LOGS/mon.$M.out" 2>&1 || fail "mkfs mon.$M"
"$B/mon/weft-mon" -i "$M" -c "$CONF" < /dev/null >> "$LOGS/mon.$M.out" 2>&1 &
PIDS[mon.$M]=$!
mkdir -p "/tmp/weft/osd.$K"
# osd.K's key (docs/security.md): the mons make it once they are in quorum
quorum3() { [ "$(WJ mon stat | jq '.quorum | length')" = 3 ]; }
wait_for 300 "3 mons in quorum (mon.a, mon.b, mon.c on 3 VMs)" quorum3
(umask 077 && W auth get-or-create "osd.$K" mon "profile osd" osd "profile osd" \
	> "/tmp/weft/osd.$K/keyring") || fail "weft auth get-or-create osd.$K"
"$B/osd/weft-osd" --mkfs -i "$K" -c "$CONF" >> "$LOGS/osd.$K.out" 2>&1 || fail "mkfs osd.$K"
"$B/osd/weft-osd" -i "$K" -c "$CONF" < /dev/null >> "$LOGS/osd.$K.out" 2>&1 &
PIDS[osd.$K]=$!
log "mon.$M and osd.$K started"

if [ "$K" != 0 ]; then
	# serve until the client's VM says it is done (or the deadline)
	while [ ! -f "$WEFT_SHARE/done" ]; do
		[ "$(date +%s)" -lt "$WEFT_GUEST_DEADLINE" ] || fail "no verdict from vm1 before the deadline"
		for n in "${!PIDS[@]}"; do
			kill -0 "${PIDS[$n]}" 2> /dev/null || fail "$n died: $(tail -n 2 "$LOGS/$n.log" | tr '\n' ' ')"
		done
		sleep 2
	done
	log "vm1 is done ($(cat "$WEFT_SHARE/done")): stopping"
	finish 0
fi

# --- VM 0: the client
up3() { [ "$(WJ status | jq .osdmap.num_up_osds)" = 3 ]; }
wait_for 300 "3 OSDs up" up3
WJ osd dump > /tmp/weft/dump.json || fail "osd dump"
jq -e '[.osds[] | select((.public_addr | startswith("198.19.30.")) and (.cluster_addr | startswith("198.19.30.")))] | length == 3' \
	/tmp/weft/dump.json > /dev/null || fail "OSD addresses not on 198.19.30.0/24: $(jq -c .osds /tmp/weft/dump.json)"
hosts=$(jq -r '[.osds[].host] | unique | join(" ")' /tmp/weft/dump.json)
[ "$hosts" = "wvm1 wvm2 wvm3" ] || fail "OSD hosts: $hosts"
for i in 0 1 2; do
	grep -q "fabric verbs" "$LOGS/osd.$i.log" || fail "osd.$i does not run over verbs: $(grep -m1 fabric "$LOGS/osd.$i.log")"
done
log "osd.0-2 on wvm1-3 over verbs: $(jq -r '[.osds[] | "osd.\(.id) \(.public_addr)"] | join(", ")' /tmp/weft/dump.json)"
W pool create rbd --size 3 --min-size 2 --pg-num 16 > /dev/null || fail "pool create"
clean() {
	[ "$(WJ status | jq -r '.health.status + " " + ((.pgmap.inactive_pgs // 0) | tostring)')" = "HEALTH_OK 0" ] &&
		[ "$(WJ pg ls | jq '[.. | objects | select(has("acting")) | select(.state != "active+clean")] | length')" = 0 ]
}
wait_for 300 "HEALTH_OK, every PG active+clean" clean
bad=$(WJ pg ls | jq '[.. | objects | select(has("acting")) | select((.acting | unique | length) != 3)] | length')
[ "$bad" = 0 ] || fail "$bad PGs do not have 3 distinct OSDs (hosts)"
log "ok: 16 PGs, each on the 3 VMs"

N=${WEFT_MULTIVM_OBJECTS:-40}
env WEFT_TEST_COPIES=3 "$B/tests/test_osd_io" -c "$CONF" -p rbd verify "$N" 19 > "$LOGS/client-io.log" 2>&1 || {
	tail -n 20 "$LOGS/client-io.log"
	fail "object case over verbs between VMs"
}
grep -E "^(writing|ok|verified)" "$LOGS/client-io.log" | tail -n 3 | sed 's/^/  /'
# the connections were RDMA ones between the VMs: every OSD's domain opened rxe0
for i in 0 1 2; do
	grep -q "domain open: .*active MTU" "$LOGS/osd.$i.log" || fail "osd.$i: no verbs domain line"
	grep -q "MTU mismatch" "$LOGS/osd.$i.log" && fail "osd.$i: MTU mismatch between VMs"
done
# rdma_cm between hosts: every connection of an OSD (made to the mons and
# its peers, accepted from peers and the client) used its VM's IPv4 RoCEv2
# GID and the active MTU (the verbs backend logs the QP's path when a
# connection is established)
for i in 0 1 2; do
	read -r gid mtu < "$WEFT_SHARE/path.$i" || fail "no path.$i from vm$((i + 1))"
	grep -E "connected (to|from) 198\.19\.30\." "$LOGS/osd.$i.log" > /tmp/weft/conn.$i
	[ -s /tmp/weft/conn.$i ] || fail "osd.$i: no verbs connection logged"
	bad=$(grep -vc "sgid index $gid, path MTU $mtu)" /tmp/weft/conn.$i)
	[ "$bad" = 0 ] || fail "osd.$i: $bad connections not on GID $gid / MTU $mtu: $(grep -v "sgid index $gid, path MTU $mtu)" /tmp/weft/conn.$i | head -n 2)"
	log "osd.$i: $(wc -l < /tmp/weft/conn.$i) connections (mons, peers, clients), all on sgid index $gid, path MTU $mtu"
done
log "$(grep -m1 -o 'domain open: .*' "$LOGS/osd.1.log")"
# a QP the verbs backend found stalled and failed (docs/verbs.md): the case
# recovered by resending, but it is a fault below us worth seeing
grep -h "no completion for" "$LOGS"/*.log 2> /dev/null | sed 's/^/  note: stalled QP: /'

VERDICT=0
log "ok: object case over verbs between 3 VMs ($N objects, every OSD's copy compared)"
finish "$VERDICT"
