#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# write-profile.sh: where the CPU of a replicated small write goes (issue 16,
# docs/performance.md "Where the CPU of a 4 KiB write goes"). One local
# cluster (scripts/cluster.sh: 3 mons, 3 OSDs, pool size 3, tcp, loopback),
# a warm-up, then `weft bench write -b SIZE -t DEPTH` with `perf record -a`
# sampling every CPU for the whole timed run; the report splits the
# samples by process (mons, OSD reactor, OSD store helpers, the bench), by
# kernel vs user space and by library (RocksDB, libc, Weft's own code), and
# lists the hottest symbols. The CPU per op from /proc over the same window
# is printed beside it, so the shares turn into microseconds.
#
# usage: write-profile.sh [--seconds S] [--size B] [--depth N] [--top N]
#                         [--dir DIR] [--port P] [--out FILE]
#                         [--keep-results DIR] [BUILD_DIR]
#   BUILD_DIR (default ./build-release): a Release build. --seconds: the
#   profiled run (default 15); --size: bytes per write (default 4K); --depth:
#   writes in flight (default 32); --top: symbols listed (default 30);
#   --dir: scratch space (default /var/tmp/weft-write-profile, about 16 GiB
#   at most, removed at the end); --port: the cluster's base port (default
#   39700, uses it..+99); --out: also write the report there;
#   --keep-results: copy perf.data and the raw reports there. Needs perf
#   (linux-perf) and root or kernel.perf_event_paranoid <= 0 for -a.
#   Progress: stderr.
# exit: 0 done, 1 a tool failed, 2 bad usage.
set -uo pipefail

SECS=15 SIZE=4K DEPTH=32 TOP=30 SCRATCH=/var/tmp/weft-write-profile PORT=39700
OUT="" KEEP="" BUILD=./build-release
BL_NAME=write-profile
# shellcheck source=perftest-scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECS=${2:-}; shift ;;
	--size) SIZE=${2:-}; shift ;;
	--depth) DEPTH=${2:-}; shift ;;
	--top) TOP=${2:-}; shift ;;
	*) bl_common_opt "$@"; [ "$BL_TOOK" = 1 ] || shift ;;
	esac
	shift
done
bl_positive "$SECS" "$DEPTH" "$TOP" "$PORT"
[[ $SIZE =~ ^[0-9]+[KkMm]?$ ]] || bl_usage_error "--size $SIZE: a size like 4K"
[ "$PORT" -le 65435 ] || bl_usage_error "--port $PORT: the run needs PORT..PORT+99"
[ -z "$OUT" ] || [ -d "$(dirname "$(realpath -m "$OUT")")" ] || bl_usage_error "--out $OUT: no such directory"
bl_require_tools perf jq python3
bl_paths
bl_require_bins "$WEFT" "$BUILD/mon/weft-mon" "$BUILD/osd/weft-osd"
perf record -a -o /dev/null -- true > /dev/null 2>&1 ||
	bl_die "perf record -a is not allowed here (run as root, or lower kernel.perf_event_paranoid)"
bl_init
PERF_PID=""
bl_cleanup_extra() {
	[ -z "$PERF_PID" ] || { kill -INT "$PERF_PID" 2> /dev/null; wait "$PERF_PID" 2> /dev/null; }
}
START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
REV=$(bl_rev)
CLK_TCK=$(getconf CLK_TCK)

bl_cluster_up
daemon_ticks() { # utime + stime of every mon and OSD, all threads
	local f pid stat rest sum=0
	for f in "$CDIR"/*.pid; do
		pid=$(cat "$f") && stat=$(cat "/proc/$pid/stat" 2> /dev/null) || continue
		rest=${stat##*) }
		sum=$((sum + $(awk '{ print $12 + $13 }' <<< "$rest")))
	done
	echo "$sum"
}
bl_bench warm 3 write -b "$SIZE" -t "$DEPTH" --no-cleanup --run-name warm
T0=$(daemon_ticks)
bl_say "perf record -a for the timed run ($SECS s of write -b $SIZE -t $DEPTH)"
perf record -a -F 499 -o "$RES/perf.data" 2> "$RES/perf-record.err" &
PERF_PID=$!
sleep 0.5
kill -0 "$PERF_PID" 2> /dev/null || bl_die "perf record: $(head -c 300 "$RES/perf-record.err")"
bl_bench prof "$SECS" write -b "$SIZE" -t "$DEPTH" --no-cleanup --run-name prof
kill -INT "$PERF_PID" 2> /dev/null
wait "$PERF_PID" 2> /dev/null
PERF_PID=""
T1=$(daemon_ticks)
[ -s "$RES/perf.data" ] || bl_die "perf record wrote nothing: $(head -c 300 "$RES/perf-record.err")"
bl_say "perf report"
perf report -i "$RES/perf.data" --no-children --sort comm,dso --stdio -g none --percent-limit 0.3 \
	> "$RES/by-dso.txt" 2> /dev/null || bl_die "perf report --sort comm,dso failed"
perf report -i "$RES/perf.data" --no-children --sort comm,dso,sym --stdio -g none \
	--percent-limit 0.4 > "$RES/by-sym.txt" 2> /dev/null || bl_die "perf report --sort sym failed"

REPORT=$(BL_DIR="$BL_TOP/perftest-scripts" python3 - "$RES" "$SECS" "$SIZE" "$DEPTH" "$TOP" "$START" "$REV" "$LOAD0" \
	"$(cut -d' ' -f1-3 /proc/loadavg)" "$T0" "$T1" "$CLK_TCK" << 'EOF'
import os, re, sys
sys.path.insert(0, os.environ["BL_DIR"])
import bench_lib
res, secs, size, depth, top, start, rev, load0, load1, t0, t1, tck = sys.argv[1:]
b = bench_lib.bench(res, "prof")
ops = b["ops"] or 0
ex = b["ex"]
client_cpu = ex.get("client_cores", 0) * ex.get("elapsed_s", 0) if ex else 0
daemon_cpu = (int(t1) - int(t0)) / int(tck)
def rows(path):
    out = []
    for line in open(path):
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+(\S+)(?:\s+\[(.)\]\s+(.*))?$", line.rstrip())
        if m:
            out.append((float(m.group(1)), m.group(2), m.group(3), m.group(4), (m.group(5) or "").strip()))
    return out
def who(comm):
    if comm.startswith("weft-store"): return "OSD store helpers"
    if comm.startswith("weft-osd") or comm.startswith("osd."): return "OSD reactors"
    if comm.startswith("weft-mon") or comm.startswith("mon"): return "mons"
    if comm == "weft" or comm.startswith("weft-bench"): return "weft bench (client)"
    if comm.startswith("swapper"): return "idle"
    return "other: " + comm
def lib(dso):
    d = dso.lower()
    if d.startswith("[kernel") or d.startswith("[vdso"): return "kernel"
    if "rocksdb" in d: return "RocksDB"
    if "libstdc++" in d: return "libstdc++ (RocksDB's)"
    if d.startswith("libc.") or d.startswith("libc-") or d.startswith("ld-linux"): return "libc"
    if d in ("weft-osd", "weft-mon", "weft"): return "Weft's code"
    return dso
dso = rows(res + "/by-dso.txt")
busy = [r for r in dso if who(r[1]) != "idle"]
tot = sum(r[0] for r in busy) or 1.0
by_who, by_lib = {}, {}
for pct, comm, d, _, _ in busy:
    by_who[who(comm)] = by_who.get(who(comm), 0) + pct
    by_lib[lib(d)] = by_lib.get(lib(d), 0) + pct
cpu_op = (daemon_cpu + client_cpu) / ops * 1e6 if ops else None
print("Run %s, tree %s, Release build; load average %s (start), %s (end). "
      "weft bench write -b %s -t %s for %s s under `perf record -a -F 499` (3 mons, 3 OSDs, "
      "pool size 3, tcp on loopback): %d writes, %.0f/s; CPU per write (mons + OSDs from /proc, "
      "plus the bench's own): %s. perf adds its own cost: the rate is lower than without it."
      % (start, rev, load0, load1, size, depth, secs, ops, ops / float(secs),
         "%.0f us" % cpu_op if cpu_op else "n/a"))
print()
print("| who | share of busy samples | us per write |")
print("|---|---|---|")
for k, v in sorted(by_who.items(), key=lambda kv: -kv[1]):
    print("| %s | %.1f %% | %s |" % (k, 100 * v / tot, "%.0f" % (cpu_op * v / tot) if cpu_op else "-"))
print()
print("| where | share of busy samples | us per write |")
print("|---|---|---|")
for k, v in sorted(by_lib.items(), key=lambda kv: -kv[1]):
    if 100 * v / tot < 0.5: continue
    print("| %s | %.1f %% | %s |" % (k, 100 * v / tot, "%.0f" % (cpu_op * v / tot) if cpu_op else "-"))
print()
print("Hottest symbols (share of busy samples):")
print()
print("| share | process | object | symbol |")
print("|---|---|---|---|")
n = 0
for pct, comm, d, kind, sym in rows(res + "/by-sym.txt"):
    if who(comm) == "idle": continue
    print("| %.1f %% | %s | %s | `%s` |" % (100 * pct / tot, comm, d, sym))
    n += 1
    if n >= int(top): break
EOF
) || bl_die "the report failed"
echo "$REPORT"
[ -z "$OUT" ] || echo "$REPORT" > "$OUT"
[ -z "$KEEP" ] || cp "$RES/perf.data" "$RES/by-dso.txt" "$RES/by-sym.txt" "$KEEP"/ 2> /dev/null
exit 0
