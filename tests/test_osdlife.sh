#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The OSD lifecycle (docs/operations.md, "OSD lifecycle" and "Flags") on a
# real local cluster (scripts/cluster-lib.sh through tests/test_osd_cluster.sh):
#
#   test_osdlife.sh CASE PORT WEFT_MON WEFT_OSD WEFT TEST_RECOVERY_IO
#   CASE: life  | 5 OSDs: safe-to-destroy / ok-to-stop healthy and with one
#               | down; osd reweight and crush reweight move PGs; osd rm
#               | refused on an up OSD, taken on a down one; purge refused
#               | when not safe, forced, and taken when safe (gone from osd
#               | tree and osd dump); every refusal one line, no map change
#         flags | 3 OSDs: unknown flag refused; noout keeps a killed OSD in
#               | past the down-out interval; noup keeps a restarted OSD
#               | down; norecover holds its recovery (PGs stay degraded)
#               | until unset, then every acknowledged write reads back from
#               | 3 copies; pause holds a client write until unset; flags
#               | in status (plain, json) and OSDMAP_FLAGS
set -u
LCASE=$1 LPORT=$2 LMON=$3 LOSD=$4 LWEFT=$5 LIO=$6
here=$(cd "$(dirname "$0")" && pwd)
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-512M}
export WEFT_TEST_WATCHDOG=${WEFT_TEST_WATCHDOG:-170}
if [ "$LCASE" = life ]; then
	export WEFT_TEST_OSDS=5 POOL_SIZE=3 POOL_MIN_SIZE=2 PG_NUM=32
else
	export WEFT_TEST_OSDS=3 POOL_SIZE=3 POOL_MIN_SIZE=2 PG_NUM=16
	export CL_CONF_EXTRA='[mon]
	mon_osd_down_out_interval = 3s'
fi
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
. "$here/test_osd_cluster.sh" "osdlife-$LCASE" tcp "$LPORT" "$LMON" "$LOSD" "$LWEFT" "$LIO"
unset WEFT_CLUSTER_LIB
RIOC=("$LIO" -c "$CONF" -p "$POOL")
JOURNAL=$DIR/journal

# run CODE WHAT CMD...: CMD exits CODE; its stdout in $DIR/o, stderr in $DIR/e
run() {
	local want=$1 what=$2 rc
	shift 2
	"$@" > "$DIR/o" 2> "$DIR/e"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$DIR/o" "$DIR/e"; fail "$what: exit $rc, want $want"; }
}
one_line() { # one_line WHAT [PATTERN]: the last stderr is one line (matching PATTERN)
	[ "$(wc -l < "$DIR/e")" = 1 ] || { cat "$DIR/e"; fail "$1: stderr is not one line"; }
	[ -z "${2:-}" ] || grep -q -- "$2" "$DIR/e" || { cat "$DIR/e"; fail "$1: stderr lacks '$2'"; }
}
# refused CODE PATTERN CMD...: exit CODE, one line matching PATTERN, the map unchanged
refused() {
	local code=$1 pattern=$2 e0 d0
	shift 2
	e0=$(map_epoch)
	d0=$(wj osd dump | jq -c '.osds')
	run "$code" "$*" "$@"
	one_line "$*" "$pattern"
	[ "$(map_epoch)" = "$e0" ] || fail "$*: the map moved from epoch $e0 to $(map_epoch)"
	[ "$(wj osd dump | jq -c '.osds')" = "$d0" ] || fail "$*: the OSDs changed"
}
all_clean() {
	wj pg ls 2> /dev/null | jq -e '(.pg_stats | length) > 0 and
		([.pg_stats[] | select(.state != "active+clean")] | length) == 0' > /dev/null
}
wait_clean() { wait_for "$1" "all PGs active+clean ($2)" all_clean; }
pgs_on() { wj pg ls | jq "[.pg_stats[] | select(.acting | index($1))] | length"; }
osd_gone() { ! wj osd dump | jq -e ".osds[] | select(.id == $1)" > /dev/null; }
osd_field() { wj osd dump | jq -r ".osds[] | select(.id == $1) | .$2"; }
in_tree() { wj osd tree | jq -e ".nodes[] | select(.type == \"osd\" and .id == $1)" > /dev/null; }
write_some() { # write_some SECS: acknowledged writes go to the journal
	"${RIOC[@]}" writer "$1" "$RANDOM" "$JOURNAL" 4 200 16384 > "$DIR/writer.out" 2>&1 ||
		{ tail -n 5 "$DIR/writer.out"; fail "writer"; }
	tail -n 1 "$DIR/writer.out"
}
past() { [ "$(date +%s)" -ge "$1" ]; } # past T: the wall clock is at second T or later
check_data() { # check_data COPIES
	"${RIOC[@]}" check "$JOURNAL" "$1" > "$DIR/check.out" 2>&1 ||
		{ grep -m 20 FAIL "$DIR/check.out"; fail "data check"; }
	log "ok: $(tail -n 1 "$DIR/check.out")"
}

cluster_up
wait_for 60 "cluster ready" cl_ready
wait_clean 60 "start"
write_some 3

case $LCASE in
life)
	# healthy: every OSD holds PGs, so none is safe to destroy; one is ok to stop, two not
	run 1 "safe-to-destroy 4 (healthy)" w osd safe-to-destroy 4
	one_line "safe-to-destroy 4" "osd.4: not safe to destroy: [0-9]* pgs still map to osd.4"
	run 1 "safe-to-destroy 4 --format json" wj osd safe-to-destroy 4
	jq -e '.safe_to_destroy == false and (.mapped_pgs | length) > 0' "$DIR/o" > /dev/null ||
		fail "safe-to-destroy json: $(cat "$DIR/o")"
	run 0 "ok-to-stop 4 (healthy)" w osd ok-to-stop 4
	grep -q "osd.4: ok to stop" "$DIR/o" || fail "ok-to-stop 4: $(cat "$DIR/o")"
	run 1 "ok-to-stop 3 4" wj osd ok-to-stop 3 osd.4
	jq -e '.ok_to_stop == false and (.bad_pgs[0].why | test("would keep 1 of min_size 2"))' \
		"$DIR/o" > /dev/null || fail "ok-to-stop 3 4 json: $(cat "$DIR/o")"
	refused 1 "osd.9 does not exist" w osd safe-to-destroy 9
	log "ok: safe-to-destroy and ok-to-stop on a healthy cluster"

	# reweight: the override turns PGs away from osd.4; back at 1 they return
	refused 2 "the weight must be a number in 0..1, not '1.5'" w osd reweight 4 1.5
	refused 2 "is not an osd id" w osd reweight x 0.5
	before=$(pgs_on 4)
	run 0 "osd reweight 4 0.3" w osd reweight 4 0.3
	[ "$(osd_field 4 reweight)" = 0.3 ] || fail "osd dump reweight $(osd_field 4 reweight)"
	wait_clean 60 "osd.4 reweighted to 0.3"
	after=$(pgs_on 4)
	[ "$after" -lt $((before * 6 / 10)) ] || fail "reweight 0.3: osd.4 has $after PGs, had $before"
	log "ok: osd reweight 4 0.3 moved PGs off osd.4 ($before -> $after)"
	run 0 "osd reweight 4 1" w osd reweight 4 1
	wait_clean 60 "osd.4 reweighted to 1"
	[ "$(pgs_on 4)" = "$before" ] || fail "reweight 1: osd.4 has $(pgs_on 4) PGs, had $before"
	# crush reweight: twice the weight takes more PGs; the tree shows it
	run 0 "osd crush reweight osd.4 2" w osd crush reweight osd.4 2
	wj osd tree | jq -e '.nodes[] | select(.type == "osd" and .id == 4) | .weight == 2' \
		> /dev/null || fail "osd tree: weight of osd.4 is not 2"
	wait_clean 60 "osd.4 crush weight 2"
	[ "$(pgs_on 4)" -gt "$before" ] || fail "crush weight 2: osd.4 has $(pgs_on 4) PGs, had $before"
	log "ok: osd crush reweight osd.4 2 moved PGs to it ($before -> $(pgs_on 4))"
	run 0 "osd crush reweight osd.4 1" w osd crush reweight osd.4 1
	wait_clean 60 "osd.4 crush weight 1"

	# rm and purge of an up OSD are refused, purge without the flag too
	refused 1 "osd.4 is up; stop it (or mark it down) before removing it" w osd rm 4
	refused 2 "pass --yes-i-really-mean-it" w osd purge 4
	refused 1 "osd.4 is up" w osd purge 4 --yes-i-really-mean-it
	log "ok: osd rm / purge of an up OSD refused"

	# one OSD down while recovery is held: not safe, purge refused; forced, it goes
	run 0 "osd set norecover" w osd set norecover
	run 0 "osd set nobackfill" w osd set nobackfill
	stop_osd 4
	wait_for 30 "osd.4 down" osd_up 4 false
	wait_for 30 "PGs report at the new epoch" eval '[ "$(wj pg ls | jq "[.pg_stats[] | select(.state == \"unknown\")] | length")" = 0 ]'
	run 1 "safe-to-destroy 4 (down, recovery held)" w osd safe-to-destroy 4
	one_line "safe-to-destroy 4 down" "pgs are not active+clean"
	run 1 "ok-to-stop 3 (one down, degraded)" w osd ok-to-stop 3
	one_line "ok-to-stop 3" "osd.3: not ok to stop: pg"
	refused 1 "osd.4 is not safe to destroy: .*pass --force" w osd purge 4 --yes-i-really-mean-it
	run 0 "purge 4 --force" w osd purge 4 --force --yes-i-really-mean-it
	grep -q "purged osd.4" "$DIR/o" || fail "purge output: $(cat "$DIR/o")"
	osd_gone 4 || fail "osd.4 still in osd dump after purge --force"
	in_tree 4 && fail "osd.4 still in osd tree after purge --force"
	log "ok: purge refused while osd.4 was not safe to destroy; --force purged it"
	run 0 "osd unset norecover" w osd unset norecover
	run 0 "osd unset nobackfill" w osd unset nobackfill
	wait_clean 90 "after osd.4 purged"
	check_data 3

	# down and recovered elsewhere: safe to destroy, purged without --force
	stop_osd 3
	wait_for 30 "osd.3 down" osd_up 3 false
	wait_clean 90 "osd.3 down, recovered on 0-2"
	run 0 "safe-to-destroy 3 (recovered)" w osd safe-to-destroy 3
	grep -q "osd.3: safe to destroy" "$DIR/o" || fail "safe-to-destroy 3: $(cat "$DIR/o")"
	run 0 "purge 3" w osd purge osd.3 --yes-i-really-mean-it
	osd_gone 3 || fail "osd.3 still in osd dump after purge"
	in_tree 3 && fail "osd.3 still in osd tree after purge"
	log "ok: osd.3 safe to destroy once recovered, purged"
	check_data 3

	# osd rm: refused while up, taken once down
	refused 1 "osd.2 is up" w osd rm 2
	stop_osd 2
	wait_for 30 "osd.2 down" osd_up 2 false
	run 0 "osd rm 2" w osd rm 2
	osd_gone 2 || fail "osd.2 still in osd dump after osd rm"
	[ "$(wj status | jq .osdmap.num_osds)" = 2 ] || fail "status does not count 2 OSDs"
	log "ok: osd rm refused on an up OSD, taken on a down one"
	;;
flags)
	refused 1 "unknown flag 'bogus' (known: noout, pause, noin, noup, nodown, norecover" \
		w osd set bogus
	run 0 "osd set noout" w osd set noout
	w status | grep -q "flags noout" || fail "weft status does not show noout"
	[ "$(wj status | jq -r .osdmap.flags)" = noout ] || fail "status json flags"
	wj health | jq -e '.checks[] | select(.code == "OSDMAP_FLAGS") | .summary | test("noout")' \
		> /dev/null || fail "health has no OSDMAP_FLAGS noout"
	# noout: a killed OSD stays in past mon_osd_down_out_interval (3 s)
	stop_osd 2
	wait_for 30 "osd.2 down" osd_up 2 false
	down_at=$(date +%s)
	wait_for 20 "the down-out interval (3 s) and two liveness checks to pass" \
		past $((down_at + 5))
	[ "$(osd_field 2 in)" = true ] || fail "osd.2 was marked out with noout set"
	log "ok: noout kept osd.2 in past the down-out interval"

	# noup: a restarted OSD stays down (its boot waits), while clients write
	run 0 "osd set noup" w osd set noup
	start_osd 2
	wait_for 30 "osd.2 told its boot waits" grep -q "boot waits: noup is set" "$DIR/osd.2.log"
	[ "$(osd_field 2 up)" = false ] || fail "osd.2 is up with noup set"
	log "ok: noup kept the restarted osd.2 down"
	write_some 3

	# norecover: osd.2 comes up and its PGs stay degraded until it is unset
	run 0 "osd set norecover" w osd set norecover
	[ "$(wj status | jq -r .osdmap.flags)" = noout,noup,norecover ] ||
		fail "status flags $(wj status | jq -r .osdmap.flags)"
	run 0 "osd unset noup" w osd unset noup
	wait_for 30 "osd.2 up" osd_up 2 true
	wait_for 30 "a PG holds its recovery" grep -q "recovery held: norecover is set" \
		"$DIR"/osd.*.log
	wait_for 20 "PGs report at the new epoch" eval '[ "$(wj pg ls | jq "[.pg_stats[] | select(.state == \"unknown\")] | length")" = 0 ]'
	deg=$(wj pg ls | jq '[.pg_stats[] | select(.state | test("degraded"))] | length')
	[ "$deg" -gt 0 ] || fail "no PG degraded while norecover is set"
	all_clean && fail "all PGs clean while norecover is set"
	log "ok: norecover held the recovery of osd.2 ($deg PGs degraded)"
	run 0 "osd unset norecover" w osd unset norecover
	wait_clean 60 "norecover unset"
	check_data 3
	# pause: a client's write waits (here past a 2 s client_op_timeout), then goes
	head -c 4096 /dev/urandom > "$DIR/obj"
	run 0 "osd set pause" w osd set pause
	wait_for 10 "the client sees pause" eval '[ "$(wj status | jq -r .osdmap.flags)" = noout,pause ]'
	run 1 "put while paused" env WEFT_CLIENT_OP_TIMEOUT=2s "${RIOC[@]}" put paused "$DIR/obj"
	run 0 "osd unset pause" w osd unset pause
	run 0 "put after pause" env WEFT_CLIENT_OP_TIMEOUT=10s "${RIOC[@]}" put paused "$DIR/obj"
	run 0 "cmp after pause" "${RIOC[@]}" cmp paused "$DIR/obj" 3
	log "ok: pause held a client write until unset"
	run 0 "osd unset noout" w osd unset noout
	[ "$(wj status | jq -r .osdmap.flags)" = "" ] || fail "flags left set"
	wj health | jq -e '[.checks[] | select(.code == "OSDMAP_FLAGS")] | length == 0' > /dev/null ||
		fail "OSDMAP_FLAGS with no flag set"
	log "ok: flags unset, OSDMAP_FLAGS gone"
	;;
*) fail "unknown case $LCASE" ;;
esac
log "PASS osdlife $LCASE"
