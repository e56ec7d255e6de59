# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by tests/test_nbd.sh and tests/test_nbd_vm.sh (PLUGIN set): how to
# run nbdkit with the plugin of this build, and wait for it to stop.
# A sanitizer build of the plugin needs its runtimes loaded first in nbdkit
# (which is not built with them): preload exactly the ones the plugin links.
NBDKIT_ENV=()
PRELOAD=$(ldd "$PLUGIN" | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
if [ -n "$PRELOAD" ]; then
	# nbdkit's own exit-time allocations are not ours to judge; the plugin's
	# code still runs under ASan and UBSan
	NBDKIT_ENV=(env LD_PRELOAD="$PRELOAD" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
fi
nbdkit_run() { "${NBDKIT_ENV[@]}" nbdkit "$@"; }
bad() { echo "FAIL: $*"; exit 1; } # args; the cluster cases redefine it as fail
# Under that preload nbdkit itself never finishes exit(): glibc's setlocale
# lock is corrupt by then (its reader count underflows) and p11-kit's
# destructor blocks on it. nbdkit's own file plugin does the same, so it is
# the preload, not the plugin. In sanitizer builds the tests therefore
# check what the plugin did (its error line, its cleanup's log line, the
# lock) and then kill the stuck process; a plain build must exit by itself.
# nbdkit_wait PID LOG DONE_REGEX SECS: 0 once PID exited (status in NBDKIT_RC),
# or (sanitizer build) once LOG matches DONE_REGEX and PID hangs on (NBDKIT_RC=hung)
nbdkit_wait() {
	local pid=$1 logf=$2 done=$3 end=$(($(date +%s) + $4))
	NBDKIT_RC=""
	while [ "$(date +%s)" -lt $end ]; do
		if ! kill -0 "$pid" 2> /dev/null; then
			wait "$pid"
			NBDKIT_RC=$?
			return 0
		fi
		if [ -n "$PRELOAD" ] && grep -qE "$done" "$logf"; then
			sleep 2
			kill -0 "$pid" 2> /dev/null || continue
			kill -9 "$pid"
			wait "$pid" 2> /dev/null
			NBDKIT_RC=hung
			return 0
		fi
		sleep 0.2
	done
	return 1
}

