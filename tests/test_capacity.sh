#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Capacity on the monitors with real weft-mon and weft-osd processes
# (docs/capacity.md): 1 mon, 3 OSDs with small sparse stores, pool rbd of
# size 3.
#
#   test_capacity.sh CASE MS_TYPE PORT WEFT_MON WEFT_OSD WEFT CAPACITY_IO
#   CASE: monitor | fill | fake (WEFT_OSD is then weft-fake-osd, CAPACITY_IO unused)
#
# monitor: objects of a known size are written and removed; weft df must say
#   exactly that many objects and bytes stored (the PGs' live counts), used =
#   stored x 3, raw use grown by at least the replicas' bytes; osd df a row
#   per OSD with its size, use, PGs and variance. The full ratios: refused
#   when out of order or out of (0, 1) (the map does not move), and lowered
#   under the OSDs' use they set nearfull, backfillfull and full in the map
#   and OSD_NEARFULL / OSD_BACKFILLFULL / OSD_FULL / POOL_FULL in health
#   detail, naming every OSD; raised again, every bit and check clears. Pool
#   quotas: POOL_QUOTA near max_objects, the pool's full flag in the map at
#   the quota and cleared after removes; a max_bytes quota under the use is
#   full at once; bad arguments get one line and change nothing.
# fill: the pool filled until the OSDs refuse (ratios 0.5 / 0.6 / 0.7 on
#   160 MiB stores): OSD_NEARFULL, then OSD_FULL, each only once the OSDs'
#   reported use is past its ratio; the write past full refused with ENOSPC,
#   every daemon alive; removes pass, the full bits clear, writes resume;
#   every object reads back and its 3 copies are identical. Needs OSDs that
#   enforce the full ratio (a 'capacity' section in perf dump), else skips.
# fake: 3 fake OSDs (tests/test_mon_fakeosd.c) report space chosen by the
#   test; the first map's ratios come from mon_osd_*_ratio (a bad one stops
#   weft-mon with one line); df's max avail and osd df's %USE/VAR are checked
#   to the byte; the hysteresis (full at the ratio, still full 0.2 % under it,
#   cleared 0.6 % under it); an OSD that restarts without reporting keeps its
#   bit, and health detail says its report is missing.
# Every wait is bounded.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CCASE=$1 CMS=$2 CPORT=$3 CMON=$4 COSD=$5 CWEFT=$6 CIO=$7
export WEFT_TEST_LOG_TAIL=${WEFT_TEST_LOG_TAIL:-30}
export PG_NUM=16
CL_DATA_SIZE=${CL_DATA_SIZE:-256M}
[ "$CCASE" = fill ] && CL_DATA_SIZE=160M
if [ "$CCASE" = fake ]; then
	export WEFT_TEST_OSDS=0
	CL_CONF_EXTRA='[mon]
	mon_osd_nearfull_ratio = 0.80
	mon_osd_backfillfull_ratio = 0.88
	mon_osd_full_ratio = 0.93'
fi
WEFT_CLUSTER_LIB=1
# shellcheck source=tests/test_osd_cluster.sh
. "$HERE/test_osd_cluster.sh" "$CCASE" "$CMS" "$CPORT" "$CMON" "$COSD" "$CWEFT" "$CIO"
unset WEFT_CLUSTER_LIB
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }
IOC=("$CIO" -c "$CONF" -p rbd)
OBJ=65536 # bytes per object

df_pool() { wj df | jq -r ".pools[] | select(.name == \"rbd\") | .stats.$1"; }
pool_full() { wj pool ls | jq -e '.pools[] | select(.name == "rbd") | .full' > /dev/null; }
pool_not_full() { wj pool ls | jq -e '.pools[] | select(.name == "rbd") | .full | not' > /dev/null; }
df_objects_is() { [ "$(df_pool objects)" = "$1" ]; }
df_osds_is() { [ "$(wj df | jq .stats.num_osds)" = "$1" ]; }
# every OSD's fullness in the map is $1 ("" = none)
osds_fullness() { [ "$(wj osd dump | jq -r "[.osds[] | select(.fullness == \"$1\")] | length")" = "$NOSD" ]; }
health_has() { wj health | jq -e --arg c "$1" '.checks[] | select(.code == $c)' > /dev/null; }
health_lacks() { ! health_has "$1"; }
quota_detail_is() { # quota_detail_is OBJECTS QUOTA
	w health detail | grep -q "pool 'rbd' holds $1 objects of its max_objects quota $2"
}
no_capacity_checks() {
	wj health | jq -e '[.checks[] | select(.code | test("FULL|QUOTA"))] | length == 0' > /dev/null
}
fill() { # fill FIRST COUNT
	"${IOC[@]}" fill obj "$1" "$2" "$OBJ" > "$DIR/fill.out" 2>&1 ||
		{ cat "$DIR/fill.out"; fail "writing objects $1.. ($2)"; }
}
rmobj() { # rmobj FIRST COUNT
	"${IOC[@]}" rm obj "$1" "$2" > "$DIR/rm.out" 2>&1 || { cat "$DIR/rm.out"; fail "removing objects"; }
}
# refused CMD...: exit 1 or 2 with one line on stderr, and the map epoch unchanged
refused() {
	local e0 e1 rc
	e0=$(map_epoch)
	w "$@" > "$DIR/refused.out" 2> "$DIR/refused.err"
	rc=$?
	[ "$rc" = 1 ] || [ "$rc" = 2 ] || { cat "$DIR/refused.err"; fail "'weft $*' exit $rc, wanted a refusal"; }
	[ "$(wc -l < "$DIR/refused.err")" = 1 ] || { cat "$DIR/refused.err"; fail "'weft $*': not one error line"; }
	e1=$(map_epoch)
	[ "$e0" = "$e1" ] || fail "'weft $*' was refused but the map moved from $e0 to $e1"
	log "ok: refused 'weft $*': $(cat "$DIR/refused.err")"
}

case $CCASE in
monitor)
	cluster_up
	wait_for 120 "cluster ready" cl_ready
	# ---- df and osd df against known data
	wait_for 20 "every OSD reports its space" df_osds_is "$NOSD"
	fill 0 100
	wait_for 20 "df counts 100 objects" df_objects_is 100
	stored=$(df_pool stored) used=$(df_pool used)
	[ "$stored" = $((100 * OBJ)) ] || fail "df stored $stored, wrote $((100 * OBJ))"
	[ "$used" = $((3 * stored)) ] || fail "df used $used, want stored x 3 = $((3 * stored))"
	raw_used=$(wj df | jq .stats.total_used_bytes)
	[ "$raw_used" -ge $((3 * 100 * OBJ)) ] || fail "raw used $raw_used < 3 x the stored bytes"
	wj df > "$DIR/df.json"
	w df | tee "$DIR/df.txt"
	grep -q "^TOTAL" "$DIR/df.txt" && grep -q "^rbd " "$DIR/df.txt" || fail "df text lacks TOTAL or rbd"
	# max avail: positive, and at most the room under the full ratio of the OSDs / 3
	room=$(wj osd df | jq '[.nodes[] | (.size * 0.95 - .used)] | add / 3 | floor')
	ma=$(df_pool max_avail)
	[ "$ma" -gt 0 ] && [ "$ma" -le "$room" ] || fail "max_avail $ma not in (0, $room]"
	wj osd df > "$DIR/osd_df.json"
	w osd df | tee "$DIR/osd_df.txt"
	[ "$(jq '[.nodes[] | select(.reported and .size > 0 and .used > 0 and .pgs > 0)] | length' \
		"$DIR/osd_df.json")" = "$NOSD" ] || fail "osd df: not a full row for each of $NOSD OSDs"
	[ "$(jq '[.nodes[] | .pgs] | add' "$DIR/osd_df.json")" = $((PG_NUM * 3)) ] ||
		fail "osd df: PGs do not add up to pg_num x size = $((PG_NUM * 3))"
	jq -e '.summary.min_var > 0 and .summary.max_var >= .summary.min_var' "$DIR/osd_df.json" \
		> /dev/null || fail "osd df: no MIN/MAX VAR"
	grep -q "^MIN/MAX VAR" "$DIR/osd_df.txt" || fail "osd df text has no MIN/MAX VAR line"
	w status | tee "$DIR/status.txt" | grep -q "usage: .* stored in 100 objects" ||
		{ cat "$DIR/status.txt"; fail "status shows no usage"; }
	log "ok: df stored $stored bytes in 100 objects, used $used, max avail $ma; osd df $NOSD rows"

	# ---- the ratios: validation
	refused osd set-nearfull-ratio 0.96
	refused osd set-full-ratio 0.8
	refused osd set-full-ratio 1.5
	refused osd set-backfillfull-ratio 0
	refused osd set-full-ratio abc
	[ "$(wj osd dump | jq -c '[.nearfull_ratio, .backfillfull_ratio, .full_ratio]')" = \
		"[0.85,0.9,0.95]" ] || fail "ratios changed by refused commands"
	# ---- under the OSDs' use: nearfull, then backfillfull, then full
	low=$(wj osd df | jq '[.nodes[] | .utilization] | min / 100 / 2')
	log "OSDs at $(wj osd df | jq -c '[.nodes[] | .utilization]')%, ratios go to ~$low"
	w osd set-nearfull-ratio "$low" > /dev/null || fail "set-nearfull-ratio $low"
	wait_for 20 "every OSD nearfull in the map" osds_fullness nearfull
	wait_for 10 "health OSD_NEARFULL" health_has OSD_NEARFULL
	wait_for 10 "health POOL_NEARFULL" health_has POOL_NEARFULL
	w osd set-backfillfull-ratio "$low" > /dev/null || fail "set-backfillfull-ratio"
	wait_for 20 "every OSD backfillfull" osds_fullness backfillfull
	health_has OSD_BACKFILLFULL && health_lacks OSD_NEARFULL || fail "health: not OSD_BACKFILLFULL alone"
	w osd set-full-ratio "$low" > /dev/null || fail "set-full-ratio"
	wait_for 20 "every OSD full" osds_fullness full
	wait_for 10 "health OSD_FULL" health_has OSD_FULL
	w health detail | tee "$DIR/health.txt"
	for i in $(seq 0 $((NOSD - 1))); do
		grep -q "osd.$i is full at" "$DIR/health.txt" || fail "health detail does not name osd.$i"
	done
	grep -q "^HEALTH_ERR" "$DIR/health.txt" || fail "full OSDs are not HEALTH_ERR"
	grep -q "POOL_FULL: " "$DIR/health.txt" && grep -q "pool 'rbd' maps to full osd" "$DIR/health.txt" ||
		fail "health detail does not say pool rbd maps to a full OSD"
	# back up, in the order the rule allows: full first
	w osd set-full-ratio 0.95 > /dev/null && w osd set-backfillfull-ratio 0.9 > /dev/null &&
		w osd set-nearfull-ratio 0.85 > /dev/null || fail "raising the ratios again"
	wait_for 20 "no OSD full any more" osds_fullness ""
	wait_for 10 "no capacity check in health" no_capacity_checks
	log "ok: ratios: nearfull, backfillfull, full set and cleared on all $NOSD OSDs"

	# ---- quotas
	refused pool set-quota rbd max_foo 10
	refused pool set-quota rbd max_objects 12x
	refused pool set-quota nosuchpool max_bytes 10G
	w pool set-quota rbd max_bytes 10G > /dev/null || fail "set-quota max_bytes 10G"
	[ "$(df_pool quota_max_bytes)" = $((10 << 30)) ] || fail "df: quota_max_bytes $(df_pool quota_max_bytes)"
	w pool set-quota rbd max_bytes 0 > /dev/null || fail "set-quota max_bytes 0"
	[ "$(df_pool quota_max_bytes)" = 0 ] || fail "quota_max_bytes not removed"
	w pool set-quota rbd max_objects 150 > /dev/null || fail "set-quota max_objects 150"
	w pool ls detail | grep -q "max_objects 150" || fail "pool ls detail does not show the quota"
	health_lacks POOL_QUOTA || fail "POOL_QUOTA at 100 of 150 objects"
	fill 100 40
	# POOL_QUOTA starts at 90% (135 objects): wait for the OSDs' stats of all 140, not the first
	wait_for 20 "health POOL_QUOTA at 140 of 150 objects" health_has POOL_QUOTA
	wait_for 20 "health detail naming the pool at 140 of its 150 objects" quota_detail_is 140 150
	pool_not_full || fail "pool full below its quota"
	fill 140 10
	wait_for 20 "pool rbd full in the map at 150 objects" pool_full
	wait_for 10 "health POOL_FULL" health_has POOL_FULL
	w health detail | grep -q "pool 'rbd' reached its quota" || fail "health detail: no quota line"
	health_lacks POOL_QUOTA || fail "POOL_QUOTA beside POOL_FULL"
	rmobj 130 20
	wait_for 20 "pool rbd not full after removes" pool_not_full
	wait_for 10 "no POOL_FULL" health_lacks POOL_FULL
	# a byte quota under what is stored is full at once (130 x 64 KiB > 8 MiB)
	w pool set-quota rbd max_objects 0 > /dev/null || fail "set-quota max_objects 0"
	w pool set-quota rbd max_bytes 8M > /dev/null || fail "set-quota max_bytes 8M"
	pool_full || fail "max_bytes 8M under 130 x 64 KiB stored is not full at once"
	[ "$(df_pool max_avail)" = 0 ] || fail "max_avail $(df_pool max_avail) past a reached quota"
	w pool set-quota rbd max_bytes 0 > /dev/null || fail "set-quota max_bytes 0"
	pool_not_full || fail "pool still full without quotas"
	log "ok: quotas: POOL_QUOTA, full at the quota, cleared after removes, bad input refused"

	# ---- everything removed: df back to nothing stored
	rmobj 0 130
	wait_for 20 "df counts 0 objects" df_objects_is 0
	[ "$(df_pool stored)" = 0 ] || fail "df stored $(df_pool stored) after every remove"
	log "ok: df back to 0 objects, 0 bytes stored"
	;;
fill)
	cluster_up
	wait_for 120 "cluster ready" cl_ready
	"$WEFT" perf dump osd.0 -c "$CONF" --timeout 10 | jq -e .capacity > /dev/null || {
		echo "SKIP: these OSDs do not enforce the full ratio (no capacity section in perf dump)"
		exit 77; }
	w osd set-nearfull-ratio 0.5 > /dev/null && w osd set-backfillfull-ratio 0.6 > /dev/null &&
		w osd set-full-ratio 0.7 > /dev/null || fail "setting the ratios"
	BIG=262144
	# every OSD the map marks has a reported use past the ratio of its bit (less the
	# 0.5 % hysteresis: the use only grows here, but a report may fall between the two)
	bits_follow_use() {
		wj osd df | jq -e '{"": 0, nearfull: 49.5, backfillfull: 59.5, full: 69.5} as $min |
			all(.nodes[]; .utilization >= $min[.fullness])' > /dev/null
	}
	k=0 near_at="" refused=""
	while [ -z "$refused" ]; do
		"${IOC[@]}" fill big "$k" 16 "$BIG" > "$DIR/fill.out" 2>&1
		rc=$?
		n=$(sed -n 's/^fill: \([0-9]*\) of .*/\1/p' "$DIR/fill.out")
		k=$((k + ${n:-0}))
		if [ $rc != 0 ]; then
			refused=$(grep -m 1 "^error:" "$DIR/fill.out")
			break
		fi
		sleep 1
		bits_follow_use || { wj osd df; fail "a fullness bit is set under its ratio"; }
		if [ -z "$near_at" ] && health_has OSD_NEARFULL; then
			near_at=$k
			health_lacks OSD_FULL || fail "OSD_FULL together with the first OSD_NEARFULL"
			log "ok: OSD_NEARFULL after $k objects at $(wj osd df | jq -c '[.nodes[].utilization | floor]')%"
		fi
		[ "$k" -lt 2000 ] || fail "2000 objects of 256 KiB and no write refused"
	done
	[ -n "$near_at" ] || fail "no OSD_NEARFULL before the first refused write"
	log "ok: write $k refused: $refused"
	echo "$refused" | grep -q "(-28)" || fail "the refused write is not ENOSPC"
	wait_for 10 "health OSD_FULL" health_has OSD_FULL
	w health detail | tee "$DIR/health.txt" | grep -q "osd.[0-9] is full at" ||
		fail "health detail names no full OSD"
	bits_follow_use || fail "an OSD marked full under its ratio"
	cl_check_alive
	# removes pass on full OSDs; the space comes back and writes resume
	half=$((k / 2))
	"${IOC[@]}" rm big 0 "$half" > "$DIR/rm.out" 2>&1 || { cat "$DIR/rm.out"; fail "removes on full OSDs"; }
	wait_for 30 "no OSD full after removing $half objects" osds_fullness ""
	wait_for 10 "OSD_FULL gone" health_lacks OSD_FULL
	"${IOC[@]}" fill big "$k" 8 "$BIG" > "$DIR/fill.out" 2>&1 ||
		{ cat "$DIR/fill.out"; fail "writes do not resume after removes"; }
	log "ok: removes passed, full cleared, writes resumed"
	# what is left reads back, 3 identical copies each (the refused one was written again)
	"${IOC[@]}" verify big "$half" $((k - half)) "$BIG" 3 > "$DIR/verify.out" 2>&1 ||
		{ grep -m 20 FAIL "$DIR/verify.out"; fail "verify after the fill"; }
	"${IOC[@]}" verify big "$k" 8 "$BIG" 3 > "$DIR/verify2.out" 2>&1 ||
		{ grep -m 20 FAIL "$DIR/verify2.out"; fail "verify of the writes after the removes"; }
	cl_check_alive
	log "ok: $(tail -n 1 "$DIR/verify.out"); no daemon died"
	;;
fake)
	FAKE=$COSD
	MIB=1048576
	U=00000000-0000-4000-8000-0000000000
	write_conf
	mons_up
	# the first map's ratios are the conf's
	[ "$(wj osd dump | jq -c '[.nearfull_ratio, .backfillfull_ratio, .full_ratio]')" = \
		"[0.8,0.88,0.93]" ] || fail "first map ratios $(wj osd dump | jq -c '[.full_ratio]')"
	# (by the environment: WEFT_<KEY> reaches the mon's conf whatever its argument handling)
	WEFT_MON_OSD_FULL_RATIO=1.2 "$CMON" -i a -c "$CONF" > "$DIR/badmon.out" 2>&1
	rc=$?
	[ $rc = 2 ] && [ "$(grep -c ERROR "$DIR/badmon.out")" = 1 ] &&
		grep -q "mon_osd_full_ratio: '1.2' is not a number between 0 and 1" "$DIR/badmon.out" ||
		{ cat "$DIR/badmon.out"; fail "weft-mon with mon_osd_full_ratio=1.2: exit $rc"; }
	WEFT_MON_OSD_NEARFULL_RATIO=0.9 "$CMON" -i a -c "$CONF" > "$DIR/badmon.out" 2>&1
	[ $? = 2 ] && grep -q "must hold" "$DIR/badmon.out" ||
		{ cat "$DIR/badmon.out"; fail "weft-mon with nearfull 0.9 > backfillfull 0.88 started"; }
	log "ok: first map ratios from the conf; bad ones stop weft-mon with one line"
	usage() { echo "$2 $3" > "$DIR/usage.$1"; } # usage OSD TOTAL USED
	fake_start() { # fake_start I [--usage-file F]
		local i=$1
		shift
		cl_osd_key "$i"
		"$FAKE" -c "$CONF" --uuid "${U}0$i" --host "node$i" --public "127.1.0.$((10 + i)):6800" \
			--cluster "127.2.0.$((10 + i)):6800" --want-id "$i" --beacon-ms 300 --run 300 "$@" \
			> "$DIR/fake$i.out" 2>&1 &
		PIDS[fake$i]=$!
	}
	for i in 0 1 2; do
		usage $i $(((i + 1) * 1000 * MIB)) $(((i + 1) * 100 * MIB))
		fake_start $i --usage-file "$DIR/usage.$i"
	done
	wait_for 30 "3 fake OSDs up" cl_num_up_is 3
	# the pool after its 3 hosts exist (a pool wider than its failure domains may be refused)
	w pool create rbd --size 3 --min-size 2 --pg-num "$PG_NUM" > /dev/null || fail "pool create rbd"
	wait_for 20 "3 OSDs report" df_osds_is 3
	# every PG on all three (size 3): max avail = the smallest room under 0.93
	want=$(awk -v m=$MIB 'BEGIN { printf "%d", 1000 * m * 0.93 - 100 * m }')
	ma=$(df_pool max_avail)
	[ $((ma - want)) -le 1 ] && [ $((want - ma)) -le 1 ] || fail "max_avail $ma, want $want"
	wj osd df > "$DIR/osd_df.json"
	jq -e 'def near(a; b): (a - b) | fabs < 0.0001;
		all(.nodes[]; near(.utilization; 10) and near(.var; 1)) and (.nodes | length) == 3
		and near(.summary.dev; 0) and .summary.total_size == 6000 * 1048576' "$DIR/osd_df.json" \
		> /dev/null || { cat "$DIR/osd_df.json"; fail "osd df numbers"; }
	# osd.2 twice as used as the mean: its VAR is 2 (of 3000 MiB: 1200 MiB; mean 1500/6000)
	usage 2 $((3000 * MIB)) $((1200 * MIB))
	var2() { wj osd df | jq -e '.nodes[2].var - 1.6 | fabs < 0.0001' > /dev/null; }
	wait_for 10 "osd.2 VAR 1.6 (40% vs 25% mean)" var2
	log "ok: df max avail $ma (the smallest room), osd df %USE and VAR exact"
	# hysteresis on osd.0 (1000 MiB): full at 93%, kept at 92.8%, cleared at 92.4%
	osd0_is() { [ "$(wj osd dump | jq -r '.osds[0].fullness')" = "$1" ]; }
	usage 0 $((1000 * MIB)) $((1000 * MIB * 931 / 1000))
	wait_for 10 "osd.0 full at 93.1%" osd0_is full
	usage 0 $((1000 * MIB)) $((1000 * MIB * 928 / 1000))
	sleep 3
	osd0_is full || fail "osd.0 at 92.8% left full: the hysteresis is 0.5%"
	usage 0 $((1000 * MIB)) $((1000 * MIB * 924 / 1000))
	wait_for 10 "osd.0 backfillfull at 92.4%" osd0_is backfillfull
	usage 0 $((1000 * MIB)) $((1000 * MIB * 500 / 1000))
	wait_for 10 "osd.0 not full at 50%" osd0_is ""
	log "ok: hysteresis: full at the ratio, kept 0.2% under, cleared 0.6% under"
	# a restart keeps the bit; without reports it stays, and health says so
	usage 0 $((1000 * MIB)) $((1000 * MIB * 960 / 1000))
	wait_for 10 "osd.0 full at 96%" osd0_is full
	kill "${PIDS[fake0]}"
	wait "${PIDS[fake0]}" 2> /dev/null
	unset "PIDS[fake0]"
	e0=$(map_epoch)
	fake_start 0
	wait_for 20 "fake osd.0 booted again" grep -q "booted osd.0" "$DIR/fake0.out"
	[ "$(map_epoch)" -gt "$e0" ] || fail "no boot epoch"
	osd0_is full || fail "osd.0 lost its full bit at its boot"
	sleep 6 # past the 5 s a report counts for
	osd0_is full || fail "osd.0 without reports lost its full bit"
	w health detail | tee "$DIR/health.txt" | grep -q "osd.0 is full (no recent report)" ||
		fail "health detail does not say osd.0's report is missing"
	wj osd df | jq -e '.nodes[0].reported == false' > /dev/null || fail "osd df: osd.0 reported"
	log "ok: a restarted OSD keeps its full bit until it reports"
	;;
*)
	fail "unknown case '$CCASE'"
	;;
esac
log "PASS: capacity $CCASE"
