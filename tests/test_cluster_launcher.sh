#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Functional test of scripts/cluster.sh, the local cluster launcher: up
# (3 mons + 3 OSDs on 127.1.0.x / 127.2.0.x, pool bench), status, objects
# written and read back through libweft (test_osd_io), stop-osd/start-osd, restart-osd with
# SIGTERM and SIGKILL, down, up again on the same data, down --wipe; after
# every down no process the launcher started may be left.
#
#   test_cluster_launcher.sh BUILD_DIR TEST_OSD_IO
set -u
BUILD=$1 IO=$2
PORT=21100
CL=$(cd "$(dirname "$0")/.." && pwd)/scripts/cluster.sh
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }

TMP=$(mktemp -d /tmp/weft-launcher.XXXXXX)
DIR=$TMP/c
declare -A SEEN # every daemon pid we ever saw in DIR/*.pid (keys)
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*"; }
fail() {
	log "FAIL: $*"
	for f in "$DIR"/*.log "$TMP"/*.out; do
		[ -e "$f" ] && { echo "--- $f (tail)"; tail -n 15 "$f"; }
	done
	exit 1
}
cleanup() {
	kill $(pgrep -P "$WATCHDOG") "$WATCHDOG" 2> /dev/null
	record_pids
	for p in "${!SEEN[@]}"; do kill -9 "$p" 2> /dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
(sleep 270 && kill -TERM $$) > /dev/null 2>&1 &
WATCHDOG=$!
trap 'log "FAIL: watchdog: took longer than 270 s"; exit 1' TERM

cl() { "$CL" "$@" --dir "$DIR" --build "$BUILD"; }
io() { "$IO" -c "$DIR/weft.conf" -p bench "$@"; }
record_pids() {
	local f
	for f in "$DIR"/*.pid; do [ -e "$f" ] && SEEN[$(cat "$f")]=1; done
}
pid_of() { cat "$DIR/$1.pid" 2> /dev/null; }
alive() { local s; s=$(ps -o stat= -p "$1" 2> /dev/null) && [ "${s#Z}" = "$s" ]; }
# nothing the launcher started still runs: no recorded pid, no process on our conf
assert_none_left() {
	local p left
	for p in "${!SEEN[@]}"; do alive "$p" && fail "$1: pid $p still runs"; done
	left=$(pgrep -f -- "-c $DIR/weft.conf" | tr '\n' ' ')
	[ -z "$left" ] || fail "$1: processes on $DIR/weft.conf still run: $left"
	log "ok: $1: none of the ${#SEEN[@]} daemon pids seen is left"
}

# usage errors: exit 2, one line
"$CL" --help | grep -q "restart-osd N" || fail "--help"
"$CL" up --osds x > /dev/null 2>&1
[ $? = 2 ] || fail "bad --osds not rejected with 2"
"$CL" frobnicate > /dev/null 2>&1
[ $? = 2 ] || fail "unknown command not rejected with 2"
"$CL" status --dir "$DIR" > /dev/null 2>&1 && fail "status of no cluster succeeded"

# 1 GiB sparse stores: 40 objects need little; 4G fallocated is for benchmarks
CL_PREALLOCATE=false cl up --port $PORT --data-size 1G > "$TMP/up.out" 2>&1 || { cat "$TMP/up.out"; fail "up"; }
record_pids
grep -q "cluster ready" "$TMP/up.out" || fail "up did not say ready"
[ "${#SEEN[@]}" = 6 ] || fail "expected 6 pid files, got ${#SEEN[@]}"
for p in "${!SEEN[@]}"; do alive "$p" || fail "pid $p from a pid file is not running"; done
log "ok: up: 3 mons + 3 OSDs (pids ${!SEEN[*]})"
grep -q "ms_type = tcp" "$DIR/weft.conf" || fail "conf: ms_type"
grep -q "public_addr = 127.1.0.11:$((PORT + 11))" "$DIR/weft.conf" || fail "conf: osd.1 public"
grep -q "cluster_addr = 127.2.0.12:$((PORT + 32))" "$DIR/weft.conf" || fail "conf: osd.2 cluster"

cl status > "$TMP/status.out" 2>&1 || { cat "$TMP/status.out"; fail "status"; }
grep -q "HEALTH_OK" "$TMP/status.out" && grep -q "3 up, 3 in" "$TMP/status.out" &&
	[ "$(grep -c " running " "$TMP/status.out")" = 6 ] || { cat "$TMP/status.out"; fail "status output"; }
"$BUILD/tools/weft" pool ls -c "$DIR/weft.conf" --format json |
	jq -e '.pools[] | select(.name == "bench") | .size == 3 and .min_size == 2' > /dev/null ||
	fail "pool bench is not size 3 min_size 2"
log "ok: status: 6 running, HEALTH_OK, pool bench size 3 min_size 2"

io verify 40 11 > "$TMP/io1.out" 2>&1 || fail "write + read back 40 objects"
io readback 40 12 > "$TMP/bad.out" 2>&1 && fail "readback with the wrong seed passed"
log "ok: 40 objects written, read back and identical on 3 OSDs"

# up again: nothing new starts; a different layout is refused
cl up > "$TMP/up2.out" 2>&1 || { cat "$TMP/up2.out"; fail "second up"; }
grep -q "already up" "$TMP/up2.out" || fail "second up did not say already up"
cl up --osds 4 > /dev/null 2>&1
[ $? = 2 ] || fail "up with another layout not refused"

for how in "" --kill; do
	OLD=$(pid_of osd.1)
	# shellcheck disable=SC2086 # $how is empty or one word
	cl restart-osd 1 $how > "$TMP/restart.out" 2>&1 || { cat "$TMP/restart.out"; fail "restart-osd 1 $how"; }
	record_pids
	NEW=$(pid_of osd.1)
	[ -n "$NEW" ] && [ "$NEW" != "$OLD" ] || fail "osd.1 pid did not change ($OLD -> $NEW)"
	alive "$OLD" && fail "old osd.1 pid $OLD still runs"
	alive "$NEW" || fail "new osd.1 pid $NEW is not running"
	io readback 40 11 > "$TMP/io2.out" 2>&1 || fail "read back after restart-osd 1 $how"
	log "ok: restart-osd 1 $how: pid $OLD -> $NEW, the 40 objects read back from every OSD"
done
cl restart-osd 7 > /dev/null 2>&1
[ $? = 2 ] || fail "restart-osd of a missing OSD not refused"

# stop-osd then start-osd: down in between, and 'up' refuses a partial cluster
OLD=$(pid_of osd.2)
cl stop-osd 2 > "$TMP/stop.out" 2>&1 || { cat "$TMP/stop.out"; fail "stop-osd 2"; }
alive "$OLD" && fail "osd.2 pid $OLD still runs after stop-osd"
[ -e "$DIR/osd.2.pid" ] && fail "stop-osd left osd.2's pid file"
cl up > "$TMP/up-partial.out" 2>&1 && fail "up on a partly running cluster not refused"
grep -q "partly running" "$TMP/up-partial.out" || fail "up on a partial cluster: $(tail -n 2 "$TMP/up-partial.out")"
cl start-osd 2 > "$TMP/start.out" 2>&1 || { cat "$TMP/start.out"; fail "start-osd 2"; }
record_pids
NEW=$(pid_of osd.2)
[ -n "$NEW" ] && alive "$NEW" || fail "osd.2 not running after start-osd"
cl start-osd 2 > /dev/null 2>&1 && fail "start-osd of a running OSD not refused"
io readback 40 11 > "$TMP/io4.out" 2>&1 || fail "read back after stop-osd + start-osd"
log "ok: stop-osd 2 / start-osd 2: pid $OLD -> $NEW, the 40 objects read back from every OSD"

cl down > "$TMP/down.out" 2>&1 || { cat "$TMP/down.out"; fail "down"; }
assert_none_left "down"
ls "$DIR"/*.pid > /dev/null 2>&1 && fail "pid files left after down"
[ -e "$DIR/osd.0/block" ] || fail "down removed the data"

cl up > "$TMP/up3.out" 2>&1 || { cat "$TMP/up3.out"; fail "up on existing data"; }
record_pids
io readback 40 11 > "$TMP/io3.out" 2>&1 || fail "read back after down + up"
log "ok: up on the same data: the 40 objects are still there"

cl down --wipe > "$TMP/wipe.out" 2>&1 || { cat "$TMP/wipe.out"; fail "down --wipe"; }
assert_none_left "down --wipe"
[ ! -e "$DIR" ] || fail "down --wipe left $DIR"
log "PASS"
exit 0
