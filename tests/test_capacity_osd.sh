#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Capacity on the OSD side (docs/capacity.md), with real weft-mon and
# weft-osd processes.
#
#   test_capacity_osd.sh CASE MS_TYPE PORT WEFT_MON WEFT_OSD WEFT TEST_RECOVERY_IO
#   CASE: small | purge | full | toofull | quota
#
# small: 3 OSDs, size 3, osd.2's store a tenth of the others' with a 10 %
#        reserve, so its store refuses writes (ENOSPC) while the others still
#        take them: with osd.2 a replica the primary has committed the write,
#        and the client must hear "may have been applied" (reply flags MAYBE
#        + OSD naming osd.2), never a plain error with the copies left apart.
#        No daemon may die. Then half the objects are removed (removes work
#        on a full store: the reserve), recovery must bring osd.2 level, and
#        afterwards every object reads as its last acknowledged write (or a
#        later failed one), the 3 copies of every object are identical,
#        `weft pg verify --all` finds 0 inconsistent, and new writes succeed.
# purge: a pool written on 3 OSDs is removed: every OSD deletes its objects
#        in the background at osd_pool_purge_rate (100/s here: the log must show
#        it took at least that long), osd.1 is killed half-way and resumes after
#        its restart, every OSD ends with purging_objects 0 and its store's
#        data back within 1 MiB of where it was before the pool was written,
#        and the other pool's objects are untouched.
# full:  3 OSDs with 512 MiB stores (1 % reserve): weft bench fills them to
#        about 80 %, a writer paced at 6 MB/s goes on until the map marks them full;
#        health shows OSD_NEARFULL before OSD_FULL, writes are then refused
#        by the primaries with ENOSPC naming a full OSD (never "may have been
#        applied": the full ratio stops them before any store refuses), a
#        new weft bench stops at once with "the pool is full (osd.N at 95%)"
#        and its explainer says space-bound; no daemon dies; removing the
#        bench objects clears the bits and writes go again; every object
#        reads back and its 3 copies are identical (pg verify too).
# toofull: osd.2's store a quarter of the others', filled to about 70 %;
#        the ratios lowered so it is backfillfull (not full); osd.2 is
#        stopped, objects are written without it, it comes back: its PGs
#        show backfill_toofull and nothing is pushed to it; the ratios back
#        up, recovery finishes, and the copies are identical.
# quota: max_objects 200 on pool rbd: writes get EDQUOT once the map flags
#        the pool full (after a bounded overshoot: docs/capacity.md), all of
#        them from then on,
#        a weft bench stops with "the pool is at its quota", removes and
#        truncates still go, and without the quota writes are accepted again.
# full, toofull and quota need the monitors' capacity commands (weft osd
# set-*-ratio, weft osd df: docs/capacity.md); without them they are skipped.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CCASE=$1 CMS=$2 CPORT=$3 CMON=$4 COSD=$5 CWEFT=$6 CIO=$7
export WEFT_TEST_LOG_TAIL=${WEFT_TEST_LOG_TAIL:-30}
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
export PG_NUM=8
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
. "$HERE/test_osd_cluster.sh" "$CCASE" "$CMS" "$CPORT" "$CMON" "$COSD" "$CWEFT" "$CIO"
unset WEFT_CLUSTER_LIB
IOC=("$CIO" -c "$CONF" -p rbd)
JOURNAL=$DIR/journal

all_clean() {
	wj pg ls 2> /dev/null | jq -e '(.pg_stats | length) > 0 and
		([.pg_stats[] | select(.state != "active+clean")] | length) == 0' > /dev/null
}
wait_clean() { # wait_clean SECS WHAT
	local deadline=$(($(date +%s) + $1))
	while ! all_clean; do
		cl_check_alive
		if [ "$(date +%s)" -ge "$deadline" ]; then
			wj pg ls | jq -c '[.pg_stats[] | select(.state != "active+clean") |
				{pgid, state, acting, missing}]' | head -c 2000
			echo
			fail "PGs not active+clean after $1 s: $2"
		fi
		sleep 0.5
	done
	log "ok: all PGs active+clean ($2)"
}
writer() { # writer SECS QD NAMES MAXSIZE: runs to the end, prints its last line
	"${IOC[@]}" writer "$1" "$RANDOM" "$JOURNAL" "$2" "$3" "$4" > "$DIR/writer.out" 2>&1 ||
		{ tail -n 5 "$DIR/writer.out"; fail "writer"; }
	tail -n 1 "$DIR/writer.out"
}
check_data() {
	"${IOC[@]}" check "$JOURNAL" 3 > "$DIR/check.out" 2>&1 ||
		{ grep -m 20 FAIL "$DIR/check.out"; fail "data check"; }
	tail -n 1 "$DIR/check.out"
}
verify_all() {
	wj pg verify --all --wait 120 > "$DIR/verify.out" 2>&1 ||
		{ cat "$DIR/verify.out"; fail "weft pg verify --all"; }
	jq -e '.inconsistent == 0 and (.pending | length) == 0' "$DIR/verify.out" > /dev/null ||
		{ cat "$DIR/verify.out"; fail "verify: copies differ"; }
	log "ok: verify: $(jq -c '{pgs, objects, inconsistent}' "$DIR/verify.out")"
}

health_has() { wj health | jq -e --arg c "$1" '.checks[] | select(.code == $c)' > /dev/null; }
need_mon_capacity() {
	"$CWEFT" osd --help 2>&1 | grep -q "set-full-ratio" ||
		{ echo "SKIP: this weft has no 'osd set-full-ratio' (the monitors' capacity part)"; exit 77; }
}
osd_cap() { # osd_cap N FIELD: the OSD's perf dump "capacity" field
	"$CWEFT" perf dump "osd.$1" -c "$CONF" --timeout 5 2> /dev/null | jq -r ".capacity.$2"
}

case $CCASE in
small)
	# osd.2: 112 MiB with a 16 MiB WAL and a 10 % reserve, about 86 MiB of data
	CL_CONF_EXTRA=$(printf '[osd.2]\n\tosd_store_data_size = 112M\n\tosd_store_wal_size = 16M\n\tosd_store_reserve_pct = 10\n')
	cluster_up
	wait_for 60 "the cluster ready" cl_ready
	# ~240 objects of up to 1 MiB, rewritten for 30 s: far more than osd.2 holds
	writer 30 16 240 1048576
	cl_check_alive
	grep -q "no space for a transaction" "$DIR/osd.2.log" ||
		fail "osd.2's store never refused a write: the case did not fill it"
	MAYBE=$(awk '$1 == "U" && $5 == -28 && int($6 / 1) % 2 == 1 && $7 == 2' "$JOURNAL" | wc -l)
	PLAIN=$(awk '$1 == "U" && $5 == -28 && int($6 / 1) % 2 == 0' "$JOURNAL" | wc -l)
	log "writes refused for space: $MAYBE 'may have been applied' (osd.2 a replica), $PLAIN plain (nothing applied)"
	[ "$MAYBE" -gt 0 ] ||
		fail "no ENOSPC reply said 'may have been applied' naming osd.2 (journal U lines: $(grep -c '^U' "$JOURNAL"))"
	grep -Eq "osd.2 failed t[0-9]+ v[0-9a-f]+: No space left" "$DIR"/osd.[01].log ||
		fail "no primary logged osd.2's failed write"
	# the way out: removes work on the full store, then recovery levels osd.2
	"${IOC[@]}" remove "$JOURNAL" 2 > "$DIR/remove.out" 2>&1 ||
		{ tail -n 5 "$DIR/remove.out"; fail "removes on a full OSD"; }
	tail -n 1 "$DIR/remove.out"
	wait_clean 240 "after removing half the objects"
	check_data
	verify_all
	# writes go again, every one acknowledged
	writer 5 8 240 65536
	grep -q "writer done: [0-9]* acknowledged writes, 0 failed" "$DIR/writer.out" ||
		fail "writes after the removes failed: $(tail -n 1 "$DIR/writer.out")"
	wait_clean 120 "after the last writes"
	check_data
	cl_check_alive
	log "small: osd.2 filled, every refused write said so, copies identical after recovery"
	;;
purge)
	CL_CONF_EXTRA=$(printf '[osd]\n\tosd_pool_purge_rate = 100\n[mon]\n\tmon_allow_pool_delete = true\n')
	cluster_up
	wait_for 60 "the cluster ready" cl_ready
	writer 3 8 100 65536 # objects of the pool that stays
	w pool create gone --size 3 --min-size 2 --pg-num 8 > /dev/null || fail "pool create gone"
	GONE=$(wj pool ls | jq -r '.pools[] | select(.name == "gone") | .id')
	wait_clean 60 "pool gone created"
	declare -A BASE
	for i in 0 1 2; do BASE[$i]=$(osd_cap "$i" data_used_bytes); done
	"$CIO" -c "$CONF" -p gone writer 10 "$RANDOM" "$DIR/gone.journal" 16 600 131072 \
		> "$DIR/gone.out" 2>&1 || { tail -n 3 "$DIR/gone.out"; fail "writer on pool gone"; }
	tail -n 1 "$DIR/gone.out"
	for i in 0 1 2; do
		U=$(osd_cap "$i" data_used_bytes)
		[ "$U" -gt $((BASE[$i] + 8 * 1048576)) ] ||
			fail "osd.$i: pool gone did not take space (${BASE[$i]} -> $U bytes)"
	done
	w pool rm gone gone --yes-i-really-really-mean-it > /dev/null || fail "pool rm gone"
	wait_for 20 "osd.1 deleting pool $GONE's objects" sh -c \
		"grep -q 'pool $GONE removed: deleting its objects' '$DIR/osd.1.log'"
	sleep 1
	LEFT=$(osd_cap 1 purging_objects)
	[ "$LEFT" -gt 0 ] || fail "osd.1 had nothing left to purge 1 s in: the case did not test a restart"
	stop_osd 1
	log "osd.1 killed with $LEFT objects of pool $GONE left to delete"
	start_osd 1
	wait_for 30 "osd.1 resuming the purge after its restart" sh -c \
		"grep -q \"resuming the deletion of 1 removed pools' objects\" '$DIR/osd.1.log'"
	purged_all() {
		local i u
		for i in 0 1 2; do
			[ "$(osd_cap "$i" purging_objects)" = 0 ] ||
				{ CL_WHY="osd.$i: $(osd_cap "$i" purging_objects) objects left"; return 1; }
			u=$(osd_cap "$i" data_used_bytes)
			[ "$u" -le $((BASE[$i] + 1048576)) ] ||
				{ CL_WHY="osd.$i: data $u bytes, was ${BASE[$i]}"; return 1; }
		done
	}
	wait_for 120 "every OSD purged pool $GONE and its space came back" purged_all
	for i in 0 2; do
		L=$(grep -o "pool $GONE purged: [0-9]* objects deleted here in [0-9.]* s" "$DIR/osd.$i.log") ||
			fail "osd.$i never said pool $GONE was purged"
		N=$(echo "$L" | awk '{ print $4 }') T=$(echo "$L" | awk '{ print $9 }')
		log "osd.$i: $L"
		awk -v n="$N" -v t="$T" 'BEGIN { exit !(n >= 200 && t >= 0.8 * n / 100) }' ||
			fail "osd.$i: $N objects in $T s: not throttled to 100/s (or too few objects)"
	done
	check_data
	cl_check_alive
	log "purge: pool $GONE deleted on every OSD at the throttle, resumed after a kill, space back"
	;;
full)
	need_mon_capacity
	CL_DATA_SIZE=512M
	CL_CONF_EXTRA=$(printf '[osd]\n\tosd_store_reserve_pct = 1\n')
	cluster_up
	wait_for 60 "the cluster ready" cl_ready
	TOTAL=$(osd_cap 0 total_bytes)
	# fast to about 80 % (every OSD holds every object), then slowly on
	"$CWEFT" bench rbd 120 write -b 1M --no-cleanup --run-name fill --no-explain \
		--max-bytes $((TOTAL * 80 / 100 / 1048576))M -c "$CONF" > "$DIR/fill.out" 2>&1 ||
		{ tail -n 5 "$DIR/fill.out"; fail "bench fill"; }
	log "filled: osd df $(wj osd df | jq -c '[.nodes[] | .utilization]')"
	# 6 MB/s: the 5 % of each band take about 4 s, several reports, so the map
	# passes through nearfull (unpaced, a Release build crossed it between two)
	"${IOC[@]}" writer 40 "$RANDOM" "$JOURNAL" 4 2000 131072 6000000 > "$DIR/writer.out" 2>&1 &
	PIDS[writer]=$!
	SEEN=""
	full_refusing() {
		local c
		for c in OSD_NEARFULL OSD_BACKFILLFULL OSD_FULL; do
			health_has "$c" && case " $SEEN " in *" $c "*) ;; *) SEEN="$SEEN $c"; log "health: $c" ;; esac
		done
		awk '$1 == "U" && $5 == -28 && $6 == 2' "$JOURNAL" | grep -q . || return 1
		case " $SEEN " in *" OSD_FULL "*) return 0 ;; esac
		return 1
	}
	wait_for 120 "the map marks the OSDs full and the primaries refuse writes" full_refusing
	case "$SEEN" in *OSD_NEARFULL*OSD_FULL*) ;; *) fail "health went$SEEN, not OSD_NEARFULL before OSD_FULL" ;; esac
	wj osd dump | jq -e '[.osds[] | select(.fullness == "full")] | length > 0' > /dev/null ||
		fail "no OSD is full in the map: $(wj osd dump | jq -c '[.osds[] | {id, fullness}]')"
	# a fresh bench stops at once, with the line and the verdict
	"$CWEFT" bench rbd 30 write -b 64K -c "$CONF" > "$DIR/bench-full.out" 2> "$DIR/bench-full.err"
	[ $? = 1 ] || fail "weft bench on a full pool did not exit 1"
	grep -Eq "^weft bench: the pool is full \(osd\.[0-9] at 95%\): stopping$" "$DIR/bench-full.err" ||
		fail "weft bench did not say the pool is full: $(head -n 3 "$DIR/bench-full.err")"
	[ "$(grep -c "error: object" "$DIR/bench-full.err")" = 0 ] ||
		fail "weft bench printed errors per op on a full pool"
	grep -q "verdict: space-bound: the pool is full" "$DIR/bench-full.out" ||
		fail "the explainer did not name the full OSD: $(grep verdict "$DIR/bench-full.out")"
	log "ok: $(head -n 1 "$DIR/bench-full.err")"
	wait "${PIDS[writer]}"
	unset "PIDS[writer]"
	tail -n 1 "$DIR/writer.out"
	MAYBE=$(awk '$1 == "U" && int($6) % 2 == 1' "$JOURNAL" | wc -l)
	[ "$MAYBE" = 0 ] || fail "$MAYBE writes failed on a replica ('may have been applied'): the full ratio did not stop them first"
	grep -q "refusing writes: osd.[0-9] is full" "$DIR"/osd.*.log || fail "no primary logged the refusal"
	cl_check_alive
	# the way out: the bench objects go, the bits clear, writes are accepted again
	"$CWEFT" bench rbd cleanup --run-name fill -c "$CONF" > "$DIR/cleanup.out" 2>&1 ||
		{ tail -n 3 "$DIR/cleanup.out"; fail "removing the bench objects on a full cluster"; }
	# every OSD's freed space reported, not only the full bits gone: an OSD still
	# backfillfull at 93 % (its frees not in its report yet) refilled under the writer
	wait_for 60 "the full bits cleared and every OSD's space came back" sh -c "! $CWEFT health -c $CONF --format json | jq -e '.checks[] | select(.code == \"OSD_FULL\" or .code == \"OSD_BACKFILLFULL\" or .code == \"OSD_NEARFULL\")' > /dev/null"
	writer 5 4 2000 65536
	grep -q "writer done: [0-9]* acknowledged writes, 0 failed" "$DIR/writer.out" ||
		fail "writes after the removes failed: $(tail -n 1 "$DIR/writer.out")"
	wait_clean 120 "after the removes"
	check_data
	verify_all
	log "full: nearfull then full, clean refusals, bench stopped with one line, removes freed, copies identical"
	;;
toofull)
	need_mon_capacity
	export WEFT_OSD_PG_LOG_MAX=8 # osd.2 behind by more than 8 writes per PG: backfill
	CL_CONF_EXTRA=$(printf '[osd.2]\n\tosd_store_data_size = 256M\n')
	cluster_up
	wait_for 60 "the cluster ready" cl_ready
	T2=$(osd_cap 2 total_bytes)
	"$CWEFT" bench rbd 120 write -b 1M --no-cleanup --run-name fill --no-explain \
		--max-bytes $((T2 * 70 / 100 / 1048576))M -c "$CONF" > "$DIR/fill.out" 2>&1 ||
		{ tail -n 5 "$DIR/fill.out"; fail "bench fill"; }
	sleep 2 # a report of the filled stores reaches the mons
	log "filled: osd df $(wj osd df | jq -c '[.nodes[] | .utilization]')"
	w osd set-nearfull-ratio 0.4 > /dev/null && w osd set-backfillfull-ratio 0.5 > /dev/null ||
		fail "lowering the ratios"
	wait_for 20 "osd.2 backfillfull" health_has OSD_BACKFILLFULL
	health_has OSD_FULL && fail "osd.2 is full: the case wants it backfillfull only"
	stop_osd 2
	wait_for 30 "osd.2 down" sh -c "$CWEFT osd dump -c $CONF --format json | jq -e '.osds[] | select(.id == 2) | .up == false' > /dev/null"
	writer 8 8 300 32768
	start_osd 2
	wait_for 60 "osd.2 back up" cl_num_up_is 3
	toofull_seen() { wj pg ls | jq -e '[.pg_stats[] | select(.state | test("backfill_toofull"))] | length > 0' > /dev/null; }
	wait_for 60 "a PG of osd.2 shows backfill_toofull" toofull_seen
	N=$(wj pg ls | jq '[.pg_stats[] | select(.state | test("backfill_toofull"))] | length')
	log "ok: $N PGs backfill_toofull: $(wj pg ls | jq -c '[.pg_stats[] | select(.state | test("toofull")) | .state] | unique')"
	P0=$(osd_cap 2 data_used_bytes)
	sleep 5
	P1=$(osd_cap 2 data_used_bytes)
	[ "$P1" -le $((P0 + 1048576)) ] || fail "osd.2 grew by $((P1 - P0)) bytes while backfillfull: recovery pushed to it"
	grep -q "recovery waits: osd.2 is past its backfillfull ratio" "$DIR"/osd.[01].log ||
		fail "no primary logged that recovery waits for osd.2"
	w osd set-backfillfull-ratio 0.9 > /dev/null && w osd set-nearfull-ratio 0.85 > /dev/null ||
		fail "raising the ratios"
	wait_clean 180 "after osd.2 has room again"
	check_data
	verify_all
	grep -q "recovery goes on: osd.2 has room again" "$DIR"/osd.[01].log ||
		fail "no primary logged the end of the wait"
	cl_check_alive
	log "toofull: recovery waited on the backfillfull OSD, then finished; copies identical"
	;;
quota)
	need_mon_capacity
	cluster_up
	wait_for 60 "the cluster ready" cl_ready
	w pool set-quota rbd max_objects 200 > /dev/null || fail "set-quota max_objects 200"
	# new names only: 1,000 names, 2 in flight, small objects
	"${IOC[@]}" writer 15 "$RANDOM" "$JOURNAL" 2 1000 4096 > "$DIR/writer.out" 2>&1
	tail -n 1 "$DIR/writer.out"
	EDQ=$(awk '$1 == "U" && $5 == -122' "$JOURNAL" | wc -l)
	OTHER=$(awk '$1 == "U" && $5 != -122' "$JOURNAL" | wc -l)
	NOBJ=$(wj df | jq '.pools[] | select(.name == "rbd") | .stats.objects')
	log "quota 200: $NOBJ objects stored, $EDQ writes refused with EDQUOT, $OTHER other failures"
	[ "$EDQ" -gt 0 ] || fail "no write was refused with EDQUOT past the quota"
	[ "$OTHER" = 0 ] || fail "$OTHER writes failed otherwise: $(awk '$1 == "U" && $5 != -122' "$JOURNAL" | head -3)"
	[ "$NOBJ" -ge 200 ] || fail "$NOBJ objects: the quota of 200 was never reached"
	# once the map flags the pool, every write that allocates is refused (overwrites too)
	LATE=$(grep -E '^[AU] ' "$JOURNAL" | tail -n 500 | awk '!($1 == "U" && $5 == -122)' | wc -l)
	[ "$LATE" = 0 ] || fail "$LATE of the writer's last 500 writes were not refused with EDQUOT"
	"$CWEFT" bench rbd 10 write -b 4K --no-explain -c "$CONF" > "$DIR/bench-quota.out" \
		2> "$DIR/bench-quota.err"
	grep -q "^weft bench: the pool is at its quota (weft df): stopping$" "$DIR/bench-quota.err" ||
		fail "weft bench on a pool at its quota: $(head -n 2 "$DIR/bench-quota.err")"
	"${IOC[@]}" remove "$JOURNAL" 4 > "$DIR/remove.out" 2>&1 ||
		{ tail -n 3 "$DIR/remove.out"; fail "removes in a pool at its quota"; }
	w pool set-quota rbd max_objects 0 > /dev/null || fail "removing the quota"
	wait_for 20 "the pool's full flag cleared" sh -c "! $CWEFT health -c $CONF --format json | jq -e '.checks[] | select(.code == \"POOL_FULL\")' > /dev/null"
	writer 3 2 1000 4096
	grep -q "writer done: [0-9]* acknowledged writes, 0 failed" "$DIR/writer.out" ||
		fail "writes without the quota failed: $(tail -n 1 "$DIR/writer.out")"
	check_data
	log "quota: EDQUOT past it, bench stopped with one line, removes went, writes again without it"
	;;
*)
	fail "unknown case $CCASE"
	;;
esac
log "PASS: $CCASE"
