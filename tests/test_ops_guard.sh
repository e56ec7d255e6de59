# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Guard rails (docs/operations.md): sourced by tests/test_ops.sh (guard) on 3
# OSDs in 3 hosts, pool $POOL of size 3. Every refused case prints its one
# line and leaves the map as it was (same epoch, same pools).
cluster_up
wait_for 60 "cluster ready" cl_ready
"$WEFT" vol create "$POOL/keep" --size 64M -c "$CONF" --timeout 20 || fail "vol create"

# refused CODE PATTERN CMD...: exit CODE, one line matching PATTERN, no map change
refused() {
	local code=$1 pattern=$2 e0 p0
	shift 2
	e0=$(map_epoch)
	p0=$(wj pool ls | jq -c '.pools')
	run "$code" "$*" "$@"
	one_line "$*" "$pattern"
	[ "$(map_epoch)" = "$e0" ] || fail "$*: the map moved from epoch $e0 to $(map_epoch)"
	[ "$(wj pool ls | jq -c '.pools')" = "$p0" ] || fail "$*: the pools changed"
}

# pool rm: the name twice, the long flag, and mon_allow_pool_delete on the mons
refused 2 "give its name twice and --yes-i-really-really-mean-it" w pool rm "$POOL"
refused 2 "give its name twice" w pool rm "$POOL" "$POOL"
refused 2 "give its name twice" w pool rm "$POOL" other --yes-i-really-really-mean-it
refused 1 "set mon_allow_pool_delete = true" w pool rm "$POOL" "$POOL" --yes-i-really-really-mean-it
log "ok: pool rm refused without the name twice, the flag, and mon_allow_pool_delete"

# one naming rule for pools and volumes, stated in the error
rule="a name is 1 to 63 characters of A-Z a-z 0-9 . _ -, not starting with . or -"
refused 1 "pool name 'a b': $rule (' ' is not allowed)" w pool create "a b"
refused 1 "('/' is not allowed)" w pool create "a/b"
refused 1 "(':' is not allowed)" w pool create "a:b"
refused 1 "(it starts with '.')" w pool create ".hidden"
refused 1 "(it starts with '-')" w pool create "-dash"
refused 1 "(it has 64)" w pool create "$(printf 'p%.0s' $(seq 1 64))"
refused 2 "volume name 'a b': a name is 1 to 128 characters" \
	"$WEFT" vol create "$POOL/a b" --size 1M -c "$CONF"
refused 2 "(it starts with '.')" "$WEFT" vol create "$POOL/.v" --size 1M -c "$CONF"
log "ok: bad pool and volume names refused with the rule"

# size above the failure domains (3 hosts): refused with the reason unless --force
refused 1 "size 4 exceeds the 3 host(s) under 'default'" w pool create big --size 4 --min-size 2
refused 1 "size 5 exceeds the 3 host(s)" w pool set "$POOL" size 5
run 0 "forced size 4" w pool create big --size 4 --min-size 2 --pg-num 8 --force
pool_exists big > /dev/null || fail "forced pool not created"
log "ok: pool size above the failure domains refused, allowed with --force"

# with mon_allow_pool_delete the full command removes a pool
stop_mon a TERM
cl_spawn mon.a "$MON" -i a -c "$CONF" --mon_allow_pool_delete=true
wait_for 30 "mon.a back" cl_epoch_ge 1
run 0 "pool rm allowed" w pool rm big big --yes-i-really-really-mean-it
pool_exists big > /dev/null && fail "pool big still there after pool rm"
pool_exists "$POOL" > /dev/null || fail "pool $POOL gone"
log "ok: pool rm with mon_allow_pool_delete, the name twice and the flag"
