# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The CLI convention (docs/operations.md): sourced by tests/test_ops.sh (cli)
# with run, one_line, is_json, cluster-lib's functions and $CONF, $DIR.

# --- daemon lifecycle (issue 18 item 10) ------------------------------------
# a monitor id without a [mon.ID] section: one clear error, exit 1, no crash
write_conf
run 1 "weft-mon -i z" "$MON" -i z -c "$CONF"
grep -q "no mon_addr for mon.z (is there a \[mon.z\] section?)" "$DIR/e" ||
	{ cat "$DIR/e"; fail "weft-mon -i z: no clear error"; }
grep -q "AddressSanitizer\|Segmentation" "$DIR/e" && fail "weft-mon -i z crashed"
log "ok: weft-mon -i z without [mon.z] is an error, not a crash"

cluster_up
wait_for 60 "cluster ready" cl_ready
# a second start of a running mon or OSD: who holds it, non-zero exit
run 1 "second mon.a" "$MON" -i a -c "$CONF"
grep -q "mon.a is already running (pid ${PIDS[mon.a]})" "$DIR/e" ||
	{ cat "$DIR/e"; fail "second mon.a: no 'already running (pid ${PIDS[mon.a]})'"; }
run 1 "second osd.0" "$OSD" -i 0 -c "$CONF"
one_line "second osd.0" "osd.0 is already running (pid ${PIDS[osd.0]})"
cl_check_alive
log "ok: a second start of mon.a and osd.0 names the running pid and exits 1"
