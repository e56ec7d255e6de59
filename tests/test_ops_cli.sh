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

# --- --version and --help on every installed binary --------------------------
for b in "$WEFT" "$MON" "$OSD" "$OMOUNT"; do
	n=$(basename "$b")
	run 0 "$n --version" "$b" --version
	grep -qE "^$n [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{12}(-dirty)?\)$" "$DIR/o" ||
		{ cat "$DIR/o"; fail "$n --version: not 'NAME X.Y.Z (git COMMIT)'"; }
	run 0 "$n --help" "$b" --help
	head -n 1 "$DIR/o" | grep -q "^usage: $n" || { head -n 3 "$DIR/o"; fail "$n --help: no usage line"; }
done
log "ok: --version and --help on weft, weft-mon, weft-osd, weft-mount"

# per-command --help: that command's usage only
for c in status health mon osd pool pg balancer config perf daemon vol bench doctor \
	fabric-bench store-bench sim; do
	run 0 "weft $c --help" "$WEFT" "$c" --help
	grep -q "usage: weft" "$DIR/o" || fail "weft $c --help: no usage line"
done
"$WEFT" pool --help | grep -q "pool rm NAME NAME --yes-i-really-really-mean-it" || fail "pool --help"
"$WEFT" pool --help | grep -q "osd tree" && fail "weft pool --help shows the osd commands"
"$WEFT" osd --help | grep -q "pool ls" && fail "weft osd --help shows the pool commands"
log "ok: per-command --help"

# --- every printing command with --format json: stdout parses as JSON --------
"$WEFT" vol create "$POOL/v1" --size 64M -c "$CONF" --timeout 20 || fail "vol create"
while IFS='|' read -r what cmd; do
	[ -n "$what" ] || continue
	# shellcheck disable=SC2086 # the table's words
	run 0 "$what --format json" "$WEFT" $cmd --format json
	is_json "$what"
	# and plain is accepted, with text as its alias
	# shellcheck disable=SC2086
	run 0 "$what --format plain" "$WEFT" $cmd --format plain
	# shellcheck disable=SC2086
	run 0 "$what --format text" "$WEFT" $cmd --format text
done << EOT
status|status -c $CONF
health|health -c $CONF
health detail|health detail -c $CONF
df|df -c $CONF
osd df|osd df -c $CONF
mon stat|mon stat -c $CONF
osd tree|osd tree -c $CONF
osd dump|osd dump -c $CONF
pool ls|pool ls -c $CONF
pg ls|pg ls -c $CONF
pg ls --state|pg ls --state active+clean -c $CONF
balancer status|balancer status -c $CONF
config help|config help
config show|config show -c $CONF --all
perf dump|perf dump osd.0 -c $CONF
daemon help|daemon osd.0 help -c $CONF
daemon mon|daemon mon.a perf dump -c $CONF
vol ls|vol ls $POOL -c $CONF
vol info|vol info $POOL/v1 -c $CONF
osd list-devices|osd list-devices -c $CONF
EOT
# the placement simulator, small: its metrics as one object
run 0 "sim --format json" "$WEFT" sim --racks 1 --hosts 3 --osds-per-host 2 --pgs 64 --format json
is_json "sim"
[ "$(jq '.metrics.osds.value' "$DIR/o")" = 6 ] || fail "sim --format json: osds is not 6"
# doctor exits 3 on a node without RDMA devices; its JSON is still a report
"$WEFT" doctor --format json > "$DIR/o" 2> "$DIR/e"
is_json "doctor"
[ "$(wj pg ls --state active | jq '.pg_stats | length')" = "$PG_NUM" ] || fail "pg ls --state active"
[ "$("$WEFT" perf dump osd.0 -c "$CONF" --format plain | grep -c '^counters\.')" -gt 0 ] ||
	fail "perf dump --format plain: no 'counters.*' lines"
log "ok: --format json|plain|text on every printing command"

# --- bad usage: exit 2, one line on stderr, naming what is wrong --------------
while IFS='|' read -r pattern cmd; do
	[ -n "$cmd" ] || continue
	# shellcheck disable=SC2086
	run 2 "$cmd" $cmd
	one_line "$cmd" "$pattern"
done << EOT
no command|$WEFT
unknown command 'frob'|$WEFT frob
must be plain or json, not 'xml'|$WEFT status --format xml -c $CONF
must be plain or json, not 'xml'|$WEFT pool ls --format=xml -c $CONF
must be plain or json, not 'xml'|$WEFT config show --format xml
must be plain or json, not 'xml'|$WEFT config help --format xml
must be plain or json, not 'xml'|$WEFT perf dump osd.0 --format xml -c $CONF
must be plain or json, not 'xml'|$WEFT vol ls $POOL --format xml -c $CONF
must be plain or json, not 'xml'|$WEFT doctor --format xml
must be plain or json, not 'xml'|$WEFT fabric-bench --format xml
must be plain or json, not 'xml'|$WEFT osd list-devices --format xml
must be plain or json, not 'xml'|$WEFT sim --format xml
unknown pool property 'colour'|$WEFT pool set $POOL colour blue -c $CONF
size must be a positive integer, not 'blue'|$WEFT pool set $POOL size blue -c $CONF
unknown PG state 'bogus'|$WEFT pg ls --state bogus -c $CONF
unknown PG state 'bogus'|$WEFT pg ls --state active+bogus -c $CONF
bad arguments for 'frob'|$WEFT osd frob -c $CONF
give its name twice|$WEFT pool rm $POOL -c $CONF
the weight must be a number in 0..1, not '2'|$WEFT osd reweight 0 2 -c $CONF
'x' is not an osd id (N or osd.N)|$WEFT osd reweight x 0.5 -c $CONF
the weight must be a number in 0..65535, not 'heavy'|$WEFT osd crush reweight osd.0 heavy -c $CONF
pass --yes-i-really-mean-it|$WEFT osd purge 0 -c $CONF
give one or more OSD ids|$WEFT osd safe-to-destroy -c $CONF
--sticky is an option of health mute|$WEFT health unmute OSD_DOWN --sticky -c $CONF
TTL 'soon' is not a duration|$WEFT health mute OSD_DOWN soon -c $CONF
unknown option '--no_such_key=1'|$WEFT status --no_such_key=1 -c $CONF
timeout must be seconds|$WEFT status --timeout 0 -c $CONF
unknown subcommand 'frob'|$WEFT config frob
expected 'perf dump TYPE.ID'|$WEFT perf dump
unknown or incomplete option '--bogus'|$WEFT perf dump osd.0 --bogus
-i ID is required|$MON
unknown or incomplete option '--bogus'|$MON -i a --bogus
-i ID is required|$OSD
unknown or incomplete option '--bogus'|$OSD -i 0 --bogus
unknown or incomplete option '--bogus'|$OMOUNT --bogus
POOL and MOUNTPOINT are required|$OMOUNT -c $CONF
EOT
log "ok: bad usage exits 2 with one line"

# a run-time failure: one line (no log lines before it unless --verbose), exit 1
run 1 "status, no monitor" "$WEFT" status --mon_host=127.1.0.1:$((PORT + 99)) --timeout 1
one_line "status, no monitor" "weft status"
"$WEFT" status --mon_host=127.1.0.1:$((PORT + 99)) --timeout 1 --verbose > /dev/null 2> "$DIR/e"
[ "$(wc -l < "$DIR/e")" -gt 1 ] || { cat "$DIR/e"; fail "--verbose shows no log lines"; }
run 1 "vol info of a missing volume" "$WEFT" vol info "$POOL/nope" -c "$CONF" --timeout 20
one_line "vol info of a missing volume" "weft vol info"
log "ok: run-time errors are one line, log lines only with --verbose"
