#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The monitors' auth database and `weft auth` (docs/security.md,
# docs/operations.md "Keys and caps") on real monitors: 3 mons, 1 OSD.
#
#   test_auth_cli.sh PORT WEFT_MON WEFT_OSD WEFT none
#
# --mkfs writes the admin keyring (mode 0600) and says where; the first
# leader seeds mon. and client.admin with those keys; get-or-create is
# idempotent and refuses other caps; caps, rotate (a new key, the old one's
# grace shown), rm; bad usage exits 2 with one line; no key ever shows in
# the cluster map; a leader kill and a restart of every mon keep every key;
# osd purge removes osd.N's key.
set -u
APORT=$1
set -- auth-cli tcp "$1" "$2" "$3" "$4" "$5"
WEFT_CLUSTER_LIB=1
WEFT_TEST_WATCHDOG=80
# shellcheck source=tests/test_osd_cluster.sh
. "$(dirname "$0")/test_osd_cluster.sh"
PORT=$APORT
NMON=3 NOSD=1 POOL_SIZE=1 POOL_MIN_SIZE=1 PG_NUM=8
CL_ELECTION_TIMEOUT=1000ms

run() { # run CODE WHAT CMD...: CMD exits CODE; stdout in $DIR/o, stderr in $DIR/e
	local want=$1 what=$2 rc
	shift 2
	"$@" > "$DIR/o" 2> "$DIR/e"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$DIR/o" "$DIR/e"; fail "$what: exit $rc, want $want"; }
}
one_line() { # one_line WHAT PATTERN: the last stderr is one line matching PATTERN
	[ "$(wc -l < "$DIR/e")" = 1 ] || { cat "$DIR/e"; fail "$1: stderr is not one line"; }
	grep -q -- "$2" "$DIR/e" || { cat "$DIR/e"; fail "$1: stderr lacks '$2'"; }
}
key_of() { wj auth print-key "$1" 2> /dev/null | jq -r .key; }
has_entity() { wj auth ls 2> /dev/null | jq -e --arg e "$1" '.auth[] | select(.entity == $e)' > /dev/null; }
no_entity() { ! has_entity "$1"; }
leader_rank() { wj mon stat 2> /dev/null | jq -r '.leader_rank // empty'; }
new_leader() { local r; r=$(leader_rank); [ -n "$r" ] && [ "$r" != "$1" ]; }
kr_key() { awk -v s="[$2]" '$0 == s { f = 1; next } /^\[/ { f = 0 } f && $1 == "key" { print $3 }' "$1"; }

write_conf
mons_up
# 1. --mkfs: the admin keyring, where it is said to be, mode 0600, both entities.
grep -q "admin keyring (client.admin and mon., mode 0600): $DIR/keyring" "$DIR/mon.a.log" ||
	fail "mkfs of mon.a does not say where the admin keyring is"
[ "$(stat -c %a "$DIR/keyring")" = 600 ] || fail "admin keyring mode $(stat -c %a "$DIR/keyring")"
[ "$(stat -c %a "$DIR/mon.b/keyring")" = 600 ] || fail "mon.b's seed keyring is not 0600"
ADMIN=$(kr_key "$DIR/keyring" client.admin)
[ -n "$ADMIN" ] && [ -n "$(kr_key "$DIR/keyring" mon.)" ] || fail "admin keyring lacks an entity"
# every mon used the same keys (b and c read the keyring a wrote)
cmp -s "$DIR/keyring" "$DIR/mon.c/keyring" || fail "mon.c seeded with other keys"
wait_for 20 "the leader seeds client.admin and mon." sh -c \
	"'$WEFT' auth ls -c '$CONF' --format json | jq -e '[.auth[].entity] == [\"client.admin\", \"mon.\"]'"
[ "$(key_of client.admin)" = "$ADMIN" ] || fail "client.admin's key differs from the keyring's"
run 0 "auth get client.admin" w auth get client.admin
grep -q 'caps mon = "allow \*"' "$DIR/o" && grep -q 'caps osd = "allow \*"' "$DIR/o" ||
	{ cat "$DIR/o"; fail "client.admin lacks its caps"; }
log "mkfs keyring and the seed: ok"

# 2. get-or-create: a keyring section; idempotent; other caps refused.
run 0 "get-or-create" w auth get-or-create client.ro mon 'allow r' osd 'allow r pool=rbd'
grep -q '^\[client.ro\]$' "$DIR/o" && grep -q 'caps osd = "allow r pool=rbd"' "$DIR/o" ||
	{ cat "$DIR/o"; fail "get-or-create output"; }
K1=$(awk '$1 == "key" { print $3 }' "$DIR/o")
[ "${#K1}" = 44 ] || fail "key '$K1' is not 44 base64 characters"
run 0 "get-or-create again" w auth get-or-create client.ro mon 'allow r' osd 'allow r pool=rbd'
grep -q "key = $K1" "$DIR/o" || fail "get-or-create again gave another key"
run 1 "get-or-create, other caps" w auth get-or-create client.ro mon 'allow rw'
one_line "get-or-create, other caps" "exists with other caps"
# the output is a keyring the library loads (mode 0600 required)
w auth get client.ro > "$DIR/ro.keyring" && chmod 600 "$DIR/ro.keyring"
grep -q "^	key = $K1$" "$DIR/ro.keyring" || fail "auth get output is not a keyring"

# 3. Bad usage: exit 2, one line; a missing entity: exit 1, one line.
run 2 "bad cap" w auth get-or-create client.x osd 'allow rx pool=rbd'
one_line "bad cap" "osd cap 'allow rx pool=rbd': 'rx' is not a permission"
run 2 "bad entity" w auth get bogus
one_line "bad entity" "entity 'bogus'"
run 2 "unknown subcommand" w auth frob
one_line "unknown subcommand" "unknown subcommand 'frob'"
run 2 "odd caps" w auth caps client.ro mon
one_line "odd caps" "usage"
run 2 "pool on mon caps" w auth caps client.ro mon 'allow r pool=x'
one_line "pool on mon caps" "pool= applies to osd caps only"
run 1 "missing entity" w auth get client.nobody
one_line "missing entity" "entity client.nobody does not exist"
run 1 "rm missing" w auth rm client.nobody
one_line "rm missing" "does not exist"
log "refusals: ok"

# 4. caps, rotate, JSON.
run 0 "auth caps" w auth caps client.ro mon 'allow r' osd 'allow rw pool=rbd'
grep -q "updated caps for client.ro" "$DIR/o" || fail "auth caps output"
[ "$(wj auth get client.ro | jq -r .caps.osd)" = "allow rw pool=rbd" ] || fail "caps not changed"
run 0 "auth rotate" wj auth rotate client.ro
K2=$(jq -r .key "$DIR/o")
[ "$K2" != "$K1" ] && [ "${#K2}" = 44 ] || fail "rotate gave no new key"
jq -e '.previous_key_valid_until > now' "$DIR/o" > /dev/null || fail "rotate shows no grace"
[ "$(key_of client.ro)" = "$K2" ] || fail "print-key after rotate"
run 0 "auth print-key" w auth print-key client.ro
[ "$(cat "$DIR/o")" = "$K2" ] || fail "plain print-key is not the bare key"
# no key in anything the cluster map gives out
for c in status "osd dump" "mon stat"; do
	# shellcheck disable=SC2086
	wj $c > "$DIR/map.json" || fail "$c"
	! grep -qF -e "$K2" -e "$ADMIN" "$DIR/map.json" || fail "a key shows in '$c'"
done
log "caps, rotate, no key in the map: ok"

# 5. A leader kill, then a restart of every mon: the keys stay.
L=$(leader_rank)
LM=${CL_MON_IDS[$L]}
stop_mon "$LM" KILL
wait_for 30 "a new leader after mon.$LM was killed" new_leader "$L"
run 0 "get-or-create under the new leader" w auth get-or-create client.during mon 'profile client' osd 'profile client pool=rbd'
[ "$(key_of client.ro)" = "$K2" ] || fail "client.ro's key changed with the leader"
start_mon "$LM"
wait_for 30 "mon.$LM back with client.during" sh -c \
	"'$WEFT' mon stat -c '$CONF' --format json | jq -e '(.quorum | length) == 3'"
for m in a b c; do stop_mon "$m" TERM; done
for m in a b c; do start_mon "$m"; done
wait_for 30 "mons back after a full restart" has_entity client.during
[ "$(key_of client.ro)" = "$K2" ] || fail "client.ro's key lost in the restart"
[ "$(key_of client.admin)" = "$ADMIN" ] || fail "client.admin's key lost in the restart"
[ "$(wj auth ls | jq '.auth | length')" = 4 ] || fail "not 4 entities after the restart"
! grep -q "refusing" "$DIR"/mon.*.log || { grep refusing "$DIR"/mon.*.log; fail "a mon refused a log entry"; }
log "leader change and restart keep the keys: ok"

# 6. osd purge removes osd.0's key.
run 0 "osd.0 key" w auth get-or-create osd.0 mon 'profile osd' osd 'profile osd'
osds_up
stop_osd 0 KILL
w osd down 0 > /dev/null
wait_for 20 "osd.0 down" osd_up 0 false
run 0 "purge" w osd purge 0 --force --yes-i-really-mean-it
wait_for 20 "osd.0's key removed by the purge" no_entity osd.0
has_entity client.ro || fail "purge removed another key"

# 7. rm.
run 0 "auth rm" w auth rm client.ro
grep -q "removed client.ro" "$DIR/o" || fail "auth rm output"
no_entity client.ro || fail "client.ro still there"
log "purge and rm: ok"
cl_check_alive
log "PASS"
