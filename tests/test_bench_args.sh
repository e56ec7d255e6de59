#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# weft bench without a cluster: --help, every kind of bad usage (exit 2, a
# reason and the usage on stderr, nothing on stdout), a bad conf file, and a
# cluster that is not there (exit 1 with one clear line, bounded by
# client_op_timeout). The runs against a cluster are in test_osd_cluster.sh.
#
# usage: test_bench_args.sh PATH/TO/weft
set -u
WEFT=${1:?usage: test_bench_args.sh PATH/TO/weft}
TMP=$(mktemp -d /tmp/weft-bench-args.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

"$WEFT" bench --help > "$TMP/out" 2> "$TMP/err"
[ $? = 0 ] && grep -q "^usage: weft bench POOL SECONDS write|seq|rand" "$TMP/out" &&
	grep -q -- "--no-cleanup" "$TMP/out" && grep -q -- "--run-name" "$TMP/out" ||
	fail "--help"
"$WEFT" --help | grep -q "^  bench " || fail "weft --help does not list bench"

# args -> the reason that must be printed
check_bad() {
	local want=$1
	shift
	"$WEFT" bench "$@" > "$TMP/out" 2> "$TMP/err"
	local rc=$?
	if [ $rc != 2 ]; then
		fail "bench $* exited $rc, not 2"
	elif [ -s "$TMP/out" ]; then
		fail "bench $* printed on stdout"
	elif ! grep -q -- "$want" "$TMP/err" || ! grep -q "^usage: weft bench" "$TMP/err"; then
		fail "bench $*: no '$want' + usage on stderr: $(head -n 1 "$TMP/err")"
	else
		echo "ok: bench $* -> $(head -n 1 "$TMP/err")"
	fi
}
check_bad "expected POOL SECONDS"
check_bad "expected POOL SECONDS" rbd
check_bad "expected POOL SECONDS" rbd 10
check_bad "too many arguments" rbd 10 write extra
check_bad "unknown mode 'wrte'" rbd 10 wrte
check_bad "SECONDS 'ten'" rbd ten write
check_bad "SECONDS '0'" rbd 0 write
check_bad "option '-5'" rbd -5 write # getopt takes it for an option: still exit 2
check_bad "SECONDS '1e9'" rbd 1e9 write
check_bad "-t '0'" rbd 10 write -t 0
check_bad "-t '1025'" rbd 10 write -t 1025
check_bad "-t 'x'" rbd 10 write -t x
check_bad "-t" rbd 10 write -t
check_bad "-b '12Q'" rbd 10 write -b 12Q
check_bad "-b '47'" rbd 10 write -b 47
check_bad "-b '2G'" rbd 10 write -b 2G
check_bad "-b 'M'" rbd 10 write -b M
check_bad "--format must be plain or json" rbd 10 write --format xml
check_bad "--run-name 'a b'" rbd 10 seq --run-name "a b"
check_bad "--run-name ''" rbd 10 seq --run-name ""
check_bad "unknown or incomplete option '--bogus'" rbd 10 write --bogus
check_bad "--max-bytes 'x': a size above 0" rbd 10 write --max-bytes x
check_bad "--max-bytes '0': a size above 0" rbd 10 write --max-bytes 0
check_bad "--max-bytes is for write, not rand" rbd 10 rand --max-bytes 1M

# -b larger than osd_max_op_size: refused before connecting
printf '[global]\n\tmon_host = 127.0.0.1:1\n\tosd_max_op_size = 1M\n' > "$TMP/small.conf"
"$WEFT" bench rbd 10 write -b 4M -c "$TMP/small.conf" > "$TMP/out" 2> "$TMP/err"
[ $? = 2 ] && grep -q "larger than osd_max_op_size" "$TMP/err" ||
	fail "-b over osd_max_op_size: $(cat "$TMP/err")"

# a conf file with a bad value: exit 2, the conf error said
printf '[global]\n\tclient_buffers = lots\n' > "$TMP/bad.conf"
"$WEFT" bench rbd 10 write -c "$TMP/bad.conf" > "$TMP/out" 2> "$TMP/err"
[ $? = 2 ] && grep -qi "client_buffers" "$TMP/err" || fail "bad conf: $(cat "$TMP/err")"

# nobody at mon_host: exit 1 and one line naming the problem, within the op timeout
printf '[global]\n\tmon_host = 127.0.0.1:9\n\tms_type = tcp\n\tclient_op_timeout = 1s\n' \
	> "$TMP/nomon.conf"
timeout 60 "$WEFT" bench rbd 10 write -c "$TMP/nomon.conf" > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc = 1 ] && grep -q "weft bench: cannot connect" "$TMP/err" ||
	fail "no monitor: rc $rc, $(cat "$TMP/err")"

[ $FAILS = 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "PASS"
