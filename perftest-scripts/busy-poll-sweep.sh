#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# busy-poll-sweep.sh: the small-write benchmark (small-write.sh) once per
# ms_busy_poll value, and one table of what the spin buys and costs: 4 KiB
# write p50 / IOPS at QD1 and QD32, CPU and context switches per write, each
# beside the raw limits small-write.sh measured in the same run (docs/
# performance.md, "ms_busy_poll"). Every process of a run (mons, OSDs, the
# bench) gets the value through WEFT_MS_BUSY_POLL.
#
# usage: busy-poll-sweep.sh [--values 0,20,50,200] [--seconds S] [--port P]
#                           [--dir DIR] [--out FILE] [--keep-results DIR] [BUILD_DIR]
#   --values: microseconds, comma-separated (default 0,20,50,200);
#   --seconds: each weft bench phase (default 8); --port: the clusters' base
#   port (default 39500); --dir: scratch space (small-write.sh's --dir);
#   --out: also write the table there; --keep-results: each run's JSON and
#   raw output in DIR/spin-V(.json). The 4 MiB phases of small-write.sh run too
#   (it has no switch for them); pgbench does not. Progress: stderr.
# exit: 0 done, 1 a run failed, 2 bad usage.
set -uo pipefail

VALUES=0,20,50,200 SECS=8 PORT=39500 DIR="" OUT="" KEEP="" BUILD=./build-release
usage() {
	sed -n '10,19p' "$0" | sed 's/^# \{0,1\}//'
}
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--values) VALUES=${2:-}; shift ;;
	--seconds) SECS=${2:-}; shift ;;
	--port) PORT=${2:-}; shift ;;
	--dir) DIR=${2:-}; shift ;;
	--out) OUT=${2:-}; shift ;;
	--keep-results) KEEP=${2:-}; shift ;;
	-*) echo "busy-poll-sweep.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
[[ "$VALUES" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "busy-poll-sweep.sh: --values $VALUES: expected microseconds like 0,20,50" >&2; exit 2; }
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || { echo "busy-poll-sweep.sh: --seconds $SECS: expected a positive number" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/weft-busy-poll.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
IFS=, read -r -a VS <<< "$VALUES"
for v in "${VS[@]}"; do
	echo "busy-poll-sweep: ms_busy_poll = ${v}us" >&2
	args=(--no-pgbench --seconds "$SECS" --port "$PORT" --json)
	[ -z "$DIR" ] || args+=(--dir "$DIR")
	[ -z "$KEEP" ] || args+=(--keep-results "$KEEP/spin-$v")
	if ! WEFT_MS_BUSY_POLL=${v}us "$HERE/small-write.sh" "${args[@]}" "$BUILD" > "$TMP/spin-$v.json"; then
		echo "busy-poll-sweep: the run with ms_busy_poll = ${v}us failed" >&2
		exit 1
	fi
	[ -z "$KEEP" ] || cp "$TMP/spin-$v.json" "$KEEP/spin-$v.json"
done
python3 - "$TMP" "$VALUES" << 'EOF' | tee ${OUT:+"$OUT"}
import json, os, sys
tmp, values = sys.argv[1], sys.argv[2].split(",")
def f(v, fmt="%.0f"):
    return "n/a" if v is None else fmt % v
def ratio(a, b, fmt="%.2f"):
    return "n/a" if a is None or not b else fmt % (a / b)
print("| ms_busy_poll | QD1 p50 (x durable write, x floor) | QD1 IOPS | QD1 CPU/write | QD1 cswitch/write "
      "| QD32 IOPS (x the CPU limit) | QD32 CPU/write | QD32 cswitch/write | raw limits, same run |")
print("|---|---|---|---|---|---|---|---|---|")
for v in values:
    j = json.load(open(os.path.join(tmp, "spin-%s.json" % v)))
    raw, b, s = j["raw"], j["bench"], j["syscalls"]
    l, w = b["l4k"], b["w4k"]
    dur = raw["durable4k_p50_us"]
    floor = dur + 2 * raw["rtt4k_p50_us"]
    cpu_lim = (j["cores"] / w["cpu_us_per_op"] * 1e6) if w.get("cpu_us_per_op") else None
    cs1 = s.get("sys1", {}).get("cswitch_per_op")
    cs32 = s.get("sys32", {}).get("cswitch_per_op")
    print("| %s us | %s us (%s, %s) | %s | %s us | %s | %s (%s) | %s us | %s | durable 4 KiB write p50 %s us, "
          "64 B RTT p50 %s us; load %s |" % (
              v, f(l["p50"]), ratio(l["p50"], dur, "%.1fx"), ratio(l["p50"], floor, "%.1fx"),
              f(l["iops"]), f(l.get("cpu_us_per_op")), f(cs1, "%.1f"),
              f(w["iops"]), ratio(w["iops"], cpu_lim), f(w.get("cpu_us_per_op")), f(cs32, "%.1f"),
              f(dur), f(raw["rtt64_p50_us"], "%.0f"), j["load_avg"]["after_cluster"]))
EOF
exit "${PIPESTATUS[0]}"
