#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Health codes, mutes, no false alarms and client I/O rates (docs/mon.md
# "Health checks", docs/operations.md "Health") on a real local cluster,
# started by scripts/cluster-lib.sh through tests/test_osd_cluster.sh:
#
#   test_health.sh CASE PORT WEFT_MON WEFT_OSD WEFT
#   CASE: codes  | a scripted sequence of faults with the exact codes at each
#                | step; mute with a TTL that expires, unmute, a mute ended by
#                | its check getting worse, a sticky one that is not
#         flap   | map changes (pool create, osd out/in) polled in a tight
#                | loop: never PG_AVAILABILITY (inactive), never HEALTH_ERR
#         leader | the leader of 3 mons killed, polled in a tight loop: never
#                | HEALTH_ERR or MON_NO_QUORUM; a mute survives the change
#         io     | status shows write ops/s and bytes/s during weft bench
#                | write, and 0 a few seconds after it ends
# Every wait is bounded (wait_for); no sleep is an assertion.
set -u
HCASE=$1 HPORT=$2 HMON=$3 HOSD=$4 HWEFT=$5
here=$(cd "$(dirname "$0")" && pwd)
set -- "health-$HCASE" tcp "$HPORT" "$HMON" "$HOSD" "$HWEFT" /bin/true
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
. "$here/test_osd_cluster.sh"

# codes: the raised checks that are not muted, sorted, comma-separated
codes() { wj health | jq -r '[.checks[] | select(.muted | not) | .code] | sort | join(",")'; }
codes_is() { local c; c=$(codes) || return 1; CL_WHY="codes '$c'"; [ "$c" = "$1" ]; }
# muted CODE: the check is raised and shown muted
muted() { wj health | jq -e --arg c "$1" '.checks[] | select(.code == $c) | .muted == true'; }
# has_mute CODE: the map holds a mute of CODE
has_mute() { wj health | jq -e --arg c "$1" '[.mutes[] | select(.code == $c)] | length == 1'; }
no_mute() { wj health | jq -e --arg c "$1" '[.mutes[] | select(.code == $c)] | length == 0'; }
status_is() { [ "$(wj health | jq -r .status)" = "$1" ]; }
check_count() { wj health | jq -r --arg c "$1" '.checks[] | select(.code == $c) | .count'; }
count_is() { local n; n=$(check_count "$1"); CL_WHY="$1 count '$n'"; [ "$n" = "$2" ]; }
# all_active: no PG without an active report. Wait for it after an OSD comes
# back: the monitors' inactive clock of a PG runs until its primary reports it
# active, so a kill right after a restart (or a step right after one) would
# otherwise see PG_AVAILABILITY for an inactivity that began one kill earlier.
all_active() {
	local n
	n=$(wj status | jq '.pgmap.inactive_pgs // 0') || return 1
	CL_WHY="$n PGs inactive"
	[ "$n" = 0 ]
}
# step WHAT EXPECTED [SECS]: the exact set of codes, reached within SECS (40) s and still so just after
step() {
	wait_for "${3:-40}" "$1: codes '$2'" codes_is "$2"
	codes_is "$2" || fail "$1: codes moved on to '$(codes)'"
}
# run CODE WHAT CMD...: CMD exits CODE; its stdout in $DIR/o, stderr in $DIR/e
run() {
	local want=$1 what=$2 rc
	shift 2
	"$@" > "$DIR/o" 2> "$DIR/e"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$DIR/o" "$DIR/e"; fail "$what: exit $rc, want $want"; }
}
one_line() {
	[ "$(wc -l < "$DIR/e")" = 1 ] || { cat "$DIR/e"; fail "$1: stderr is not one line"; }
	grep -q -- "$2" "$DIR/e" || { cat "$DIR/e"; fail "$1: stderr lacks '$2'"; }
}
leader_id() { wj mon stat | jq -r '.leader_rank' | awk '{ printf "%c", 97 + $1 }'; }

case $HCASE in
codes)
	NOSD=3 PG_NUM=16
	CL_CONF_EXTRA='[mon]
	mon_osd_down_out_interval = 0'
	cluster_up
	wait_for 60 "cluster ready" cl_ready
	step "healthy" ""
	status_is HEALTH_OK || fail "not HEALTH_OK"
	"$WEFT" bench "$POOL" 2 write -b 16K -t 4 --no-cleanup --no-explain -c "$CONF" \
		> /dev/null 2>&1 || fail "bench write"

	# refusals: one line each, nothing muted
	run 1 "mute of a check not raised" w health mute OSD_DOWN
	one_line "mute of a check not raised" "OSD_DOWN is not raised now"
	run 2 "bad ttl" w health mute OSD_DOWN 10x
	one_line "bad ttl" "TTL '10x' is not a duration"
	run 1 "bad code" w health mute "osd down"
	one_line "bad code" "is not a health check code"
	log "ok: bad mutes refused with one line"

	stop_osd 2
	step "osd.2 killed" "OSD_DOWN,PG_DEGRADED,PG_UNDERSIZED_DOMAIN"
	# every PG has a copy on osd.2: wait for all to report degraded, else a mute of
	# PG_DEGRADED would end (rightly) as the count grows
	wait_for 30 "all $PG_NUM PGs degraded" count_is PG_DEGRADED "$PG_NUM"
	w osd set noout > /dev/null || fail "osd set noout"
	step "noout set" "OSDMAP_FLAGS,OSD_DOWN,PG_DEGRADED,PG_UNDERSIZED_DOMAIN"
	status_is HEALTH_WARN || fail "not HEALTH_WARN with osd.2 down"

	# a mute with a TTL hides the check until it expires; the others still
	# count. Only what needs the TTL runs inside its 6 s (a busy CI machine
	# spends seconds on a handful of CLI calls): the all-muted checks follow
	# with mutes that do not expire.
	w health mute OSD_DOWN 6s > "$DIR/o" || fail "health mute OSD_DOWN 6s"
	grep -q "OSD_DOWN muted for 6s" "$DIR/o" || fail "mute answer: $(cat "$DIR/o")"
	t_mute=$(date +%s)
	w health > "$DIR/o"
	grep -q "OSD_DOWN: .*(muted, 0m [0-9]s left)" "$DIR/o" || { cat "$DIR/o"; fail "health plain: no TTL"; }
	step "OSD_DOWN muted" "OSDMAP_FLAGS,PG_DEGRADED,PG_UNDERSIZED_DOMAIN"
	muted OSD_DOWN > /dev/null || fail "OSD_DOWN not shown muted"
	wait_for 20 "the OSD_DOWN mute expired (leader removed it)" no_mute OSD_DOWN
	[ $(($(date +%s) - t_mute)) -ge 5 ] || fail "the 6 s mute ended after $(($(date +%s) - t_mute)) s"
	step "OSD_DOWN mute expired" "OSDMAP_FLAGS,OSD_DOWN,PG_DEGRADED,PG_UNDERSIZED_DOMAIN"
	grep -q "mute of OSD_DOWN expired" "$DIR"/mon.a.log || fail "no log line for the expiry"

	# every check muted: overall HEALTH_OK, the mutes shown everywhere
	for c in OSD_DOWN PG_DEGRADED OSDMAP_FLAGS PG_UNDERSIZED_DOMAIN; do
		w health mute "$c" > /dev/null || fail "health mute $c"
	done
	status_is HEALTH_OK || fail "not HEALTH_OK with every check muted: $(wj health)"
	w health > "$DIR/o"
	head -n 1 "$DIR/o" | grep -q "^HEALTH_OK (muted: OSD_DOWN OSDMAP_FLAGS PG_DEGRADED PG_UNDERSIZED_DOMAIN)$" ||
		{ cat "$DIR/o"; fail "health plain: no muted summary"; }
	grep -q "OSD_DOWN: .*(muted)" "$DIR/o" || { cat "$DIR/o"; fail "health plain: OSD_DOWN not shown muted"; }
	w health detail | grep -q "osd.2 (host node2) is down" || fail "health detail lacks osd.2"
	w status | grep -q "health: HEALTH_OK (muted: " || fail "status plain lacks the mutes"
	wj status | jq -e '.health.status == "HEALTH_OK" and (.health.mutes | length == 4)' \
		> /dev/null || fail "status json: mutes"
	log "ok: muted checks shown muted, overall HEALTH_OK (health, detail, status; plain and json)"
	w health unmute OSD_DOWN > /dev/null || fail "health unmute OSD_DOWN"
	step "OSD_DOWN unmuted" "OSD_DOWN"

	# a mute ends when its check gets worse (a second OSD down) unless sticky
	w health mute OSD_DOWN > /dev/null || fail "health mute OSD_DOWN"
	step "OSD_DOWN muted again" ""
	stop_osd 1
	wait_for 40 "the OSD_DOWN mute ended: 2 OSDs down" no_mute OSD_DOWN
	[ "$(check_count OSD_DOWN)" = 2 ] || fail "OSD_DOWN count $(check_count OSD_DOWN), want 2"
	grep -q "mute of OSD_DOWN ended: count grew from 1 to 2" "$DIR"/mon.a.log ||
		fail "no log line for the mute ended by a worse check"
	log "ok: a mute ends when its check gets worse"
	start_osd 1
	wait_for 40 "osd.1 back: 1 OSD down" count_is OSD_DOWN 1
	wait_for 60 "osd.1 back: every PG active" all_active
	w health mute OSD_DOWN --sticky > /dev/null || fail "health mute --sticky"
	stop_osd 1
	wait_for 40 "2 OSDs down" count_is OSD_DOWN 2
	muted OSD_DOWN > /dev/null || fail "a sticky mute ended when its check got worse"
	has_mute OSD_DOWN > /dev/null || fail "the sticky mute is gone"
	log "ok: a sticky mute stays when its check gets worse"
	start_osd 1
	wait_for 60 "osd.1 back again: every PG active" all_active

	# unmute: the checks count again; back to healthy
	for c in OSD_DOWN PG_DEGRADED OSDMAP_FLAGS PG_UNDERSIZED_DOMAIN; do
		w health unmute "$c" > "$DIR/o" || fail "health unmute $c"
		grep -q "^$c unmuted$" "$DIR/o" || fail "unmute answer: $(cat "$DIR/o")"
	done
	wj health | jq -e '.mutes | length == 0' > /dev/null || fail "mutes left after unmute"
	step "unmuted, osd.2 still down" "OSDMAP_FLAGS,OSD_DOWN,PG_DEGRADED,PG_UNDERSIZED_DOMAIN"
	w osd unset noout > /dev/null || fail "osd unset noout"
	step "noout unset" "OSD_DOWN,PG_DEGRADED,PG_UNDERSIZED_DOMAIN"
	start_osd 2
	step "osd.2 restarted" "" 120 # recovery: seconds here, more on a busy CI machine
	# The PGs that take osd.2 back re-peer when their primaries see its boot,
	# which can follow the monitors' first all-clear by a moment (seen once
	# in CI: codes '' and, 90 ms later, a check raised). Say what it was and
	# wait, bounded, for the state to settle at HEALTH_OK.
	if ! status_is HEALTH_OK; then
		log "note: raised right after the all-clear: $(wj health | jq -c '[.checks[] | {code, summary}]')"
		wait_for 60 "HEALTH_OK at the end" status_is HEALTH_OK
	fi
	;;
flap)
	NOSD=4 PG_NUM=32
	cluster_up
	wait_for 60 "cluster ready" cl_ready
	step "healthy" ""
	# map changes in the background; health polled as fast as the CLI goes
	(
		w pool create second --size 3 --min-size 2 --pg-num 32 > /dev/null
		w osd out 3 > /dev/null
		sleep 3
		w osd in 3 > /dev/null
		w pool create third --size 2 --min-size 1 --pg-num 16 > /dev/null
		touch "$DIR/changes.done"
	) &
	changes=$!
	polls=0 worst=""
	for _ in $(seq 1 400); do
		h=$("$WEFT" health -c "$CONF" --timeout 20 --format json) || fail "weft health failed"
		polls=$((polls + 1))
		echo "$h" | jq -e '.checks[] | select(.code == "PG_AVAILABILITY")' > /dev/null &&
			fail "poll $polls: PG_AVAILABILITY on a map change: $(echo "$h" | jq -c .checks)"
		[ "$(echo "$h" | jq -r .status)" = HEALTH_ERR ] &&
			fail "poll $polls: HEALTH_ERR on a map change: $(echo "$h" | jq -c .checks)"
		worst="$worst $(echo "$h" | jq -r '[.checks[].code] | join(",")')"
		[ -e "$DIR/changes.done" ] && [ -z "${t_done:-}" ] && t_done=$(date +%s)
		[ -n "${t_done:-}" ] && [ $(($(date +%s) - t_done)) -ge 6 ] && break
	done
	[ -n "${t_done:-}" ] || fail "the map changes did not finish within 400 polls"
	wait "$changes"
	log "ok: $polls polls over 5 map changes: no PG_AVAILABILITY, no HEALTH_ERR (seen:$(echo "$worst" | tr ' ' '\n' | sort -u | tr '\n' ' '))"
	[ "$(map_epoch)" -gt 4 ] || fail "the map did not change"
	wait_for 60 "healthy again" codes_is ""
	;;
leader)
	NMON=3 NOSD=3 PG_NUM=16
	cluster_up
	wait_for 60 "cluster ready" cl_ready
	step "healthy" ""
	w osd set noout > /dev/null || fail "osd set noout"
	w health mute OSDMAP_FLAGS > /dev/null || fail "health mute OSDMAP_FLAGS"
	step "OSDMAP_FLAGS muted" ""
	l=$(leader_id)
	log "killing the leader, mon.$l"
	stop_mon "$l"
	polls=0 seen=""
	t0=$(date +%s)
	for _ in $(seq 1 300); do
		h=$("$WEFT" health -c "$CONF" --timeout 20 --format json 2> "$DIR/e") ||
			fail "poll $polls: weft health failed: $(cat "$DIR/e")"
		polls=$((polls + 1))
		[ "$(echo "$h" | jq -r .status)" = HEALTH_ERR ] &&
			fail "poll $polls: HEALTH_ERR on a leader change: $(echo "$h" | jq -c .checks)"
		echo "$h" | jq -e '.checks[] | select(.code == "MON_NO_QUORUM")' > /dev/null &&
			fail "poll $polls: MON_NO_QUORUM on a leader change"
		seen="$seen $(echo "$h" | jq -r '[.checks[].code] | join(",")')"
		echo "$h" | jq -e '.checks[] | select(.code == "MON_DOWN")' > /dev/null &&
			[ $(($(date +%s) - t0)) -ge 8 ] && break
	done
	echo "$h" | jq -e '.checks[] | select(.code == "MON_DOWN")' > /dev/null ||
		fail "MON_DOWN not raised after the leader was killed"
	log "ok: $polls polls over the leader change: no HEALTH_ERR (seen:$(echo "$seen" | tr ' ' '\n' | sort -u | tr '\n' ' '))"
	[ "$(leader_id)" != "$l" ] || fail "the leader did not change"
	muted OSDMAP_FLAGS > /dev/null || fail "the mute did not survive the leader change"
	log "ok: the new leader mon.$(leader_id) keeps the mute"
	start_mon "$l"
	wait_for 40 "mon.$l back in the quorum" codes_is ""
	;;
io)
	NOSD=3 PG_NUM=16
	cluster_up
	wait_for 60 "cluster ready" cl_ready
	wio() { wj status | jq -r ".pgmap.client_io.$1"; }
	writing() { awk -v o="$(wio write_ops_per_sec)" -v b="$(wio write_bytes_per_sec)" \
		'BEGIN { exit !(o > 0 && b > 0) }'; }
	idle() { awk -v o="$(wio write_ops_per_sec)" -v b="$(wio write_bytes_per_sec)" \
		-v r="$(wio read_ops_per_sec)" 'BEGIN { exit !(o == 0 && b == 0 && r == 0) }'; }
	wait_for 20 "client I/O rates 0 before the bench" idle
	"$WEFT" bench "$POOL" 8 write -b 64K -t 8 --no-explain -c "$CONF" > "$DIR/bench.out" 2>&1 &
	bench=$!
	wait_for 8 "status shows writes/s during the bench" writing
	w status > "$DIR/o"
	grep -Eq "client: .* wr, [0-9]+ op/s rd, [1-9][0-9]* op/s wr" "$DIR/o" ||
		{ cat "$DIR/o"; fail "status plain: no client write rate"; }
	log "status: $(grep client: "$DIR/o" | sed 's/^ *//')"
	wait "$bench" || { cat "$DIR/bench.out"; fail "bench write failed"; }
	wait_for 15 "client I/O rates back to 0 after the bench" idle
	w status | grep -Eq "client: +0 B/s rd, 0 B/s wr, 0 op/s rd, 0 op/s wr" ||
		fail "status plain: rates not 0 after the bench"
	;;
*) fail "unknown case $HCASE" ;;
esac
log "PASS health $HCASE"
