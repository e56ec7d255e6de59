#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The service keys that seal tickets, in the monitors' replicated state
# (docs/security.md, "Service keys"): 3 real mons with
# auth_service_ticket_ttl = 20s (a rotation every 10 s, retired keys kept
# 25 s). The first leader makes a current and a pending key; they rotate on
# schedule; every mon holds the same set; no key shows in the map, status
# or `auth ls`; a leader kill does not stop the schedule; after enough
# entries for a Raft snapshot, all mons are restarted: the snapshot carried
# the keys, every key (id, state, fingerprint) is still there, and the
# rotation goes on from the next id.
#
#   test_mon_svc_keys.sh PORT WEFT_MON WEFT
set -u
PORT=$1 MON=$2 WEFT=$3
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }
DIR=$(mktemp -d /tmp/weft-svc-keys.XXXXXX)
CONF=$DIR/weft.conf
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
fail() {
	log "FAIL: $*"
	for m in a b c; do echo "--- mon.$m log (tail)"; tail -n 25 "$DIR/mon.$m.log" 2> /dev/null; done
	exit 1
}
cleanup() {
	kill "$WATCHDOG" 2> /dev/null
	for m in "${!PIDS[@]}"; do kill -9 "${PIDS[$m]}" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$DIR"
}
declare -A PIDS
trap cleanup EXIT
(sleep 250 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'log "FAIL: watchdog: the case took longer than 250 s"; exit 1' TERM

MS=tcp NMON=3 NOSD=0
CL_ELECTION_TIMEOUT=1000ms
CL_CONF_EXTRA="[mon]
	auth_service_ticket_ttl = 20s"
# shellcheck source=../scripts/cluster-lib.sh
. "$(dirname "$0")/../scripts/cluster-lib.sh"
write_conf

svc() { "$WEFT" auth service-keys -c "$CONF" --timeout 10 --format json "$@"; }
# "id:state:fingerprint" lines, from the mon answering (the leader)
svc_lines() { svc | jq -r '.keys[] | "\(.id):\(.state):\(.fingerprint)"'; }
current_id() { svc 2> /dev/null | jq -e '.keys[] | select(.state == "current") | .id'; }
pending_id() { svc 2> /dev/null | jq -e '.keys[] | select(.state == "pending") | .id'; }
current_past() { local c; c=$(current_id) && [ "$c" -gt "$1" ]; }
leader_rank() { wj mon stat 2> /dev/null | jq -r '.leader_rank // empty'; }
new_leader() { local r; r=$(leader_rank); [ -n "$r" ] && [ "$r" != "$1" ]; }
quorum3() { [ "$(wj mon stat 2> /dev/null | jq '.quorum | length')" = 3 ]; }

mons_up
first_keys() { current_id && pending_id; }
wait_for 30 "the first leader makes a current and a pending key" first_keys
C1=$(current_id) P1=$(pending_id)
[ "$C1" = 1 ] && [ "$P1" = 2 ] || fail "first keys: current $C1, pending $P1 (want 1, 2)"
svc > "$DIR/svc.json" || fail "auth service-keys"
jq -e '.ticket_ttl_sec == 20 and .rotate_every_sec == 10 and .grace_sec == 25' "$DIR/svc.json" \
	> /dev/null || { cat "$DIR/svc.json"; fail "schedule not from auth_service_ticket_ttl"; }
"$WEFT" auth service-keys -c "$CONF" > "$DIR/svc.txt" || fail "auth service-keys (plain)"
grep -q "^1 *current " "$DIR/svc.txt" && grep -q "^2 *pending " "$DIR/svc.txt" ||
	{ cat "$DIR/svc.txt"; fail "plain output"; }
log "first keys: 1 current, 2 pending"

# on schedule: key 2 current within ~10 s, key 1 retired with its grace
wait_for 20 "a rotation on schedule" current_past 1
svc > "$DIR/svc.json"
jq -e '[.keys[] | .state] == ["retired", "current", "pending"] and
	(.keys[0] | .opens_tickets_until == .retired + 25)' "$DIR/svc.json" > /dev/null ||
	{ cat "$DIR/svc.json"; fail "after one rotation"; }
# every mon applies the same rotation (the log line names the ids)
for m in a b c; do
	wait_for 10 "mon.$m applies the rotation" grep -q \
		"service keys rotated: key 2 current, key 3 pending" "$DIR/mon.$m.log"
done
# never a key: not in the map, status or auth ls, and the output has no 44-character key
for c in status "osd dump" "mon stat"; do
	# shellcheck disable=SC2086
	wj $c | grep -qi "service\|fingerprint" && fail "service keys show in '$c'"
done
[ "$(wj auth ls | jq '.auth | length')" = 2 ] || fail "auth ls lists more than client.admin and mon."
grep -qE '[A-Za-z0-9+/]{43}=' "$DIR/svc.json" && fail "auth service-keys shows a key"
log "rotation on schedule, applied by every mon, no key shown"

# a leader kill: the new leader keeps the schedule
L=$(leader_rank)
LM=${CL_MON_IDS[$L]}
C=$(current_id)
stop_mon "$LM" KILL
wait_for 30 "a new leader after mon.$LM was killed" new_leader "$L"
wait_for 25 "a rotation by the new leader" current_past "$C"
start_mon "$LM"
wait_for 30 "mon.$LM back" quorum3

# enough entries for a Raft snapshot (threshold 256), then every mon restarted
for i in $(seq 1 140); do
	w osd set pause > /dev/null && w osd unset pause > /dev/null || fail "flag toggle $i"
done
grep -q "snapshot of the map at epoch .*, of 2 auth entities and [1-9] service keys" \
	"$DIR"/mon.*.log || fail "no snapshot with the service keys"
C=$(current_id)
wait_for 25 "a fresh rotation before the restart" current_past "$C"
BEFORE=$(svc_lines)
log "before the restart: $(echo "$BEFORE" | tr '\n' ' ')"
for m in a b c; do stop_mon "$m" TERM; done
for m in a b c; do start_mon "$m"; done
wait_for 30 "3 mons back" quorum3
AFTER=$(svc_lines)
log "after the restart: $(echo "$AFTER" | tr '\n' ' ')"
grep -q "restored the map at epoch .*, 2 auth entities and [1-9] service keys from a snapshot" \
	"$DIR"/mon.*.log || fail "no mon restored service keys from a snapshot"
# every key held before is still there with the same fingerprint (a rotation since may
# have moved it on to retired, never changed it)
while IFS=: read -r id state fp; do
	echo "$AFTER" | grep -q "^$id:.*:$fp$" || fail "key $id ($state, $fp) lost or changed in the restart"
done <<< "$BEFORE"
MAXID=$(echo "$AFTER" | tail -n 1 | cut -d: -f1)
C=$(current_id)
wait_for 25 "the rotation goes on after the restart" current_past "$C"
NEWMAX=$(svc_lines | tail -n 1 | cut -d: -f1)
[ "$NEWMAX" = $((MAXID + 1)) ] || fail "next pending key is $NEWMAX, want $((MAXID + 1))"
! grep -q "refusing\|service key .* skipped" "$DIR"/mon.*.log ||
	{ grep "refusing\|service key .* skipped" "$DIR"/mon.*.log; fail "a mon refused or skipped an entry"; }
cl_check_alive
log "PASS"
