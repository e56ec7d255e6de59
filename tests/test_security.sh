#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The security suite (ctest label security, docs/security.md): a real
# cluster on loopback (3 monitors, 2 OSDs, pool rbd of size 2) and attacks
# on it by tests/auth_peer.c (a peer speaking the wire frame by frame) and
# by the CLI with the wrong keys. Each attack asserts the refusal, exactly
# one refusal line naming the attacker's address in the monitors' logs, and
# that the honest clients running all along (a journaling writer,
# tests/thrash_io.c, and a loop of `weft status`) never saw a failed op.
#
#   test_security.sh CASE PORT BUILD
#   CASE: handshake | caps | osd | insecure
#     handshake  no key, a wrong key, a removed key, a rotated-out key after
#                its grace (and an open session of it closed then), a
#                recorded session replayed, a frame with a bad MAC, an
#                impostor monitor reflecting the client's nonce or proof, a
#                relay between a client and a monitor
#     caps       a read-only client changing the map and reading keys, a
#                client key booting as an OSD and sending a failure report,
#                osd.N speaking for osd.M, admin commands by a client key;
#                a ticket for the OSDs (the grant opens under the session's
#                seal key), refused to an entity without osd caps
#     osd        the OSDs' connections: no key and a key (not a ticket) on an
#                OSD's public port, a client's real ticket on the cluster
#                network (closed at its first message), a read-only client
#                and a client of another pool writing (permission denied),
#                reads allowed by osd 'allow r' and refused to another
#                pool's client; one refusal line per attack in the OSD logs
#     insecure   auth_*_required = none: every daemon warns, `weft health`
#                has AUTH_INSECURE, a client without a key is served
set -u
CASE=$1 PORT=$2 BUILD=$3
MON=$BUILD/mon/weft-mon OSD=$BUILD/osd/weft-osd WEFT=$BUILD/tools/weft
PEER=$BUILD/tests/auth_peer IO=$BUILD/tests/thrash_io
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }

DIR=$(mktemp -d /tmp/weft-sec-$CASE.XXXXXX)
CONF=$DIR/weft.conf
T0=$(date +%s.%N)
STATUS_LOOP=""

since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
fail() {
	log "FAIL: $*"
	for f in "$DIR"/*.log "$DIR"/*.out; do
		[ -e "$f" ] || continue
		echo "--- $(basename "$f") (tail)"
		tail -n "${WEFT_TEST_LOG_TAIL:-15}" "$f"
	done
	exit 1
}
cleanup() {
	kill $(pgrep -P "$WATCHDOG") "$WATCHDOG" 2>/dev/null
	[ -n "$STATUS_LOOP" ] && kill "$STATUS_LOOP" 2>/dev/null
	for p in "${!PIDS[@]}"; do kill -9 "${PIDS[$p]}" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${WEFT_TEST_SAVE_LOGS:-}" ] && cp "$DIR"/*.log "$DIR"/*.out "$WEFT_TEST_SAVE_LOGS"/ 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
(sleep 420 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'log "FAIL: watchdog: the case took longer than 420 s"; exit 1' TERM

MS=tcp NMON=3 NOSD=2 POOL=rbd POOL_SIZE=2 POOL_MIN_SIZE=2 PG_NUM=16
CL_ELECTION_TIMEOUT=1500ms
[ "$CASE" = insecure ] && CL_AUTH=none
# short grace: the rotated-out key must stop inside the test
CL_CONF_EXTRA='[mon]
	mon_auth_rotate_grace = 8s'
# shellcheck source=../scripts/cluster-lib.sh
. "$(dirname "$0")/../scripts/cluster-lib.sh"

# the attacker's own address: its refusal lines name it
ATTACKER=127.1.0.77

mon0=$(mon_addr 0)
mon1=$(mon_addr 1)
peer() { "$PEER" -c "$CONF" -b "$ATTACKER" "$@"; }

# refusals_of PATTERN: refusal lines in the monitors' logs matching PATTERN
refusals_of() {
	cat "$DIR"/mon.*.log | grep -E "refused|denied|fails its MAC|past its grace" | grep -cE -- "$1"
}
# one_refusal LOCAL_ADDR WHAT: exactly one refusal line names the attacker's address
one_refusal() {
	local n
	n=$(refusals_of "$1")
	[ "$n" = 1 ] || { grep -h -- "$1" "$DIR"/mon.*.log; fail "$2: $n refusal lines name $1 (want 1)"; }
	log "ok: $2: refused, one line: $(grep -h -- "$1" "$DIR"/mon.*.log | grep -E "refused|denied|MAC|grace" | cut -c1-200)"
}
local_of() { sed -n 's/.* local \([0-9.]*:[0-9]*\).*/\1/p; s/.* from \([0-9.]*:[0-9]*\).*/\1/p' "$1" | head -n 1; }

# keyring_for ENTITY FILE [CAPS...]: make ENTITY with CAPS, its keyring in FILE
keyring_for() {
	local e=$1 f=$2
	shift 2
	(umask 077 && w auth get-or-create "$e" "$@" > "$f") || fail "auth get-or-create $e"
}

# shellcheck source=security-lib.sh
. "$(dirname "$0")/security-lib.sh"

cluster_up
wait_for 60 "cluster ready" cl_ready
log "cluster up: 3 mons, 2 OSDs, every daemon authenticated"

case $CASE in
handshake)
	honest_start
	keyring_for client.good "$DIR/good.keyring" mon "allow r"
	peer -k "$DIR/good.keyring" -n client.good cmd "$mon0" '{"prefix": "status"}' > "$DIR/p-good.out" ||
		fail "an honest peer was refused: $(cat "$DIR/p-good.out")"
	log "ok: the peer itself, honest: $(cat "$DIR/p-good.out")"

	# no key: the command right after the hello
	peer -n client.admin nokey "$mon0" '{"prefix": "osd set", "key": "noout"}' > "$DIR/p-nokey.out" ||
		fail "no key: $(cat "$DIR/p-nokey.out")"
	one_refusal "$(local_of "$DIR/p-nokey.out") claiming client.admin sent mon_cmd without authenticating" "no key"
	# the CLI without a key says so locally, one line
	out=$("$WEFT" status -c "$CONF" --keyring="$DIR/none.keyring" 2>&1) && fail "the CLI ran without a key"
	[ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "no key" || fail "the CLI without a key: $out"

	# a wrong key for a real entity
	(umask 077 && sed "s|key = .*|key = $(head -c 32 /dev/urandom | base64)|" "$DIR/good.keyring" > "$DIR/wrong.keyring")
	peer -k "$DIR/wrong.keyring" -n client.good cmd "$mon1" '{"prefix": "status"}' > "$DIR/p-wrong.out" &&
		fail "a wrong key was served: $(cat "$DIR/p-wrong.out")"
	grep -q "authentication of client.good failed" "$DIR/p-wrong.out" || fail "wrong key: $(cat "$DIR/p-wrong.out")"
	one_refusal "peer $(local_of "$DIR/p-wrong.out") claiming client.good: authentication refused" "wrong key"
	out=$("$WEFT" status -c "$CONF" -n client.good -k "$DIR/wrong.keyring" --timeout 10 2>&1) &&
		fail "the CLI with a wrong key got in"
	echo "$out" | grep -q "authentication of client.good failed" || fail "the CLI with a wrong key: $out"

	# a removed key
	keyring_for client.gone "$DIR/gone.keyring" mon "allow r"
	w auth rm client.gone > /dev/null || fail "auth rm"
	sleep 1 # every monitor applies the removal
	peer -k "$DIR/gone.keyring" -n client.gone cmd "$mon0" '{"prefix": "status"}' > "$DIR/p-gone.out" &&
		fail "a removed key was served"
	one_refusal "peer $(local_of "$DIR/p-gone.out") claiming client.gone: authentication refused: no such entity" "removed key"

	# rotation: the old key works inside the grace (8 s), and its open session ends with it
	keyring_for client.rot "$DIR/rot-old.keyring" mon "allow r"
	peer -k "$DIR/rot-old.keyring" -n client.rot hold "$mon0" 30 > "$DIR/p-hold.out" &
	HOLD=$!
	wait_for 10 "a session with client.rot's key" grep -q "^open" "$DIR/p-hold.out"
	(umask 077 && w auth rotate client.rot > "$DIR/rot-new.keyring") || fail "auth rotate"
	R0=$(date +%s)
	sleep 1
	peer -k "$DIR/rot-old.keyring" -n client.rot cmd "$mon1" '{"prefix": "status"}' > "$DIR/p-rot-grace.out" ||
		fail "the rotated key stopped before its grace: $(cat "$DIR/p-rot-grace.out")"
	peer -k "$DIR/rot-new.keyring" -n client.rot cmd "$mon1" '{"prefix": "status"}' > "$DIR/p-rot-new.out" ||
		fail "the new key does not work: $(cat "$DIR/p-rot-new.out")"
	wait "$HOLD"
	H=$(($(date +%s) - R0))
	grep -q "result: session closed" "$DIR/p-hold.out" || fail "the old key's session outlived the grace: $(cat "$DIR/p-hold.out")"
	[ "$H" -le 14 ] || fail "the old key's session closed $H s after the rotation (grace 8 s)"
	one_refusal "peer $(sed -n 's/^open: local //p' "$DIR/p-hold.out") \(client.rot\): the previous key" "session of a rotated-out key"
	peer -k "$DIR/rot-old.keyring" -n client.rot cmd "$mon0" '{"prefix": "status"}' > "$DIR/p-rot-old.out" &&
		fail "the rotated-out key still works after the grace"
	one_refusal "peer $(local_of "$DIR/p-rot-old.out") claiming client.rot: authentication refused" "rotated-out key"

	# a recorded session replayed from the same address: the fresh nonce defeats it.
	# The recorded session sets noscrub; we unset it before the replay, which
	# must not set it again.
	PEER_GO=$DIR/go-replay peer -k "$DIR/keyring" -n client.admin replay "$mon0" \
		'{"prefix": "osd set", "key": "noscrub"}' > "$DIR/p-replay.out" 2>&1 &
	RPID=$!
	wait_for 20 "the session to replay recorded" grep -q "^recorded" "$DIR/p-replay.out"
	w osd unset noscrub > /dev/null || fail "osd unset noscrub"
	E=$(map_epoch)
	touch "$DIR/go-replay"
	wait "$RPID" || fail "replay: $(cat "$DIR/p-replay.out")"
	sleep 1
	[ "$(map_epoch)" = "$E" ] || fail "the map changed during the replay (epoch $E -> $(map_epoch))"
	wj osd dump | jq -r .flags | grep -q noscrub && fail "the replayed command was executed (noscrub set)"
	log "$(grep result "$DIR/p-replay.out")"
	RL=$(sed -n 's/.*replay from \([0-9.:]*\) .*/\1/p' "$DIR/p-replay.out")
	one_refusal "peer $RL claiming client.admin: authentication refused: its proof does not verify" "replayed session"
	# the recording ended with a tampered frame: dropped, the connection closed, one line
	RC=$(sed -n 's/.*recorded from \([0-9.:]*\)).*/\1/p' "$DIR/p-replay.out")
	[ "$(cat "$DIR"/mon.*.log | grep -c "from $RC (client.admin) fails its MAC")" = 1 ] ||
		fail "the tampered frame of the recording: not one MAC line for $RC"
	peer -k "$DIR/good.keyring" -n client.good tamper "$mon1" '{"prefix": "status"}' > "$DIR/p-tamper.out" ||
		fail "tamper: $(cat "$DIR/p-tamper.out")"
	one_refusal "from $(local_of "$DIR/p-tamper.out") \(client.good\) fails its MAC" "a frame with a bad MAC"

	# impostor monitors: an honest CLI must refuse them
	FAKE=127.1.0.78:$((PORT + 97))
	for mode in reflect-nonce reflect-proof; do
		"$PEER" -c "$CONF" fakemon "$FAKE" "$mode" 12 > "$DIR/p-$mode.out" 2>&1 &
		FPID=$!
		sleep 0.5
		out=$("$WEFT" status -c "$CONF" --mon_host="$FAKE" --timeout 8 2>&1) && fail "$mode: the CLI trusted the impostor"
		wait "$FPID" || fail "$mode: $(cat "$DIR/p-$mode.out")"
		case $mode in
		reflect-nonce) echo "$out" | grep -q "reflected" || fail "$mode: the CLI said: $out" ;;
		reflect-proof) echo "$out" | grep -q "did not prove" || fail "$mode: the CLI said: $out" ;;
		esac
		log "ok: impostor $mode refused by the client: $out"
	done
	# a relay between an honest client and a real monitor: the addresses differ
	"$PEER" -c "$CONF" fakemon "$FAKE" relay "$mon0" 12 > "$DIR/p-relay.out" 2>&1 &
	FPID=$!
	sleep 0.5
	out=$("$WEFT" status -c "$CONF" --mon_host="$FAKE" --timeout 8 2>&1) && fail "relay: the CLI got through a relay"
	wait "$FPID"
	RA=$(sed -n 's/.*(as \([0-9.:]*\)).*/\1/p' "$DIR/p-relay.out" | head -n 1)
	one_refusal "peer $RA claiming client.admin: authentication refused" "relayed handshake"
	log "ok: relay refused; the CLI said: $out"
	honest_check
	;;
caps)
	honest_start
	keyring_for client.ro "$DIR/ro.keyring" mon "allow r" osd "allow r"
	E=$(map_epoch)
	out=$("$WEFT" osd set noout -c "$CONF" -n client.ro -k "$DIR/ro.keyring" --timeout 10 2>&1) &&
		fail "a read-only client set a flag"
	[ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "permission denied" || fail "read-only osd set: $out"
	[ "$(map_epoch)" = "$E" ] || fail "the map changed"
	[ "$(cat "$DIR"/mon.*.log | grep -c "(client.ro): refused mon_cmd\|(client.ro): refused osd set")" = 1 ] ||
		fail "not one refusal line for client.ro's osd set"
	log "ok: read-only client refused: $out"
	"$WEFT" status -c "$CONF" -n client.ro -k "$DIR/ro.keyring" > /dev/null || fail "the read-only client cannot read"
	out=$("$WEFT" auth get client.admin -c "$CONF" -n client.ro -k "$DIR/ro.keyring" --timeout 10 2>&1) &&
		fail "a read-only client read a key"
	echo "$out" | grep -q "permission denied" || fail "read-only auth get: $out"
	out=$("$WEFT" pool create evil -c "$CONF" -n client.ro -k "$DIR/ro.keyring" --timeout 10 2>&1) &&
		fail "a read-only client made a pool"
	# a client key booting as an OSD, even the admin's
	for e in client.ro client.admin; do
		kr=$DIR/ro.keyring
		[ $e = client.admin ] && kr=$DIR/keyring
		peer -k "$kr" -n $e boot "$mon1" 1 > "$DIR/p-boot-$e.out" || fail "boot as $e: $(cat "$DIR/p-boot-$e.out")"
		one_refusal "peer $(sed -n 's/.* from \([0-9.:]*\) as.*/\1/p' "$DIR/p-boot-$e.out") \($e\): refused osd_boot" "$e booting as osd.1"
	done
	# osd.0's key speaking for osd.1
	peer -k "$DIR/osd.0/keyring" -n osd.0 boot "$mon0" 1 > "$DIR/p-boot-osd0.out" || fail "osd.0 as osd.1: $(cat "$DIR/p-boot-osd0.out")"
	one_refusal "peer $(sed -n 's/.* from \([0-9.:]*\) as.*/\1/p' "$DIR/p-boot-osd0.out") \(osd.0\): refused osd_boot" "osd.0 booting as osd.1"
	# a client key reporting osd.1 failed: refused, the connection closed, osd.1 stays up
	peer -k "$DIR/keyring" -n client.admin report "$mon0" 0 1 > "$DIR/p-report.out" || fail "report: $(cat "$DIR/p-report.out")"
	one_refusal "peer $(sed -n 's/.* from \([0-9.:]*\) as.*/\1/p' "$DIR/p-report.out") \(client.admin\): refused osd_failure" "client failure report"
	peer -k "$DIR/osd.0/keyring" -n osd.0 report "$mon1" 1 0 > "$DIR/p-report-osd.out" || fail "osd.0 reporting as osd.1: $(cat "$DIR/p-report-osd.out")"
	one_refusal "peer $(sed -n 's/.* from \([0-9.:]*\) as.*/\1/p' "$DIR/p-report-osd.out") \(osd.0\): refused osd_failure" "osd.0 reporting as osd.1"
	sleep 2
	[ "$(wj osd dump | jq '[.osds[] | select(.up)] | length')" = 2 ] || fail "a forged report marked an OSD down"
	# a client with mon 'profile client' may fence (exclusive locks) but not change the map
	keyring_for client.vm "$DIR/vm.keyring" mon "profile client" osd "profile client pool=rbd"
	"$WEFT" osd blocklist add 1234abcd00000000 60 -c "$CONF" -n client.vm -k "$DIR/vm.keyring" \
		> "$DIR/blocklist.out" 2>&1 || fail "profile client cannot fence: $(cat "$DIR/blocklist.out")"
	out=$("$WEFT" osd set noout -c "$CONF" -n client.vm -k "$DIR/vm.keyring" --timeout 10 2>&1) &&
		fail "profile client set a flag"
	# tickets for the OSDs (mon/mon_ticket.c): served over an authenticated session, the
	# grant opening under its seal key; refused to an entity without osd caps
	for i in $(seq 20); do
		peer -k "$DIR/keyring" -n client.admin ticket "$mon1" > "$DIR/p-ticket.out" && break
		grep -q "status -11 " "$DIR/p-ticket.out" || break # -EAGAIN: no service key yet
		sleep 0.5
	done
	grep -q "^result: ticket local .*expires in" "$DIR/p-ticket.out" ||
		fail "client.admin got no ticket: $(cat "$DIR/p-ticket.out")"
	keyring_for client.noosd "$DIR/noosd.keyring" mon "allow r"
	peer -k "$DIR/noosd.keyring" -n client.noosd ticket "$mon0" > "$DIR/p-ticket-noosd.out"
	[ $? = 3 ] && grep -q "status -13 msg 'client.noosd has no osd caps" "$DIR/p-ticket-noosd.out" ||
		fail "a ticket without osd caps: $(cat "$DIR/p-ticket-noosd.out")"
	log "ok: a ticket for client.admin (the grant opens under its session), none without osd caps"
	# a bootstrap key (Ceph's client.bootstrap-osd): OSD keys with OSD caps and reads, no more
	keyring_for client.bootstrap-osd "$DIR/bs.keyring" mon "profile bootstrap-osd"
	bs() { "$WEFT" "$@" -c "$CONF" -n client.bootstrap-osd -k "$DIR/bs.keyring" --timeout 10 2>&1; }
	out=$(bs auth get-or-create osd.7 mon "profile osd" osd "profile osd") ||
		fail "bootstrap-osd cannot make osd.7's key: $out"
	echo "$out" | grep -q "^\[osd.7\]" || fail "bootstrap-osd: osd.7's keyring: $out"
	out=$(bs auth get osd.7) || fail "bootstrap-osd cannot fetch osd.7's key: $out"
	bs status > /dev/null || fail "bootstrap-osd cannot read the cluster's status"
	n0=$(cat "$DIR"/mon.*.log | grep -c "(client.bootstrap-osd): refused")
	for c in "osd.8|allow *|profile osd" "osd.8|profile osd|allow *" "client.evil|profile osd|profile osd"; do
		IFS='|' read -r e mc oc <<< "$c"
		out=$(bs auth get-or-create "$e" mon "$mc" osd "$oc") && fail "bootstrap-osd made $e mon '$mc' osd '$oc'"
		echo "$out" | grep -q "permission denied" || fail "bootstrap-osd $e mon '$mc' osd '$oc': $out"
	done
	out=$(bs auth get client.admin) && fail "bootstrap-osd read the admin key"
	out=$(bs auth rm osd.7) && fail "bootstrap-osd removed a key"
	out=$(bs osd set noout) && fail "bootstrap-osd set a flag"
	echo "$out" | grep -q "permission denied" || fail "bootstrap-osd osd set: $out"
	[ "$(cat "$DIR"/mon.*.log | grep -c "(client.bootstrap-osd): refused")" = $((n0 + 6)) ] ||
		fail "not one refusal line per command bootstrap-osd may not run"
	out=$(w auth get-or-create client.bs2 osd "profile bootstrap-osd" 2>&1) &&
		fail "profile bootstrap-osd accepted on osd caps"
	echo "$out" | grep -q "applies to mon caps only" || fail "bootstrap-osd on osd caps: $out"
	log "ok: client.bootstrap-osd makes and fetches OSD keys, and nothing else"
	w auth caps client.ro mon "allow *" > /dev/null || fail "auth caps"
	sleep 1
	"$WEFT" osd set noout -c "$CONF" -n client.ro -k "$DIR/ro.keyring" > /dev/null || fail "client.ro with allow * cannot set a flag"
	w osd unset noout > /dev/null
	honest_check
	;;
osd)
	# the OSDs' connections (osd/osd_auth.c): tickets only, caps on every op
	honest_start
	osd0pub=$(pub_addr 0)
	osd0clu=$(clu_addr 0)
	# osd_refusals PATTERN: refusal lines in the OSDs' logs matching PATTERN
	osd_refusals() { cat "$DIR"/osd.*.log | grep -E "refused|closing" | grep -cE -- "$1"; }
	peer -n client.admin nokey "$osd0pub" '{"prefix": "status"}' > "$DIR/p-osd-nokey.out" ||
		fail "no key on an OSD's port: $(cat "$DIR/p-osd-nokey.out")"
	l=$(sed -n 's/.* local \([0-9.:]*\) .*/\1/p' "$DIR/p-osd-nokey.out")
	[ "$(osd_refusals "peer $l claiming client.admin sent mon_cmd without authenticating")" = 1 ] ||
		fail "no key on an OSD's port: not one refusal line for $l"
	log "ok: no key on osd.0's public port: refused, one line"
	peer -k "$DIR/keyring" -n client.admin cmd "$osd0pub" '{"prefix": "status"}' > "$DIR/p-osd-key.out" &&
		fail "a key hello to an OSD was served"
	grep -q "only tickets are served here" "$DIR/p-osd-key.out" || fail "key to an OSD: $(cat "$DIR/p-osd-key.out")"
	l=$(sed -n 's/.* local \([0-9.:]*\) .*/\1/p' "$DIR/p-osd-key.out")
	[ "$(osd_refusals "peer $l claiming client.admin: offered a key, not a ticket")" = 1 ] ||
		fail "key to an OSD: not one refusal line for $l"
	log "ok: a key instead of a ticket on osd.0's public port: refused, one line"
	# a client's (real) ticket on the cluster network: the first message closes it
	peer -k "$DIR/keyring" -n client.admin osdticket "$mon0" "$osd0clu" > "$DIR/p-osd-clu.out" ||
		fail "a client's ticket on the cluster network: $(cat "$DIR/p-osd-clu.out")"
	l=$(sed -n 's/.* local \([0-9.:]*\).*/\1/p' "$DIR/p-osd-clu.out")
	[ "$(osd_refusals "client.admin at $l sent ping on the cluster network without osd 'profile osd'")" = 1 ] ||
		fail "a client on the cluster network: not one line naming $l"
	log "ok: client.admin's ticket on osd.0's cluster port: closed at its first message, one line"
	# the same ticket asking for a replication ring as osd.0: no ring, closed, one line
	peer -k "$DIR/keyring" -n client.admin osdticket "$mon0" "$osd0clu" ring > "$DIR/p-osd-ring.out" ||
		fail "a client's ring request on the cluster network: $(cat "$DIR/p-osd-ring.out")"
	l=$(sed -n 's/.* local \([0-9.:]*\).*/\1/p' "$DIR/p-osd-ring.out")
	[ "$(osd_refusals "client.admin at $l sent repl_ring_req on the cluster network without osd 'profile osd'")" = 1 ] ||
		fail "a client's ring request: not one line naming $l"
	[ "$(w perf dump osd.0 | jq '.dos.ring_bytes')" -le $((64 << 20)) ] ||
		fail "osd.0 granted more than its two peers' rings: $(w perf dump osd.0 | jq -c .dos)"
	log "ok: client.admin's ring request on osd.0's cluster port: no ring, closed, one line"
	# caps on ops: a read-only client writing, a client of another pool reading and writing
	keyring_for client.ro "$DIR/ro.keyring" mon "allow r" osd "allow r pool=$POOL"
	keyring_for client.other "$DIR/other.keyring" mon "allow r" osd "allow rw pool=other"
	"$WEFT" bench "$POOL" 30 write -b 4K -t 2 --max-bytes 64K --no-cleanup --run-name secrun \
		--no-explain -c "$CONF" > "$DIR/bench-admin.out" 2>&1 || fail "admin bench: $(tail -n 3 "$DIR/bench-admin.out")"
	"$WEFT" bench "$POOL" 5 seq --run-name secrun --no-explain -c "$CONF" -n client.ro \
		-k "$DIR/ro.keyring" > "$DIR/bench-ro-read.out" 2>&1 ||
		fail "client.ro (allow r) cannot read: $(tail -n 3 "$DIR/bench-ro-read.out")"
	for who in ro other; do
		out=$("$WEFT" bench "$POOL" 5 write -b 4K -t 1 --max-bytes 16K --no-explain -c "$CONF" \
			-n client.$who -k "$DIR/$who.keyring" 2>&1) && fail "client.$who wrote to $POOL: $out"
		echo "$out" | grep -qi "permission denied" || fail "client.$who writing: $out"
		n=$(osd_refusals "client.$who at .* may not write to pool $POOL: refused")
		[ "$n" -ge 1 ] && [ "$n" -le "$NOSD" ] || fail "client.$who writing: $n refusal lines"
		log "ok: client.$who writing to $POOL: permission denied, $n line(s)"
	done
	out=$("$WEFT" bench "$POOL" 5 seq --run-name secrun --no-explain -c "$CONF" -n client.other \
		-k "$DIR/other.keyring" 2>&1) && fail "client.other read $POOL: $out"
	echo "$out" | grep -qi "permission denied" || fail "client.other reading: $out"
	log "ok: client.other (pool=other) reading $POOL: permission denied"
	"$WEFT" bench "$POOL" cleanup --run-name secrun -c "$CONF" > /dev/null 2>&1 || fail "bench cleanup"
	[ "$(cat "$DIR"/osd.*.log | grep -c "ticket for the OSDs")" -ge "$NOSD" ] || fail "an OSD logged no ticket"
	# a stale payload key: a reply larger than a frame (pg ls of 2,048 more
	# PGs, ~125 KB) comes as a BULK, a key to the monitor's buffer for this
	# connection and this reply; read once, BULK_DONE, and the same key reads
	# nothing (the pool stays: deleting pools is off on these monitors)
	w pool create stalekey --size 1 --min-size 1 --pg-num 2048 > /dev/null ||
		fail "pool create stalekey"
	peer -k "$DIR/keyring" -n client.admin stalebulk "$mon0" '{"prefix": "pg ls"}' \
		> "$DIR/p-stale.out" || fail "a stale bulk key: $(cat "$DIR/p-stale.out")"
	l=$(sed -n 's/.* local \([0-9.:]*\).*/\1/p' "$DIR/p-stale.out")
	one_refusal "$l" "a stale key to a reply's buffer, after its BULK_DONE"
	grep -q "revoked scoped key" <(grep -h -- "$l" "$DIR"/mon.*.log) ||
		fail "the stale key's refusal does not say why: $(grep -h -- "$l" "$DIR"/mon.*.log)"
	honest_check
	;;
insecure)
	for d in mon.a mon.b mon.c osd.0 osd.1; do
		grep -q "auth_cluster_required = none" "$DIR/$d.log" || fail "$d did not warn about auth_cluster_required = none"
	done
	w health | grep -q "AUTH_INSECURE" || fail "weft health has no AUTH_INSECURE: $(w health)"
	wj health | jq -e '.checks[] | select(.code == "AUTH_INSECURE")' > /dev/null || fail "no AUTH_INSECURE check in JSON"
	"$WEFT" status -c "$CONF" --keyring=/nonexistent > /dev/null || fail "a client without a key was refused with auth none"
	peer -n client.admin nokey "$mon0" '{"prefix": "status"}' > "$DIR/p-nokey.out" &&
		fail "auth none: the keyless peer was refused?"
	grep -q "answered" "$DIR/p-nokey.out" || fail "auth none: $(cat "$DIR/p-nokey.out")"
	log "ok: auth none: warnings, AUTH_INSECURE in health, keyless clients served"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
log "PASS $CASE"
exit 0
