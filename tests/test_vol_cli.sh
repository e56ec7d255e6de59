# SPDX-License-Identifier: Apache-2.0
# weft vol on a running cluster: sourced by tests/test_vol_cluster.sh (cli
# case) with $VWEFT, $CONF, $DIR, log and fail defined and pool rbd created.
v() { "$VWEFT" vol "$@" -c "$CONF" --timeout 30; }
expect_exit() { # expect_exit CODE WHAT CMD...: the command exits CODE
	local want=$1 what=$2 rc
	shift 2
	"$@" > "$DIR/cli.out" 2> "$DIR/cli.err"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$DIR/cli.out" "$DIR/cli.err"; fail "$what: exit $rc, want $want"; }
}
expect_err() { # expect_err PATTERN WHAT: stderr of the last command matched
	grep -qi -- "$1" "$DIR/cli.err" || { cat "$DIR/cli.err"; fail "$2: no '$1' on stderr"; }
}

# usage errors exit 2 with one line, before touching the cluster
expect_exit 0 "--help" "$VWEFT" vol --help
grep -q "weft vol bench POOL/NAME --io-type" "$DIR/cli.out" || fail "help text"
expect_exit 2 "no subcommand" "$VWEFT" vol
expect_exit 2 "unknown subcommand" v frob rbd/x
expect_exit 2 "create without --size" v create rbd/x
expect_err "needs --size" "create without --size"
expect_exit 2 "bad size" v create rbd/x --size 10X
expect_exit 2 "bad spec" v create nopool --size 1G
expect_exit 2 "bad spec 2" v info rbd/a/b
expect_exit 2 "ls with a name" v ls rbd/x
expect_exit 2 "bad format" v ls rbd --format xml
expect_exit 2 "unknown option" v ls rbd --frobnicate
expect_exit 2 "unknown conf option" v ls rbd --no_such_key=1
expect_exit 2 "bench without io-type" v bench rbd/x
expect_exit 2 "bench bad io-type" v bench rbd/x --io-type trim
expect_exit 2 "bench bad pattern" v bench rbd/x --io-type write --io-pattern zigzag
expect_exit 2 "bench bad threads" v bench rbd/x --io-type write --io-threads 0
expect_exit 2 "bench bad mix" v bench rbd/x --io-type rw --rw-mix-read 101
expect_exit 2 "lock without verb" v lock rbd/x
expect_exit 2 "extra argument" v info rbd/x extra
log "ok: usage errors exit 2"

# runtime errors exit 1
expect_exit 1 "no such pool" v ls nopool
expect_err "no pool 'nopool'" "no such pool"
expect_exit 1 "info of a missing volume" v info rbd/missing
expect_err "No such file" "info of a missing volume"
expect_exit 1 "striping" v create rbd/s --size 1G --stripe-count 2
expect_err "not supported" "striping"
expect_exit 1 "bad object size" v create rbd/s --size 1G --object-size 3M
expect_exit 0 "ls of an empty pool" v ls rbd
[ ! -s "$DIR/cli.out" ] || fail "ls of an empty pool printed: $(cat "$DIR/cli.out")"
log "ok: runtime errors exit 1 with the reason"

# create / ls / info
expect_exit 0 "create" v create rbd/vol1 --size 10G --object-size 1M
expect_exit 1 "create twice" v create rbd/vol1 --size 10G
expect_err "exists" "create twice"
expect_exit 0 "create 2" v create rbd/a-vol --size 100M
expect_exit 0 "ls" v ls rbd
[ "$(cat "$DIR/cli.out")" = "$(printf 'a-vol\nvol1')" ] || fail "ls: $(cat "$DIR/cli.out")"
[ "$(v ls rbd --format json | jq -c .)" = '["a-vol","vol1"]' ] || fail "ls json"
expect_exit 0 "info" v info rbd/vol1
grep -q "size 10 GiB (10737418240 bytes) in 10240 objects" "$DIR/cli.out" || fail "info: $(cat "$DIR/cli.out")"
grep -q "object size 1 MiB" "$DIR/cli.out" || fail "info object size"
grep -q "lock: free" "$DIR/cli.out" || fail "info lock"
j=$(v info rbd/vol1 --format json) || fail "info json"
[ "$(jq -r '"\(.size) \(.object_size) \(.num_objects) \(.stripe_count) \(.format) \(.lock_holder)"' <<< "$j")" = \
	"10737418240 1048576 10240 1 1 " ] || fail "info json: $j"
jq -r .block_name_prefix <<< "$j" | grep -q '^wvol_data\.[0-9a-f]\{16\}$' || fail "block_name_prefix: $j"
log "ok: create, ls, info (plain and json)"

# resize: grow, refuse a shrink without --allow-shrink, shrink
expect_exit 0 "grow" v resize rbd/vol1 --size 20G
[ "$(v info rbd/vol1 -f json | jq .size)" = 21474836480 ] || fail "size after grow"
expect_exit 1 "shrink without --allow-shrink" v resize rbd/vol1 --size 1G
expect_err "allow-shrink" "shrink without --allow-shrink"
[ "$(v info rbd/vol1 -f json | jq .size)" = 21474836480 ] || fail "size after refused shrink"
expect_exit 0 "shrink" v resize rbd/vol1 --size 1G --allow-shrink
[ "$(v info rbd/vol1 -f json | jq .size)" = 1073741824 ] || fail "size after shrink"
log "ok: resize grow and shrink"

# bench: every type and pattern, small totals (numbers are not judged here)
expect_exit 0 "bench write rand" v bench rbd/vol1 --io-type write --io-size 4K --io-threads 8 \
	--io-total 2M --io-pattern rand
grep -q "^elapsed: .* ops: 512 .*MB/sec" "$DIR/cli.out" || fail "bench summary: $(cat "$DIR/cli.out")"
grep -q "latency ms: avg .* p50 .* p99 " "$DIR/cli.out" || fail "bench latency line"
grep -q "SEC       OPS   OPS/SEC   MB/SEC" "$DIR/cli.out" || fail "bench header"
j=$(v bench rbd/vol1 --io-type read --io-size 64K --io-threads 4 --io-total 4M --io-pattern seq -f json) ||
	fail "bench read seq"
[ "$(jq -r '"\(.ops) \(.reads) \(.writes) \(.io_pattern)"' <<< "$j")" = "64 64 0 seq" ] || fail "bench json: $j"
j=$(v bench rbd/vol1 --io-type rw --io-size 4K --io-threads 16 --io-total 1M --io-pattern rand \
	--rw-mix-read 70 -f json) || fail "bench rw"
[ "$(jq '.reads + .writes' <<< "$j")" = 256 ] && [ "$(jq '.reads > 100 and .writes > 30' <<< "$j")" = true ] ||
	fail "bench rw mix: $j"
expect_exit 0 "bench 4M seq" v bench rbd/vol1 --io-type write --io-size 4M --io-threads 2 --io-total 16M
expect_exit 1 "bench larger than the volume" v bench rbd/a-vol --io-type write --io-size 128M --io-total 128M
log "ok: bench write/read/rw, rand/seq, plain and json"

# exclusive lock across processes: a holder that dies keeps it until broken
v bench rbd/vol1 --io-type write --io-size 4K --io-threads 1 --io-total 64G --exclusive \
	> "$DIR/holder.out" 2>&1 &
HOLDER=$!
PIDS[holder]=$HOLDER
wait_for 30 "the bench holds the exclusive lock" sh -c "$VWEFT vol lock ls rbd/vol1 -c $CONF | grep -q client.admin@"
expect_exit 1 "second exclusive bench" v bench rbd/vol1 --io-type write --io-total 4K --exclusive
expect_err "busy" "second exclusive bench"
expect_exit 1 "shared writer while locked" v bench rbd/vol1 --io-type write --io-total 4K
expect_exit 1 "rm while locked" v rm rbd/vol1
expect_exit 1 "resize while locked" v resize rbd/vol1 --size 2G
kill -9 "$HOLDER"
wait "$HOLDER" 2> /dev/null
unset "PIDS[holder]"
holder=$(v lock ls rbd/vol1 -f json | jq -r .holder)
[ -n "$holder" ] || fail "the dead holder's lock vanished by itself"
expect_exit 1 "break of someone else" v lock break rbd/vol1 --holder "client.x@nowhere:1/0"
expect_exit 0 "lock break" v lock break rbd/vol1 --holder "$holder"
[ "$(v lock ls rbd/vol1)" = "(free)" ] || fail "lock after break"
[ "$(v lock ls rbd/vol1 -f json | jq .epoch)" = 2 ] || fail "lock epoch after break"
expect_exit 0 "bench after the break" v bench rbd/vol1 --io-type write --io-total 64K --exclusive
log "ok: exclusive lock: second writer refused, dead holder broken with lock break"

# rm
expect_exit 0 "rm" v rm rbd/vol1
expect_exit 0 "rm 2" v rm rbd/a-vol
expect_exit 1 "rm twice" v rm rbd/vol1
[ "$(v ls rbd --format json | jq -c .)" = '[]' ] || fail "ls after rm"
log "ok: rm"
