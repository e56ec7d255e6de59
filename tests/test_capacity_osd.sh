#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Capacity on the OSD side (docs/capacity.md), with real weft-mon and
# weft-osd processes.
#
#   test_capacity_osd.sh CASE MS_TYPE PORT WEFT_MON WEFT_OSD WEFT TEST_RECOVERY_IO
#   CASE: small | purge
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
	CL_CONF_EXTRA=$(printf '[osd]\n\tosd_pool_purge_rate = 100\n')
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
	w pool rm gone > /dev/null || fail "pool rm gone"
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
*)
	fail "unknown case $CCASE"
	;;
esac
log "PASS: $CCASE"
