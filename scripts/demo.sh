#!/usr/bin/env bash
# The main job, until the cluster lands: build (Release) and run the fabric
# benchmark between two processes on loopback — 64 KiB one-sided writes for
# 5 s, then 64 B send round trips — and print perftest-style results.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD:-$top/build-release}
jobs=${WEFT_JOBS:-$(nproc)}
addr=127.0.0.1:${WEFT_DEMO_PORT:-18515}

echo "== build ($build)"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 ||
	{ cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$jobs" --target weft tcp-pingpong >/dev/null
weft=$build/tools/weft

server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT

# Start a server, wait for its ready line, run one client against it.
run_pair() {
	local out
	out=$(mktemp)
	"$weft" fabric-bench --server --addr "$addr" >"$out" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$out" && break
		kill -0 "$server_pid" 2>/dev/null || { cat "$out"; exit 1; }
		sleep 0.1
	done
	"$weft" fabric-bench --connect "$addr" "$@"
	wait "$server_pid" || true
	server_pid=""
	rm -f "$out"
}

echo
echo "== one-sided write bandwidth, 64 KiB, 16 in flight, 5 s (TCP backend, loopback)"
run_pair --op write -s 64K -q 16 -D 5
echo
echo "== send round-trip latency, 64 B"
run_pair --op send -s 64 --lat -n 20000
