#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The monitors' Raft port is authenticated (docs/security.md, "The Raft
# port"): 3 real mons; attackers (tests/raft_peer.c) on the leader's and a
# follower's Raft port, each from its own loopback address:
#   raw       canonical raft's own handshake, a RequestVote for a huge term
#             and an AppendEntries carrying a map increment (pool "evil")
#   wrongkey  the Weft handshake with a random key, then raft bytes
#   replay    a recorded honest handshake, replayed on a new connection
#   hold      40 connections held open without a byte (a quarter of
#             mon_raft_unauth_max per IP are admitted, the rest closed at
#             once; the admitted ones dropped at mon_raft_handshake_timeout)
# Each is refused and logged once naming the peer; the quorum is unaffected
# (same leader, same term), the log unchanged (same raft last index, same
# map epoch on every mon), and honest `weft status` and writes keep working.
# Then a monitor with the wrong mon. key cannot rejoin (both sides log it),
# and rejoins once its key is right again.
#
#   test_mon_raft_auth.sh PORT WEFT_MON WEFT RAFT_PEER
set -u
PORT=$1 MON=$2 WEFT=$3 PEER=$4
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }
DIR=$(mktemp -d /tmp/weft-raft-auth.XXXXXX)
CONF=$DIR/weft.conf
T0=$(date +%s.%N)
FSID=6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
fail() {
	log "FAIL: $*"
	for m in a b c; do echo "--- mon.$m log (tail)"; tail -n 30 "$DIR/mon.$m.log" 2> /dev/null; done
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
(sleep 240 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'log "FAIL: watchdog: the case took longer than 240 s"; exit 1' TERM

MS=tcp NMON=3 NOSD=0
CL_ELECTION_TIMEOUT=1000ms
CL_CONF_EXTRA="[global]
	fsid = $FSID
[mon]
	mon_raft_handshake_timeout = 2s
	mon_raft_unauth_max = 16"
# shellcheck source=../scripts/cluster-lib.sh
. "$(dirname "$0")/../scripts/cluster-lib.sh"
write_conf

raft_addr() { echo "127.1.0.$((1 + $1)):$((PORT + 5 + $1))"; }
perf() { "$WEFT" perf dump "mon.$1" -c "$CONF" --timeout 5; }
leader_rank() { wj mon stat 2> /dev/null | jq -r '.leader_rank // empty'; }
quorum3() { [ "$(wj mon stat 2> /dev/null | jq '.quorum | length')" = 3 ]; }
# the state an attacker must not change: per mon term, raft last index, map epoch
state() {
	local m
	for m in a b c; do perf "$m" | jq -r '"\(.mon) \(.raft.term) \(.raft.last_index) \(.map_epoch)"'; done
}
refusals() { grep -c "raft port: refused $2:" "$DIR/mon.$1.log"; }
attack() { # attack MODE RANK BIND [ARGS...]: the peer must report a refusal
	local mode=$1 rank=$2 bind=$3
	shift 3
	"$PEER" "$mode" --to "$(raft_addr "$rank")" --bind "$bind" --fsid "$FSID" "$@" \
		> "$DIR/peer.out" 2>&1 || { cat "$DIR/peer.out"; fail "$mode against rank $rank"; }
	log "$mode -> mon.${CL_MON_IDS[$rank]}: $(tail -n 1 "$DIR/peer.out")"
}

mons_up
wait_for 30 "3 mons in quorum" quorum3
w pool create p1 --pg-num 8 > /dev/null || fail "pool create"
grep -q "raft port 127.1.0.1:$((PORT + 5)): peers must prove the mon. key" "$DIR/mon.a.log" ||
	fail "mon.a does not say its Raft port is authenticated"
L=$(leader_rank)
LM=${CL_MON_IDS[$L]}
F=$(((L + 1) % 3))
FM=${CL_MON_IDS[$F]}
# settled: the same state twice, a second apart
BEFORE=$(state)
for _ in $(seq 1 20); do
	sleep 1
	S=$(state)
	[ "$S" = "$BEFORE" ] && break
	BEFORE=$S
done
log "leader mon.$LM (rank $L); state before: $(echo "$BEFORE" | tr '\n' ';')"
E=$(map_epoch)

# honest readers run through every attack
(for _ in $(seq 1 300); do
	[ -e "$DIR/stop-readers" ] && exit 0
	"$WEFT" status -c "$CONF" --timeout 10 > /dev/null || { echo bad >> "$DIR/readers"; exit 1; }
	sleep 0.1
done) &
READERS=$!

# 1. raw raft bytes: raft's own transport would take them from anyone
attack raw "$L" 127.1.0.61 --term 1000000 --epoch $((E + 1))
attack raw "$F" 127.1.0.61 --term 1000000 --epoch $((E + 1))
# 2. the handshake with a wrong key
attack wrongkey "$L" 127.1.0.62
attack wrongkey "$F" 127.1.0.62
# 3. a recorded honest handshake (made with the key, as a wiretap would see it), replayed
attack replay "$L" 127.1.0.63 --keyring "$DIR/keyring" --from 99 --to-id $((L + 1))
grep -q "replay: recorded an honest handshake" "$DIR/peer.out" || fail "no honest recording"
grep -q "raft port: mon.z at 127.1.0.63:.* authenticated" "$DIR/mon.$LM.log" ||
	fail "the honest recording was not accepted"

# refused, and logged once per peer and reason, naming the peer
for r in "$L" "$F"; do
	m=${CL_MON_IDS[$r]}
	n=$(refusals "$m" 127.1.0.61)
	[ "$n" = 1 ] || fail "mon.$m logged $n refusals of 127.1.0.61 (raw), want 1"
	n=$(refusals "$m" 127.1.0.62)
	[ "$n" = 1 ] || fail "mon.$m logged $n refusals of 127.1.0.62 (wrong key), want 1"
done
grep "raft port: refused 127.1.0.61:" "$DIR/mon.$LM.log" | grep -q "not a Weft raft handshake" ||
	fail "the raw refusal does not say why"
grep "raft port: refused 127.1.0.62:" "$DIR/mon.$LM.log" | grep -q "mon.x's proof does not verify" ||
	fail "the wrong-key refusal does not say why"
[ "$(refusals "$LM" 127.1.0.63)" = 1 ] || fail "the replay was not refused exactly once in the log"
grep "raft port: refused 127.1.0.63:" "$DIR/mon.$LM.log" | grep -q "proof does not verify" ||
	fail "the replay refusal does not say why"

# 4. connections held open: a quarter of mon_raft_unauth_max per IP, dropped at the timeout
S0=$(perf "$LM" | jq .raft_port)
"$PEER" hold --to "$(raft_addr "$L")" --bind 127.1.0.64 --count 40 --seconds 4 > "$DIR/hold.out" 2>&1 &
HOLD=$!
sleep 1
# meanwhile a follower restarts: its own address still gets through to the leader
stop_mon "$FM"
start_mon "$FM"
wait "$HOLD" || fail "hold: $(cat "$DIR/hold.out")"
log "hold: $(cat "$DIR/hold.out")"
grep -q "held 40 closed_early 40" "$DIR/hold.out" || fail "not every held connection was closed by mon.$LM"
S1=$(perf "$LM" | jq .raft_port)
OL=$(($(echo "$S1" | jq .over_limit) - $(echo "$S0" | jq .over_limit)))
TO=$(($(echo "$S1" | jq .timed_out) - $(echo "$S0" | jq .timed_out)))
[ "$OL" = 36 ] && [ "$TO" = 4 ] || fail "hold: over_limit +$OL (want 36), timed_out +$TO (want 4)"
[ "$(echo "$S1" | jq .in_handshake)" = 0 ] || fail "handshakes left open: $S1"
grep "raft port: refused 127.1.0.64:" "$DIR/mon.$LM.log" > "$DIR/hold.log"
[ "$(wc -l < "$DIR/hold.log")" = 2 ] || { cat "$DIR/hold.log"; fail "hold: not one line per reason"; }
grep -q "handshakes from 127.1.0.64 already in progress" "$DIR/hold.log" || fail "hold: no limit line"
grep -q "no complete handshake within 2000 ms" "$DIR/hold.log" || fail "hold: no timeout line"
wait_for 30 "mon.$FM back in the quorum after its restart during the flood" quorum3

touch "$DIR/stop-readers"
wait "$READERS"
[ ! -e "$DIR/readers" ] || fail "an honest weft status failed during the attacks"
AFTER=$(state)
# the restarted follower's term and index are the same as everyone's: compare all three
[ "$AFTER" = "$BEFORE" ] || fail "the attacks changed raft: before '$BEFORE', after '$AFTER'"
[ "$(leader_rank)" = "$L" ] || fail "the leader changed"
wj pool ls | jq -e '.pools[] | select(.name == "evil")' > /dev/null && fail "pool evil exists"
w osd set noout > /dev/null && w osd unset noout > /dev/null || fail "an honest write after the attacks"
[ "$(map_epoch)" = $((E + 2)) ] || fail "epoch $(map_epoch), want $((E + 2))"
log "raft, map and quorum unchanged by the attacks; honest reads and writes ok"

# 5. a monitor with the wrong mon. key: refused both ways, logged, quorum of two goes on
CR=2
[ "$L" = 2 ] && CR=1
CM=${CL_MON_IDS[$CR]}
stop_mon "$CM" TERM
cp "$DIR/mon.$CM/keyring" "$DIR/good.keyring"
OTHER=$(awk '$1 == "key" { print $3; exit }' "$DIR/keyring")
NEW=$(head -c 32 /dev/urandom | base64)
sed -i "/^\[mon\.\]/,/^\[/ s|key = .*|key = $NEW|" "$DIR/mon.$CM/keyring"
grep -q "$NEW" "$DIR/mon.$CM/keyring" || fail "could not change mon.$CM's key"
[ "$OTHER" != "$NEW" ] || fail "the new key is the old one"
start_mon "$CM"
wait_for 30 "mon.$CM refused (wrong mon. key)" \
	grep -q "raft port: refused 127.1.0.$((1 + CR)):.*mon.$CM's proof does not verify" \
	"$DIR/mon.$LM.log"
wait_for 30 "mon.$CM says its handshake failed" grep -q "raft port: handshake with raft id .* failed" \
	"$DIR/mon.$CM.log"
# asked of the leader: the locked-out monitor answers from its own view, without a leader
quorum2() {
	[ "$(wj mon stat --mon_host="$(mon_addr "$L")" 2> /dev/null | jq '.quorum | length')" = 2 ]
}
wait_for 20 "a quorum of two without mon.$CM" quorum2
w osd set noout > /dev/null || fail "a write with one mon locked out"
sleep 3
quorum2 || fail "mon.$CM joined the quorum with a wrong key"
stop_mon "$CM" TERM
cp "$DIR/good.keyring" "$DIR/mon.$CM/keyring"
start_mon "$CM"
wait_for 30 "mon.$CM back in the quorum with the right key" quorum3
w osd unset noout > /dev/null || fail "write after mon.$CM came back"
cl_check_alive
log "PASS"
