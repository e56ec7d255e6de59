#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Functional tests of the monitors: real weft-mon processes on 127.1.0.x,
# the weft CLI, and fake OSDs (weft-fake-osd) speaking the protocol.
#
#   test_mon_cluster.sh CASE WEFT_MON WEFT FAKE_OSD
#   CASE: quorum | restart | osd
#
# The start-up (conf, mkfs, start/stop, waits) is scripts/cluster-lib.sh.
# Every wait is bounded (wait_for with a deadline; the CLI's --timeout), and
# every process we start is killed on exit by its pid.
set -u
CASE=$1 MON=$2 WEFT=$3 FAKE=$4
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }

case $CASE in
quorum) PORT=16100 ;;
restart) PORT=16200 ;;
osd) PORT=16300 ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
DIR=$(mktemp -d /tmp/weft-mon-$CASE.XXXXXX)
CONF=$DIR/weft.conf
FAKES=()
T0=$(date +%s.%N)

since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
fail() {
	log "FAIL: $*"
	for m in a b c; do echo "--- mon.$m log (tail)"; tail -n 25 "$DIR/mon.$m.log" 2>/dev/null; done
	exit 1
}
cleanup() {
	kill $(pgrep -P "$WATCHDOG") "$WATCHDOG" 2>/dev/null
	for m in "${!PIDS[@]}"; do kill -9 "${PIDS[$m]}" 2>/dev/null; done
	for p in "${FAKES[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
# Fail (and clean up) before ctest's 300 s timeout would SIGKILL us and leave mons behind.
(sleep 270 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'log "FAIL: watchdog: the case took longer than 270 s"; exit 1' TERM

# conf, mkfs, start/stop by pid, bounded waits: scripts/cluster-lib.sh, the
# start-up shared with scripts/cluster.sh. 3 mons, no OSDs (fakes come later).
MS=tcp NMON=3 NOSD=0 POOL_SIZE=2 POOL_MIN_SIZE=1 PG_NUM=16
CL_CONNECT_TIMEOUT=1s CL_PEER_TIMEOUT=3s CL_ELECTION_TIMEOUT=1500ms CL_HEARTBEAT_GRACE=3s
# small messages: full maps and long outputs must use the rendezvous
CL_CONF_EXTRA='[global]
	ms_msg_size = 1K
[mon]
	mon_osd_down_out_interval = 6s
	mon_osd_min_down_reporters = 2
	mon_allow_pool_delete = true'
# shellcheck source=../scripts/cluster-lib.sh
. "$(dirname "$0")/../scripts/cluster-lib.sh"
write_conf

leader_rank() { wj mon stat 2>/dev/null | jq -r '.leader_rank // empty'; }
have_leader() { [ -n "$(leader_rank)" ]; }
epoch() { wj status | jq -r '.osdmap.epoch'; }
osd_field() { wj osd dump | jq -e ".osds[] | select(.id == $1) | .$2 == $3"; }

mons_up
wait_for 30 "3 mons elect a leader" have_leader

case $CASE in
quorum)
	w pool create p1 --size 2 --min-size 1 --pg-num 8 || fail "pool create p1"
	w pool ls | grep -qx p1 || fail "p1 not listed"
	E1=$(epoch)
	L=$(leader_rank)
	LM=$(echo a b c | cut -d' ' -f$((L + 1)))
	log "leader is rank $L (mon.$LM), epoch $E1; kill -9 it"
	K0=$(date +%s.%N)
	stop_mon "$LM"
	wait_for 30 "a new leader after the old one was killed" sh -c \
		"r=\$($WEFT mon stat -c $CONF --timeout 5 --format json | jq -r '.leader_rank // empty'); [ -n \"\$r\" ] && [ \"\$r\" != $L ]"
	log "failover took $(since "$K0") s"
	[ "$(epoch)" -ge "$E1" ] || fail "epoch went back after failover"
	w pool ls | grep -qx p1 || fail "committed pool p1 lost after failover"
	w pool create p2 --pg-num 4 || fail "minority down: write failed"
	w pool set p2 pg_num 8 || fail "pool set"
	[ "$(wj pool ls | jq '.pools[] | select(.name=="p2") | .pg_num')" = 8 ] || fail "pool set not applied"
	wait_for 20 "status shows 1/3 mons down" sh -c "$WEFT status -c $CONF | grep -q '1/3 mons down'"
	# error paths: one line, non-zero exit
	out=$(w pool create p2 2>&1) && fail "duplicate pool create succeeded"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "error is not one line: $out"
	log "duplicate: $out"
	w osd down 42 2> /dev/null && fail "osd down of a missing osd succeeded"
	w pool rm p1 p1 --yes-i-really-really-mean-it || fail "pool rm"
	# majority down: writes fail cleanly within the timeout, reads say no quorum
	OTHER=""
	for m in a b c; do [ -n "${PIDS[mon.$m]:-}" ] && OTHER=$m; done
	stop_mon "$OTHER"
	log "killed mon.$OTHER too: majority down"
	S=$(date +%s)
	"$WEFT" pool create p3 -c "$CONF" --timeout 6 2> "$DIR/err" && fail "write succeeded without quorum"
	D=$(($(date +%s) - S))
	[ "$D" -le 15 ] || fail "write without quorum took ${D}s"
	log "write without quorum failed in ${D}s: $(cat "$DIR/err")"
	wait_for 20 "status says the quorum is lost" sh -c \
		"$WEFT status -c $CONF --timeout 5 | grep -q 'NO QUORUM'"
	w health | head -1 | grep -q HEALTH_ERR || fail "health is not HEALTH_ERR without quorum"
	;;
restart)
	w pool create r1 --pg-num 8 || fail "pool create"
	w pool create r2 --size 1 --min-size 1 || fail "pool create"
	w osd set noout || fail "osd set noout"
	# enough entries for a raft snapshot to be taken (threshold 256)
	for i in $(seq 1 140); do
		w osd set pause > /dev/null && w osd unset pause > /dev/null || fail "flag toggle $i"
	done
	E=$(epoch)
	DUMP=$(wj osd dump | jq -c 'del(.epoch)')
	log "epoch $E before the restart"
	for m in a b c; do stop_mon $m; done
	for m in a b c; do start_mon $m; done
	wait_for 30 "leader after restarting all mons" have_leader
	wait_for 20 "same epoch $E after restart" sh -c "[ \"\$($WEFT status -c $CONF --format json | jq .osdmap.epoch)\" = $E ]"
	[ "$(wj osd dump | jq -c 'del(.epoch)')" = "$DUMP" ] || fail "map differs after restart"
	grep -q "snapshot" "$DIR"/mon.*.log || fail "no raft snapshot was taken"
	for m in a b c; do
		wj mon stat > /dev/null || fail "mon stat"
	done
	w osd unset noout || fail "write after restart"
	;;
osd)
	for i in $(seq 1 12); do w pool create pool$i --pg-num 4 > /dev/null || fail "pool $i"; done
	U=00000000-0000-4000-8000-0000000000
	# each fake boots as osd.N with osd.N's key (cl_osd_key), as weft-osd does
	for i in 0 1 2 3 10 11 12; do cl_osd_key $i; done
	for i in 0 1 2 3; do
		args=(--uuid "${U}0$i" --host node$((i % 2)) --public "127.1.0.$((10 + i)):6800"
			--cluster "127.2.0.$((10 + i)):6800" --want-id $i --beacon-ms 500 --run 120)
		[ $i = 1 ] && args+=(--stop-beacon-after 4)
		"$FAKE" -c "$CONF" "${args[@]}" > "$DIR/osd$i.out" 2>&1 &
		FAKES+=($!)
	done
	wait_for 30 "4 fake OSDs booted" sh -c "[ \"\$($WEFT status -c $CONF --format json | jq .osdmap.num_up_osds)\" = 4 ]"
	w osd tree
	grep -q "booted osd" "$DIR/osd0.out" || fail "fake osd did not print its id"
	# The maps the fake OSDs follow are > ms_msg_size (1K): they came by rendezvous.
	[ "$(wj osd dump | wc -c)" -gt 1024 ] || fail "osd dump should exceed ms_msg_size"
	ID1=$(wj osd dump | jq ".osds[] | select(.uuid == \"${U}01\") | .id")
	wait_for 20 "osd.$ID1 marked down after the grace" osd_field "$ID1" up false
	grep -q "osd.$ID1 up,in -> down,in (.*no beacon" "$DIR"/mon.*.log || fail "down transition not logged with a reason"
	osd_field "$ID1" in true || fail "osd.$ID1 went out too early"
	wait_for 25 "osd.$ID1 marked out after the down-out interval" osd_field "$ID1" in false
	grep -q "osd.$ID1 down,in -> down,out (.*down for" "$DIR"/mon.*.log || fail "out transition not logged with a reason"
	# noout: a down OSD stays in
	w osd set noout || fail "set noout"
	kill -STOP "${FAKES[2]}"
	ID2=$(wj osd dump | jq ".osds[] | select(.uuid == \"${U}02\") | .id")
	wait_for 20 "osd.$ID2 down after it stopped" osd_field "$ID2" up false
	sleep 8
	osd_field "$ID2" in true || fail "osd.$ID2 went out despite noout"
	log "ok: osd.$ID2 still in with noout"
	w osd unset noout
	wait_for 25 "osd.$ID2 out once noout is unset" osd_field "$ID2" in false
	kill -CONT "${FAKES[2]}"
	# peer reports: two reporters mark osd.3 down though it beacons
	ID3=$(wj osd dump | jq ".osds[] | select(.uuid == \"${U}03\") | .id")
	ID0=$(wj osd dump | jq ".osds[] | select(.uuid == \"${U}00\") | .id")
	"$FAKE" -c "$CONF" --uuid "${U}10" --host node9 --public 127.1.0.30:6800 --want-id 10 \
		--report-failed "$ID3" --run 60 > "$DIR/r1.out" 2>&1 &
	FAKES+=($!)
	wait_for 20 "reporter booted" grep -q booted "$DIR/r1.out"
	sleep 2
	osd_field "$ID3" up true || fail "one reporter was enough (min is 2)"
	# min_down_reporters counts hosts: a second reporter on node9 adds nothing
	"$FAKE" -c "$CONF" --uuid "${U}11" --host node9 --public 127.1.0.31:6800 --want-id 11 \
		--report-failed "$ID3" --run 60 > "$DIR/r2.out" 2>&1 &
	FAKES+=($!)
	wait_for 20 "second reporter booted" grep -q booted "$DIR/r2.out"
	sleep 2
	osd_field "$ID3" up true || fail "two reporters on one host were enough (min is 2 hosts)"
	"$FAKE" -c "$CONF" --uuid "${U}12" --host node10 --public 127.1.0.32:6800 --want-id 12 \
		--report-failed "$ID3" --run 60 > "$DIR/r3.out" 2>&1 &
	FAKES+=($!)
	wait_for 20 "osd.$ID3 down after peer reports from 2 hosts" osd_field "$ID3" up false
	grep -q "osd.$ID3: reported failed by 3 peers on 2 hosts" "$DIR"/mon.*.log || fail "report reason not logged"
	# manual transitions
	w osd in "$ID1" || fail "osd in"
	osd_field "$ID1" in true || fail "osd in not applied"
	w osd out "$ID0" && w osd down "$ID0" || fail "osd out/down"
	# a subscriber that survives a mon failure keeps following the map
	L=$(leader_rank)
	LM=$(echo a b c | cut -d' ' -f$((L + 1)))
	stop_mon "$LM"
	wait_for 30 "new leader" have_leader
	w pool create after-failover > /dev/null || fail "write after failover"
	E=$(epoch)
	wait_for 20 "fake osd.0 follows the map to epoch $E across the failover" \
		grep -qx "epoch $E" "$DIR/osd0.out"
	;;
esac
log "PASS $CASE"
exit 0
