#!/usr/bin/env bash
# tcp-baseline.sh: Weft's TCP fabric backend against raw TCP, on loopback only.
#
#   iperf3 single stream, 5 s                     -> Gbit/s (and MB/s)
#   weft fabric-bench --op write -s 64K -q 16 -D 5 -> MB/s
#   weft fabric-bench --op send -s 64 --lat        -> RTT p50
#   tcp-pingpong -s 64                             -> RTT p50
#
# Acceptance bar (issue 2): fabric write BW >= 60% of iperf3's, and the
# 64-byte send round trip p50 <= 2x raw TCP's.
#
# usage: tcp-baseline.sh [--json] [BUILD_DIR]
#   BUILD_DIR (or $WEFT_BUILD_DIR; default ./build) holds tools/weft and
#   perftest-scripts/tcp-pingpong. Use a Release build for numbers you publish.
# exit: 0 bar met, 1 a tool failed, 2 bad usage, 3 bar not met.
set -uo pipefail

JSON=0
BUILD=${WEFT_BUILD_DIR:-./build}
ITERS=20000
DURATION=5
for arg in "$@"; do
	case "$arg" in
	--json) JSON=1 ;;
	-h | --help)
		sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "tcp-baseline: unknown option '$arg' (try --help)" >&2
		exit 2
		;;
	*) BUILD=$arg ;;
	esac
done

WEFT=$BUILD/tools/weft
PINGPONG=$BUILD/perftest-scripts/tcp-pingpong
for bin in "$WEFT" "$PINGPONG"; do
	if [ ! -x "$bin" ]; then
		echo "tcp-baseline: $bin not found: build it (cmake --build $BUILD)" >&2
		exit 2
	fi
done
if ! command -v iperf3 >/dev/null; then
	echo "tcp-baseline: iperf3 not installed (scripts/install-deps.sh)" >&2
	exit 2
fi
if ! command -v python3 >/dev/null; then
	echo "tcp-baseline: python3 is needed to read the JSON results" >&2
	exit 2
fi

TMP=$(mktemp -d /tmp/weft-tcp-baseline.XXXXXX)
SERVERS=()
cleanup() {
	for p in "${SERVERS[@]}"; do
		kill "$p" 2>/dev/null
	done
	sleep 0.2
	for p in "${SERVERS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say() {
	[ "$JSON" = 1 ] || echo "tcp-baseline: $*" >&2
}

die() {
	echo "tcp-baseline: $*" >&2
	exit 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# json_get FILE KEY.PATH: one number out of a JSON document.
json_get() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
v = json.loads(text[text.index("{"):])
for k in sys.argv[2].split("."):
    v = v[k]
print(v)
EOF
}

# wait_ready FILE PATTERN PID: the server's ready line, within 10 s.
wait_ready() {
	local i
	for i in $(seq 1 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# start_listener NAME CMD...: a server that prints "listening on IP:PORT"; sets PORT.
start_listener() {
	local name=$1 pid
	shift
	"$@" >"$TMP/$name.srv" 2>&1 &
	pid=$!
	SERVERS+=("$pid")
	wait_ready "$TMP/$name.srv" "listening on" "$pid" ||
		die "$name server did not start: $(cat "$TMP/$name.srv")"
	PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/$name.srv" | head -1)
	[ -n "$PORT" ] || die "$name server: no port in '$(cat "$TMP/$name.srv")'"
}

# 1. iperf3, one stream.
port=$(free_port)
iperf3 -s -1 --forceflush -B 127.0.0.1 -p "$port" >"$TMP/iperf3.srv" 2>&1 &
SERVERS+=("$!")
wait_ready "$TMP/iperf3.srv" "Server listening" "$!" || die "iperf3 server did not start"
say "iperf3 -c 127.0.0.1 -t $DURATION (single stream)"
timeout $((DURATION + 30)) iperf3 -c 127.0.0.1 -p "$port" -t "$DURATION" -J >"$TMP/iperf3.json" ||
	die "iperf3 client failed: $(head -c 300 "$TMP/iperf3.json")"
iperf_bps=$(json_get "$TMP/iperf3.json" end.sum_received.bits_per_second) ||
	die "no bits_per_second in iperf3's output"

# 2. fabric write bandwidth.
start_listener fabric-bw "$WEFT" fabric-bench --server --addr 127.0.0.1:0 --backend tcp
say "weft fabric-bench --op write -s 65536 -q 16 -D $DURATION"
timeout $((DURATION + 60)) "$WEFT" fabric-bench --connect "127.0.0.1:$PORT" --backend tcp \
	--op write -s 65536 -q 16 -D "$DURATION" --format json >"$TMP/fabric-bw.json" \
	2>"$TMP/fabric-bw.err" || die "fabric-bench write failed: $(cat "$TMP/fabric-bw.err")"
fabric_bw=$(json_get "$TMP/fabric-bw.json" bw_mb_s) || die "fabric-bench write: bad JSON"

# 3. fabric 64-byte send round trip.
start_listener fabric-lat "$WEFT" fabric-bench --server --addr 127.0.0.1:0 --backend tcp
say "weft fabric-bench --op send -s 64 --lat -n $ITERS"
timeout 300 "$WEFT" fabric-bench --connect "127.0.0.1:$PORT" --backend tcp --op send -s 64 --lat \
	-n "$ITERS" --format json >"$TMP/fabric-lat.json" 2>"$TMP/fabric-lat.err" ||
	die "fabric-bench send --lat failed: $(cat "$TMP/fabric-lat.err")"
fabric_p50=$(json_get "$TMP/fabric-lat.json" lat_p50_us) || die "fabric-bench send: bad JSON"
fabric_p99=$(json_get "$TMP/fabric-lat.json" lat_p99_us) || die "fabric-bench send: bad JSON"

# 4. raw TCP 64-byte ping-pong.
start_listener tcp-pingpong "$PINGPONG" --server 127.0.0.1:0
say "tcp-pingpong -s 64 -n $ITERS"
timeout 300 "$PINGPONG" --connect "127.0.0.1:$PORT" -s 64 -n "$ITERS" --format json \
	>"$TMP/tcp-lat.json" 2>"$TMP/tcp-lat.err" ||
	die "tcp-pingpong failed: $(cat "$TMP/tcp-lat.err")"
tcp_p50=$(json_get "$TMP/tcp-lat.json" lat_p50_us) || die "tcp-pingpong: bad JSON"
tcp_p99=$(json_get "$TMP/tcp-lat.json" lat_p99_us) || die "tcp-pingpong: bad JSON"

python3 - "$JSON" "$iperf_bps" "$fabric_bw" "$fabric_p50" "$fabric_p99" "$tcp_p50" "$tcp_p99" \
	"$(nproc)" "$(uname -r)" <<'EOF'
import json, sys, time
as_json = sys.argv[1] == "1"
iperf_bps, fabric_bw, fabric_p50, fabric_p99, tcp_p50, tcp_p99 = map(float, sys.argv[2:8])
iperf_mb = iperf_bps / 8 / 1e6
bw_ratio = fabric_bw / iperf_mb if iperf_mb > 0 else 0.0
lat_ratio = fabric_p50 / tcp_p50 if tcp_p50 > 0 else float("inf")
bw_ok, lat_ok = bw_ratio >= 0.60, lat_ratio <= 2.0
res = {
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "cores": int(sys.argv[8]), "kernel": sys.argv[9],
    "iperf3_gbit_s": round(iperf_bps / 1e9, 3), "iperf3_mb_s": round(iperf_mb, 1),
    "fabric_write_mb_s": round(fabric_bw, 1), "bw_ratio": round(bw_ratio, 3),
    "fabric_send64_p50_us": round(fabric_p50, 2), "fabric_send64_p99_us": round(fabric_p99, 2),
    "tcp64_p50_us": round(tcp_p50, 2), "tcp64_p99_us": round(tcp_p99, 2),
    "lat_ratio": round(lat_ratio, 3),
    "bw_pass": bw_ok, "lat_pass": lat_ok, "pass": bw_ok and lat_ok,
}
if as_json:
    print(json.dumps(res))
else:
    print("Weft fabric (tcp backend) vs. raw TCP, loopback, %d cores, %s"
          % (res["cores"], res["date"]))
    print("MB/s = 10^6 bytes/s; latencies are round trips")
    print("%-44s %14s" % ("measurement", "value"))
    print("%-44s %10.2f Gb/s (%.0f MB/s)" % ("iperf3, 1 stream, 5 s", iperf_bps / 1e9, iperf_mb))
    print("%-44s %10.0f MB/s" % ("fabric-bench write 64 KiB, q16, 5 s", fabric_bw))
    print("%-44s %10.2f us (p99 %.2f)" % ("fabric-bench send 64 B --lat, p50", fabric_p50,
                                          fabric_p99))
    print("%-44s %10.2f us (p99 %.2f)" % ("tcp-pingpong 64 B, p50", tcp_p50, tcp_p99))
    print("%-44s %10.2f   (bar >= 0.60) %s" % ("ratio: fabric write BW / iperf3 BW", bw_ratio,
                                              "PASS" if bw_ok else "FAIL"))
    print("%-44s %10.2f   (bar <= 2.00) %s" % ("ratio: fabric send p50 / tcp p50", lat_ratio,
                                              "PASS" if lat_ok else "FAIL"))
    print("overall: %s" % ("PASS" if res["pass"] else "FAIL"))
sys.exit(0 if res["pass"] else 3)
EOF
