# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# cluster-lib.sh: the one way to start a local Weft cluster — conf, mkfs,
# start/stop by pid, bounded waits. Sourced (never run) by scripts/cluster.sh
# (the launcher) and by the functional tests (tests/test_osd_cluster.sh,
# tests/test_mon_cluster.sh). docs/cluster.md describes the layout.
#
# The caller sets these globals before sourcing (MS is read at source time):
#   MON OSD WEFT   paths of weft-mon, weft-osd and weft
#   MS             ms_type: tcp | ucx | verbs
#   PORT           base port; the cluster owns PORT..PORT+99:
#                    mon k (a, b, c, ...)  ${ONE_IP:-127.1.0.(1+k)}:PORT+k   (k < 5)
#                    its Raft port         PORT+5+k (mon_raft_port_offset = 5)
#                    osd.i public          ${ONE_IP:-127.1.0.(10+i)}:PORT+10+i  (i < 20)
#                    osd.i cluster         ${ONE_IP:-127.2.0.(10+i)}:PORT+30+i
#                    osd.i, 20 <= i < 45:  public PORT+30+i, cluster PORT+55+i
#   DIR, CONF      the cluster's directory (data, logs, admin sockets, pid
#                  files) and its conf file (normally $DIR/weft.conf)
#   NMON (1), NOSD (3); POOL (rbd), POOL_SIZE (3), POOL_MIN_SIZE (2), PG_NUM (32)
# and defines log MSG and fail MSG (fail must not return).
# Optional:
#   ONE_IP         every daemon on this one IP, public and cluster told apart by
#                  port (UCX only takes interface addresses: ucx defaults to
#                  127.0.0.1; a Soft-RoCE VM has one rxe IP). WEFT_TEST_IP too.
#   CL_DETACH=1    start daemons in their own session (setsid) so they outlive
#                  the caller and a Ctrl-C in its terminal (the launcher)
#   CL_SKIP_CODE   when set (tests: 77), a backend that cannot open prints
#                  "SKIP: ..." and exits with it; otherwise it is a failure
#   CL_WAL=file    the WAL in its own file ($DIR/osd.N/wal) instead of a region
#                  of the data file (the default, and what the benchmarks ran)
#   CL_CONF_EXTRA  conf lines appended at the end (with their own [section]
#                  headers); a key repeated later in the same section wins
#   conf knobs (the WEFT_TEST_* variables are the older names, still read):
#   CL_LOG_LEVEL (info), CL_DATA_SIZE (1G), CL_CONNECT_TIMEOUT (2s),
#   CL_PEER_TIMEOUT (3s), CL_HEARTBEAT_GRACE (3s), CL_OP_TIMEOUT (60s),
#   CL_OSD_OP_TIMEOUT (30s), CL_ELECTION_TIMEOUT (500ms with 1 mon, else 1500ms),
#   CL_MEMORY_TARGET (unset: the daemon's default, osd_memory_target 1G),
#   CL_BALANCER (false: the mons' upmap balancer off, so a test's placement is
#   the raw one; the launcher sets true), CL_BALANCER_INTERVAL (10s)
#   CL_DATA_SIZE is each OSD's data file, sparse unless CL_PREALLOCATE=true
#   (osd_store_preallocate): test clusters take on disk only what they write,
#   so parallel ones fit a small CI disk; the launcher scripts/cluster.sh
#   defaults to 4G, fallocated, as its benchmarks ran.
#
#   CL_AUTH        (weft) the auth_*_required options of the cluster: weft or none
#
# Keys (docs/security.md): the first mon's --mkfs writes the admin keyring
# (client.admin and mon.) to $DIR/keyring, the conf's keyring for every
# client; each OSD gets osd.N's key from `weft auth get-or-create` into
# $DIR/osd.N/keyring (the [osd] keyring, $DIR/$name/keyring) before its
# first start (cl_osd_key).
#
# Every daemon started here is in PIDS[NAME] (NAME = mon.a, osd.3) and in
# $DIR/NAME.pid; its stdout/stderr go to $DIR/NAME.log. Every wait is bounded.

NMON=${NMON:-1}
NOSD=${NOSD:-3}
POOL=${POOL:-rbd}
POOL_SIZE=${POOL_SIZE:-3}
POOL_MIN_SIZE=${POOL_MIN_SIZE:-2}
PG_NUM=${PG_NUM:-32}
declare -gA PIDS # global even when sourced from a function
PIDS+=()

ONE_IP=${ONE_IP:-${WEFT_TEST_IP:-}}
[ -z "$ONE_IP" ] && [ "${MS:-tcp}" = ucx ] && ONE_IP=127.0.0.1
MON_IP=${ONE_IP:-127.1.0.1}
CL_MON_IDS=(a b c d e)

mon_addr() { echo "${ONE_IP:-127.1.0.$((1 + $1))}:$((PORT + $1))"; }
# OSDs 20..44 take the ports above the first 20's: PORT+50.. public, PORT+75.. cluster
pub_addr() { echo "${ONE_IP:-127.1.0.$((10 + $1))}:$((PORT + ($1 < 20 ? 10 : 30) + $1))"; }
clu_addr() { echo "${ONE_IP:-127.2.0.$((10 + $1))}:$((PORT + ($1 < 20 ? 30 : 55) + $1))"; }

# cl_check_layout: the counts the address plan has room for.
cl_check_layout() {
	[ "$NMON" -ge 1 ] && [ "$NMON" -le 5 ] 2> /dev/null || fail "mons must be 1..5 (got '$NMON')"
	[ "$NOSD" -ge 0 ] && [ "$NOSD" -le 45 ] 2> /dev/null || fail "osds must be 0..45 (got '$NOSD')"
	[ "$PORT" -ge 1024 ] && [ "$PORT" -le 65436 ] 2> /dev/null ||
		fail "port must be 1024..65436 (got '$PORT')"
}

write_conf() {
	local k hosts="" et
	cl_check_layout
	for k in $(seq 0 $((NMON - 1))); do hosts="$hosts${hosts:+, }$(mon_addr "$k")"; done
	et=${CL_ELECTION_TIMEOUT:-$([ "$NMON" = 1 ] && echo 500ms || echo 1500ms)}
	cat > "$CONF" << EOC
# Written by scripts/cluster-lib.sh (write_conf); see docs/cluster.md.
[global]
	mon_host = $hosts
	ms_type = $MS
	log_level = ${CL_LOG_LEVEL:-${WEFT_TEST_LOG_LEVEL:-info}}
	admin_socket = $DIR/\$name.asok
	ms_connect_timeout = ${CL_CONNECT_TIMEOUT:-${WEFT_TEST_CONNECT_TIMEOUT:-2s}}
	ms_peer_timeout = ${CL_PEER_TIMEOUT:-${WEFT_TEST_PEER_TIMEOUT:-3s}}
	osd_pool_default_size = $POOL_SIZE
	osd_pool_default_min_size = $POOL_MIN_SIZE
	osd_pool_default_pg_num = $PG_NUM
	osd_heartbeat_grace = ${CL_HEARTBEAT_GRACE:-${WEFT_TEST_HEARTBEAT_GRACE:-3s}}
	osd_heartbeat_interval = 500ms
	osd_max_op_size = 8M
	client_op_timeout = ${CL_OP_TIMEOUT:-${WEFT_TEST_OP_TIMEOUT:-60s}}
	client_buffers = 20
	keyring = $DIR/keyring
	auth_cluster_required = ${CL_AUTH:-weft}
	auth_service_required = ${CL_AUTH:-weft}
	auth_client_required = ${CL_AUTH:-weft}
[mon]
	mon_data = $DIR/\$name
	mon_election_timeout = $et
	mon_raft_port_offset = 5
	mon_osd_down_out_interval = 3600s
	mon_osd_min_down_reporters = 1
	mon_balancer_enable = ${CL_BALANCER:-false}
	mon_balancer_interval = ${CL_BALANCER_INTERVAL:-10s}
EOC
	for k in $(seq 0 $((NMON - 1))); do
		printf '[mon.%s]\n\tmon_addr = %s\n' "${CL_MON_IDS[$k]}" "$(mon_addr "$k")" >> "$CONF"
	done
	cat >> "$CONF" << EOC
[osd]
	keyring = $DIR/\$name/keyring
	osd_data = $DIR/\$name/block
	osd_wal = $([ "${CL_WAL:-data}" = file ] && echo "$DIR/\$name/wal")
	osd_db = $DIR/\$name/db
	osd_store_data_size = ${CL_DATA_SIZE:-${WEFT_TEST_OSD_DATA_SIZE:-1G}}
	osd_store_preallocate = ${CL_PREALLOCATE:-false}
	osd_store_wal_size = 64M
	osd_repl_ring_size = 20M
	osd_op_buffers = 6
	osd_op_timeout = ${CL_OSD_OP_TIMEOUT:-${WEFT_TEST_OSD_OP_TIMEOUT:-30s}}
EOC
	[ -z "${CL_MEMORY_TARGET:-}" ] ||
		printf '\tosd_memory_target = %s\n' "$CL_MEMORY_TARGET" >> "$CONF"
	for k in $(seq 0 $((NOSD - 1))); do
		printf '[osd.%d]\n\tpublic_addr = %s\n\tcluster_addr = %s\n\thost = node%d\n' \
			"$k" "$(pub_addr "$k")" "$(clu_addr "$k")" "$k" >> "$CONF"
	done
	[ -z "${CL_CONF_EXTRA:-}" ] || printf '%s\n' "$CL_CONF_EXTRA" >> "$CONF"
}

w() { "$WEFT" "$@" -c "$CONF" --timeout 20; }
wj() { "$WEFT" "$@" -c "$CONF" --timeout 20 --format json; }

# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds; fail
# after SECONDS, or as soon as a daemon we started has exited. Every 5 s says
# what it is still waiting for (and CL_WHY, which a COMMAND may set to say
# what is missing).
wait_for() {
	local secs=$1 what=$2 start next
	shift 2
	start=$(date +%s)
	next=$((start + 5))
	CL_WHY=""
	while ! "$@" > /dev/null 2>&1; do
		cl_check_alive
		[ "$(date +%s)" -lt $((start + secs)) ] ||
			fail "timed out after ${secs}s waiting for: $what${CL_WHY:+ ($CL_WHY)}"
		if [ "$(date +%s)" -ge "$next" ]; then
			log "still waiting for: $what${CL_WHY:+ ($CL_WHY)}, $(($(date +%s) - start))/${secs}s"
			next=$((next + 5))
		fi
		sleep 0.3
	done
	log "ok: $what"
}
num_up() { wj status | jq -r '.osdmap.num_up_osds'; }
osd_up() { wj osd dump | jq -e ".osds[] | select(.id == $1) | .up == $2"; }
map_epoch() { wj status | jq -r '.osdmap.epoch'; }
# cl_epoch_ge EPOCH [TIMEOUT]: the mons answer with a map of at least EPOCH.
cl_epoch_ge() {
	[ "$("$WEFT" status -c "$CONF" --timeout "${2:-5}" --format json 2> /dev/null |
		jq .osdmap.epoch 2> /dev/null)" -ge "$1" ] 2> /dev/null
}
cl_num_up_is() { [ "$("$WEFT" status -c "$CONF" --timeout 5 --format json | jq .osdmap.num_up_osds)" = "$1" ]; }

# cl_check_alive: fail when a mon or OSD in PIDS has exited (its log says why).
cl_check_alive() {
	local name
	for name in "${!PIDS[@]}"; do
		case $name in mon.* | osd.*) ;; *) continue ;; esac
		cl_alive "${PIDS[$name]}" ||
			fail "$name (pid ${PIDS[$name]}) exited: $(tail -n 1 "$DIR/$name.log" 2> /dev/null)"
	done
}

# cl_check_ports: every address the cluster will listen on is free (a
# listener on it, or on the wildcard, belongs to another cluster or program).
cl_check_ports() {
	local k busy="" a listening
	command -v ss > /dev/null || return 0
	listening=$(ss -Hltn 2> /dev/null | awk '{ print $4 }')
	for a in $(for k in $(seq 0 $((NMON - 1))); do
		mon_addr "$k"
		echo "${ONE_IP:-127.1.0.$((1 + k))}:$((PORT + 5 + k))"
	done
		for k in $(seq 0 $((NOSD - 1))); do pub_addr "$k"; clu_addr "$k"; done); do
		echo "$listening" | grep -qxF -e "$a" -e "0.0.0.0:${a##*:}" -e "*:${a##*:}" -e "[::]:${a##*:}" &&
			busy="$busy $a"
	done
	[ -z "$busy" ] || fail "already in use by another process:$busy (another cluster? use another port)"
}

# cl_unavailable MSG: the backend cannot run here.
cl_unavailable() {
	if [ -n "${CL_SKIP_CODE:-}" ]; then
		echo "SKIP: $*"
		exit "$CL_SKIP_CODE"
	fi
	fail "$*"
}

# cl_alive PID: the process exists and is not a zombie.
cl_alive() {
	local s
	s=$(ps -o stat= -p "$1" 2> /dev/null) && [ -n "$s" ] && [ "${s#Z}" = "$s" ]
}

# cl_spawn NAME CMD...: start a daemon in the background; pid in PIDS[NAME] and $DIR/NAME.pid.
cl_spawn() {
	local name=$1
	shift
	if [ "${CL_DETACH:-0}" = 1 ]; then
		# Not a process-group leader here (no job control), so setsid execs in place: $! is the daemon.
		setsid "$@" < /dev/null >> "$DIR/$name.log" 2>&1 &
	else
		"$@" < /dev/null >> "$DIR/$name.log" 2>&1 &
	fi
	PIDS[$name]=$!
	echo "$!" > "$DIR/$name.pid"
}

# cl_stop NAME [SIGNAL [SECONDS]]: signal the daemon (default KILL: a crash,
# no goodbye), wait until it is gone (TERM: up to SECONDS, default 20, then
# KILL), forget its pid.
cl_stop() {
	local name=$1 sig=${2:-KILL} secs=${3:-20} pid deadline
	pid=${PIDS[$name]:-}
	[ -n "$pid" ] || return 0
	kill -"$sig" "$pid" 2> /dev/null
	deadline=$(($(date +%s) + secs))
	while cl_alive "$pid" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
	if cl_alive "$pid"; then
		log "$name (pid $pid) still running ${secs}s after SIG$sig: SIGKILL"
		kill -9 "$pid" 2> /dev/null
		while cl_alive "$pid"; do sleep 0.1; done
	fi
	wait "$pid" 2> /dev/null # reaps it when it is our child
	rm -f "$DIR/$name.pid"
	unset "PIDS[$name]"
}

start_mon() { cl_spawn "mon.$1" "$MON" -i "$1" -c "$CONF"; }
stop_mon() { cl_stop "mon.$1" "${2:-KILL}"; }
start_osd() { cl_osd_key "$1" && cl_spawn "osd.$1" "$OSD" -i "$1" -c "$CONF"; }
stop_osd() { cl_stop "osd.$1" "${2:-KILL}"; }

# mons_up: mkfs (unless mon_data exists) and start NMON mons; wait until
# they have a map (a quorum formed and committed epoch 1).
mons_up() {
	local k m ok
	cl_check_ports
	for k in $(seq 0 $((NMON - 1))); do
		m=${CL_MON_IDS[$k]}
		if [ ! -d "$DIR/mon.$m" ]; then
			"$MON" --mkfs -i "$m" -c "$CONF" >> "$DIR/mon.$m.log" 2>&1 || fail "mkfs mon.$m"
		fi
	done
	for k in $(seq 0 $((NMON - 1))); do start_mon "${CL_MON_IDS[$k]}"; done
	if [ "$MS" != tcp ]; then
		# a backend still being finished: the mon service over it must work, else skip
		ok=0
		for _ in $(seq 1 8); do
			cl_epoch_ge 1 2 && { ok=1; break; }
			sleep 0.5
		done
		[ $ok = 1 ] || cl_unavailable "the monitor service does not work over $MS yet"
	fi
	wait_for 30 "$([ "$NMON" = 1 ] && echo "the mon has a map" || echo "$NMON mons have a map")" \
		cl_epoch_ge 1
}

# cl_osd_key ID: osd.ID's key in its keyring ($DIR/osd.ID/keyring, mode 0600),
# made by the monitors (the admin keyring asks) unless it is there.
cl_osd_key() {
	local kr=$DIR/osd.$1/keyring
	mkdir -p "$DIR/osd.$1"
	[ -s "$kr" ] && return 0
	(umask 077 && w auth get-or-create "osd.$1" mon "profile osd" osd "profile osd" > "$kr.tmp") ||
		{ rm -f "$kr.tmp"; fail "weft auth get-or-create osd.$1"; }
	mv "$kr.tmp" "$kr"
}

# osds_up: mkfs (unless the store exists) and start NOSD OSDs; wait until all are up.
osds_up() {
	local i
	for i in $(seq 0 $((NOSD - 1))); do
		mkdir -p "$DIR/osd.$i"
		if [ ! -e "$DIR/osd.$i/block" ]; then
			"$OSD" --mkfs -i "$i" -c "$CONF" >> "$DIR/osd.$i.log" 2>&1 || {
				grep -qi "backend\|ucx\|verbs\|no usable" "$DIR/osd.$i.log" &&
					[ "$MS" != tcp ] && cl_unavailable "fabric $MS unavailable"
				fail "mkfs osd.$i"
			}
		fi
		start_osd "$i"
	done
	[ "$NOSD" = 0 ] || wait_for 60 "$NOSD OSDs up" cl_num_up_is "$NOSD"
}

pool_exists() { wj pool ls | jq -e --arg p "$1" '.pools[] | select(.name == $p)'; }

# cluster_up: conf, NMON mons, NOSD OSDs, pool POOL (size POOL_SIZE,
# min_size POOL_MIN_SIZE, PG_NUM PGs). Re-uses data that exists in DIR.
cluster_up() {
	write_conf
	mons_up
	osds_up
	if ! pool_exists "$POOL" > /dev/null 2>&1; then
		w pool create "$POOL" --size "$POOL_SIZE" --min-size "$POOL_MIN_SIZE" \
			--pg-num "$PG_NUM" > /dev/null || fail "pool create $POOL"
	fi
}

# cl_ready: every OSD up and in, the pool in the map, every running OSD
# (its admin socket's perf dump) booted with a map at least the mons' epoch,
# and every PG active (peered: no PG peering, down or unknown in the mons'
# PG table, docs/recovery.md). Sets CL_WHY to what is missing.
cl_ready() {
	local st up in e i oe inactive lag=""
	st=$("$WEFT" status -c "$CONF" --timeout 5 --format json 2> /dev/null) ||
		{ CL_WHY="weft status failed"; return 1; }
	up=$(echo "$st" | jq .osdmap.num_up_osds)
	in=$(echo "$st" | jq .osdmap.num_in_osds)
	e=$(echo "$st" | jq .osdmap.epoch)
	if [ "$up" != "$NOSD" ] || [ "$in" != "$NOSD" ]; then
		CL_WHY="$up/$NOSD OSDs up, $in/$NOSD in"
		return 1
	fi
	pool_exists "$POOL" > /dev/null 2>&1 || { CL_WHY="pool $POOL not in the map"; return 1; }
	for i in $(seq 0 $((NOSD - 1))); do
		oe=$("$WEFT" perf dump "osd.$i" -c "$CONF" --timeout 5 2> /dev/null |
			jq -r 'if .booted then .map_epoch else "not booted" end')
		[ "$oe" -ge "$e" ] 2> /dev/null || lag="$lag osd.$i@${oe:-?}"
	done
	[ -z "$lag" ] || { CL_WHY="map epoch $e not yet on:$lag"; return 1; }
	inactive=$(echo "$st" | jq '.pgmap.inactive_pgs // 0')
	[ "$inactive" = 0 ] || { CL_WHY="$inactive PGs not active yet"; return 1; }
	CL_WHY=""
}
