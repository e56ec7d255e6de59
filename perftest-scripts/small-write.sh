#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# small-write.sh: the benchmark of issue 16 (the small replicated write), in
# one run, every figure beside its target and the machine's raw limit
# measured in the same run (docs/performance.md, "Small-write benchmark").
#
#   raw limits: fio on the filesystem that holds the cluster, O_DIRECT:
#     4 KiB randwrite QD1, pwrite + fdatasync per write (a durable write);
#     4 MiB write and read, 16 in flight (the disk's sequential limits);
#     tcp-pingpong on loopback: 64 B and 4 KiB round trips
#   cluster: scripts/cluster.sh (3 mons, 3 OSDs, pool size 3, tcp, loopback),
#     weft bench: 4 KiB write -t 1 and -t 32, 4 MiB write / seq / rand -t 16
#     (the write stops at 3 GiB, before the OSDs fill);
#     around each phase the CPU (utime + stime, /proc/PID/stat) of every mon
#     and OSD, plus weft bench's own (its explainer, getrusage), per op;
#     frames per op from the fabric's rx_frames counters (explain.frames);
#   syscalls: a separate, shorter phase of each 4 KiB workload under
#     `perf stat -e raw_syscalls:sys_enter` (all mons, OSDs and the client),
#     also counting returns of -EAGAIN and context switches, so the tracing
#     does not distort the timed phases (skipped without perf);
#   PostgreSQL: `tests/test_mount.sh pgbench` (TPC-B on a weft-mount volume
#     vs. on a local file; its own 1-mon cluster on PORT+100..PORT+199),
#     skipped with a line when PostgreSQL, FUSE or root is missing.
#
# usage: small-write.sh [--seconds S] [--raw-seconds S] [--syscall-seconds S]
#                       [--pg-seconds S] [--no-pgbench] [--dir DIR] [--port P]
#                       [--json] [--out FILE] [--keep-results DIR] [BUILD_DIR]
#   BUILD_DIR (default ./build-release) holds tools/weft, mon/weft-mon,
#   osd/weft-osd, client/mount/weft-mount and perftest-scripts/tcp-pingpong:
#   use a Release build. --seconds: each timed weft bench phase (default 15);
#   --raw-seconds: each fio phase (default 6); --syscall-seconds: each
#   perf stat phase (default 5); --pg-seconds: each pgbench run (default 30);
#   --dir: scratch space (default /var/tmp/weft-small-write, about 17 GiB,
#   removed at the end); --port: the cluster's base port (default 39500,
#   uses it..+199); --json: one JSON object on stdout instead of the markdown;
#   --out: also write stdout there; --keep-results: copy every tool's raw
#   output there. Progress: stderr.
# exit: 0 done, 1 a tool failed, 2 bad usage.
set -uo pipefail

SECS=15 RAW_SECS=6 SYS_SECS=5 PG_SECS=30 PG=1 SCRATCH=/var/tmp/weft-small-write PORT=39500
JSON=0 OUT="" KEEP="" BUILD=./build-release
BL_NAME=small-write
# shellcheck source=perftest-scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECS=${2:-}; shift ;;
	--raw-seconds) RAW_SECS=${2:-}; shift ;;
	--syscall-seconds) SYS_SECS=${2:-}; shift ;;
	--pg-seconds) PG_SECS=${2:-}; shift ;;
	--no-pgbench) PG=0 ;;
	--json) JSON=1 ;;
	*) bl_common_opt "$@"; [ "$BL_TOOK" = 1 ] || shift ;;
	esac
	shift
done
bl_positive "$SECS" "$RAW_SECS" "$SYS_SECS" "$PG_SECS" "$PORT"
[ "$PORT" -le 65335 ] || bl_usage_error "--port $PORT: the run needs PORT..PORT+199"
[ -z "$OUT" ] || [ -d "$(dirname "$(realpath -m "$OUT")")" ] || bl_usage_error "--out $OUT: no such directory"
bl_require_tools fio jq python3
bl_paths
MOUNT=$BUILD/client/mount/weft-mount
bl_require_bins "$WEFT" "$BUILD/mon/weft-mon" "$BUILD/osd/weft-osd" "$BUILD/perftest-scripts/tcp-pingpong"
"$WEFT" bench --help > /dev/null 2>&1 || bl_usage_error "$WEFT has no 'bench' command"
bl_init
CLK_TCK=$(getconf CLK_TCK)
PERF_PID=""
bl_cleanup_extra() {
	[ -z "$PERF_PID" ] || { kill -INT "$PERF_PID" 2> /dev/null; wait "$PERF_PID" 2> /dev/null; }
}

START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
REV=$(bl_rev)

# ---- raw limits ----
bl_fio_prep
bl_fio_run fsync4k --ioengine=psync --rw=randwrite --bs=4k --iodepth=1 --fdatasync=1
bl_fio_run w4m --ioengine=io_uring --rw=write --bs=4M --iodepth=16 --end_fsync=1
bl_fio_run r4m --ioengine=io_uring --rw=read --bs=4M --iodepth=16
rm -f "$SCRATCH/fio.dat"
bl_pingpong 64 pp64
bl_pingpong 4096 pp4k

# ---- cluster ----
bl_cluster_up
# daemon_pids: "name pid" of every mon and OSD the cluster runs
daemon_pids() {
	local f pid
	for f in "$CDIR"/*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		[ -r "/proc/$pid/stat" ] && echo "$(basename "$f" .pid) $pid"
	done
}
mapfile -t DAEMONS < <(daemon_pids)
[ "${#DAEMONS[@]}" -ge 6 ] || bl_die "expected 3 mons and 3 OSDs running, found: ${DAEMONS[*]}"
# cpu_snap FILE: "name ticks" (utime + stime, all threads) of every daemon
cpu_snap() {
	local d name pid stat rest
	for d in "${DAEMONS[@]}"; do
		read -r name pid <<< "$d"
		stat=$(cat "/proc/$pid/stat" 2> /dev/null) || bl_die "$name (pid $pid) is gone"
		rest=${stat##*) } # after the command name, which may hold spaces
		# fields 14 and 15 of stat are the 12th and 13th after the name
		awk -v n="$name" '{ print n, $12 + $13 }' <<< "$rest"
	done > "$1"
}
# timed NAME ARGS...: one weft bench phase of SECS, with the daemons' CPU around it
timed() {
	local name=$1
	shift
	cpu_snap "$RES/$name.cpu0"
	bl_bench "$name" "$SECS" "$@"
	cpu_snap "$RES/$name.cpu1"
}
# Every phase keeps its objects (--no-cleanup): deleting them would land in
# the CPU window; the cluster is wiped at the end.
timed l4k write -b 4K -t 1 --no-cleanup --run-name lat
timed w4k write -b 4K -t 32 --no-cleanup --run-name small
# Bounded: each OSD's 5 GiB data file holds every copy (size 3 on 3 OSDs), and
# at ~320 MB/s a 15 s phase filled them (the pool went full, the run failed).
timed w4m write -b 4M -t 16 --no-cleanup --run-name big --max-bytes 3G
timed s4m seq -t 16 --run-name big
timed r4m rand -t 16 --run-name big

# ---- syscalls per op, a separate phase ----
# sys_phase NAME ARGS...: weft bench under perf stat, and perf stat attached
# to every daemon (all their threads) for as long
EV=(-e raw_syscalls:sys_enter -e raw_syscalls:sys_exit --filter 'ret == -11' -e context-switches)
sys_phase() {
	local name=$1 pids
	shift
	pids=$(printf '%s\n' "${DAEMONS[@]}" | awk '{ print $2 }' | paste -sd,)
	bl_say "perf stat: weft bench bench $SYS_SECS $* ($name), and the daemons"
	perf stat -x, "${EV[@]}" -p "$pids" -o "$RES/$name.perf-daemons" 2> "$RES/$name.perf-err" &
	PERF_PID=$!
	# perf says nothing until it ends: give it a moment to attach to every thread
	sleep 0.5
	kill -0 "$PERF_PID" 2> /dev/null || bl_die "perf stat -p: $(head -c 300 "$RES/$name.perf-err")"
	timeout --foreground $((SYS_SECS * 4 + 120)) perf stat -x, "${EV[@]}" -o "$RES/$name.perf-client" -- \
		"$WEFT" bench bench "$SYS_SECS" "$@" --no-cleanup --no-explain --format json -c "$CONF" \
		> "$RES/$name.json" 2> "$RES/$name.err" ||
		bl_die "perf stat weft bench $*: $(tail -n 3 "$RES/$name.err")"
	bl_interrupted "$RES/$name.json"
	kill -INT "$PERF_PID" 2> /dev/null
	wait "$PERF_PID" 2> /dev/null
	PERF_PID=""
	[ -s "$RES/$name.perf-daemons" ] || bl_die "perf stat -p wrote nothing: $(head -c 300 "$RES/$name.perf-err")"
}
SYSCALLS=none
if command -v perf > /dev/null && perf stat -x, "${EV[@]}" -- true > /dev/null 2>&1; then
	SYSCALLS=perf
	sys_phase sys1 write -b 4K -t 1 --run-name sys1
	sys_phase sys32 write -b 4K -t 32 --run-name sys32
else
	bl_say "syscalls: skipped (perf stat with the raw_syscalls tracepoints is not available)"
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
bl_cluster_down

# ---- PostgreSQL ----
PG_STATE=skipped PG_WHY="--no-pgbench"
if [ "$PG" = 1 ]; then
	if [ ! -x "$MOUNT" ]; then
		PG_WHY="$MOUNT not built"
	else
		bl_say "pgbench: tests/test_mount.sh pgbench $((PORT + 100)) ($PG_SECS s per database)"
		BENCH_SECONDS=$PG_SECS WEFT_TEST_OSD_DATA_SIZE=4G timeout --foreground $((PG_SECS * 4 + 600)) \
			"$BL_TOP/tests/test_mount.sh" pgbench $((PORT + 100)) "$BUILD/mon/weft-mon" \
			"$BUILD/osd/weft-osd" "$WEFT" "$MOUNT" > "$RES/pgbench.out" 2>&1
		rc=$?
		if [ $rc = 77 ]; then
			PG_WHY=$(sed -n 's/^SKIP: //p' "$RES/pgbench.out" | head -n 1)
		elif [ $rc != 0 ]; then
			bl_die "tests/test_mount.sh pgbench exited $rc: $(tail -n 5 "$RES/pgbench.out")"
		else
			PG_STATE=ran PG_WHY=""
		fi
	fi
	[ "$PG_STATE" = ran ] || bl_say "pgbench: skipped: $PG_WHY"
fi
LOAD2=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the table ----
python3 - "$RES" "$BL_TOP/perftest-scripts" "$JSON" "$CLK_TCK" "$SYSCALLS" "$PG_STATE" "$PG_WHY" \
	"$START" "$REV" "$(nproc)" "$(uname -r)" "$LOAD0" "$LOAD1" "$LOAD2" "$BUILD" \
	"$SECS" "$RAW_SECS" "$SYS_SECS" "$PG_SECS" << 'EOF' | tee ${OUT:+"$OUT"}
import json, os, re, sys
(res, lib, as_json, clk_tck, syscalls, pg_state, pg_why, start, rev, cores, kernel, load0,
 load1, load2, build, secs, raw_secs, sys_secs, pg_secs) = sys.argv[1:20]
sys.path.insert(0, lib)
import bench_lib
from bench_lib import f
clk_tck = float(clk_tck)

raw = {n: bench_lib.fio(res, n) for n in ("fsync4k", "w4m", "r4m")}
rtt64 = bench_lib.load(res, "pp64.json")
rtt4k = bench_lib.load(res, "pp4k.json")
b = {n: bench_lib.bench(res, n) for n in ("l4k", "w4k", "w4m", "s4m", "r4m")}

def ticks(path):
    return {l.split()[0]: float(l.split()[1]) for l in open(path) if l.strip()}

# CPU per op: the daemons from /proc (the phase's window), the client from
# its explainer (getrusage over the timed run)
for n, x in b.items():
    t0, t1 = ticks(os.path.join(res, n + ".cpu0")), ticks(os.path.join(res, n + ".cpu1"))
    d = {k: (t1[k] - t0.get(k, 0)) / clk_tck for k in t1}
    mons = sum(v for k, v in d.items() if k.startswith("mon."))
    osds = sum(v for k, v in d.items() if k.startswith("osd."))
    ex = x["ex"]
    client = ex.get("client_cores", 0) * ex.get("elapsed_s", 0) if ex else None
    x["cpu_s"] = {"mons": mons, "osds": osds, "client": client, "per_daemon": d}
    ops = x["ops"] or 0
    x["cpu_us_per_op"] = (mons + osds + (client or 0)) / ops * 1e6 if ops else None
    x["cpu_us_split"] = {k: (v or 0) / ops * 1e6 if ops else None
                         for k, v in (("mons", mons), ("osds", osds), ("client", client))}
    fr = ex.get("frames") if ex else None
    if fr and ops:
        x["frames_per_op"] = (fr["osd_rx"] + fr["client_rx"]) / ops
        x["ctrl_frames_per_op"] = (fr["osd_rx_ctrl"] + fr["client_rx_ctrl"]) / ops
    else:
        x["frames_per_op"] = x["ctrl_frames_per_op"] = None
    x["machine_busy_cores"] = ex.get("machine_busy_cores") if ex else None

# perf stat -x, : value,unit,event,...
def perf(path):
    out = {}
    for line in open(path):
        p = line.strip().split(",")
        if len(p) >= 3 and p[0] and not line.startswith("#"):
            try:
                v = float(p[0])
            except ValueError:
                continue  # "<not counted>"
            ev = p[2]
            key = ("eagain" if ev == "raw_syscalls:sys_exit" else
                   "syscalls" if ev == "raw_syscalls:sys_enter" else
                   "cswitch" if ev == "context-switches" else ev)
            out[key] = out.get(key, 0) + v
    return out
sysc = {}
if syscalls == "perf":
    for n in ("sys1", "sys32"):
        d, c = perf(os.path.join(res, n + ".perf-daemons")), perf(os.path.join(res, n + ".perf-client"))
        ops = bench_lib.bench(res, n)["ops"] or 0
        sysc[n] = {"ops": ops, "daemons": d, "client": c}
        for k in ("syscalls", "eagain", "cswitch"):
            tot = d.get(k, 0) + c.get(k, 0)
            sysc[n][k + "_per_op"] = tot / ops if ops else None

pg = {"state": pg_state, "why": pg_why}
if pg_state == "ran":
    text = open(os.path.join(res, "pgbench.out")).read()
    for who in ("local", "weft"):
        m = re.search(r"^  %s\S*:\s+([0-9.]+) tps, latency avg ([0-9.]+) ms, p99 ([0-9.]+) ms"
                      % ("local file" if who == "local" else "weft volume"), text, re.M)
        pg[who] = ({"tps": float(m.group(1)), "lat_avg_ms": float(m.group(2)),
                    "p99_ms": float(m.group(3))} if m else None)
    m = re.search(r"^pgbench TPC-B scale (\d+), (\d+) clients, (\d+) s", text, re.M)
    pg["params"] = m.group(0) if m else None

# ---- rows: measure, weft, target, met, raw limit, ratio ----
def yes(ok):
    return "n/a" if ok is None else ("yes" if ok else "**no**")
def r(v, lim, fmt="%.2f"):
    return "n/a" if v is None or not lim else fmt % (v / lim)

fs = raw["fsync4k"]
# the durable write: pwrite then fdatasync; p50 = the sum of the two medians
durable_p50 = fs["p50"] + fs.get("sync_p50", 0)
durable_p99 = fs["p99"] + fs.get("sync_p99", 0)
durable_mean = 1e6 / fs["iops"] if fs["iops"] else None
rows, summary = [], {}
l, w = b["l4k"], b["w4k"]
rows.append(("4 KiB write QD1, p50", "%s us" % f(l["p50"]),
             "<= 300 us and <= 2x the durable write", yes(None if l["p50"] is None else
             l["p50"] <= 300 and l["p50"] <= 2 * durable_p50),
             "pwrite + fdatasync p50 %s us (mean %s us)" % (f(durable_p50), f(durable_mean)),
             r(l["p50"], durable_p50, "%.1fx")))
floor = durable_p50 + 2 * rtt4k["lat_p50_us"]
rows.append(("4 KiB write QD1, p50 vs the floor", "%s us" % f(l["p50"]), "-", "-",
             "durable write + 2 x 4 KiB RTT (%s us) = %s us"
             % (f(rtt4k["lat_p50_us"], "%.1f"), f(floor)), r(l["p50"], floor, "%.1fx")))
rows.append(("4 KiB write QD1, p99", "%s us" % f(l["p99"]), "<= 1000 us",
             yes(None if l["p99"] is None else l["p99"] <= 1000),
             "pwrite + fdatasync p99 <= %s us (sum of the p99s)" % f(durable_p99), r(l["p99"], durable_p99, "%.1fx")))
rows.append(("4 KiB write QD1, IOPS", "%s" % f(l["iops"]), "-", "-",
             "durable writes/s at QD1: %s" % f(fs["iops"]), r(l["iops"], fs["iops"])))
rows.append(("4 KiB write QD32, IOPS", "%s" % f(w["iops"]), ">= 20,000",
             yes(None if w["iops"] is None else w["iops"] >= 20000),
             "durable writes/s at QD1: %s" % f(fs["iops"]), r(w["iops"], fs["iops"])))
for n, what in (("w4k", "QD32"), ("l4k", "QD1")):
    x = b[n]
    s = x["cpu_us_split"]
    rows.append(("CPU per 4 KiB write, %s (mons + OSDs + client)" % what,
                 "%s us (%s + %s + %s)" % (f(x["cpu_us_per_op"]), f(s["mons"]), f(s["osds"]),
                                          f(s["client"])),
                 "<= 100 us" if n == "w4k" else "-",
                 yes(None if x["cpu_us_per_op"] is None else x["cpu_us_per_op"] <= 100)
                 if n == "w4k" else "-",
                 "%s cores: at most %s writes/s at this cost" % (cores,
                     f(int(cores) / x["cpu_us_per_op"] * 1e6 if x["cpu_us_per_op"] else None)),
                 r(x["iops"], int(cores) / x["cpu_us_per_op"] * 1e6 if x["cpu_us_per_op"] else None)))
for n, what in (("w4k", "QD32"), ("l4k", "QD1")):
    x = b[n]
    rows.append(("fabric frames per 4 KiB write, %s" % what,
                 "%s (%s CREDIT/WRITE_ACK)" % (f(x["frames_per_op"], "%.1f"),
                                                f(x["ctrl_frames_per_op"], "%.1f")),
                 "<= 6" if n == "w4k" else "-",
                 yes(None if x["frames_per_op"] is None else x["frames_per_op"] <= 6)
                 if n == "w4k" else "-", "6 (one per hop)", r(x["frames_per_op"], 6)))
for n, what in (("sys32", "QD32"), ("sys1", "QD1")):
    if n not in sysc:
        rows.append(("syscalls per 4 KiB write, %s" % what, "not measured (no perf)",
                     "no EAGAIN returns", "n/a", "-", "-"))
        continue
    x = sysc[n]
    rows.append(("syscalls per 4 KiB write, %s (perf stat, separate %s s phase)" % (what, sys_secs),
                 "%s (%s returned EAGAIN; %s context switches)"
                 % (f(x["syscalls_per_op"], "%.0f"), f(x["eagain_per_op"], "%.1f"),
                    f(x["cswitch_per_op"], "%.0f")),
                 "no EAGAIN on the hot path" if n == "sys32" else "-",
                 yes(None if x["eagain_per_op"] is None else x["eagain_per_op"] < 0.05)
                 if n == "sys32" else "-", "-", "-"))
wl = raw["w4m"]["mbs"] / 3
rows.append(("4 MiB write, 16 in flight", "%s MB/s" % f(b["w4m"]["mbs"]),
             ">= 0.9 x disk / 3 = %s MB/s" % f(0.9 * wl),
             yes(None if b["w4m"]["mbs"] is None else b["w4m"]["mbs"] >= 0.9 * wl),
             "fio 4 MiB write %s / 3 = %s MB/s" % (f(raw["w4m"]["mbs"]), f(wl)),
             r(b["w4m"]["mbs"], wl)))
for n, what in (("s4m", "seq"), ("r4m", "rand")):
    rows.append(("4 MiB %s read, 16 in flight" % what, "%s MB/s" % f(b[n]["mbs"]), ">= 2,000 MB/s",
                 yes(None if b[n]["mbs"] is None else b[n]["mbs"] >= 2000),
                 "fio 4 MiB read %s MB/s" % f(raw["r4m"]["mbs"]), r(b[n]["mbs"], raw["r4m"]["mbs"])))
if pg_state == "ran" and pg.get("local") and pg.get("weft"):
    lo, we = pg["local"], pg["weft"]
    rows.append(("PostgreSQL TPC-B on a volume, TPS", "%s" % f(we["tps"]), ">= 0.70 x local",
                 yes(we["tps"] >= 0.7 * lo["tps"]), "local file %s TPS" % f(lo["tps"]),
                 r(we["tps"], lo["tps"])))
    rows.append(("PostgreSQL TPC-B on a volume, p99", "%s ms" % f(we["p99_ms"], "%.1f"), "<= 8 ms",
                 yes(we["p99_ms"] <= 8), "local file p99 %s ms" % f(lo["p99_ms"], "%.1f"),
                 r(we["p99_ms"], lo["p99_ms"], "%.1fx")))
else:
    rows.append(("PostgreSQL TPC-B on a volume", "skipped: %s" % (pg_why or "no result"),
                 ">= 0.70 x local, p99 <= 8 ms", "n/a", "-", "-"))

errs = sum(int(x["errors"] or 0) for x in b.values())
result = {
    "date": start, "tree": rev, "cores": int(cores), "kernel": kernel, "build": build,
    "load_avg": {"start": load0, "after_cluster": load1, "end": load2},
    "phase_seconds": {"bench": int(secs), "fio": int(raw_secs), "syscalls": int(sys_secs),
                      "pgbench": int(pg_secs)},
    "raw": {"fsync4k": fs, "durable4k_p50_us": durable_p50, "durable4k_p99_us": durable_p99,
            "w4m": raw["w4m"], "r4m": raw["r4m"],
            "rtt64_p50_us": rtt64["lat_p50_us"], "rtt64_p99_us": rtt64["lat_p99_us"],
            "rtt4k_p50_us": rtt4k["lat_p50_us"]},
    "bench": {n: {k: v for k, v in x.items() if k != "ex"} for n, x in b.items()},
    "syscalls": {"method": "perf stat -e raw_syscalls:sys_enter" if syscalls == "perf" else "none",
                 **sysc},
    "pgbench": pg, "errors": errs,
    "rows": [dict(zip(("measure", "weft", "target", "met", "raw_limit", "ratio"), x)) for x in rows],
}
if as_json == "1":
    print(json.dumps(result, indent=1))
    sys.exit(0)
print("Run %s, tree %s, Release build `%s`, %s cores, Linux %s; load average %s (start),"
      " %s (after the cluster phases), %s (end)." % (start, rev, os.path.basename(build), cores,
                                                   kernel, load0, load1, load2))
print("weft bench phases %s s, fio %s s, perf stat phases %s s, pgbench %s s per database;"
      " cluster: scripts/cluster.sh, 3 mons + 3 OSDs, tcp on loopback, pool size 3, 32 PGs,"
      " WAL in each OSD's data file, all on one disk." % (secs, raw_secs, sys_secs, pg_secs))
print()
print("| measure | Weft, this run | target (issue 16) | met | raw limit, same run | ratio to the raw limit |")
print("|---|---|---|---|---|---|")
for x in rows:
    print("| %s |" % " | ".join(x))
print()
busy = ", ".join("%s %s" % (n, f(b[n]["machine_busy_cores"], "%.2f")) for n in b)
print("Machine busy cores during each timed phase (all processes, /proc/stat): %s."
      " Loopback 64 B RTT p50 %s us, p99 %s us (tcp-pingpong). Errors reported by weft bench: %d."
      % (busy, f(rtt64["lat_p50_us"], "%.1f"), f(rtt64["lat_p99_us"], "%.1f"), errs))
print("Explainer verdicts: " + "; ".join("%s: %s" % (n, b[n]["explain"] or "n/a") for n in b) + ".")
if pg_state == "ran" and pg.get("params"):
    print("PostgreSQL: %s (tests/test_mount.sh pgbench)." % pg["params"])
EOF
exit "${PIPESTATUS[0]}"
