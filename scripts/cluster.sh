#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cluster.sh: a local Weft cluster of real weft-mon and weft-osd processes on
# loopback, for development, demos and benchmarks. The start-up itself is
# scripts/cluster-lib.sh, shared with the functional tests. docs/cluster.md.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
T0=$(date +%s.%N)

usage() {
	cat << 'EOF'
usage: scripts/cluster.sh COMMAND [OPTIONS]

commands:
  up              create (first time) or start the cluster in DIR, create the
                  pool, wait until it is ready (every OSD up and in, the pool in
                  the map and on every OSD); does nothing if it is already up
  down [--wipe]   stop exactly the processes 'up' started (pids in DIR);
                  --wipe also deletes DIR (data and logs)
  status          which daemons run (pid), then 'weft status'
  restart-osd N   stop osd.N (SIGTERM; --kill: SIGKILL) and start it again,
                  wait until it is up again and the cluster is ready
  stop-osd N      stop osd.N (SIGTERM; --kill: SIGKILL) and leave it down
  start-osd N     start osd.N again, wait until it is up and the cluster ready

options:
  --dir DIR         the cluster's directory: conf, data, logs, admin sockets,
                    pid files (default ./dev-cluster, or $WEFT_CLUSTER_DIR)
  --build DIR       build with mon/weft-mon, osd/weft-osd, tools/weft (default
                    $WEFT_BUILD, else build-release, else build, in the checkout)
  --mons N          monitors, 1..5 (default 3)
  --osds M          OSDs, 1..20 (default 3)
  --backend B       ms_type: tcp (default), ucx or verbs
  --ip IP           every daemon on this one IP (ports tell public from
                    cluster); default for ucx 127.0.0.1; required for verbs
  --port P          base port; the cluster uses P..P+99 (default 6789)
  --pool NAME       pool to create (default bench)
  --size N          pool size (default 3)
  --min-size N      pool min_size (default 2)
  --pg-num N        PGs of the pool (default 32)
  --data-size SIZE  each OSD's data file (osd_store_data_size, default 4G)
  --wal-file        the WAL in its own file per OSD (default: inside the data file)
  --log-level L     daemons' log_level (default info)
  --auth MODE       weft (default) or none: the auth_*_required options
                    (none: no keys checked anywhere, for measuring the cost
                    of authentication; docs/security.md)
  --heartbeat-grace T  an OSD without a beacon for T is marked down (default
                    20s; ms_connect_timeout 5s, ms_peer_timeout 10s)
  --timeout S       bound on the wait for the cluster to be ready (default 120)
  --kill            restart-osd, stop-osd: SIGKILL instead of SIGTERM
  --wipe            down: delete DIR after stopping
  -h, --help        this text

Addresses: mon k on 127.1.0.(1+k):P+k, osd.i public 127.1.0.(10+i):P+10+i,
cluster 127.2.0.(10+i):P+30+i. Use the cluster with
  build-release/tools/weft status -c DIR/weft.conf
Exit: 0 ok, 1 failure (with the tail of the daemons' logs), 2 bad usage.
EOF
}

since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf 'cluster: [%5ss] %s\n' "$(since "$T0")" "$*"; }
usage_error() {
	echo "cluster.sh: $*(try --help)" >&2
	exit 2
}

# fail: stop what this invocation started (keep data and logs), show the logs.
STARTED_HERE=0
fail() {
	local f
	log "FAIL: $*"
	if [ "$STARTED_HERE" = 1 ] && [ "${#PIDS[@]}" -gt 0 ]; then
		log "stopping the ${#PIDS[@]} daemons started by this command"
		for name in "${!PIDS[@]}"; do kill -TERM "${PIDS[$name]}" 2> /dev/null; done
		for name in "${!PIDS[@]}"; do cl_stop "$name" TERM 10; done
	fi
	for f in "$DIR"/*.log; do
		[ -e "$f" ] || continue
		echo "--- $f (last ${CLUSTER_LOG_TAIL:-8} lines)"
		tail -n "${CLUSTER_LOG_TAIL:-8}" "$f"
	done
	exit 1
}

CMD=${1:-}
[ -n "$CMD" ] || usage_error "no command given"
shift
case $CMD in
-h | --help | help)
	usage
	exit 0
	;;
up | down | status | restart-osd | stop-osd | start-osd) ;;
*) usage_error "unknown command '$CMD'" ;;
esac

DIR=${WEFT_CLUSTER_DIR:-./dev-cluster}
BUILD=${WEFT_BUILD:-}
TIMEOUT=120 WIPE=0 KILL=0 RESTART_ID=""
declare -A GIVEN
# layout options: saved in DIR/cluster.env at the first 'up'
NMON=3 NOSD=3 MS=tcp ONE_IP="" PORT=6789 POOL=bench POOL_SIZE=3 POOL_MIN_SIZE=2 PG_NUM=32
CL_DATA_SIZE=4G CL_WAL=data CL_LOG_LEVEL=info CL_HEARTBEAT_GRACE=20s CL_AUTH=weft
# the benchmarks ran on fallocated data files; tests pass CL_PREALLOCATE=false
CL_PREALLOCATE=${CL_PREALLOCATE:-true}
# Longer than the functional tests' 3 s / 2 s / 3 s: a development machine is
# often busy (builds, other clusters), and an OSD marked down for a late
# beacon misses writes it cannot get back yet (no recovery, docs/osd.md).
CL_CONNECT_TIMEOUT=5s CL_PEER_TIMEOUT=10s
# a user's cluster balances its PGs (docs/scale.md); the tests keep raw placement
CL_BALANCER=${CL_BALANCER:-true}

need_value() { [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs a value"; }
need_int() { [[ $2 =~ ^[0-9]+$ ]] || usage_error "$1 must be a number (got '$2')"; }
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--dir) need_value "$@"; DIR=$2; shift ;;
	--build) need_value "$@"; BUILD=$2; shift ;;
	--mons) need_value "$@"; need_int "$1" "$2"; NMON=$2; GIVEN[NMON]=1; shift ;;
	--osds) need_value "$@"; need_int "$1" "$2"; NOSD=$2; GIVEN[NOSD]=1; shift ;;
	--backend) need_value "$@"; MS=$2; GIVEN[MS]=1; shift ;;
	--ip) need_value "$@"; ONE_IP=$2; GIVEN[ONE_IP]=1; shift ;;
	--port) need_value "$@"; need_int "$1" "$2"; PORT=$2; GIVEN[PORT]=1; shift ;;
	--pool) need_value "$@"; POOL=$2; GIVEN[POOL]=1; shift ;;
	--size) need_value "$@"; need_int "$1" "$2"; POOL_SIZE=$2; GIVEN[POOL_SIZE]=1; shift ;;
	--min-size) need_value "$@"; need_int "$1" "$2"; POOL_MIN_SIZE=$2; GIVEN[POOL_MIN_SIZE]=1; shift ;;
	--pg-num) need_value "$@"; need_int "$1" "$2"; PG_NUM=$2; GIVEN[PG_NUM]=1; shift ;;
	--data-size) need_value "$@"; CL_DATA_SIZE=$2; GIVEN[CL_DATA_SIZE]=1; shift ;;
	--wal-file) CL_WAL="file"; GIVEN[CL_WAL]=1 ;;
	--log-level) need_value "$@"; CL_LOG_LEVEL=$2; GIVEN[CL_LOG_LEVEL]=1; shift ;;
	--heartbeat-grace) need_value "$@"; CL_HEARTBEAT_GRACE=$2; GIVEN[CL_HEARTBEAT_GRACE]=1; shift ;;
	--auth) need_value "$@"; CL_AUTH=$2; GIVEN[CL_AUTH]=1; shift ;;
	--timeout) need_value "$@"; need_int "$1" "$2"; TIMEOUT=$2; shift ;;
	--kill) KILL=1 ;;
	--wipe) WIPE=1 ;;
	-*) usage_error "unknown option '$1'" ;;
	*)
		[[ $CMD == *-osd ]] && [ -z "$RESTART_ID" ] || usage_error "unexpected argument '$1'"
		need_int "OSD id" "$1"
		RESTART_ID=$1
		;;
	esac
	shift
done
[[ $CMD != *-osd ]] || [ -n "$RESTART_ID" ] || usage_error "$CMD needs an OSD id"
[ "$WIPE" = 0 ] || [ "$CMD" = down ] || usage_error "--wipe goes with down"
[ "$KILL" = 0 ] || [ "$CMD" = restart-osd ] || [ "$CMD" = stop-osd ] ||
	usage_error "--kill goes with restart-osd or stop-osd"
case $MS in tcp | ucx | verbs) ;; *) usage_error "--backend must be tcp, ucx or verbs" ;; esac
case $CL_AUTH in weft | none) ;; *) usage_error "--auth must be weft or none" ;; esac

for tool in jq setsid ps awk; do
	command -v "$tool" > /dev/null || { echo "cluster.sh: $tool is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
DIR=$(realpath -m "$DIR")
CONF=$DIR/weft.conf
ENVF=$DIR/cluster.env
SAVED=(NMON NOSD MS ONE_IP PORT POOL POOL_SIZE POOL_MIN_SIZE PG_NUM CL_DATA_SIZE CL_WAL CL_LOG_LEVEL
	CL_HEARTBEAT_GRACE CL_AUTH)

# The binaries: --build, else what the cluster was made with, else the defaults.
set_binaries() {
	local b=$BUILD
	if [ -z "$b" ]; then
		for b in "$top/build-release" "$top/build"; do [ -x "$b/tools/weft" ] && break; done
	fi
	b=$(realpath -m "$b")
	MON=$b/mon/weft-mon OSD=$b/osd/weft-osd WEFT=$b/tools/weft
	for f in "$MON" "$OSD" "$WEFT"; do
		[ -x "$f" ] || { echo "cluster.sh: $f not found: build first (cmake --build $b) or pass --build" >&2; exit 1; }
	done
}

# load_env: the layout 'up' saved; an option given now must agree with it.
load_env() {
	local k v saved_build
	[ -f "$ENVF" ] || return 1
	declare -A now
	for k in "${SAVED[@]}"; do now[$k]=${!k}; done
	# shellcheck disable=SC1090
	. "$ENVF"
	for k in "${!GIVEN[@]}"; do
		v=${!k}
		[ "${now[$k]}" = "$v" ] || {
			echo "cluster.sh: $DIR holds a cluster made with $k=$v (you asked for ${now[$k]});" \
				"'down --wipe' it first, or use another --dir" >&2
			exit 2
		}
	done
	saved_build=${SAVED_BUILD:-}
	[ -n "$BUILD" ] || BUILD=$saved_build
	return 0
}
save_env() {
	local k
	{
		echo "# scripts/cluster.sh up: the layout of this cluster (do not edit)"
		for k in "${SAVED[@]}"; do printf '%s=%q\n' "$k" "${!k}"; done
		printf 'SAVED_BUILD=%q\n' "$(dirname "$(dirname "$WEFT")")"
	} > "$ENVF"
}

# Every daemon of the layout, in start order.
daemons() {
	local k i
	for k in $(seq 0 $((NMON - 1))); do echo "mon.${CL_MON_IDS[$k]}"; done
	for i in $(seq 0 $((NOSD - 1))); do echo "osd.$i"; done
}
# ours PID: a live process started for this cluster (its command line names our conf).
ours() { cl_alive "$1" && tr '\0' ' ' < "/proc/$1/cmdline" 2> /dev/null | grep -qF -- "-c $CONF "; }
# load_pids: PIDS[] from DIR/*.pid, for the daemons that still run; forget the others.
load_pids() {
	local f name pid
	for f in "$DIR"/*.pid; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .pid)
		pid=$(cat "$f")
		if [[ $pid =~ ^[0-9]+$ ]] && ours "$pid"; then
			PIDS[$name]=$pid
		else
			rm -f "$f"
		fi
	done
}

backend_env() { # what the ctest variants use for UCX on one machine (docs/ucx.md)
	[ "$MS" = ucx ] || return 0
	export UCX_TLS=${UCX_TLS:-tcp} UCX_WARN_UNUSED_ENV_VARS=${UCX_WARN_UNUSED_ENV_VARS:-n}
	export UCX_MEM_MALLOC_HOOKS=${UCX_MEM_MALLOC_HOOKS:-no} UCX_MEM_MMAP_HOOK_MODE=${UCX_MEM_MMAP_HOOK_MODE:-none}
}

wait_ready() { wait_for "$TIMEOUT" "cluster ready: $NOSD OSDs up+in, pool $POOL on every OSD, every PG active" cl_ready; }

cmd_up() {
	local missing=()
	mkdir -p "$DIR" || { echo "cluster.sh: cannot create $DIR" >&2; exit 1; }
	load_env
	set_binaries
	[ "$MS" != verbs ] || [ -n "$ONE_IP" ] ||
		usage_error "--backend verbs needs --ip (an address of the RDMA interface)"
	# shellcheck source=cluster-lib.sh
	. "$top/scripts/cluster-lib.sh"
	cl_check_layout
	[ "$NOSD" -ge 1 ] || usage_error "--osds must be at least 1"
	[ "$POOL_MIN_SIZE" -le "$POOL_SIZE" ] && [ "$POOL_SIZE" -le "$NOSD" ] ||
		usage_error "need min-size <= size <= osds (got $POOL_MIN_SIZE, $POOL_SIZE, $NOSD)"
	load_pids
	if [ "${#PIDS[@]}" -gt 0 ]; then
		for name in $(daemons); do [ -n "${PIDS[$name]:-}" ] || missing+=("$name"); done
		[ "${#missing[@]}" = 0 ] ||
			fail "$DIR is partly running (${missing[*]} not): 'restart-osd N' or 'down' first"
		log "already up in $DIR (${#PIDS[@]} daemons)"
		wait_ready
		return 0
	fi
	save_env
	backend_env
	log "starting $NMON monitor(s) and $NOSD OSDs ($MS) in $DIR, ports $PORT-$((PORT + 99))"
	STARTED_HERE=1 CL_DETACH=1
	trap 'fail "interrupted"' INT TERM
	cluster_up
	wait_ready
	trap - INT TERM
	STARTED_HERE=0
	w status || true
	log "up: conf $CONF, admin keyring $DIR/keyring (client.admin; each OSD's key in $DIR/osd.N/keyring), logs $DIR/*.log; stop with: $0 down --dir $DIR [--wipe]"
}

cmd_down() {
	local name pid n=0 deadline
	load_env || { log "no cluster in $DIR (no $ENVF): nothing to stop"; [ "$WIPE" = 0 ] || [ ! -e "$DIR" ] ||
		log "not wiping $DIR: not a cluster directory"; return 0; }
	. "$top/scripts/cluster-lib.sh"
	for f in "$DIR"/*.pid; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .pid) pid=$(cat "$f")
		if [[ $pid =~ ^[0-9]+$ ]] && cl_alive "$pid" && ! ours "$pid"; then
			log "$name: pid $pid is no longer ours (another program): left alone"
		fi
	done
	load_pids
	# OSDs first (they stop cleanly while the mons still answer), then the mons
	for kind in osd mon; do
		for name in "${!PIDS[@]}"; do
			[ "${name%%.*}" = $kind ] && kill -TERM "${PIDS[$name]}" 2> /dev/null
		done
		deadline=$(($(date +%s) + 20))
		for name in "${!PIDS[@]}"; do
			[ "${name%%.*}" = $kind ] || continue
			log "stopping $name (pid ${PIDS[$name]})"
			cl_stop "$name" TERM $((deadline - $(date +%s) > 1 ? deadline - $(date +%s) : 1))
			n=$((n + 1))
		done
	done
	log "stopped $n daemons"
	if [ "$WIPE" = 1 ]; then
		[ -f "$CONF" ] && [ "$DIR" != / ] && [ "$DIR" != "$top" ] && [ "$DIR" != "$HOME" ] ||
			fail "refusing to wipe $DIR"
		rm -rf "$DIR" && log "wiped $DIR"
	fi
}

cmd_status() {
	local name rc=0
	load_env || { echo "no cluster in $DIR (no $ENVF)"; exit 1; }
	set_binaries
	. "$top/scripts/cluster-lib.sh"
	load_pids
	echo "cluster in $DIR ($MS, $NMON mons, $NOSD OSDs, pool $POOL), conf $CONF"
	for name in $(daemons); do
		if [ -n "${PIDS[$name]:-}" ]; then
			printf '  %-7s pid %-8s running   log %s\n' "$name" "${PIDS[$name]}" "$DIR/$name.log"
		else
			printf '  %-7s %-12s NOT RUNNING  log %s\n' "$name" "" "$DIR/$name.log"
			rc=1
		fi
	done
	echo
	"$WEFT" status -c "$CONF" --timeout 5 || rc=1
	return $rc
}

# osd_booted ID: the running osd.ID says (admin socket) it booted, and the map has it up.
# The mons keep up_from when an OSD that is still up boots again (it came back
# within osd_heartbeat_grace), so the map alone cannot tell the new process.
osd_booted() {
	"$WEFT" perf dump "osd.$1" -c "$CONF" --timeout 5 | jq -e '.booted == true' &&
		"$WEFT" osd dump -c "$CONF" --timeout 5 --format json |
		jq -e --argjson id "$1" '.osds[] | select(.id == $id) | .up'
}

# osd_cmd_prep: the cluster of DIR, its pids, and RESTART_ID checked
osd_cmd_prep() {
	load_env || { echo "cluster.sh: no cluster in $DIR" >&2; exit 1; }
	set_binaries
	. "$top/scripts/cluster-lib.sh"
	[ "$RESTART_ID" -lt "$NOSD" ] ||
		usage_error "osd.$RESTART_ID is not in this cluster (0..$((NOSD - 1)))"
	load_pids
	backend_env
}

osd_stop_one() {
	local id=$1

	if [ -n "${PIDS[osd.$id]:-}" ]; then
		log "stopping osd.$id (pid ${PIDS[osd.$id]}, SIG$([ "$KILL" = 1 ] && echo KILL || echo TERM))"
		cl_stop "osd.$id" "$([ "$KILL" = 1 ] && echo KILL || echo TERM)"
	else
		log "osd.$id was not running"
	fi
}

osd_start_one() {
	local id=$1

	[ -z "${PIDS[osd.$id]:-}" ] || fail "osd.$id is running already (pid ${PIDS[osd.$id]})"
	CL_DETACH=1
	start_osd "$id"
	log "started osd.$id (pid ${PIDS[osd.$id]})"
	wait_for 60 "osd.$id booted and up" osd_booted "$id"
	wait_ready
}

cmd_restart_osd() {
	osd_cmd_prep
	osd_stop_one "$RESTART_ID"
	osd_start_one "$RESTART_ID"
}

case $CMD in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
restart-osd) cmd_restart_osd ;;
stop-osd) osd_cmd_prep && osd_stop_one "$RESTART_ID" ;;
start-osd) osd_cmd_prep && osd_start_one "$RESTART_ID" ;;
esac
