# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Logs and runtime options (docs/operations.md): sourced by tests/test_ops.sh
# (sighup) on 1 mon + 1 OSD writing to log_file. SIGHUP makes a daemon open
# log_file again (logrotate without copytruncate); 'weft daemon NAME config
# set' changes a runtime option and the daemon acts on it.
CL_CONF_EXTRA="[global]
	log_file = $DIR/\$name.daemon.log"
cluster_up
wait_for 60 "cluster ready" cl_ready
d() { "$WEFT" daemon "$@" -c "$CONF"; }

# rotate NAME: move its log away, SIGHUP it, and wait for a new file with the
# daemon's line saying so; the moved file gets nothing after the move
rotate() {
	local name=$1 f=$DIR/$1.daemon.log
	[ -s "$f" ] || fail "$name writes no $f"
	mv "$f" "$f.1"
	kill -HUP "${PIDS[$name]}"
	wait_for 10 "$name writes a new $f after SIGHUP" grep -q "SIGHUP: log file reopened" "$f"
	grep -q "SIGHUP: log file reopened" "$f.1" && fail "$name wrote on in the moved file"
	cl_check_alive
}
rotate osd.0
rotate mon.a
# the daemons keep logging into the new files (a map change makes lines in both)
w osd set noout > /dev/null || fail "osd set noout"
wait_for 10 "mon.a logs the map change in its new file" grep -q "noout" "$DIR/mon.a.daemon.log"
w osd unset noout > /dev/null || fail "osd unset noout"
log "ok: SIGHUP reopens log_file in weft-osd and weft-mon"

# debug_osd at run time: at warn the OSD's own info lines stop, at default they return
run 0 "config set debug_osd warn" d osd.0 config set debug_osd warn
[ "$(jq -c . "$DIR/o")" = '{"set":"debug_osd","value":"warn"}' ] || fail "config set reply: $(cat "$DIR/o")"
[ "$(d osd.0 config show | jq -r '.options.debug_osd | "\(.value) \(.origin)"')" = "warn admin socket" ] ||
	fail "config show after config set: $(d osd.0 config show | jq -c .options.debug_osd)"
mv "$DIR/osd.0.daemon.log" "$DIR/osd.0.daemon.log.2"
kill -HUP "${PIDS[osd.0]}"
wait_for 10 "osd.0 opens a new log file" test -e "$DIR/osd.0.daemon.log"
sleep 1
grep -q "SIGHUP: log file reopened" "$DIR/osd.0.daemon.log" &&
	fail "debug_osd = warn: the OSD still writes its info lines"
run 0 "config set debug_osd default" d osd.0 config set debug_osd default
kill -HUP "${PIDS[osd.0]}"
wait_for 10 "osd.0 info lines are back with debug_osd = default" \
	grep -q "SIGHUP: log file reopened" "$DIR/osd.0.daemon.log"
log "ok: debug_osd set through the admin socket takes effect at once"

# refused: unknown, read at start only, bad value (one line, exit 1)
run 1 "config set of an unknown option" d osd.0 config set no_such_option 1
one_line "unknown option" "unknown option 'no_such_option'"
run 1 "config set of a start-only option" d osd.0 config set osd_op_timeout 5s
one_line "start-only option" "osd_op_timeout is read at start only"
run 1 "config set of a bad value" d osd.0 config set debug_osd loud
one_line "bad value" "bad value 'loud' for debug_osd"
log "ok: config set refuses unknown, start-only and bad options"

# a mon option read at each use: pool deletion allowed without a restart
w pool create scratch --size 1 --min-size 1 --pg-num 4 > /dev/null || fail "pool create scratch"
run 1 "pool rm before config set" w pool rm scratch scratch --yes-i-really-really-mean-it
run 0 "config set mon_allow_pool_delete" d mon.a config set mon_allow_pool_delete true
run 0 "pool rm after config set" w pool rm scratch scratch --yes-i-really-really-mean-it
pool_exists scratch > /dev/null && fail "pool scratch still there"
log "ok: mon_allow_pool_delete set at run time through mon.a's admin socket"
