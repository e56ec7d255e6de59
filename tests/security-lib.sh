#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The honest clients of the security suites (tests/test_security.sh,
# tests/test_security_dos.sh), sourced after scripts/cluster-lib.sh: they
# use its DIR, CONF, POOL, POOL_SIZE, PIDS and wait_for, and the caller's
# IO (tests/thrash_io), WEFT, fail and log; STATUS_LOOP holds the status
# loop's pid while it runs.
# The honest clients: a journaling writer (acked, failed at the end) and a
# status loop counting failures; both start before the attacks.
honest_start() {
	"$IO" -c "$CONF" -p "$POOL" writer 600 7 "$DIR/journal" 4 64 > "$DIR/writer.out" 2> "$DIR/writer.err" &
	PIDS[writer]=$!
	(
		ok=0 bad=0
		while [ ! -e "$DIR/stop-status" ]; do
			if "$WEFT" status -c "$CONF" --timeout 10 > /dev/null 2>> "$DIR/status.err"; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
			fi
			echo "$ok $bad" > "$DIR/status.count"
			sleep 0.5
		done
	) &
	STATUS_LOOP=$!
	wait_for 20 "the honest writer acknowledged writes" sh -c "[ -s '$DIR/journal' ] && grep -q '^A ' '$DIR/journal'"
}
honest_check() {
	local out acked failed lost divergent ok bad
	touch "$DIR/stop-status"
	wait "$STATUS_LOOP" 2> /dev/null
	STATUS_LOOP=""
	read -r ok bad < "$DIR/status.count"
	[ "$bad" = 0 ] || fail "the honest status loop failed $bad times: $(tail -n 3 "$DIR/status.err")"
	kill -TERM "${PIDS[writer]}"
	wait "${PIDS[writer]}"
	unset "PIDS[writer]"
	out=$(tail -n 1 "$DIR/writer.out")
	acked=$(echo "$out" | jq .acked)
	# the writer removes now and then a name it never wrote: -ENOENT is its answer, not a failure
	failed=$(awk '$1 == "U" && $3 != -2' "$DIR/journal" | wc -l)
	[ "$failed" = 0 ] && [ "$acked" -gt 0 ] ||
		fail "honest writer: $failed failed ops ($(awk '$1 == "U" && $3 != -2' "$DIR/journal" | head -n 3 | tr '\n' ' ')): $out"
	out=$("$IO" -c "$CONF" -p "$POOL" check "$DIR/journal" "$POOL_SIZE" | tail -n 1)
	lost=$(echo "$out" | jq .lost) divergent=$(echo "$out" | jq .divergent)
	[ "$lost" = 0 ] && [ "$divergent" = 0 ] || fail "honest writer's data: $out"
	log "ok: honest clients: $ok status calls, 0 failed; writer acked $acked, 0 failed (removes of absent names aside); check: $out"
}
