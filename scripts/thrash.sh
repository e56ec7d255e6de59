#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# thrash.sh: the thrash test and soak (docs/reliability.md). A real local
# cluster (3 mons, 5 OSDs, pool size 3 / min_size 2, 32 PGs, TCP on loopback)
# under a writer that journals every acknowledged write and checks its reads
# (one op in five) at once, while OSDs and mons are killed: single OSDs, two
# at once, the primary of a PG being written, an OSD during peering, during
# recovery and during backfill, out/in, the mon leader. Then every daemon
# comes back, every PG must reach active+clean, and the check reads every
# object through its primary (the last acknowledged write or a later one)
# and every copy from every OSD (exactly 3, identical), and `weft pg verify
# --all` must agree.
#
#   scripts/thrash.sh [--minutes M | --seconds S] [--cycles N] [--seed N]
#                     [--build DIR] [--port P] [--dir DIR] [--keep]
#                     [--period SECS] [--osds N] [--names N] [--qd N]
#
# A run is N cycles (default 1) of S seconds of chaos, each ended by the
# recovery and the check, so a long soak checks many times. --minutes M
# gives M minutes in cycles of at most 5 minutes. The seed (printed first,
# random unless given) fixes the sequence of events; the event log is in
# DIR/events.log and on stdout, so a failure can be replayed with --seed.
# Exit status: 0 ok, 1 a check failed, 2 bad usage or set-up.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BUILD=$TOP/build-release SECS=180 CYCLES=1 SEED="" PORT=30000 KEEP=0 PERIOD=15
DIR="" NOSD=5 NAMES=900 QD=8 MINUTES=""

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) MINUTES=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--cycles) CYCLES=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--build) BUILD=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	--dir) DIR=$2; shift 2 ;;
	--period) PERIOD=$2; shift 2 ;;
	--osds) NOSD=$2; shift 2 ;;
	--names) NAMES=$2; shift 2 ;;
	--qd) QD=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--version) echo "thrash.sh (weft $(git -C "$TOP" describe --always --dirty 2>/dev/null))"; exit 0 ;;
	*) echo "thrash.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
done
if [ -n "$MINUTES" ]; then
	CYCLES=$(((MINUTES * 60 + 299) / 300))
	SECS=$((MINUTES * 60 / CYCLES))
fi
for v in SECS CYCLES PORT PERIOD NOSD NAMES QD; do
	[ "${!v}" -gt 0 ] 2> /dev/null || { echo "thrash.sh: --${v,,} must be a positive integer" >&2; exit 2; }
done
[ "$NOSD" -ge 4 ] || { echo "thrash.sh: --osds must be at least 4 (two down at once, size 3)" >&2; exit 2; }
[ -n "$SEED" ] || SEED=$(( $(od -An -N2 -tu2 /dev/urandom) ))
RANDOM=$SEED
MON=$BUILD/mon/weft-mon OSD=$BUILD/osd/weft-osd WEFT=$BUILD/tools/weft IO=$BUILD/tests/thrash_io
for b in "$MON" "$OSD" "$WEFT" "$IO"; do
	[ -x "$b" ] || { echo "thrash.sh: $b not built (--build DIR)" >&2; exit 2; }
done
command -v jq > /dev/null || { echo "thrash.sh: jq is needed (scripts/install-deps.sh)" >&2; exit 2; }
[ -n "$DIR" ] || DIR=$(mktemp -d /tmp/weft-thrash.XXXXXX)
mkdir -p "$DIR" || exit 2
CONF=$DIR/weft.conf EVENTS=$DIR/events.log JOURNAL=$DIR/journal
MS=tcp NMON=3 POOL=rbd POOL_SIZE=3 POOL_MIN_SIZE=2 PG_NUM=32
# small stores, a short log (so a long absence means backfill), quick failure detection
CL_DATA_SIZE=${CL_DATA_SIZE:-2G} CL_HEARTBEAT_GRACE=${CL_HEARTBEAT_GRACE:-3s}
CL_CONF_EXTRA="[osd]
	osd_pg_log_max = ${WEFT_THRASH_LOG_MAX:-400}
	osd_scrub_interval = 0
${CL_CONF_EXTRA:-}"
T0=$(date +%s)

log() { printf '[%5ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
ev() { log "$*"; printf '%s %s\n' "$(($(date +%s) - T0))" "$*" >> "$EVENTS"; }
fail() {
	log "FAIL: $*"
	log "seed $SEED; events in $EVENTS; daemon logs in $DIR (kept)"
	for f in "$DIR"/*.log; do
		grep -q "ERROR: AddressSanitizer\|runtime error" "$f" 2> /dev/null &&
			{ echo "--- $f"; grep -A 14 "ERROR: AddressSanitizer\|runtime error" "$f" | head -40; }
	done
	KEEP=1
	exit 1
}
cleanup() {
	[ -n "${WRITER:-}" ] && kill -TERM "$WRITER" 2> /dev/null
	for p in "${!PIDS[@]}"; do kill -9 "${PIDS[$p]}" 2> /dev/null; done
	wait 2> /dev/null
	[ "$KEEP" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

# shellcheck source=scripts/cluster-lib.sh
. "$HERE/cluster-lib.sh"

declare -A DOWN=()    # osd id -> time to restart it
declare -A MDOWN=()   # mon id -> time to restart it
OUT=""                # the OSD marked out, and when it goes back in
OUT_UNTIL=0
KILLS=0 DOUBLE=0 LAST_KILL=0
declare -A NEV=()  # events of each kind, in all
declare -A CNEV=() # ... in this cycle

rnd() { echo $((RANDOM % ($2 - $1 + 1) + $1)); } # rnd LO HI
up_osds() {
	local i
	for i in $(seq 0 $((NOSD - 1))); do [ -n "${DOWN[$i]:-}" ] || echo "$i"; done
}
pick() { local a=("$@"); [ ${#a[@]} -gt 0 ] && echo "${a[$((RANDOM % ${#a[@]}))]}"; }
kill_osd() { # kill_osd ID WHY
	stop_osd "$1"
	DOWN[$1]=$(($(date +%s) + $(rnd 5 15)))
	KILLS=$((KILLS + 1))
	LAST_KILL=$(date +%s)
	ev "kill osd.$1 ($2)"
}
revive_osd() {
	start_osd "$1"
	unset "DOWN[$1]"
	ev "restart osd.$1"
}
pg_json() { "$WEFT" pg ls -c "$CONF" --timeout 5 --format json 2> /dev/null; }
# pg_osd STATE_REGEX: the primary of a PG whose state matches (among the up ones)
pg_osd() {
	local j
	j=$(pg_json) || return 1
	echo "$j" | jq -r --arg s "$1" '[.pg_stats[] | select(.state | test($s)) | .acting[0]] |
		unique | .[]' 2> /dev/null | while read -r o; do
		[ -n "${DOWN[$o]:-}" ] || echo "$o"
	done | head -n 1
}
wait_state() { # wait_state SECS REGEX: a PG in a state matching REGEX shows up
	local end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		pg_json | jq -e --arg s "$2" '[.pg_stats[] | select(.state | test($s))] | length > 0' \
			> /dev/null 2>&1 && return 0
		sleep 0.3
	done
	return 1
}
mon_leader() {
	"$WEFT" status -c "$CONF" --timeout 5 --format json 2> /dev/null |
		jq -r '.monmap.leader_rank // empty'
}

# feasible KIND NDOWN: the event can happen now
feasible() {
	case $1 in
	kill2) [ "$2" = 0 ] ;;
	peering | recovery) [ "$2" -gt 0 ] ;;
	backfill | outin) [ -z "$OUT" ] && [ "$2" = 0 ] ;;
	*) true ;;
	esac
}

event() {
	local ndown=${#DOWN[@]} e roll a b o k
	roll=$((RANDOM % 12))
	# what may happen now: never more than two OSDs down (size 3)
	if [ "$ndown" -ge 2 ]; then return; fi
	case $roll in
	0 | 1 | 2) e=kill1 ;;
	3 | 4) e=kill2 ;;
	5 | 6) e=killprimary ;;
	7) e=peering ;;
	8) e=recovery ;;
	9) e=backfill ;;
	10) e=outin ;;
	11) e=monkill ;;
	esac
	# every kind once per cycle, as soon as it is possible; then at random
	for k in kill2 recovery peering backfill killprimary monkill outin; do
		if [ -z "${CNEV[$k]:-}" ] && feasible "$k" "$ndown"; then
			e=$k
			break
		fi
	done
	feasible "$e" "$ndown" || e=kill1
	NEV[$e]=$((${NEV[$e]:-0} + 1))
	CNEV[$e]=1
	case $e in
	kill1) kill_osd "$(pick $(up_osds))" "single" ;;
	kill2)
		a=$(pick $(up_osds))
		b=$(pick $(up_osds | grep -vx "$a"))
		stop_osd "$a"
		kill_osd "$b" "two at once, with osd.$a"
		DOWN[$a]=$(($(date +%s) + $(rnd 5 15)))
		KILLS=$((KILLS + 1)) DOUBLE=$((DOUBLE + 1))
		ev "kill osd.$a (two at once, with osd.$b)"
		;;
	killprimary)
		o=$(pg_osd "active") || o=""
		[ -n "$o" ] || o=$(pick $(up_osds))
		kill_osd "$o" "the primary of PGs being written"
		;;
	peering)
		a=$(pick "${!DOWN[@]}")
		revive_osd "$a"
		sleep "0.$(rnd 2 9)"
		kill_osd "$(pick $(up_osds | grep -vx "$a"))" "while osd.$a's PGs peer"
		;;
	recovery)
		a=$(pick "${!DOWN[@]}")
		revive_osd "$a"
		if wait_state 15 "recovering"; then
			o=$(pg_osd "recovering")
			[ -n "$o" ] || o=$a
			kill_osd "$o" "during recovery"
		else
			ev "no PG recovering within 15 s"
		fi
		;;
	backfill | outin)
		a=$(pick $(up_osds))
		"$WEFT" osd out "$a" -c "$CONF" --timeout 20 > /dev/null 2>&1 || { ev "osd out $a failed"; return; }
		OUT=$a
		OUT_UNTIL=$(($(date +%s) + $(rnd 15 30)))
		ev "osd out $a"
		if [ "$e" = backfill ]; then
			if wait_state 20 "backfill|recovering"; then
				o=$(pg_osd "backfill|recovering")
				[ -n "$o" ] && [ "$o" != "$a" ] || o=$(pick $(up_osds | grep -vx "$a"))
				kill_osd "$o" "during backfill after osd.$a out"
			else
				ev "no PG backfilling within 20 s"
			fi
		fi
		;;
	monkill)
		k=$(mon_leader)
		[ -n "$k" ] || k=$(rnd 0 2)
		k=${CL_MON_IDS[$k]}
		stop_mon "$k"
		MDOWN[$k]=$(($(date +%s) + $(rnd 3 8)))
		ev "kill mon.$k (the leader)"
		;;
	esac
}

revive_due() {
	local now i k
	now=$(date +%s)
	for i in "${!DOWN[@]}"; do [ "${DOWN[$i]}" -le "$now" ] && revive_osd "$i"; done
	for k in "${!MDOWN[@]}"; do
		if [ "${MDOWN[$k]}" -le "$now" ]; then
			start_mon "$k"
			unset "MDOWN[$k]"
			ev "restart mon.$k"
		fi
	done
	if [ -n "$OUT" ] && [ "$OUT_UNTIL" -le "$now" ]; then
		"$WEFT" osd in "$OUT" -c "$CONF" --timeout 20 > /dev/null 2>&1 && { ev "osd in $OUT"; OUT=""; }
	fi
}

all_clean() {
	pg_json | jq -e '(.pg_stats | length) > 0 and
		([.pg_stats[] | select(.state != "active+clean")] | length) == 0' > /dev/null 2>&1
}
# Every OSD up and in: PGs can be clean on the others while a revived OSD
# still boots, and its return then moves copies under the check's feet.
all_osds_up() {
	"$WEFT" status -c "$CONF" --timeout 5 --format json 2> /dev/null |
		jq -e --argjson n "$NOSD" '.osdmap.num_up_osds == $n and .osdmap.num_in_osds == $n' \
			> /dev/null 2>&1
}

RESULTS=$DIR/results
: > "$RESULTS"
log "thrash: seed $SEED, $CYCLES cycle(s) of ${SECS}s, $NOSD OSDs, 3 mons, $NAMES objects, $QD in flight, dir $DIR"
echo "seed $SEED" > "$EVENTS"
cluster_up
wait_for 120 "cluster ready" cl_ready
for cycle in $(seq 1 "$CYCLES"); do
	CNEV=()
	ev "cycle $cycle: writer for ${SECS}s"
	"$IO" -c "$CONF" -p "$POOL" writer "$SECS" "$RANDOM" "$JOURNAL" "$QD" "$NAMES" \
		> "$DIR/writer.$cycle.out" 2>&1 &
	WRITER=$!
	C_END=$(($(date +%s) + SECS))
	NEXT=$(($(date +%s) + $(rnd 3 8)))
	while [ "$(date +%s)" -lt "$C_END" ]; do
		revive_due
		if [ "$(date +%s)" -ge "$NEXT" ] && [ "$(date +%s)" -lt $((C_END - 10)) ]; then
			event
			NEXT=$(($(date +%s) + $(rnd $((PERIOD * 2 / 3)) $((PERIOD * 4 / 3)))))
		fi
		kill -0 "$WRITER" 2> /dev/null || break
		sleep 0.5
	done
	# everything back: OSDs, mons, the OUT one in
	for i in "${!DOWN[@]}"; do revive_osd "$i"; done
	for k in "${!MDOWN[@]}"; do start_mon "$k"; unset "MDOWN[$k]"; ev "restart mon.$k"; done
	if [ -n "$OUT" ]; then
		"$WEFT" osd in "$OUT" -c "$CONF" --timeout 20 > /dev/null 2>&1 || fail "osd in $OUT"
		ev "osd in $OUT"
		OUT=""
	fi
	wait "$WRITER"
	WRC=$?
	WRITER=""
	WJ=$(tail -n 1 "$DIR/writer.$cycle.out")
	[ "$WRC" = 0 ] || { tail -n 5 "$DIR/writer.$cycle.out"; fail "cycle $cycle: writer exited $WRC"; }
	T_W=$(date +%s)
	log "cycle $cycle: writer done: $WJ"
	DEADLINE=$((T_W + 300))
	while ! all_osds_up || ! all_clean; do
		cl_check_alive
		if [ "$(date +%s)" -ge "$DEADLINE" ]; then
			pg_json | jq -c '[.pg_stats[] | select(.state != "active+clean") |
				{pgid, state, acting, missing, unfound, waiting_for}]' | head -c 3000
			echo
			fail "cycle $cycle: PGs not active+clean 300 s after the writer stopped"
		fi
		sleep 1
	done
	T_C=$(date +%s)
	log "cycle $cycle: all PGs active+clean $((T_C - T_W)) s after the writer stopped, $((T_C - LAST_KILL)) s after the last kill"
	"$IO" -c "$CONF" -p "$POOL" check "$JOURNAL" 3 > "$DIR/check.$cycle.out" 2>&1
	CRC=$?
	CJ=$(grep '^{' "$DIR/check.$cycle.out" | tail -n 1)
	[ -n "$CJ" ] || CJ="\"no result: $(tail -n 1 "$DIR/check.$cycle.out" | head -c 200 | tr -d "\"\\\\")\""
	if "$WEFT" pg verify --all -c "$CONF" --wait 300 --format json > "$DIR/verify.$cycle.json" 2> "$DIR/verify.$cycle.err"; then
		VJ=$(jq -c '{pgs: .pgs, objects: .objects, inconsistent: .inconsistent, seconds: .seconds}' "$DIR/verify.$cycle.json")
	else
		VJ=$(jq -c '{pgs: .pgs, objects: .objects, inconsistent: .inconsistent}' "$DIR/verify.$cycle.json" 2> /dev/null)
		[ -n "$VJ" ] || VJ="\"failed: $(head -c 200 "$DIR/verify.$cycle.err" | tr -d "\"\\\\\n")\""
		CRC=1
	fi
	printf '{"cycle": %d, "seed": %d, "writer": %s, "check": %s, "verify": %s, "kills": %d, "double_kills": %d, "clean_after_writer_s": %d, "clean_after_last_kill_s": %d}\n' \
		"$cycle" "$SEED" "$WJ" "$CJ" "$VJ" "$KILLS" "$DOUBLE" "$((T_C - T_W))" "$((T_C - LAST_KILL))" >> "$RESULTS"
	if [ "$CRC" != 0 ]; then
		grep -m 40 FAIL "$DIR/check.$cycle.out"
		fail "cycle $cycle: $CJ verify $VJ"
	fi
	log "cycle $cycle: ok: $CJ, verify $VJ"
done
grep -h "LOST\|invariant" "$DIR"/osd.*.log | head -5 | grep . && fail "an OSD logged a broken invariant"
events=""
for e in "${!NEV[@]}"; do events="$events $e=${NEV[$e]}"; done
log "thrash passed: seed $SEED, $KILLS OSD kills ($DOUBLE double), events:$events"
cat "$RESULTS"
