#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Day-two operations (docs/operations.md) on a real local cluster, started
# by scripts/cluster-lib.sh through tests/test_osd_cluster.sh:
#
#   test_ops.sh CASE PORT WEFT_MON WEFT_OSD WEFT WEFT_MOUNT
#   CASE: cli     | every binary's --version and --help, every printing command
#                 | with --format json, bad usage (exit 2, one line), a second
#                 | start of a running mon or OSD, weft-mon -i with no section
#         guard   | refused pool deletions, names and sizes: one line each, no map change
#         sighup  | SIGHUP reopens log_file; config set through the admin socket
#         metrics | a real Prometheus server scrapes the daemons' /metrics
set -u
OCASE=$1 OPORT=$2 OMON=$3 OOSD=$4 OWEFT=$5 OMOUNT=$6
here=$(cd "$(dirname "$0")" && pwd)
set -- "ops-$OCASE" tcp "$OPORT" "$OMON" "$OOSD" "$OWEFT" /bin/true
WEFT_CLUSTER_LIB=1
export WEFT_TEST_OSD_DATA_SIZE=${WEFT_TEST_OSD_DATA_SIZE:-1G}
# shellcheck source=tests/test_osd_cluster.sh
. "$here/test_osd_cluster.sh"

# run CODE WHAT CMD...: CMD exits CODE; its stdout in $DIR/o, stderr in $DIR/e
run() {
	local want=$1 what=$2 rc
	shift 2
	"$@" > "$DIR/o" 2> "$DIR/e"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$DIR/o" "$DIR/e"; fail "$what: exit $rc, want $want"; }
}
# one_line WHAT [PATTERN]: the last command's stderr is exactly one line (matching PATTERN)
one_line() {
	[ "$(wc -l < "$DIR/e")" = 1 ] || { cat "$DIR/e"; fail "$1: stderr is not one line"; }
	[ -z "${2:-}" ] || grep -q -- "$2" "$DIR/e" || { cat "$DIR/e"; fail "$1: stderr lacks '$2'"; }
}
# is_json WHAT: the last command's stdout parses as JSON
is_json() {
	python3 -m json.tool < "$DIR/o" > /dev/null 2>&1 || { cat "$DIR/o"; fail "$1: stdout is not JSON"; }
}

case $OCASE in
cli)
	NOSD=1 POOL_SIZE=1 POOL_MIN_SIZE=1 PG_NUM=8
	. "$here/test_ops_cli.sh"
	;;
guard)
	. "$here/test_ops_guard.sh"
	;;
sighup)
	NOSD=1 POOL_SIZE=1 POOL_MIN_SIZE=1 PG_NUM=8
	. "$here/test_ops_sighup.sh"
	;;
metrics)
	NOSD=1 POOL_SIZE=1 POOL_MIN_SIZE=1 PG_NUM=8
	. "$here/test_ops_metrics.sh"
	;;
*) fail "unknown case $OCASE" ;;
esac
log "PASS ops $OCASE"
