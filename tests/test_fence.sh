#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fencing a broken exclusive lock by blocklisting (docs/volumes.md,
# "Exclusive lock"; docs/operations.md, "Blocklist") on a real cluster:
# 1 weft-mon + 3 weft-osd, pool rbd of size 3, two volume clients
# (tests/fence_io.c) on one volume.
#
#   test_fence.sh PORT WEFT_MON WEFT_OSD WEFT FENCE_IO
#
# 1. Holder A writes 'A' at [0, 1M) and [8M, 9M) and flushes. 200 write+flush
#    rounds through A read nothing: the OSDs' client read counters do not move
#    (a flush reads no lock object), their write counters grow by 200.
# 2. A is SIGSTOPped; B opens with --force: it blocklists A's instance, waits
#    for that epoch, takes the lock and writes 'B' at [0, 1M).
# 3. A is SIGCONTed: its next write, flush and write fail with -ENOLCK (the
#    OSDs refuse its instance: blocklist_refused grows); its close leaves B's
#    lock alone.
# 4. The volume holds exactly B's data at [0, 1M), A's acknowledged data at
#    [8M, 9M), and zeros where A's refused write went ([4M, 5M)).
# 5. The CLI: osd blocklist ls (plain, json) names A's instance; rm removes
#    it; an entry of 2 s is removed by the leader; bad usage exits 2 with one
#    line. Every wait is bounded.
set -u
FPORT=$1 FMON=$2 FOSD=$3 FWEFT=$4 FIO=$5
here=$(cd "$(dirname "$0")" && pwd)
set -- fence tcp "$FPORT" "$FMON" "$FOSD" "$FWEFT" "$FIO"
WEFT_CLUSTER_LIB=1
export WEFT_TEST_WATCHDOG=${WEFT_TEST_WATCHDOG:-270} # under ctest's TIMEOUT
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
# shellcheck source=tests/test_osd_cluster.sh
. "$here/test_osd_cluster.sh"
unset WEFT_CLUSTER_LIB
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }

M=1048576
APID="" BPID=""
fence_cleanup() {
	for p in $APID $BPID; do
		kill -CONT "$p" 2> /dev/null
		kill -KILL "$p" 2> /dev/null
	done
}
trap 'fence_cleanup; cleanup' EXIT

# osd_sum FIELD: a perf dump counter summed over the OSDs
osd_sum() {
	local t=0 v i
	for i in 0 1 2; do
		v=$("$FWEFT" perf dump "osd.$i" -c "$CONF" --timeout 5 | jq -r ".counters.$1") || return 1
		t=$((t + v))
	done
	echo "$t"
}
osds_epoch_ge() { # every OSD has map epoch >= $1
	local i e
	for i in 0 1 2; do
		e=$("$FWEFT" perf dump "osd.$i" -c "$CONF" --timeout 5 | jq -r .map_epoch) || return 1
		[ "$e" -ge "$1" ] || return 1
	done
}
# exited PID: the process is gone (or a zombie: our child, not yet waited for)
exited() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
# answered FILE N: FILE has at least N answer lines
answered() { [ "$(grep -c -E '^(ok|err) ' "$1")" -ge "$2" ]; }
# ask WHO N CMD: send CMD to client WHO (A or B), wait for its answer N, print it
ask() {
	local who=$1 n=$2
	shift 2
	echo "$*" >&"$([ "$who" = A ] && echo 7 || echo 8)"
	wait_for 60 "client $who answers '$*'" answered "$DIR/$who.out" "$n" >&2
	grep -E '^(ok|err) ' "$DIR/$who.out" | sed -n "${n}p"
}
expect() { # expect WHAT GOT PATTERN
	case $2 in
	$3) log "ok: $1: $2" ;;
	*) fail "$1: got '$2', wanted '$3'" ;;
	esac
}

cluster_up
log "cluster up"
w vol create rbd/fvol --size 64M > /dev/null || fail "vol create"

# --- 1. holder A
mkfifo "$DIR/A.in" "$DIR/B.in"
"$FIO" -c "$CONF" -p rbd fvol < "$DIR/A.in" > "$DIR/A.out" 2> "$DIR/A.err" &
APID=$!
exec 7> "$DIR/A.in"
wait_for 30 "A opens the volume" grep -q '^ready ' "$DIR/A.out"
AINST=$(sed -n 's/^ready //p' "$DIR/A.out")
w vol lock ls rbd/fvol | grep -q "/i=$AINST" || fail "the lock does not name A's instance $AINST"
expect "A writes [0,1M)" "$(ask A 1 write 0 $M 65)" "ok write"
expect "A writes [8M,9M)" "$(ask A 2 write $((8 * M)) $M 65)" "ok write"
expect "A flushes" "$(ask A 3 flush)" "ok flush"
R0=$(osd_sum reads) W0=$(osd_sum writes) || fail "perf dump"
expect "200 write+flush rounds" "$(ask A 4 flushes 200 $((16 * M)))" "ok flushes 200"
R1=$(osd_sum reads) W1=$(osd_sum writes) || fail "perf dump"
[ "$R1" = "$R0" ] || fail "200 flushes read $((R1 - R0)) objects (lock reads?), wanted 0"
[ $((W1 - W0)) -ge 200 ] || fail "the OSDs counted $((W1 - W0)) writes, wanted >= 200"
log "ok: 200 flushes, $((W1 - W0)) writes, $((R1 - R0)) reads"

# --- 2. A paused; B breaks the lock (fencing A) and writes
kill -STOP "$APID"
"$FIO" -c "$CONF" -p rbd fvol --force < "$DIR/B.in" > "$DIR/B.out" 2> "$DIR/B.err" &
BPID=$!
exec 8> "$DIR/B.in"
wait_for 60 "B opens the volume, breaking A's lock" grep -q '^ready ' "$DIR/B.out"
BINST=$(sed -n 's/^ready //p' "$DIR/B.out")
[ "$BINST" != "$AINST" ] || fail "A and B have one instance"
wj osd blocklist ls | jq -e --arg i "$AINST" '.blocklist[] | select(.instance == $i)' > /dev/null ||
	fail "osd blocklist ls does not list A's instance"
w osd blocklist ls | grep -q "^$AINST until " || fail "osd blocklist ls (plain) does not list A"
expect "B writes [0,1M)" "$(ask B 1 write 0 $M 66)" "ok write"
expect "B flushes" "$(ask B 2 flush)" "ok flush"
E=$(wj osd blocklist ls | jq .epoch)
wait_for 30 "every OSD has map epoch $E (the blocklist)" osds_epoch_ge "$E"

# --- 3. A resumes: fenced
REF0=$(osd_sum blocklist_refused) || fail "perf dump"
kill -CONT "$APID"
expect "A's write after the break" "$(ask A 5 write $((4 * M)) $M 65)" "err write -37 *"
expect "A's flush after the break" "$(ask A 6 flush)" "err flush -37 *"
expect "A's next write" "$(ask A 7 write 0 4096 65)" "err write -37 *"
REF1=$(osd_sum blocklist_refused) || fail "perf dump"
[ "$REF1" -gt "$REF0" ] || fail "the OSDs refused nothing of A (blocklist_refused $REF0 -> $REF1)"
log "ok: the OSDs refused $((REF1 - REF0)) ops of A"
expect "A's close" "$(ask A 8 quit)" "err close *"
wait_for 20 "A exits" exited "$APID"
w vol lock ls rbd/fvol | grep -q "/i=$BINST" || fail "A's close touched B's lock"

# --- 4. what the volume holds
expect "B's data at [0,1M)" "$(ask B 3 verify 0 $M 66)" "ok verify"
expect "A's acknowledged data at [8M,9M)" "$(ask B 4 verify $((8 * M)) $M 65)" "ok verify"
expect "nothing of A's refused write at [4M,5M)" "$(ask B 5 verify $((4 * M)) $M 0)" "ok verify"
expect "B's close" "$(ask B 6 quit)" "ok close"
wait_for 20 "B exits" exited "$BPID"

# --- 5. the CLI
out=$(w osd blocklist rm "$AINST") || fail "osd blocklist rm"
expect "rm" "$out" "un-blocklisting $AINST *"
out=$(w osd blocklist rm "$AINST") || fail "osd blocklist rm (again)"
expect "rm again" "$out" "$AINST isn't blocklisted"
w osd blocklist add 0xabc 2 | grep -q "^blocklisting 0000000000000abc until " || fail "add 0xabc 2"
gone() { ! wj osd blocklist ls | jq -e '.blocklist[] | select(.instance == "0000000000000abc")'; }
wait_for 20 "the leader expires the 2 s entry" gone
for bad in "osd blocklist add" "osd blocklist add zz" "osd blocklist add 0" \
	"osd blocklist add 12 0" "osd blocklist add 12 x" "osd blocklist rm" "osd blocklist ls x" \
	"osd blocklist frob 12"; do
	# shellcheck disable=SC2086
	"$FWEFT" $bad -c "$CONF" --timeout 5 > "$DIR/bad.out" 2> "$DIR/bad.err"
	rc=$?
	[ "$rc" = 2 ] || fail "'weft $bad' exited $rc, wanted 2"
	[ "$(wc -l < "$DIR/bad.err")" = 1 ] || fail "'weft $bad' printed $(wc -l < "$DIR/bad.err") lines on stderr"
done
log "ok: bad usage exits 2 with one line"
[ "$(wj osd blocklist ls | jq '.blocklist | length')" = 0 ] || fail "the blocklist is not empty at the end"
log "PASS fence"
