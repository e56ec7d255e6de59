#!/usr/bin/env bash
# Functional test of `weft fabric-bench`: real server and client processes on
# 127.0.0.1, every op and mode with --verify, bad usage, a closed port and a
# server killed mid-run. No timing thresholds: performance is for
# perftest-scripts/tcp-baseline.sh, not for the test suite.
#
# usage: test_fabric_bench.sh PATH/TO/weft
set -u

WEFT=${1:?usage: test_fabric_bench.sh PATH/TO/weft}
TMP=$(mktemp -d /tmp/weft-fabric-bench-test.XXXXXX)
PIDS=()
FAILS=0

cleanup() {
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

pass() {
	echo "ok: $*"
}

# start_server NAME: starts a server on a free port; sets SRV_PID and SRV_PORT.
start_server() {
	local name=$1 i
	"$WEFT" fabric-bench --server --addr 127.0.0.1:0 >"$TMP/$name.srv.out" \
		2>"$TMP/$name.srv.err" &
	SRV_PID=$!
	PIDS+=("$SRV_PID")
	SRV_PORT=
	for i in $(seq 1 100); do
		SRV_PORT=$(sed -n \
			's/^fabric-bench: listening on 127\.0\.0\.1:\([0-9]*\) backend .*/\1/p' \
			"$TMP/$name.srv.out")
		[ -n "$SRV_PORT" ] && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name: server did not print its ready line: $(cat "$TMP/$name.srv.err")"
	return 1
}

# wait_pid PID SECONDS: waits for PID to exit, at most SECONDS; sets WAIT_RC (124 = timeout).
wait_pid() {
	local pid=$1 limit=$(($2 * 10)) i
	for i in $(seq 1 "$limit"); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			WAIT_RC=$?
			return 0
		fi
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	WAIT_RC=124
}

# check_json FILE BYTES ITERS OP MODE: ITERS "any" accepts any positive count.
check_json() {
	python3 - "$@" <<'EOF'
import json, sys
path, size, iters, op, mode = sys.argv[1:6]
lines = [l for l in open(path).read().splitlines() if l.strip()]
if len(lines) != 1:
    sys.exit("expected one JSON line, got %d" % len(lines))
j = json.loads(lines[0])
for k in ("bytes", "iterations", "seconds", "bw_mb_s", "msg_rate_mpps", "lat_p50_us",
          "lat_p99_us", "lat_p999_us", "lat_max_us", "backend", "op", "mode"):
    if k not in j:
        sys.exit("missing field " + k)
if j["bytes"] != int(size):
    sys.exit("bytes %r != %s" % (j["bytes"], size))
if iters == "any":
    if j["iterations"] <= 0:
        sys.exit("no iterations")
elif j["iterations"] != int(iters):
    sys.exit("iterations %r != %s" % (j["iterations"], iters))
if not j["bw_mb_s"] > 0 or not j["msg_rate_mpps"] > 0 or not j["seconds"] > 0:
    sys.exit("bw, rate and seconds must be > 0")
if not (0 < j["lat_p50_us"] <= j["lat_p99_us"] <= j["lat_p999_us"] <= j["lat_max_us"]):
    sys.exit("latency quantiles out of order")
if j["op"] != op or j["mode"] != mode or j["backend"] != "tcp":
    sys.exit("op/mode/backend %s/%s/%s" % (j["op"], j["mode"], j["backend"]))
EOF
}

# run_ok NAME OP MODE SIZE ITERS CLIENT-ARGS...: one client run against a fresh server.
run_ok() {
	local name=$1 op=$2 mode=$3 size=$4 iters=$5 cpid why
	shift 5
	start_server "$name" || return
	"$WEFT" fabric-bench --connect "127.0.0.1:$SRV_PORT" --backend tcp --format json "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	cpid=$!
	PIDS+=("$cpid")
	wait_pid "$cpid" 60
	if [ "$WAIT_RC" != 0 ]; then
		fail "$name: client exit $WAIT_RC: $(cat "$TMP/$name.err")"
		return
	fi
	if ! why=$(check_json "$TMP/$name.out" "$size" "$iters" "$op" "$mode" 2>&1); then
		fail "$name: $why: $(cat "$TMP/$name.out")"
		return
	fi
	wait_pid "$SRV_PID" 10
	if [ "$WAIT_RC" != 0 ]; then
		fail "$name: server exit $WAIT_RC: $(cat "$TMP/$name.srv.err")"
		return
	fi
	if [[ " $* " == *" --verify "* ]] && ! grep -q "verify ok" "$TMP/$name.srv.out"; then
		fail "$name: server did not report 'verify ok': $(cat "$TMP/$name.srv.out")"
		return
	fi
	pass "$name"
}

# usage_err NAME ARGS...: exit 2, one line on stderr, nothing on stdout.
usage_err() {
	local name=$1 rc lines
	shift
	timeout 10 "$WEFT" fabric-bench "$@" >"$TMP/u.out" 2>"$TMP/u.err"
	rc=$?
	lines=$(wc -l <"$TMP/u.err")
	if [ "$rc" != 2 ] || [ "$lines" != 1 ] || [ -s "$TMP/u.out" ]; then
		fail "usage $name: exit $rc, $lines stderr lines: $(cat "$TMP/u.err" "$TMP/u.out")"
		return
	fi
	pass "usage $name: $(cat "$TMP/u.err")"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# ---------------------------------------------------------- every op and mode
run_ok write-bw write bw 4096 300 --op write -s 4K -n 300 -q 8 --verify
run_ok read-bw read bw 4096 300 --op read -s 4K -n 300 -q 8 --verify
run_ok send-bw send bw 1000 300 --op send -s 1000 -n 300 -q 8 --verify
run_ok send-lat send lat 64 200 --op send -s 64 -n 200 --lat --verify
run_ok write-lat write lat 4096 200 --op write -s 4K -n 200 --lat --verify
run_ok read-lat read lat 4096 200 --op read -s 4K -n 200 --lat --verify
run_ok write-odd-size write bw 12345 50 --op write -s 12345 -n 50 -q 3 --verify
run_ok send-1byte send bw 1 100 --op send -s 1 -n 100 --verify
run_ok write-timed write bw 1024 any --op write -s 1K -D 1
run_ok write-1M write bw 1048576 20 --op write -s 1M -n 20 -q 4 --verify

# Text output: the perftest-like table.
start_server text && {
	if "$WEFT" fabric-bench --connect "127.0.0.1:$SRV_PORT" -s 64K -n 100 >"$TMP/text.out" \
		2>"$TMP/text.err" && grep -q "BW average\[MB/s\]" "$TMP/text.out" &&
		grep -q "^ 65536 *100 " "$TMP/text.out"; then
		pass "text output"
	else
		fail "text output: $(cat "$TMP/text.out" "$TMP/text.err")"
	fi
	wait_pid "$SRV_PID" 10
}

# --------------------------------------------------------------- bad usage
usage_err no-role --op write
usage_err both-roles --server --connect 127.0.0.1:1
usage_err bad-op --connect 127.0.0.1:1 --op frob
usage_err size-zero --connect 127.0.0.1:1 -s 0
usage_err size-huge --connect 127.0.0.1:1 -s 65M
usage_err size-garbage --connect 127.0.0.1:1 -s 12Q
usage_err iters-garbage --connect 127.0.0.1:1 -n abc
usage_err iters-negative --connect 127.0.0.1:1 -n -5
usage_err n-and-D --connect 127.0.0.1:1 -n 5 -D 5
usage_err lat-q --connect 127.0.0.1:1 --lat -q 4
usage_err send-too-big --connect 127.0.0.1:1 --op send -s 64K
usage_err bad-addr --connect nohost:1
usage_err bad-port --connect 127.0.0.1:99999
usage_err bad-backend --connect 127.0.0.1:1 --backend carrier-pigeon
usage_err bad-format --connect 127.0.0.1:1 --format xml
usage_err unknown-option --connect 127.0.0.1:1 --frobnicate
usage_err missing-value --connect 127.0.0.1:1 -s
usage_err client-opt-on-server --server --op read
usage_err stray-arg --connect 127.0.0.1:1 extra

if "$WEFT" fabric-bench --help | grep -q "usage: weft fabric-bench"; then
	pass "--help"
else
	fail "--help"
fi

# ------------------------------------------------------------ run-time errors
port=$(free_port)
start=$(date +%s)
timeout 30 "$WEFT" fabric-bench --connect "127.0.0.1:$port" -n 10 >"$TMP/closed.out" \
	2>"$TMP/closed.err"
rc=$?
elapsed=$(($(date +%s) - start))
if [ "$rc" = 1 ] && [ "$(wc -l <"$TMP/closed.err")" = 1 ] && [ "$elapsed" -le 15 ]; then
	pass "closed port: $(cat "$TMP/closed.err")"
else
	fail "closed port: exit $rc after ${elapsed}s: $(cat "$TMP/closed.err")"
fi

# Server killed mid-run: the client must notice and say so.
start_server killed && {
	"$WEFT" fabric-bench --connect "127.0.0.1:$SRV_PORT" --op write -s 64K -D 60 \
		>"$TMP/killed.out" 2>"$TMP/killed.err" &
	cpid=$!
	PIDS+=("$cpid")
	sleep 1
	kill -9 "$SRV_PID"
	wait_pid "$cpid" 15
	if [ "$WAIT_RC" = 1 ] && grep -q "peer failed" "$TMP/killed.err"; then
		pass "server killed: $(grep "peer failed" "$TMP/killed.err")"
	else
		fail "server killed: client exit $WAIT_RC: $(cat "$TMP/killed.err")"
	fi
}

# Client killed mid-run: the server must exit 1 with a message, not hang.
start_server client-killed && {
	"$WEFT" fabric-bench --connect "127.0.0.1:$SRV_PORT" --op send -s 1K -D 60 \
		>/dev/null 2>&1 &
	cpid=$!
	PIDS+=("$cpid")
	sleep 1
	kill -9 "$cpid"
	wait_pid "$SRV_PID" 20
	if [ "$WAIT_RC" = 1 ] && grep -q "failed" "$TMP/client-killed.srv.err"; then
		pass "client killed: $(cat "$TMP/client-killed.srv.err")"
	else
		fail "client killed: server exit $WAIT_RC: $(cat "$TMP/client-killed.srv.err")"
	fi
}

# Server frozen (SIGSTOP; its kernel still ACKs): the client's watchdog ends the run.
start_server frozen && {
	"$WEFT" fabric-bench --connect "127.0.0.1:$SRV_PORT" --op write -s 64K -D 60 \
		--format json >"$TMP/frozen.out" 2>"$TMP/frozen.err" &
	cpid=$!
	PIDS+=("$cpid")
	sleep 1
	kill -STOP "$SRV_PID"
	wait_pid "$cpid" 30
	kill -9 "$SRV_PID"
	if [ "$WAIT_RC" = 1 ] && [ "$(wc -l <"$TMP/frozen.err")" = 1 ]; then
		pass "server frozen: $(cat "$TMP/frozen.err")"
	else
		fail "server frozen: client exit $WAIT_RC: $(cat "$TMP/frozen.err")"
	fi
}

if [ "$FAILS" != 0 ]; then
	echo "$FAILS check(s) failed"
	exit 1
fi
echo "all fabric-bench checks passed"
