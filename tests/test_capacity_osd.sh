#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Capacity on the OSD side (docs/capacity.md), with real weft-mon and
# weft-osd processes.
#
#   test_capacity_osd.sh CASE MS_TYPE PORT WEFT_MON WEFT_OSD WEFT TEST_RECOVERY_IO
#   CASE: small
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
*)
	fail "unknown case $CCASE"
	;;
esac
log "PASS: $CCASE"
